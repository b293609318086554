//! [`AllocModelBuilder`]: turns a stream of allocation events into blocks.
//!
//! Feed processes, threads and sites first, then each process's events in time order
//! (several processes may interleave in any way: each keeps its own live set). A block
//! begins at an allocation and ends at the free of its address; `realloc` ends the old
//! block and begins a new one (flagged [`Block::from_realloc`]) at the new address with
//! the new size, since a rectangle has one address and one height. Odd input is
//! repaired and counted in [`Diagnostics`], never a panic: a free of an address that is
//! not live is ignored; an allocation at an address that is still live first ends the
//! old block there.
//!
//! The program's own mappings (`memlens record --mmap`) are blocks too, flagged
//! [`Block::mapping`], spanning whole pages: a [`MapEvent`] begins one (ending first
//! whatever it maps over, as `MAP_FIXED` does), an [`UnmapEvent`] ends every mapping
//! it touches and begins, at the same time, a block for each part left mapped, so a
//! partial `munmap` shrinks or splits a mapping. Unmapping what no recorded mapping
//! covers (the loader's mappings, the allocator's) is ignored.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::before_window::BeforeWindow;
use crate::block::{Block, Latency, mapped_size};
use crate::ids::{ProcessId, SiteId, ThreadId};
use crate::mapped::LiveRanges;
use crate::model::{AllocModel, Diagnostics, SiteInfo};
use crate::process::{ProcessInfo, ThreadInfo};
use crate::whole_run_feed::WholeRunFeed;

/// An allocation (`malloc`, `calloc`, aligned allocations, `realloc(NULL, n)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocEvent {
    /// When the allocator returned, ns on the model's timeline.
    pub t: u64,
    /// The allocating thread (which names its process).
    pub thread: ThreadId,
    /// The address returned.
    pub addr: u64,
    /// The requested size.
    pub size: u64,
    /// The allocating site.
    pub site: SiteId,
    /// How long the allocator call took, when recorded.
    pub latency_ns: Option<u32>,
}

/// A free of a live address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreeEvent {
    /// When.
    pub t: u64,
    /// The freeing thread.
    pub thread: ThreadId,
    /// The address freed.
    pub addr: u64,
    /// The freeing site ([`SiteId::UNKNOWN`] when the trace has no free stacks).
    pub site: SiteId,
    /// How long the call took, when recorded.
    pub latency_ns: Option<u32>,
}

/// A mapping the program made (`mmap`, or the new range of an `mremap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapEvent {
    /// When the call returned.
    pub t: u64,
    /// The mapping thread.
    pub thread: ThreadId,
    /// The first address.
    pub addr: u64,
    /// The length asked for (the block spans whole pages).
    pub len: u64,
    /// The mapping site.
    pub site: SiteId,
}

/// A range the program unmapped (`munmap`, or the old range of an `mremap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnmapEvent {
    /// When.
    pub t: u64,
    /// The unmapping thread.
    pub thread: ThreadId,
    /// The first address.
    pub addr: u64,
    /// The length (whole pages are unmapped).
    pub len: u64,
}

/// A `realloc` that resized or moved a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReallocEvent {
    /// When the allocator returned.
    pub t: u64,
    /// The thread.
    pub thread: ThreadId,
    /// The block's old address.
    pub old_addr: u64,
    /// Its new address (may equal the old one).
    pub new_addr: u64,
    /// The new requested size.
    pub size: u64,
    /// The site of the `realloc` call.
    pub site: SiteId,
    /// How long the call took, when recorded.
    pub latency_ns: Option<u32>,
}

