//! Tree pruning as the paper (§4.1, §5.1 "Tree Pruning Revisited"), over a series.
//!
//! Per node, the children are taken in an order and kept while they cover less than
//! 90 % of the node and fewer than 9 are kept; the child that reaches 90 % is kept. The
//! rest are merged into one `Other` node, which is always last.
//!
//! For a series of trees the paper applies the rule once, in the meta tree's stable
//! order with coverage measured in the reference tree (the last one, or the first for
//! start-size sorting), so the *same* keys survive at every time, even where they are
//! not the largest (the paper's `String` at `T = 2`). That alone hides whatever owns the
//! heap at an instant far from the reference (a peak in mid-run whose owners are gone
//! by the end becomes one `Other` wedge), so the kept keys are the **union** of that
//! reference set and, at every time, the children that the rule keeps in size order at
//! that time ([`PruneRule::kept_in_series`]). The union is kept at every time, so trees
//! still share their nodes and tween; it holds at most 9 children chosen per time and
//! at most [`PruneRule::max_union`] in all, the reference set first, then by the largest
//! share of their parent they ever hold.
//!
//! When a node is empty in the reference tree the coverage test cannot choose; then the
//! first `max_children` children in sort order are kept.

/// The pruning parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PruneRule {
    /// Keep children until they cover this fraction of their parent (0.9).
    pub coverage: f64,
    /// Keep at most this many children per node (9).
    pub max_children: usize,
}

impl Default for PruneRule {
    /// The paper's rule: 90 %, at most 9.
    fn default() -> Self {
        PruneRule {
            coverage: 0.9,
            max_children: 9,
        }
    }
}

impl PruneRule {
    /// How many of the children, given in sort order with their sizes in the reference
    /// tree, to keep under a parent of size `parent`. The kept ones are a prefix of the
    /// order.
    pub fn keep_count(&self, ordered_sizes: &[u64], parent: u64) -> usize {
        let limit = self.coverage * parent as f64;
        let mut covered = 0u64;
        let mut kept = 0;
        for &size in ordered_sizes {
            if kept == self.max_children || (parent > 0 && covered as f64 >= limit) {
                break;
            }
            covered += size;
            kept += 1;
        }
        kept
    }
}

impl PruneRule {
    /// The most children kept under one node across a series: twice the per-time limit.
    pub fn max_union(&self) -> usize {
        2 * self.max_children
    }

    /// Which children to keep across a series, as flags in the order given (the meta
    /// tree's order). `sizes[k][i]` is child `i`'s size at time `k`, `parent[k]` the
    /// parent's; `reference` is the time whose tree the stable order's rule measures.
    pub fn kept_in_series(
        &self,
        sizes: &[Vec<u64>],
        parent: &[u64],
        reference: usize,
    ) -> Vec<bool> {
        let count = sizes.first().map_or(0, Vec::len);
        let mut kept = vec![false; count];
        let mut chosen = 0;
        // The paper's rule: a prefix of the stable order, measured at the reference.
        if let Some(at_reference) = sizes.get(reference) {
            for flag in &mut kept[..self.keep_count(at_reference, parent[reference])] {
                *flag = true;
                chosen += 1;
            }
        }
        // At every time, the largest children in size order (ties in the given order).
        let mut by_size: Vec<usize> = (0..count).collect();
        let mut extra = Vec::new();
        for (k, at_k) in sizes.iter().enumerate() {
            by_size.sort_by(|&a, &b| at_k[b].cmp(&at_k[a]).then(a.cmp(&b)));
            let ordered: Vec<u64> = by_size.iter().map(|&i| at_k[i]).collect();
            let keep = self.keep_count(&ordered, parent[k]);
            for &i in by_size[..keep].iter().filter(|&&i| at_k[i] > 0) {
                if !kept[i] && !extra.contains(&i) {
                    extra.push(i);
                }
            }
        }
        // Past the bound, those holding the largest share of their parent win.
        let share = |i: usize| -> f64 {
            sizes
                .iter()
                .zip(parent)
                .filter(|&(_, &p)| p > 0)
                .map(|(at_k, &p)| at_k[i] as f64 / p as f64)
                .fold(0.0, f64::max)
        };
        extra.sort_by(|&a, &b| share(b).total_cmp(&share(a)).then(a.cmp(&b)));
        for i in extra
            .into_iter()
            .take(self.max_union().saturating_sub(chosen))
        {
            kept[i] = true;
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_children_until_ninety_percent() {
        let rule = PruneRule::default();
        // 50 + 30 = 80 < 90, so the 15 that crosses 90 is kept too; 5 goes to Other.
        assert_eq!(rule.keep_count(&[50, 30, 15, 5], 100), 3);
        // Exactly 90 % after two children: stop there.
        assert_eq!(rule.keep_count(&[60, 30, 10], 100), 2);
        // One dominant child.
        assert_eq!(rule.keep_count(&[95, 3, 2], 100), 1);
    }

    #[test]
    fn keeps_at_most_nine() {
        let sizes = [10u64; 20];
        assert_eq!(PruneRule::default().keep_count(&sizes, 200), 9);
    }

    #[test]
    fn keeps_everything_when_children_never_reach_coverage() {
        // The parent holds more than its children (blocks end at the parent itself).
        assert_eq!(PruneRule::default().keep_count(&[10, 10], 100), 2);
    }

    #[test]
    fn a_series_keeps_the_owners_of_every_time_beside_the_reference_set() {
        let rule = PruneRule::default();
        // In the stable order: child 0 grows, ten small ones, then child 11, which owns
        // the heap at time 0 and is gone by the end (the reference time).
        let mut t0 = vec![0];
        let mut t1 = vec![500];
        t0.extend([10; 10]);
        t1.extend([10; 10]);
        t0.push(900);
        t1.push(0);
        let kept = rule.kept_in_series(&[t0, t1], &[1000, 600], 1);
        // The reference rule: 500 + 4 × 10 reaches 90 % of 600.
        assert!(kept[..5].iter().all(|&k| k), "{kept:?}");
        assert!(!kept[5], "{kept:?}");
        assert!(kept[11], "the owner at time 0: {kept:?}");
        assert_eq!(kept.iter().filter(|&&k| k).count(), 6, "{kept:?}");
    }

    #[test]
    fn a_series_keeps_at_most_the_union_bound_largest_shares_first() {
        let rule = PruneRule {
            coverage: 1.0,
            max_children: 2,
        };
        // Four times, each owned by two other children (the stable order puts the
        // owners of the reference time, the last, first): the bound is four.
        let sizes: Vec<Vec<u64>> = (0..4)
            .map(|k| {
                (0..8)
                    .map(|i| if i / 2 == 3 - k { 10 + i as u64 } else { 0 })
                    .collect()
            })
            .collect();
        let parent: Vec<u64> = sizes.iter().map(|s| s.iter().sum()).collect();
        let kept = rule.kept_in_series(&sizes, &parent, 3);
        // The reference set (0, 1), then the largest shares: 13/25 and 15/29.
        let indices: Vec<usize> = (0..8).filter(|&i| kept[i]).collect();
        assert_eq!(indices, [0, 1, 3, 5]);
    }

    #[test]
    fn empty_parent_keeps_the_first_in_order() {
        let rule = PruneRule {
            coverage: 0.9,
            max_children: 2,
        };
        assert_eq!(rule.keep_count(&[0, 0, 0], 0), 2);
    }
}
