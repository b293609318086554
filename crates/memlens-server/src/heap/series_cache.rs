//! The server's cache of memory-tree series. Per classifier list it keeps two
//! [`TreeSeries`], each built once in one pass over the allocations:
//!
//! - the **snapshot series**, over the snapshot times; its ordered, pruned [`Trees`]
//!   are made once per (metric, sort, prune) choice, so a time-travel step to a
//!   snapshot time costs only the answer;
//! - the **probe series**, over the window's first and last times and a few snapshot
//!   times between them, which gains every other time a user asks for with
//!   [`TreeSeries::add_time`] (the events between the new time and its neighbour). Ordering and pruning it touches a few trees, not all
//!   of them, so a step to a new time stays within milliseconds even for trees of
//!   thousands of nodes. Its cost grows with times × nodes, so once that passes
//!   [`PROBE_BUDGET`] the probe starts afresh; [`SeriesCache::maintain`] does so ahead
//!   of time, after an answer has been sent, so that users rarely wait for it.
//!
//! Both series hold the window's first and last times, so the meta tree compares the
//! same two trees in both: every node has the same sort value, and the same keys
//! survive pruning. A new time can only bring in groups that were live at none of the
//! snapshot times; they enter with a growth of zero, after the growing groups.

use std::num::NonZeroUsize;

use lru::LruCache;
use memlens_heap::{
    ClassifierOptions, HeapModel, Metric, PruneRule, SortStrategy, Tree, TreeOptions, TreeSeries,
    Trees, parse_classifiers,
};

use super::request::{ClassifierList, Window};
use crate::error::ApiError;

/// Classifier lists kept at once (each holds two series of four bytes per allocation
/// plus nodes × times).
const MAX_SERIES: NonZeroUsize = NonZeroUsize::new(3).expect("not zero");
/// The most tree nodes (nodes per tree × times) the probe series may order and prune
/// in one request, about 30 ms of work; past it the probe starts afresh.
const PROBE_BUDGET: usize = 30_000;
/// Snapshot times the probe series holds between the window's ends, evenly picked, so
/// that adding a time replays at most about a fifth of the run's events.
const PROBE_ANCHORS: usize = 4;

/// The tree choices that do not need a new series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeChoice {
    /// What sizes mean for sorting and pruning.
    pub metric: Metric,
    /// The stable sibling order.
    pub sort: SortStrategy,
    /// Whether small siblings are merged into `Other`.
    pub prune: bool,
}

struct CachedTrees {
    choice: TreeChoice,
    version: u64,
    trees: Trees,
}

/// A series and its ordered, pruned trees per choice, recomputed when it gains a time.
struct Versioned<'m> {
    series: TreeSeries<'m>,
    /// Bumped whenever a time is added, so that cached trees know they are stale.
    version: u64,
    trees: Vec<CachedTrees>,
    /// Nodes of one output tree, the last time trees were made (1 before that).
    nodes_per_tree: usize,
}

impl<'m> Versioned<'m> {
    fn new(series: TreeSeries<'m>) -> Self {
        Versioned {
            series,
            version: 0,
            trees: Vec::new(),
            nodes_per_tree: 1,
        }
    }

    /// The work of ordering and pruning this series with `extra` more times.
    fn cost(&self, extra: usize) -> usize {
        (self.series.times().len() + extra) * self.nodes_per_tree
    }

    fn holds(&self, t: u64) -> bool {
        self.series.times().binary_search(&t).is_ok()
    }

    fn add(&mut self, t: u64) -> Result<(), ApiError> {
        if !self.holds(t) {
            self.series.add_time(t)?;
            self.version += 1;
        }
        Ok(())
    }

    /// The index in `trees` of up-to-date trees for `choice`.
    fn slot(&mut self, choice: TreeChoice) -> usize {
        let found = self.trees.iter().position(|c| c.choice == choice);
        if let Some(i) = found.filter(|&i| self.trees[i].version == self.version) {
            return i;
        }
        let trees = self.series.trees(&TreeOptions {
            metric: choice.metric,
            sort: choice.sort,
            prune: choice.prune.then(PruneRule::default),
        });
        if let Some(first) = trees.trees.first() {
            let mut nodes = 0;
            first.root.walk(&mut |_| nodes += 1);
            self.nodes_per_tree = self.nodes_per_tree.max(nodes);
        }
        let fresh = CachedTrees {
            choice,
            version: self.version,
            trees,
        };
        match found {
            Some(i) => {
                self.trees[i] = fresh;
                i
            }
            None => {
                self.trees.push(fresh);
                self.trees.len() - 1
            }
        }
    }
}

