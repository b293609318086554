//! Memory trees at K snapshot times in one pass over the allocations (DESIGN §5.1).
//!
//! For each allocation we find the index `i` of the first snapshot `>= t_alloc` and the
//! index `j` of the first snapshot `>= t_free`; the allocation is live exactly at the
//! snapshots `i..j`. Instead of adding its size to `j - i` trees, we add `+size` at `i`
//! and `-size` at `j` in a per-node difference array and prefix-sum each node once at
//! the end. We add only at the allocation's *leaf* and roll subtree totals up
//! afterwards, which equals adding on every node of the path. Cost: O(N·levels) hash
//! lookups to classify, O(nodes·K) to finish; memory: two `nodes × (K+1)` arrays plus
//! one `u32` per allocation (its cached leaf, for adding times later).
//!
//! Allocations live at no snapshot (`i == j`) are skipped before classification, which
//! makes churn-heavy traces cheap. A block whose key or size changes while it lives
//! (`realloc`, or a time-dependent classifier such as `age`) is cut into segments at
//! those times, and each segment is handled like an allocation of its own: exact, and
//! `age` costs one segment per bucket bound a block crosses rather than a pass per
//! snapshot.

use crate::classifiers::{Classifier, ClassifierChain};
use crate::error::HeapError;
use crate::ids::AllocId;
use crate::model::HeapModel;
use crate::union_tree::{ROOT, UnionTree};

/// No cached leaf for this allocation yet.
pub(crate) const NO_LEAF: u32 = u32::MAX;

/// Unpruned memory trees of one model at a list of times, over one union tree (every
/// node any of the trees has, numbered once, parents before children).
pub struct TreeSeries<'m> {
    pub(crate) model: &'m HeapModel,
    pub(crate) chain: ClassifierChain,
    pub(crate) classifiers: Vec<Box<dyn Classifier + 'm>>,
    pub(crate) tree: UnionTree,
    pub(crate) times: Vec<u64>,
    /// Subtree bytes per time and node (`bytes[k][node]`); one column per time, so a
    /// time can be inserted without moving the others.
    pub(crate) bytes: Vec<Vec<u64>>,
    /// Subtree objects per time and node.
    pub(crate) objects: Vec<Vec<u64>>,
    /// Leaf per allocation when it has one key and size for its whole life, else `NO_LEAF`.
    pub(crate) leaf_of: Vec<u32>,
    pub(crate) time_dependent: bool,
}

impl<'m> TreeSeries<'m> {
    /// Computes the trees of `chain` at `times` (sorted, distinct, inside the run; see
    /// [`SnapshotTimes::resolve`](crate::SnapshotTimes::resolve)).
    pub fn compute(
        model: &'m HeapModel,
        chain: &ClassifierChain,
        times: &[u64],
    ) -> Result<Self, HeapError> {
        if times.is_empty() {
            return Err(HeapError::NoSnapshotTimes);
        }
        let run = model.run();
        if let Some(&time_ns) = times.iter().find(|&&t| !run.contains(t)) {
            return Err(HeapError::TimeOutsideRun { time_ns, run });
        }
        let mut times = times.to_vec();
        times.sort_unstable();
        times.dedup();
        let classifiers = chain.bind(model);
        let time_dependent = classifiers.iter().any(|c| c.is_time_dependent());
        let mut series = TreeSeries {
            model,
            chain: chain.clone(),
            tree: UnionTree::new(classifiers.len()),
            classifiers,
            times,
            bytes: Vec::new(),
            objects: Vec::new(),
            leaf_of: vec![NO_LEAF; model.len()],
            time_dependent,
        };
        series.one_pass();
        Ok(series)
    }

    /// The snapshot times, ascending.
    pub fn times(&self) -> &[u64] {
        &self.times
    }

    /// The number of nodes in the union tree, including the root.
    pub fn node_count(&self) -> usize {
        self.tree.len()
    }

    /// The classifier chain the trees were built with.
    pub fn chain(&self) -> &ClassifierChain {
        &self.chain
    }

