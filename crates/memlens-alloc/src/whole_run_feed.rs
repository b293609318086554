//! The allocation-map builder's feed of the whole run at a glance
//! ([`crate::AllocModelBuilder::track_whole_run`]): the blocks that die before the
//! window go to a [`WholeRunBuilder`] on a thread of its own, in batches, so that the
//! pass reading the events (one thread, the slowest of the pipeline) pays a push per
//! block, not the grid's additions. A run of fewer blocks than a batch starts no
//! thread. The queue holds a few batches at most: a pass faster than the additions
//! waits for them, so memory stays bounded.
//!
//! A copy of the feed (the builder's `snapshot`) asks the thread for a copy of its
//! grid, so the copy adds up exactly what the original has been fed.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use crate::block::Block;
use crate::ids::ProcessId;
use crate::whole_run::{WholeRunBuilder, WholeRunMap};

/// Blocks per batch handed to the thread.
const BATCH: usize = 1 << 14;

/// Batches queued for the thread at most.
const QUEUED: usize = 4;

/// A block that died: process, address, bytes, allocation and end.
type Dead = (ProcessId, u64, u64, u64, u64);

/// What the thread is asked.
enum Ask {
    /// Add these blocks.
    Add(Vec<Dead>),
    /// Send a copy of the grid so far.
    Copy(SyncSender<WholeRunBuilder>),
}

/// Where the grid is.
enum Grid {
    /// Here (no batch was full yet).
    Here(Box<WholeRunBuilder>),
    /// On its thread.
    Away {
        asks: SyncSender<Ask>,
        thread: JoinHandle<WholeRunBuilder>,
    },
}

/// The whole run's blocks, added up on a thread of their own.
pub(crate) struct WholeRunFeed {
    pending: Vec<Dead>,
    grid: Grid,
}

impl WholeRunFeed {
    /// An empty grid over the run `[start, end]`.
    pub(crate) fn new(start: u64, end: u64) -> WholeRunFeed {
        WholeRunFeed {
            pending: Vec::new(),
            grid: Grid::Here(Box::new(WholeRunBuilder::new(start, end))),
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
        self.pending
            .push((process, block.addr, bytes, block.t_alloc, t_free));
        if self.pending.len() >= BATCH {
            self.hand_over();
        }
    }

    /// Hands the pending blocks to the thread, starting it the first time.
    fn hand_over(&mut self) {
        let batch = std::mem::replace(&mut self.pending, Vec::with_capacity(BATCH));
        if let Grid::Here(grid) = &mut self.grid {
            let grid = std::mem::replace(grid, Box::new(WholeRunBuilder::new(0, 1)));
            let (asks, received) = sync_channel(QUEUED);
            let thread = std::thread::spawn(move || add_up(*grid, received));
            self.grid = Grid::Away { asks, thread };
        }
        if let Grid::Away { asks, .. } = &self.grid {
            // The thread only stops when the feed drops its sender (in `finish`).
            let _ = asks.send(Ask::Add(batch));
        }
    }

    /// The grid of occupancies of every block fed.
    pub(crate) fn finish(self) -> WholeRunMap {
        let mut grid = match self.grid {
            Grid::Here(grid) => *grid,
            Grid::Away { asks, thread } => {
                drop(asks);
                match thread.join() {
                    Ok(grid) => grid,
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        };
        add(&mut grid, &self.pending);
        grid.finish()
    }
}

impl Clone for WholeRunFeed {
    /// A feed that has been fed the same blocks, its grid here.
    fn clone(&self) -> WholeRunFeed {
        let grid = match &self.grid {
            Grid::Here(grid) => grid.clone(),
            Grid::Away { asks, .. } => {
                let (reply, copy) = sync_channel(1);
                let copied = asks
                    .send(Ask::Copy(reply))
                    .ok()
                    .and_then(|()| copy.recv().ok());
                let Some(grid) = copied else {
                    unreachable!("the thread answers while its feed lives")
                };
                Box::new(grid)
            }
        };
        WholeRunFeed {
            pending: self.pending.clone(),
            grid: Grid::Here(grid),
        }
    }
}

/// The thread: adds up the batches until the feed hangs up, then hands back the grid.
fn add_up(mut grid: WholeRunBuilder, asks: Receiver<Ask>) -> WholeRunBuilder {
    for ask in asks {
        match ask {
            Ask::Add(batch) => add(&mut grid, &batch),
            Ask::Copy(reply) => {
                let _ = reply.send(grid.clone());
            }
        }
    }
    grid
}

fn add(grid: &mut WholeRunBuilder, blocks: &[Dead]) {
    for &(process, addr, bytes, t_alloc, t_free) in blocks {
        grid.add(process, addr, bytes, t_alloc, t_free);
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
        assert!(
            matches!(feed.grid, Grid::Away { .. }),
            "a thread was started"
        );
        assert_eq!(feed.finish(), here.finish());
        let (c, mid) = copy.expect("a copy was made");
        assert_eq!(c.finish(), mid.finish());
    }
}