struct SeriesEntry<'m> {
    /// The snapshot times of the entry's window.
    base_times: Vec<u64>,
    /// Over the snapshot times, never grown: its trees are ordered and pruned once per
    /// choice, so a step to a snapshot time costs nothing but the answer.
    snapshots: Versioned<'m>,
    /// Over the window's first and last times plus the other times asked for: a step
    /// to a new time adds it here and orders and prunes a few trees, not all of them.
    /// Its first and last trees are the snapshot series' own, so the meta tree gives
    /// every node the same sort value and the same keys survive pruning.
    probe: Versioned<'m>,
}

/// The trees that answer one request: those of the snapshot series, and those of the
/// probe series when a time between the snapshots was asked for.
pub struct TreesAnswer<'a> {
    /// The trees at every snapshot time.
    pub snapshots: &'a Trees,
    /// The trees at the other times asked for (and the window's ends).
    pub probe: Option<&'a Trees>,
}

impl TreesAnswer<'_> {
    /// The tree at `t`, if either series holds it.
    pub fn tree(&self, t: u64) -> Option<&Tree> {
        fn find(trees: &Trees, t: u64) -> Option<&Tree> {
            let k = trees.times_ns.binary_search(&t).ok()?;
            trees.trees.get(k)
        }
        find(self.snapshots, t).or_else(|| self.probe.and_then(|p| find(p, t)))
    }
}

/// What a series is built for: a grouping over a window (`None`: the whole run).
pub type SeriesKey = (ClassifierList, Option<Window>);

/// Series by grouping and window, the [`MAX_SERIES`] most recently used.
pub struct SeriesCache<'m> {
    model: &'m HeapModel,
    entries: LruCache<SeriesKey, SeriesEntry<'m>>,
    /// [`PROBE_BUDGET`], smaller in tests.
    probe_budget: usize,
}

impl<'m> SeriesCache<'m> {
    /// An empty cache.
    pub fn new(model: &'m HeapModel) -> Self {
        SeriesCache {
            model,
            entries: LruCache::new(MAX_SERIES),
            probe_budget: PROBE_BUDGET,
        }
    }