    /// The model the trees describe.
    pub fn model(&self) -> &'m HeapModel {
        self.model
    }

    /// Total live bytes and objects at snapshot `k` (the root's values).
    pub fn totals(&self, k: usize) -> (u64, u64) {
        (self.bytes[k][0], self.objects[k][0])
    }

    fn one_pass(&mut self) {
        let k_count = self.times.len();
        let stride = k_count + 1;
        let model = self.model;
        // Per node, `stride` pairs of (bytes, objects) differences, interleaved so that
        // one update touches one cache line.
        let mut diff: Vec<[i64; 2]> = vec![[0, 0]; stride];
        let mut first = 0usize;
        let mut cuts: Vec<(u64, Option<u64>)> = Vec::new();
        let mut change_times: Vec<u64> = Vec::new();
        for a in 0..model.len() {
            let t_alloc = model.t_alloc[a];
            // Allocation ids are in time order, so the first snapshot index only grows.
            while first < k_count && self.times[first] < t_alloc {
                first += 1;
            }
            if first == k_count {
                break;
            }
            let t_free = model.t_free[a];
            let last = first + self.times[first..].partition_point(|&t| t < t_free);
            if first == last {
                continue;
            }
            let alloc = AllocId(a as u32);
            let count = model.objects_of(alloc) as i64;
            let mut add =
                |tree: &mut UnionTree, from: usize, to: usize, size: u64, at: u64| -> u32 {
                    let leaf = tree.leaf(&self.classifiers, alloc, size, at) as usize;
                    if diff.len() < tree.len() * stride {
                        diff.resize(tree.len() * stride, [0, 0]);
                    }
                    let d = &mut diff[leaf * stride + from];
                    d[0] += size as i64;
                    d[1] += count;
                    let d = &mut diff[leaf * stride + to];
                    d[0] -= size as i64;
                    d[1] -= count;
                    leaf as u32
                };
            if !model.was_resized(alloc) && !self.time_dependent {
                self.leaf_of[a] = add(&mut self.tree, first, last, model.size[a], t_alloc);
                continue;
            }
            // Cut the life into segments of constant size and key.
            cuts.clear();
            cuts.extend(
                model
                    .size_history(alloc)
                    .skip(1)
                    .map(|(t, size)| (t, Some(size))),
            );
            for c in self.classifiers.iter().filter(|c| c.is_time_dependent()) {
                change_times.clear();
                c.change_times(alloc, &mut change_times);
                cuts.extend(change_times.iter().map(|&t| (t, None)));
            }
            cuts.sort_by_key(|&(t, _)| t);
            let mut start = t_alloc;
            let mut size = model.size[a];
            let mut next = 0;
            loop {
                let end = cuts.get(next).map_or(t_free, |&(t, _)| t);
                let from = self.times.partition_point(|&t| t < start);
                let to = self.times.partition_point(|&t| t < end);
                if from < to {
                    add(&mut self.tree, from, to, size, start);
                }
                if next == cuts.len() {
                    break;
                }
                while let Some(&(t, new_size)) = cuts.get(next).filter(|&&(t, _)| t == end) {
                    size = new_size.unwrap_or(size);
                    start = t;
                    next += 1;
                }
            }
        }
        let nodes = self.tree.len();
        diff.resize(nodes * stride, [0, 0]);
        let (mut bytes, mut objects) =
            (prefix_sums(&diff, stride, 0), prefix_sums(&diff, stride, 1));
        self.tree.roll_up(&mut bytes, k_count);
        self.tree.roll_up(&mut objects, k_count);
        self.bytes = columns(&bytes, k_count);
        self.objects = columns(&objects, k_count);
    }
}

impl TreeSeries<'_> {
    /// The key labels from below the root down to union-tree node `node`.
    pub(crate) fn full_key(&self, mut node: u32) -> Vec<String> {
        let mut keys = Vec::new();
        while node != ROOT {
            let level = self.tree.level[node as usize] as usize;
            keys.push(self.classifiers[level].label(self.tree.key[node as usize]));
            node = self.tree.parent[node as usize];
        }
        keys.reverse();
        keys
    }
}

/// Splits node-major values with `k_count` times per node into one column per time.
fn columns(values: &[u64], k_count: usize) -> Vec<Vec<u64>> {
    (0..k_count)
        .map(|k| values.iter().skip(k).step_by(k_count).copied().collect())
        .collect()
}

/// Turns field `field` of node-major difference pairs (stride `K + 1`, the last slot a
/// sink) into node-major values (stride `K`).
fn prefix_sums(diff: &[[i64; 2]], stride: usize, field: usize) -> Vec<u64> {
    let k_count = stride - 1;
    let mut values = Vec::with_capacity(diff.len() / stride * k_count);
    for node in diff.chunks_exact(stride) {
        let mut running = 0i64;
        for d in &node[..k_count] {
            running += d[field];
            values.push(running as u64);
        }
    }
    values
}
