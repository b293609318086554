//! Ranking allocation sites for `memlens summary`: the per-stack figures of the
//! streaming summary, merged by the site each stack names (many stacks, one call path)
//! and ranked by one figure.
//!
//! Every stack with a non-zero figure is named and merged, so a site's figures are
//! exact whatever `top` is: ranking only the heaviest stacks first would leave out
//! light stacks of a heavy site (two of sqlite3's 20,102 calls from one call path came
//! from stacks outside such a cut). Names are cached per address by the caller, so
//! naming every stack costs one pass over the stack table.

use std::collections::HashMap;
use std::hash::Hash;

use crate::summary::StackFigures;

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
pub fn rank_sites<K: Eq + Hash + Clone>(
    stacks: &[StackFigures],
    top: usize,
    figure: impl Fn(&StackFigures) -> u64,
    mut key_of: impl FnMut(u32) -> K,
) -> Vec<RankedSite<K>> {
    let mut rows: Vec<RankedSite<K>> = Vec::new();
    let mut row_of: HashMap<K, usize> = HashMap::new();
    for (i, figures) in stacks.iter().enumerate() {
        if figure(figures) == 0 {
            continue;
        }
        let key = key_of(i as u32);
        match row_of.get(&key) {
            Some(&row) => rows[row].figures.add(figures),
            None => {
                row_of.insert(key.clone(), rows.len());
                rows.push(RankedSite {
                    key,
                    figures: *figures,
                });
            }
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

    #[test]
    fn light_stacks_of_a_site_count_however_few_rows_are_asked_for() {
        // 100 one-call stacks name site 0; 50 two-call stacks name sites 1..=50.
        let mut stacks = vec![bytes(1); 100];
        stacks.extend((0..50).map(|_| StackFigures {
            allocations: 2,
            ..bytes(1)
        }));
        let ranked = rank_sites(
            &stacks,
            1,
            |f| f.allocations,
            |i| if i < 100 { 0 } else { i - 99 },
        );
        assert_eq!(ranked.len(), 1);
        assert_eq!((ranked[0].key, ranked[0].figures.allocations), (0, 100));
    }
}
