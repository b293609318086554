//! Adding one snapshot time to an already-computed series: a viewer's time-travel step.
//!
//! The tree at a new time `t` is the tree at the nearest earlier snapshot `p`, plus the
//! blocks allocated in `(p, t]` and still live at `t`, minus the blocks live at `p` and
//! freed in `(p, t]`, with the blocks resized in `(p, t]` moved from their size (and
//! key) at `p` to their size at `t`. All three event lists are already in time order in
//! the model, so the step costs O(events in `(p, t]` + nodes) instead of O(N): a few
//! milliseconds for a series of 50 times over 10 M allocations.
//!
//! With a time-dependent classifier (`age`) every key can change between `p` and `t`, so
//! the step instead classifies every block live at `t` (O(N)). Before the first snapshot
//! the step starts from the empty heap at the run's start.

use rustc_hash::FxHashSet;

use crate::error::HeapError;
use crate::ids::AllocId;
use crate::model::NEVER_FREED;
use crate::trees::{NO_LEAF, TreeSeries};

impl TreeSeries<'_> {
    /// Adds one snapshot time and computes its tree, keeping the existing ones; returns
    /// the new time's index (or the existing index if the time is already present).
    pub fn add_time(&mut self, t: u64) -> Result<usize, HeapError> {
        let run = self.model.run();
        if !run.contains(t) {
            return Err(HeapError::TimeOutsideRun { time_ns: t, run });
        }
        let index = self.times.partition_point(|&x| x < t);
        if self.times.get(index) == Some(&t) {
            return Ok(index);
        }
        let (bytes, objects) = if self.time_dependent {
            self.column(t, false)
        } else {
            let previous = index.checked_sub(1);
            self.column_from(previous, t)
        };
        // Nodes created by this step are zero at the other times.
        for column in self.bytes.iter_mut().chain(self.objects.iter_mut()) {
            column.resize(self.tree.len(), 0);
        }
        self.bytes.insert(index, bytes);
        self.objects.insert(index, objects);
        self.times.insert(index, t);
        Ok(index)
    }

    /// The leaf and size of `alloc` at `t` (inside its life), caching the leaf of blocks
    /// that keep one key for life. Only for chains without time-dependent classifiers.
    fn leaf_and_size(&mut self, alloc: AllocId, t: u64) -> (usize, u64) {
        let a = alloc.index();
        let model = self.model;
        if self.leaf_of[a] != NO_LEAF {
            return (self.leaf_of[a] as usize, model.size[a]);
        }
        if model.was_resized(alloc) {
            let size = model.size_at(alloc, t);
            return (
                self.tree.leaf(&self.classifiers, alloc, size, t) as usize,
                size,
            );
        }
        let leaf = self
            .tree
            .leaf(&self.classifiers, alloc, model.size[a], model.t_alloc[a]);
        self.leaf_of[a] = leaf;
        (leaf as usize, model.size[a])
    }

    /// The column at `t` from the column at snapshot `previous` (or the empty heap) by
    /// replaying the events in between; see the module documentation.
    fn column_from(&mut self, previous: Option<usize>, t: u64) -> (Vec<u64>, Vec<u64>) {
        let model = self.model;
        // Self (non-subtree) values at the previous snapshot: subtree totals minus the
        // children's totals.
        let mut counts: Vec<[i64; 2]> = vec![[0, 0]; self.tree.len()];
        if let Some(k) = previous {
            for (node, c) in counts.iter_mut().enumerate() {
                *c = [self.bytes[k][node] as i64, self.objects[k][node] as i64];
            }
            for node in 1..self.tree.len() {
                let parent = self.tree.parent[node] as usize;
                counts[parent][0] -= self.bytes[k][node] as i64;
                counts[parent][1] -= self.objects[k][node] as i64;
            }
        }
        let add =
            |series: &mut Self, counts: &mut Vec<[i64; 2]>, alloc: AllocId, at: u64, sign: i64| {
                let (leaf, size) = series.leaf_and_size(alloc, at);
                if leaf >= counts.len() {
                    counts.resize(series.tree.len(), [0, 0]);
                }
                counts[leaf][0] += sign * size as i64;
                counts[leaf][1] += sign * series.model.objects_of(alloc) as i64;
            };
        let p = previous.map(|k| self.times[k]);
        // Blocks allocated in (p, t] and live at t.
        let born_from = p.map_or(0, |p| model.allocated_by(p));
        for a in born_from..model.allocated_by(t) {
            if model.t_free[a] > t {
                add(self, &mut counts, AllocId(a as u32), t, 1);
            }
        }
        if let Some(p) = p {
            // Blocks live at p and freed in (p, t].
            let order = &model.free_order;
            let lo = order.partition_point(|&a| model.t_free(a) <= p);
            let hi = order.partition_point(|&a| model.t_free(a) <= t);
            for &alloc in &order[lo..hi] {
                if model.t_alloc(alloc) <= p {
                    add(self, &mut counts, alloc, p, -1);
                }
            }
            // Blocks live at both times and resized in between.
            let resizes = &model.resizes;
            let lo = resizes.t_ns.partition_point(|&r| r <= p);
            let hi = resizes.t_ns.partition_point(|&r| r <= t);
            let mut moved = FxHashSet::default();
            for &alloc in &resizes.alloc[lo..hi] {
                if model.t_alloc(alloc) <= p && model.t_free(alloc) > t && moved.insert(alloc) {
                    add(self, &mut counts, alloc, p, -1);
                    add(self, &mut counts, alloc, t, 1);
                }
            }
        }
        counts.resize(self.tree.len(), [0, 0]);
        let mut bytes: Vec<u64> = counts.iter().map(|c| c[0] as u64).collect();
        let mut objects: Vec<u64> = counts.iter().map(|c| c[1] as u64).collect();
        self.tree.roll_up(&mut bytes, 1);
        self.tree.roll_up(&mut objects, 1);
        (bytes, objects)
    }

    /// Subtree bytes and objects per node of the blocks live at `t` (with
    /// `never_freed_only`, of the blocks never freed, classified as at `t`).
    pub(crate) fn column(&mut self, t: u64, never_freed_only: bool) -> (Vec<u64>, Vec<u64>) {
        let model = self.model;
        // (bytes, objects) per node, interleaved so that one update touches one line.
        let mut counts = vec![[0u64; 2]; self.tree.len()];
        for a in 0..model.allocated_by(t) {
            let t_free = model.t_free[a];
            if t_free <= t || (never_freed_only && t_free != NEVER_FREED) {
                continue;
            }
            // Fast path: a block with one key and size for life, classified before.
            let cached = self.leaf_of[a];
            let (leaf, size) = if cached != NO_LEAF {
                (cached as usize, model.size[a])
            } else {
                let alloc = AllocId(a as u32);
                if !model.was_resized(alloc) && !self.time_dependent {
                    let leaf =
                        self.tree
                            .leaf(&self.classifiers, alloc, model.size[a], model.t_alloc[a]);
                    self.leaf_of[a] = leaf;
                    (leaf as usize, model.size[a])
                } else {
                    let size = model.size_at(alloc, t);
                    (
                        self.tree.leaf(&self.classifiers, alloc, size, t) as usize,
                        size,
                    )
                }
            };
            if leaf >= counts.len() {
                counts.resize(self.tree.len(), [0, 0]);
            }
            counts[leaf][0] += size;
            counts[leaf][1] += model.objects_of(AllocId(a as u32));
        }
        counts.resize(self.tree.len(), [0, 0]);
        let mut bytes: Vec<u64> = counts.iter().map(|c| c[0]).collect();
        let mut objects: Vec<u64> = counts.iter().map(|c| c[1]).collect();
        self.tree.roll_up(&mut bytes, 1);
        self.tree.roll_up(&mut objects, 1);
        (bytes, objects)
    }
}