/// Builds an [`AllocModel`] from events.
#[derive(Clone, Default)]
pub struct AllocModelBuilder {
    pub(crate) processes: Vec<ProcessInfo>,
    pub(crate) threads: Vec<ThreadInfo>,
    pub(crate) thread_ids: FxHashMap<(ProcessId, u32), ThreadId>,
    pub(crate) sites: Vec<SiteInfo>,
    pub(crate) site_ids: FxHashMap<String, crate::ids::SiteId>,
    pub(crate) blocks: Vec<Block>,
    /// Each block's allocator latency; empty until the first recorded latency (most
    /// traces have none), then as long as `blocks`.
    pub(crate) latency: Vec<Latency>,
    pub(crate) live: FxHashMap<(ProcessId, u64), u32>,
    /// Live mappings per process, each with its block.
    pub(crate) mappings: HashMap<ProcessId, LiveRanges<u32>>,
    pub(crate) diagnostics: Diagnostics,
    pub(crate) start: Option<u64>,
    /// The live blocks before the window starts ([`AllocModelBuilder::start_at`]).
    pub(crate) before: Option<BeforeWindow>,
    /// When the window starts, if the model is of a window.
    pub(crate) window_start: Option<u64>,
    /// The latest allocation or free time of the blocks, and whether they were pushed
    /// in (allocation time, address) order: kept as they come, so that `finish` need
    /// not walk every block to learn them.
    pub(crate) latest: u64,
    pub(crate) out_of_order: bool,
    /// The whole run's occupancy, when tracked
    /// ([`AllocModelBuilder::track_whole_run`]): the blocks that die before the
    /// window are added as they die, the model's at the end.
    pub(crate) whole_run: Option<WholeRunFeed>,
}

impl AllocModelBuilder {
    /// An empty builder; site 0 is the unknown site.
    pub fn new() -> AllocModelBuilder {
        let mut b = AllocModelBuilder::default();
        b.sites.push(SiteInfo {
            site: memlens_vocab::Site::default(),
            label: String::new(),
            stack: Vec::new(),
        });
        b
    }

    /// Reserves room for about `blocks` blocks. The live set grows as it needs: a table
    /// sized for every block would make each lookup a cache miss.
    pub fn reserve(&mut self, blocks: usize) {
        self.blocks.reserve(blocks);
    }

    /// Makes the model the run from `t` on: the blocks that die before `t` are not
    /// kept (only the live set is, until `t`), those live at `t` are, with their true
    /// allocation times, and the model's run starts at `t`. With
    /// [`AllocModelBuilder::finish`] at the window's end (feeding no later events),
    /// the model is the allocation map of a window of a run too large to hold whole.
    pub fn start_at(&mut self, t: u64) {
        self.before = Some(BeforeWindow::new(t));
        self.window_start = Some(t);
    }

    /// Also adds up the whole run's occupancy, over `[start, end]` (ns on the model's
    /// timeline), for a model of a window whose reading sees the whole run (it reads
    /// to the run's end): the finished model carries it ([`AllocModel::whole_run`]).
    /// The grid is added up on a thread of its own, in at most 16 MiB.
    pub fn track_whole_run(&mut self, start: u64, end: u64) {
        self.whole_run = Some(WholeRunFeed::new(start, end));
    }

    /// Moves the start of the model's window to the allocation time of the block that
    /// leaves the newest `keep` blocks, dropping the blocks freed before it (the live
    /// ones stay): a model of a run still being read keeps within its memory this way.
    /// Returns the window's new start. Blocks fed out of allocation-time order (several
    /// processes) may leave more than `keep`.
    pub fn slide_window(&mut self, keep: usize) -> Option<u64> {
        self.open_window();
        let first_kept = self.blocks.len().checked_sub(keep)?;
        let from = self.blocks.get(first_kept)?.t_alloc;
        let mut index = vec![u32::MAX; self.blocks.len()];
        let mut kept = 0usize;
        for (i, slot) in index.iter_mut().enumerate() {
            let b = self.blocks[i];
            if b.freed && b.t_free < from {
                continue;
            }
            self.blocks[kept] = b;
            if let Some(&latency) = self.latency.get(i) {
                self.latency[kept] = latency;
            }
            *slot = kept as u32;
            kept += 1;
        }
        self.blocks.truncate(kept);
        self.latency.truncate(kept.min(self.latency.len()));
        // Only live blocks are in the live set and the mappings: all kept.
        for at in self.live.values_mut() {
            *at = index[*at as usize];
        }
        for ranges in self.mappings.values_mut() {
            for at in ranges.values_mut() {
                *at = index[*at as usize];
            }
        }
        self.window_start = Some(from);
        Some(from)
    }