    /// The ordered, pruned trees of `key` under `choice` that hold every time of
    /// `times` (which must lie inside the key's window). `base_times` are the window's
    /// snapshot times (sorted, distinct, inside it, including its start and end); they
    /// are used when the key's series is built.
    pub fn trees(
        &mut self,
        key: &SeriesKey,
        base_times: &[u64],
        times: &[u64],
        choice: TreeChoice,
    ) -> Result<TreesAnswer<'_>, ApiError> {
        let run = key.1.map_or(self.model.run(), Window::time_window);
        if let Some(&t) = times.iter().find(|&&t| !run.contains(t)) {
            let what = if key.1.is_some() {
                "the window"
            } else {
                "the recorded run"
            };
            return Err(ApiError::bad_request(format!(
                "`times` holds {t} ns, outside {what} ({} to {} ns)",
                run.start_ns, run.end_ns
            )));
        }
        let model = self.model;
        let probe_budget = self.probe_budget;
        let entry = self.entry(key, base_times)?;
        let mut new_times: Vec<u64> = times
            .iter()
            .copied()
            .filter(|&t| !entry.snapshots.holds(t))
            .collect();
        new_times.sort_unstable();
        new_times.dedup();
        let unseen = new_times.iter().filter(|&&t| !entry.probe.holds(t)).count();
        if unseen > 0 && entry.probe.cost(unseen) > probe_budget {
            // Start the probe afresh: its cost grows with its times.
            let mut fresh = probe_base(&entry.base_times);
            fresh.extend(&new_times);
            fresh.sort_unstable();
            fresh.dedup();
            let nodes = entry.probe.nodes_per_tree;
            let chain = entry.probe.series.chain().clone();
            entry.probe = Versioned::new(TreeSeries::compute(model, &chain, &fresh)?);
            entry.probe.nodes_per_tree = nodes;
        }
        for &t in &new_times {
            entry.probe.add(t)?;
        }
        let snapshots = entry.snapshots.slot(choice);
        let probe = (!new_times.is_empty()).then(|| entry.probe.slot(choice));
        let entry = &*entry;
        Ok(TreesAnswer {
            snapshots: &entry.snapshots.trees[snapshots].trees,
            probe: probe.map(|i| &entry.probe.trees[i].trees),
        })
    }

    /// Starts afresh every probe series that one more time would take over its budget,
    /// so that the next new time does not wait for it; returns whether it did any work.
    /// Meant to run when no request is waiting.
    pub fn maintain(&mut self) -> Result<bool, ApiError> {
        let budget = self.probe_budget;
        let mut worked = false;
        for (_, entry) in self.entries.iter_mut() {
            let base = probe_base(&entry.base_times);
            let probe = &entry.probe;
            if probe.series.times().len() > base.len() && probe.cost(1) > budget {
                let nodes = probe.nodes_per_tree;
                let chain = probe.series.chain().clone();
                entry.probe = Versioned::new(TreeSeries::compute(self.model, &chain, &base)?);
                entry.probe.nodes_per_tree = nodes;
                worked = true;
            }
        }
        Ok(worked)
    }

    /// The entry of `key`, built if needed (its probe series over [`probe_base`], and
    /// dropping the least recently used entry when the cache is full), now the most
    /// recently used.
    fn entry(
        &mut self,
        key: &SeriesKey,
        base_times: &[u64],
    ) -> Result<&mut SeriesEntry<'m>, ApiError> {
        let model = self.model;
        self.entries.try_get_or_insert_mut_ref(key, || {
            let by = &key.0;
            let options = ClassifierOptions {
                domain_prefixes: by.domains.clone(),
                ..ClassifierOptions::default()
            };
            let chain = parse_classifiers(&by.text(), options)?;
            let snapshots = TreeSeries::compute(model, &chain, base_times)?;
            let probe = TreeSeries::compute(model, &chain, &probe_base(base_times))?;
            Ok(SeriesEntry {
                base_times: base_times.to_vec(),
                snapshots: Versioned::new(snapshots),
                probe: Versioned::new(probe),
            })
        })
    }
}

