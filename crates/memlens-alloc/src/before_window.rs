//! The blocks of a run before the allocation map's window starts
//! ([`crate::AllocModelBuilder::start_at`]): only those still live when it starts are
//! drawn, so until then the builder keeps the live set alone (one entry per live
//! block), and a block that dies before the window costs nothing afterwards. Memory is
//! bounded by the live set, not by the events before the window.

use rustc_hash::FxHashMap;

use crate::block::{Block, Latency};
use crate::ids::ProcessId;

/// The live blocks of each process before the window.
#[derive(Clone)]
pub(crate) struct BeforeWindow {
    /// When the window starts, ns on the model's timeline.
    pub(crate) start: u64,
    live: FxHashMap<(ProcessId, u64), (Block, Latency)>,
}

impl BeforeWindow {
    /// Nothing live yet; the window starts at `start`.
    pub(crate) fn new(start: u64) -> BeforeWindow {
        BeforeWindow {
            start,
            live: FxHashMap::default(),
        }
    }

    /// Begins `block` of `process`; returns the block that was still live at its
    /// address, if any (the builder's repair: the older one ends there, here it is
    /// dropped).
    pub(crate) fn begin(
        &mut self,
        process: ProcessId,
        block: Block,
        latency: Latency,
    ) -> Option<Block> {
        self.live
            .insert((process, block.addr), (block, latency))
            .map(|(old, _)| old)
    }

    /// Ends the live block at `addr`, returning it; `None` when none was live there.
    pub(crate) fn end(&mut self, process: ProcessId, addr: u64) -> Option<Block> {
        self.live.remove(&(process, addr)).map(|(block, _)| block)
    }

    /// The blocks live so far, in allocation order (by time, then address, as the
    /// model keeps its blocks): what a checkpoint of the builder keeps.
    pub(crate) fn live_refs(&self) -> Vec<(ProcessId, &Block, &Latency)> {
        let live = self.live.iter();
        let mut live: Vec<_> = live.map(|(&(p, _), (b, l))| (p, b, l)).collect();
        live.sort_unstable_by_key(|(p, b, _)| (b.t_alloc, b.addr, p.0));
        live
    }

    /// [`BeforeWindow::live_refs`], copied.
    pub(crate) fn live(&self) -> Vec<(ProcessId, Block, Latency)> {
        let live = self.live_refs().into_iter();
        live.map(|(p, &b, &l)| (p, b, l)).collect()
    }

    /// The window starts at `start`, with `live` live so far (a resumed checkpoint).
    pub(crate) fn with_live(start: u64, live: Vec<(ProcessId, Block, Latency)>) -> BeforeWindow {
        let live = live.into_iter().map(|(p, b, l)| ((p, b.addr), (b, l)));
        BeforeWindow {
            start,
            live: live.collect(),
        }
    }
}