    /// The window starts: the blocks live before it join the model.
    fn open_window(&mut self) {
        let Some(before) = self.before.take() else {
            return;
        };
        for (process, block, latency) in before.live() {
            let index = self.push_block(block);
            if latency != Latency::default() || !self.latency.is_empty() {
                self.latencies()[index as usize] = latency;
            }
            self.live.insert((process, block.addr), index);
        }
    }

    /// Adds a recorded process (one trace file).
    pub fn add_process(&mut self, info: ProcessInfo) -> ProcessId {
        self.processes.push(info);
        ProcessId(self.processes.len() as u32 - 1)
    }

    /// The thread `tid` of `process`, added (with `name`) on first use. A later call with
    /// a non-empty name names an unnamed thread.
    pub fn thread(&mut self, process: ProcessId, tid: u32, name: &str) -> ThreadId {
        if let Some(&id) = self.thread_ids.get(&(process, tid)) {
            if !name.is_empty() && self.threads[id.index()].name.is_empty() {
                self.threads[id.index()].name = name.to_string();
            }
            return id;
        }
        let id = ThreadId(self.threads.len() as u32);
        self.threads.push(ThreadInfo {
            process,
            tid,
            name: name.to_string(),
        });
        self.thread_ids.insert((process, tid), id);
        id
    }

    /// The id of allocation site `site`, added on first use. Sites that print the same
    /// (`function (file:line)`, the same source position reached from several return
    /// addresses) are one site.
    pub fn site(&mut self, site: &memlens_vocab::Site) -> SiteId {
        let label = site.to_string();
        if let Some(&id) = self.site_ids.get(&label) {
            return id;
        }
        let id = SiteId(self.sites.len() as u32);
        self.site_ids.insert(label.clone(), id);
        self.sites.push(SiteInfo {
            site: site.clone(),
            label,
            stack: Vec::new(),
        });
        id
    }

    /// Gives site `id` a call path (from the site outwards) when it has none yet: the
    /// first stack recorded at a site stands for it. The unknown site keeps none.
    pub fn set_site_stack(&mut self, id: SiteId, stack: Vec<memlens_vocab::Site>) {
        if id == SiteId::UNKNOWN {
            return;
        }
        if let Some(info) = self.sites.get_mut(id.index())
            && info.stack.is_empty()
        {
            info.stack = stack;
        }
    }

    #[inline]
    fn process_of(&mut self, thread: ThreadId) -> Option<ProcessId> {
        let p = self.threads.get(thread.index()).map(|t| t.process);
        if p.is_none() {
            self.diagnostics.unknown_threads += 1;
        }
        p
    }

    #[inline]
    fn note_time(&mut self, t: u64) {
        self.start = Some(self.start.map_or(t, |s| s.min(t)));
        if self.before.as_ref().is_some_and(|b| t >= b.start) {
            self.open_window();
        }
    }

    /// Ends the live block of `process` at `addr`, if any, at `t`.
    #[inline]
    fn end_live(
        &mut self,
        process: ProcessId,
        addr: u64,
        t: u64,
        site: SiteId,
        latency: Option<u32>,
    ) {
        let found = match self.before.as_mut() {
            Some(before) => match before.end(process, addr) {
                Some(block) => {
                    if let Some(whole) = self.whole_run.as_mut() {
                        whole.add_block(process, &block, t);
                    }
                    true
                }
                None => false,
            },
            None => match self.live.remove(&(process, addr)) {
                Some(index) => {
                    self.end_block(index, t, site, latency);
                    true
                }
                None => false,
            },
        };
        if !found {
            self.diagnostics.unknown_frees += 1;
        }
    }