/// The times a fresh probe series holds: the window's first and last snapshot times
/// and [`PROBE_ANCHORS`] evenly picked snapshot times between them.
fn probe_base(base_times: &[u64]) -> Vec<u64> {
    let n = base_times.len();
    let mut base: Vec<u64> = (0..=PROBE_ANCHORS + 1)
        .filter_map(|i| base_times.get((n.saturating_sub(1)) * i / (PROBE_ANCHORS + 1)))
        .copied()
        .collect();
    base.dedup();
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use memlens_heap::{AllocKind, FrameInfo, HeapModelBuilder, StackId};

    /// Two sites: `leak` grows steadily, `churn` allocates and frees.
    pub(crate) fn model() -> HeapModel {
        let mut b = HeapModelBuilder::new();
        b.start(0);
        let frame = |b: &mut HeapModelBuilder, name: &str| {
            b.add_frame(FrameInfo {
                function: name,
                file: "prog.c",
                line: 1,
                module: "prog",
                inlined_into: None,
                kind: memlens_vocab::FrameKind::User,
            })
        };
        let leak = frame(&mut b, "leak");
        let churn = frame(&mut b, "churn");
        let leak = b.add_stack(StackId::ROOT, leak);
        let churn = b.add_stack(StackId::ROOT, churn);
        for i in 0..100u64 {
            b.alloc(i * 10 + 1, 1, 0x1000 + i * 64, 100, leak, AllocKind::Malloc);
            b.alloc(
                i * 10 + 2,
                2,
                0x90000 + i * 64,
                50,
                churn,
                AllocKind::Malloc,
            );
            b.free(i * 10 + 7, 2, 0x90000 + i * 64);
        }
        b.end(1000)
    }

    const BASE: &[u64] = &[0, 500, 1000];

    #[test]
    fn new_times_keep_the_order_of_the_snapshot_trees() {
        let model = model();
        let mut cache = SeriesCache::new(&model);
        let by = (ClassifierList::parse("site", Vec::new()).unwrap(), None);
        let choice = TreeChoice {
            metric: Metric::Bytes,
            sort: SortStrategy::AbsoluteGrowth,
            prune: true,
        };
        let keys = |tree: &Tree| -> Vec<String> {
            tree.root.children.iter().map(|c| c.key.clone()).collect()
        };
        let answer = cache.trees(&by, BASE, &[], choice).unwrap();
        assert_eq!(answer.snapshots.times_ns, vec![0, 500, 1000]);
        assert!(answer.probe.is_none());
        let at_end = keys(answer.tree(1000).unwrap());
        assert_eq!(at_end, vec!["leak"]);
        let answer = cache.trees(&by, BASE, &[253, 500], choice).unwrap();
        assert_eq!(answer.snapshots.times_ns, vec![0, 500, 1000], "never grown");
        assert_eq!(answer.probe.unwrap().times_ns, vec![0, 253, 500, 1000]);
        let at_253 = answer.tree(253).unwrap();
        assert_eq!(
            at_253.root.bytes,
            26 * 100 + 50,
            "26 leaked blocks and one live churn block"
        );
        assert_eq!(
            keys(at_253),
            vec!["leak", "Other"],
            "the churn site, live only between the snapshots, enters after the leak"
        );
        assert_eq!(answer.tree(1000).unwrap().root, cache_root(&model, 1000));
        assert!(cache.trees(&by, BASE, &[2000], choice).is_err());
        let sight = (ClassifierList::parse("sight", Vec::new()).unwrap(), None);
        assert!(cache.trees(&sight, BASE, &[], choice).is_err());
        // Many new times: the probe starts afresh (now or ahead of time) and answers.
        // The site trees have 3 nodes: a budget of 57 node-trees is 19 times.
        cache.probe_budget = 57;
        for round in 0..3 {
            let many: Vec<u64> = (1..=16).map(|i| i * 13 + round).collect();
            let answer = cache.trees(&by, BASE, &many, choice).unwrap();
            assert!(many.iter().all(|&t| answer.tree(t).is_some()));
            let held = answer.probe.unwrap().times_ns.len();
            assert!(held * 3 <= 57, "within its budget: {held} times");
        }
        assert!(
            cache.maintain().unwrap(),
            "a probe of 18 times has used its budget"
        );
        assert!(!cache.maintain().unwrap(), "an empty probe needs nothing");
    }

    /// The root at `t` of a fresh snapshot series (for comparing answers).
    fn cache_root(model: &HeapModel, t: u64) -> memlens_heap::Node {
        let by = (ClassifierList::parse("site", Vec::new()).unwrap(), None);
        let mut cache = SeriesCache::new(model);
        let choice = TreeChoice {
            metric: Metric::Bytes,
            sort: SortStrategy::AbsoluteGrowth,
            prune: true,
        };
        cache
            .trees(&by, BASE, &[], choice)
            .unwrap()
            .tree(t)
            .unwrap()
            .root
            .clone()
    }

    #[test]
    fn a_window_orders_by_growth_within_it_and_keeps_times_inside() {
        let model = model();
        let mut cache = SeriesCache::new(&model);
        let choice = TreeChoice {
            metric: Metric::Bytes,
            sort: SortStrategy::AbsoluteGrowth,
            prune: false,
        };
        let window = Window {
            from_ns: 300,
            to_ns: 600,
        };
        let key = (
            ClassifierList::parse("site", Vec::new()).unwrap(),
            Some(window),
        );
        let answer = cache.trees(&key, &[300, 450, 600], &[], choice).unwrap();
        assert_eq!(answer.snapshots.times_ns, vec![300, 450, 600]);
        let first = &answer.tree(300).unwrap().root;
        let leak = first.children.iter().find(|c| c.key == "leak").unwrap();
        assert_eq!(leak.bytes, 30 * 100, "the leak's 30 blocks at 300 ns");
        let last = &answer.tree(600).unwrap().root;
        let leak = last.children.iter().find(|c| c.key == "leak").unwrap();
        assert_eq!(
            leak.growth_bytes,
            30 * 100,
            "growth within the window: 30 more blocks"
        );
        let e = cache
            .trees(&key, &[300, 600], &[100], choice)
            .err()
            .unwrap();
        assert!(e.message.contains("outside the window"), "{}", e.message);
    }
}
