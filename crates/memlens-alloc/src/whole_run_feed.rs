//! The allocation-map builder's feed of the whole run at a glance
//! ([`crate::AllocModelBuilder::track_whole_run`]): the blocks that die before the
//! window go to a [`WholeRunBuilder`] on a thread of its own, in batches of 16 K, four
//! queued at most (`memlens-vocab`'s [`BatchThread`]), so that the pass reading the
//! events pays a push per block, not the grid's additions. A copy of the feed (the
//! builder's `snapshot`) adds up exactly what the original has been fed.

use memlens_vocab::batch_thread::{AddUp, BatchThread};

use crate::block::Block;
use crate::ids::ProcessId;
use crate::whole_run::{WholeRunBuilder, WholeRunMap};

/// Blocks per batch handed to the thread.
const BATCH: usize = 1 << 14;

/// Batches queued for the thread at most.
const QUEUED: usize = 4;

/// A block that died: process, address, bytes, allocation and end.
type Dead = (ProcessId, u64, u64, u64, u64);

impl AddUp<Dead> for WholeRunBuilder {
    fn add(&mut self, blocks: &[Dead]) {
        for &(process, addr, bytes, t_alloc, t_free) in blocks {
            WholeRunBuilder::add(self, process, addr, bytes, t_alloc, t_free);
        }
    }
}

/// The whole run's blocks, added up on a thread of their own; a copy holds what the
/// original has been fed.
#[derive(Clone)]
pub(crate) struct WholeRunFeed {
    grid: BatchThread<WholeRunBuilder, Dead>,
}

impl WholeRunFeed {
    /// An empty grid over the run `[start, end]`.
    pub(crate) fn new(start: u64, end: u64) -> WholeRunFeed {
        WholeRunFeed {
            grid: BatchThread::new(WholeRunBuilder::new(start, end), BATCH, QUEUED),
        }
    }

    /// Adds `block` of `process`, ending at `t_free`: its requested bytes (a mapping's
    /// pages), which the builder knows as soon as it is allocated (the reserved size
    /// is the model's, found with the bins at the end).
    #[inline]
    pub(crate) fn add_block(&mut self, process: ProcessId, block: &Block, t_free: u64) {
        let bytes = if block.mapping {
            block.reserved
        } else {
            block.requested
        };
        self.grid
            .push((process, block.addr, bytes, block.t_alloc, t_free));
    }

    /// The grid of occupancies of every block fed.
    pub(crate) fn finish(self) -> WholeRunMap {
        self.grid.finish().finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{SiteId, ThreadId};

    fn block(i: u64) -> Block {
        Block {
            t_alloc: i * 7 % 100_000,
            t_free: u64::MAX,
            addr: 0x10_0000 + (i * 2654435761 % (1 << 24)),
            requested: 1 + i % 700,
            reserved: 1 + i % 700,
            thread: ThreadId(0),
            site: SiteId::UNKNOWN,
            free_site: SiteId::UNKNOWN,
            freed: true,
            from_realloc: false,
            mapping: false,
        }
    }

    #[test]
    fn batches_added_on_a_thread_make_the_grid_of_the_blocks_added_here() {
        let n = 3 * BATCH as u64 + 123;
        let mut feed = WholeRunFeed::new(0, 200_000);
        let mut here = WholeRunBuilder::new(0, 200_000);
        let mut copy = None;
        for i in 0..n {
            let b = block(i);
            let end = b.t_alloc + i % 5000;
            feed.add_block(ProcessId((i % 2) as u32), &b, end);
            here.add(
                ProcessId((i % 2) as u32),
                b.addr,
                b.requested,
                b.t_alloc,
                end,
            );
            if i == 2 * BATCH as u64 + 5 {
                // A copy midway holds what was fed so far, and goes on by itself.
                let mut c = feed.clone();
                let mut mid = here.clone();
                c.add_block(ProcessId(1), &block(1), 99);
                mid.add(
                    ProcessId(1),
                    block(1).addr,
                    block(1).requested,
                    block(1).t_alloc,
                    99,
                );
                copy = Some((c, mid));
            }
        }
        assert!(feed.grid.on_its_thread(), "a thread was started");
        assert_eq!(feed.finish(), here.finish());
        let (c, mid) = copy.expect("a copy was made");
        assert_eq!(c.finish(), mid.finish());
    }
}