    #[inline]
    fn end_block(&mut self, index: u32, t: u64, site: SiteId, latency_ns: Option<u32>) {
        let b = &mut self.blocks[index as usize];
        b.t_free = t.max(b.t_alloc);
        self.latest = self.latest.max(b.t_free);
        b.freed = true;
        b.free_site = site;
        if let Some(l) = latency_ns {
            self.latencies()[index as usize].free_ns = Some(l);
        }
    }

    /// Appends a block, keeping [`AllocModelBuilder::latest`] and the order flag;
    /// returns its index.
    #[inline]
    fn push_block(&mut self, block: Block) -> u32 {
        let index = self.blocks.len() as u32;
        if let Some(last) = self.blocks.last() {
            self.out_of_order |= (block.t_alloc, block.addr) < (last.t_alloc, last.addr);
        }
        self.latest = self.latest.max(block.t_alloc);
        self.blocks.push(block);
        index
    }

    /// The latency column, made as long as the blocks on first use.
    fn latencies(&mut self) -> &mut Vec<Latency> {
        self.latency.resize(self.blocks.len(), Latency::default());
        &mut self.latency
    }

    #[inline]
    fn begin_block(&mut self, process: ProcessId, block: Block, latency_ns: Option<u32>) {
        if let Some(before) = self.before.as_mut() {
            let latency = Latency {
                alloc_ns: latency_ns,
                free_ns: None,
            };
            if let Some(old) = before.begin(process, block, latency) {
                self.diagnostics.reused_live_addresses += 1;
                if let Some(whole) = self.whole_run.as_mut() {
                    whole.add_block(process, &old, block.t_alloc);
                }
            }
            return;
        }
        let index = self.push_block(block);
        if latency_ns.is_some() || !self.latency.is_empty() {
            self.latencies()[index as usize].alloc_ns = latency_ns;
        }
        // One probe of the live set: a block still live at this address (its free was
        // not recorded) ends where the new one begins.
        if let Some(old) = self.live.insert((process, block.addr), index) {
            self.diagnostics.reused_live_addresses += 1;
            self.end_block(old, block.t_alloc, SiteId::UNKNOWN, None);
        }
    }

    /// Records an allocation.
    #[inline]
    pub fn alloc(&mut self, e: AllocEvent) {
        let Some(process) = self.process_of(e.thread) else {
            return;
        };
        self.note_time(e.t);
        let block = Block {
            t_alloc: e.t,
            t_free: u64::MAX,
            addr: e.addr,
            requested: e.size,
            reserved: e.size,
            thread: e.thread,
            site: e.site,
            free_site: SiteId::UNKNOWN,
            freed: false,
            from_realloc: false,
            mapping: false,
        };
        self.begin_block(process, block, e.latency_ns);
    }

    /// Records a free.
    #[inline]
    pub fn free(&mut self, e: FreeEvent) {
        let Some(process) = self.process_of(e.thread) else {
            return;
        };
        self.note_time(e.t);
        self.end_live(process, e.addr, e.t, e.site, e.latency_ns);
    }

    /// Records a reallocation: ends the old block, begins the new one.
    pub fn realloc(&mut self, e: ReallocEvent) {
        let Some(process) = self.process_of(e.thread) else {
            return;
        };
        self.note_time(e.t);
        self.end_live(process, e.old_addr, e.t, e.site, None);
        let block = Block {
            t_alloc: e.t,
            t_free: u64::MAX,
            addr: e.new_addr,
            requested: e.size,
            reserved: e.size,
            thread: e.thread,
            site: e.site,
            free_site: SiteId::UNKNOWN,
            freed: false,
            from_realloc: true,
            mapping: false,
        };
        self.begin_block(process, block, e.latency_ns);
    }

