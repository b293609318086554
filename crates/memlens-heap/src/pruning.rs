//! Tree pruning exactly as the paper (§4.1, §5.1 "Tree Pruning Revisited").
//!
//! Per node, the children are taken in sort order and kept while they cover less than
//! 90 % of the node and fewer than 9 are kept; the child that reaches 90 % is kept. The
//! rest are merged into one `Other` node, which is always last. For a series of trees,
//! "sort order" is the meta tree's stable order and coverage is measured in the reference
//! tree (the last one, or the first for start-size sorting), so the *same* keys survive
//! at every time, even where they are not the largest (the paper's `String` at `T = 2`).
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
    fn empty_parent_keeps_the_first_in_order() {
        let rule = PruneRule {
            coverage: 0.9,
            max_children: 2,
        };
        assert_eq!(rule.keep_count(&[0, 0, 0], 0), 2);
    }
}
