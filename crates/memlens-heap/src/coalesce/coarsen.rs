//! The grid of a run still being recorded ([`Coalescer::growing`]): evenly spaced
//! lines over a horizon, which doubles when the run passes it, every other line going
//! (see the parent module).
//!
//! Coarsening closes every bucket up to the old horizon, then walks the closed
//! instants once: an instant on the new grid (a line kept, or a pinned time) stays, and
//! between two of those only the first highest and the first lowest live heap stay
//! (when above, or below, the value at the new bucket's start), as a coalescer on the
//! new grid would have found them. Every row then moves to the first instant kept at or
//! after its own; rows that now meet (same group and instants) merge, and a row born
//! and dead between the same two kept instants was live at none of them and goes. The
//! cost is one pass over the instants and the rows, a few times over a run (the
//! horizon doubles), never over the events.

use super::{Coalescer, Growing, RowKey};

impl Coalescer {
    /// A coalescer for a run still being recorded: exact at `lines + 1` evenly spaced
    /// times over `[0, horizon]`, at `pinned` times, and at each bucket's peak and
    /// dip; past the horizon, the horizon doubles and the lines with it, every other
    /// line going (so `lines` stay between half and all of them over the run so far).
    pub(crate) fn growing(horizon: u64, lines: u64, mut pinned: Vec<u64>) -> Coalescer {
        pinned.sort_unstable();
        pinned.dedup();
        let growing = Growing {
            lines: lines.max(1),
            horizon: horizon.max(1),
            pinned,
        };
        let mut coalescer = Coalescer::new(growing.grid());
        coalescer.growing = Some(growing);
        coalescer
    }

    /// Doubles the horizon (see the module documentation).
    pub(super) fn coarsen(&mut self) {
        let Some(growing) = self.growing.as_mut() else {
            return;
        };
        let old = growing.horizon;
        growing.horizon = old.saturating_mul(2);
        let grid = growing.grid();
        while self.grid.get(self.next).is_some_and(|&end| end <= old) {
            self.close_bucket();
        }
        let closed = grid.partition_point(|&t| t <= old);
        self.merge_buckets(&grid[..closed]);
        self.grid = grid[closed..].to_vec();
        self.next = 0;
    }

    /// Keeps the closed instants on `lines` and each new bucket's extremes, and moves
    /// the rows onto them.
    fn merge_buckets(&mut self, lines: &[u64]) {
        let n = self.instants.len();
        let mut keep = vec![false; n];
        // The first instant of the highest and lowest value since the bucket started,
        // and the value it started with.
        let (mut high, mut low, mut carried): (Option<usize>, Option<usize>, u64) = (None, None, 0);
        let mut line = lines.iter().peekable();
        for i in 0..n {
            let t = self.instants[i];
            while line.next_if(|&&l| l < t).is_some() {}
            if line.next_if(|&&l| l == t).is_some() {
                for extreme in [high.take(), low.take()].into_iter().flatten() {
                    keep[extreme] = true;
                }
                keep[i] = true;
                carried = self.live_at[i];
                continue;
            }
            let bytes = self.live_at[i];
            if bytes > high.map_or(carried, |h| self.live_at[h]) {
                high = Some(i);
            }
            if bytes < low.map_or(carried, |l| self.live_at[l]) {
                low = Some(i);
            }
        }
        for extreme in [high, low].into_iter().flatten() {
            keep[extreme] = true;
        }
        // Each old instant's new index: the first kept at or after it.
        let mut index = Vec::with_capacity(n + 1);
        let mut kept = 0u32;
        for &k in &keep {
            index.push(kept);
            kept += u32::from(k);
        }
        index.push(kept);
        for row in std::mem::take(&mut self.rows) {
            let (from, to) = (index[row.key.from as usize], index[row.key.to as usize]);
            if from == to {
                continue; // live at no instant left
            }
            let key = RowKey {
                from,
                to,
                ..row.key
            };
            let sum = self.batch.entry(key).or_insert((0, 0));
            sum.0 += row.bytes;
            sum.1 += row.objects;
        }
        self.flush_batch();
        let kept = |values: &[u64]| -> Vec<u64> {
            let pairs = values.iter().zip(&keep);
            pairs.filter(|&(_, &k)| k).map(|(&v, _)| v).collect()
        };
        self.instants = kept(&self.instants);
        self.live_at = kept(&self.live_at);
    }
}