    /// Begins a mapping block `[start, end)` at `t` (`requested` bytes asked for).
    fn begin_mapping(&mut self, process: ProcessId, t: u64, range: (u64, u64), like: Block) {
        let index = self.push_block(Block {
            t_alloc: t,
            t_free: u64::MAX,
            addr: range.0,
            requested: like.requested.min(range.1 - range.0),
            reserved: range.1 - range.0,
            free_site: SiteId::UNKNOWN,
            freed: false,
            from_realloc: false,
            mapping: true,
            ..like
        });
        if !self.latency.is_empty() {
            self.latencies();
        }
        self.mappings
            .entry(process)
            .or_default()
            .insert(range.0, range.1, index);
    }

    /// Ends the mappings `[start, end)` overlaps at `t`; the parts of them outside it
    /// stay mapped as new blocks.
    fn unmap_range(&mut self, process: ProcessId, t: u64, start: u64, end: u64) {
        let hit = self
            .mappings
            .get_mut(&process)
            .map(|live| live.take_overlapping(start, end))
            .unwrap_or_default();
        for (s, e, index) in hit {
            self.end_block(index, t, SiteId::UNKNOWN, None);
            let like = self.blocks[index as usize];
            if s < start {
                self.begin_mapping(process, t, (s, start), like);
            }
            if end < e {
                self.begin_mapping(process, t, (end, e), like);
            }
        }
    }

    /// Records a mapping the program made.
    pub fn map(&mut self, e: MapEvent) {
        let Some(process) = self.process_of(e.thread) else {
            return;
        };
        self.note_time(e.t);
        let end = e.addr.saturating_add(mapped_size(e.len.max(1)));
        self.unmap_range(process, e.t, e.addr, end);
        let like = Block {
            t_alloc: e.t,
            t_free: u64::MAX,
            addr: e.addr,
            requested: e.len,
            reserved: end - e.addr,
            thread: e.thread,
            site: e.site,
            free_site: SiteId::UNKNOWN,
            freed: false,
            from_realloc: false,
            mapping: true,
        };
        self.begin_mapping(process, e.t, (e.addr, end), like);
    }

    /// Records a range the program unmapped.
    pub fn unmap(&mut self, e: UnmapEvent) {
        let Some(process) = self.process_of(e.thread) else {
            return;
        };
        self.note_time(e.t);
        let end = e.addr.saturating_add(mapped_size(e.len));
        self.unmap_range(process, e.t, e.addr, end);
    }

    /// The model of the events so far, as [`AllocModelBuilder::finish`] would make it
    /// with the run ending at `end_ns`, leaving the builder to go on (a trace still
    /// being written). Costs a copy of the blocks.
    pub fn snapshot(&self, end_ns: u64) -> AllocModel {
        self.clone().finish(end_ns)
    }

    /// The number of blocks held so far.
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Ends the run at `end_ns` (blocks still live end there), finds the bins of the
    /// real run and indexes the blocks.
    pub fn finish(mut self, end_ns: u64) -> AllocModel {
        self.open_window();
        let start = self.window_start.or(self.start).unwrap_or(0).min(end_ns);
        let end = self.latest.max(end_ns);
        for b in &mut self.blocks {
            if !b.freed {
                b.t_free = end;
            }
        }
        let whole_run = self.whole_run.take().map(|mut whole| {
            for b in &self.blocks {
                let process = self.threads[b.thread.index()].process;
                whole.add_block(process, b, b.t_free);
            }
            std::sync::Arc::new(whole.finish())
        });
        let latency = (!self.latency.is_empty()).then(|| {
            let mut l = self.latency;
            l.resize(self.blocks.len(), Latency::default());
            l
        });
        let mut model = AllocModel::from_real_run(
            self.blocks,
            !self.out_of_order,
            latency,
            self.threads,
            self.processes,
            self.sites,
            self.diagnostics,
            (start, end),
        );
        if self.window_start.is_some() {
            model.time_origin = 0;
            model.window = true;
        }
        model.whole_run = whole_run;
        model
    }
}
