//! Ranking allocation sites for `memlens summary`: the per-stack figures of the
//! streaming summary, merged by the site each stack names (many stacks, one call path)
//! and ranked by one figure.
//!
//! Naming a stack costs symbolization, so candidates are ranked by stack first and
//! only the heaviest few are named and merged.

use crate::summary::StackFigures;

/// Stacks named per row asked for: merging can only move rows down, so a few times
/// `top` candidates are enough to fill `top` rows.
const CANDIDATES_PER_ROW: usize = 8;

/// One ranked site: its key (whatever the caller names stacks by) and the figures of
/// every stack merged into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedSite<K> {
    /// The site's key, e.g. its call path.
    pub key: K,
    /// The sums over the stacks that name this site.
    pub figures: StackFigures,
}

impl StackFigures {
    /// Adds `other`'s figures to these.
    pub fn add(&mut self, other: &StackFigures) {
        self.allocations += other.allocations;
        self.bytes += other.bytes;
        self.temporary += other.temporary;
        self.peak_bytes += other.peak_bytes;
        self.leaked_bytes += other.leaked_bytes;
        self.leaked_allocations += other.leaked_allocations;
    }
}

/// The `top` sites by `figure`, heaviest first: stacks (indexed by stack id in
/// `stacks`) with a non-zero figure, named by `key_of`, stacks with equal keys merged.
pub fn rank_sites<K: PartialEq>(
    stacks: &[StackFigures],
    top: usize,
    figure: impl Fn(&StackFigures) -> u64,
    mut key_of: impl FnMut(u32) -> K,
) -> Vec<RankedSite<K>> {
    let mut order: Vec<usize> = (0..stacks.len())
        .filter(|&i| figure(&stacks[i]) > 0)
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(figure(&stacks[i])));
    let mut rows: Vec<RankedSite<K>> = Vec::new();
    for &i in order.iter().take(top.saturating_mul(CANDIDATES_PER_ROW)) {
        let key = key_of(i as u32);
        match rows.iter_mut().find(|r| r.key == key) {
            Some(row) => row.figures.add(&stacks[i]),
            None => rows.push(RankedSite {
                key,
                figures: stacks[i],
            }),
        }
    }
    rows.sort_by_key(|r| std::cmp::Reverse(figure(&r.figures)));
    rows.truncate(top);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(b: u64) -> StackFigures {
        StackFigures {
            bytes: b,
            allocations: 1,
            ..StackFigures::default()
        }
    }

    #[test]
    fn stacks_with_one_site_merge_and_rank_by_the_figure() {
        // Stacks 1 and 3 name site "a", stack 2 names "b", stack 4 has no bytes.
        let stacks = [bytes(0), bytes(30), bytes(50), bytes(40), bytes(0)];
        let names = ["", "a", "b", "a", "c"];
        let rows = rank_sites(&stacks, 10, |f| f.bytes, |s| names[s as usize]);
        let got: Vec<(&str, u64, u64)> = rows
            .iter()
            .map(|r| (r.key, r.figures.bytes, r.figures.allocations))
            .collect();
        assert_eq!(got, [("a", 70, 2), ("b", 50, 1)]);
        let one = rank_sites(&stacks, 1, |f| f.bytes, |s| names[s as usize]);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].key, "a");
    }
}
