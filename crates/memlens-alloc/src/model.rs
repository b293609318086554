//! [`AllocModel`]: the blocks of one or more recorded processes, their bins, the
//! compact address axis and the time × address index, with the brushing query
//! [`AllocModel::block_at`].

use crate::axis::AddressAxis;
use crate::bin::Bin;
use crate::block::{Block, BlockInfo, Latency};
use crate::derived::Derived;
use crate::ids::{BinId, BlockId, ProcessId, SiteId, ThreadId};
use crate::index::TimeAddrIndex;
use crate::process::{ProcessInfo, ThreadInfo};
use crate::regions;
use crate::time_range::TimeRange;

/// An allocation site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteInfo {
    /// The allocation site (function, file, line, module, frame kind) as the frame
    /// policy chose it; empty for the unknown site.
    pub site: memlens_vocab::Site,
    /// The site as text (`function (file:line)`); empty for the unknown site.
    pub label: String,
    /// A call path that reached the site, from the site outwards (up to `main`): the
    /// first stack recorded there, since sites that print the same are one site and
    /// their stacks may differ. Empty when none was given.
    pub stack: Vec<memlens_vocab::Site>,
}

/// Odd input the builder repaired.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Frees (and reallocs) of addresses that were not live: ignored.
    pub unknown_frees: u64,
    /// Allocations at an address that was still live: the old block ended there.
    pub reused_live_addresses: u64,
    /// Events naming a thread the builder was not given: ignored.
    pub unknown_threads: u64,
    /// Sentences the model's reader added ([`AllocModel::add_note`]), such as which
    /// window of the run the model holds.
    pub notes: Vec<String>,
}

impl Diagnostics {
    /// One sentence per kind of repair.
    pub fn messages(&self) -> Vec<String> {
        let mut out = self.notes.clone();
        if self.unknown_frees > 0 {
            out.push(format!(
                "{} frees of addresses that were not allocated in the trace were ignored",
                self.unknown_frees
            ));
        }
        if self.reused_live_addresses > 0 {
            out.push(format!(
                "{} allocations returned an address that was still live; the older block was ended there",
                self.reused_live_addresses
            ));
        }
        if self.unknown_threads > 0 {
            out.push(format!(
                "{} events of unknown threads were ignored",
                self.unknown_threads
            ));
        }
        out
    }
}

/// The allocation map's model. Build it with [`crate::AllocModelBuilder`] or get one
/// from [`crate::replay`].
pub struct AllocModel {
    pub(crate) blocks: Vec<Block>,
    pub(crate) latency: Option<Vec<Latency>>,
    pub(crate) threads: Vec<ThreadInfo>,
    pub(crate) processes: Vec<ProcessInfo>,
    pub(crate) sites: Vec<SiteInfo>,
    pub(crate) diagnostics: Diagnostics,
    pub(crate) run: TimeRange,
    pub(crate) bins: Vec<Bin>,
    pub(crate) block_bin: Vec<BinId>,
    pub(crate) axis: AddressAxis,
    pub(crate) index: TimeAddrIndex,
    /// Each colouring attribute of every block, computed by the renderer on first use
    /// (its type belongs to [`crate::raster`]).
    pub(crate) attributes: Derived,
    /// Cell sums for coarse grid tiles, built on request ([`AllocModel::prepare_overview`];
    /// its type belongs to the renderer's overview).
    pub(crate) overview: Derived,
    /// The instant shown times count from (see [`AllocModel::time_origin`]).
    pub(crate) time_origin: u64,
    /// Whether it holds a window of a run (see [`AllocModel::is_window`]).
    pub(crate) window: bool,
    /// The whole run at a glance, for the model of a window (see
    /// [`AllocModel::whole_run`]); not part of [`AllocModel::encode`].
    pub(crate) whole_run: Option<std::sync::Arc<crate::WholeRunMap>>,
}

impl std::fmt::Debug for AllocModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllocModel")
            .field("blocks", &self.blocks.len())
            .field("bins", &self.bins.len())
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl AllocModel {
    pub(crate) fn from_real_run(
        mut blocks: Vec<Block>,
        in_order: bool,
        mut latency: Option<Vec<Latency>>,
        threads: Vec<ThreadInfo>,
        processes: Vec<ProcessInfo>,
        sites: Vec<SiteInfo>,
        diagnostics: Diagnostics,
        run: (u64, u64),
    ) -> AllocModel {
        // Events arrive in time order, so the blocks usually already are (`in_order`:
        // the builder saw them come in order): reordering them (a permutation and a
        // copy of every block) only when they are not.
        let key = |b: &Block| (b.t_alloc, b.addr);
        if !in_order {
            let mut order: Vec<u32> = (0..blocks.len() as u32).collect();
            order.sort_by_key(|&i| key(&blocks[i as usize]));
            blocks = order.iter().map(|&i| blocks[i as usize]).collect();
            if let Some(l) = latency.as_mut() {
                *l = order.iter().map(|&i| l[i as usize]).collect();
            }
        }
        let found = regions::detect(&blocks, &threads, &processes);
        let mut bins = found.bins;
        regions::size_and_fit(&mut bins, &mut blocks, &found.block_bin, &found.mmapped);
        AllocModel::assemble(
            blocks,
            latency,
            threads,
            processes,
            sites,
            diagnostics,
            run,
            bins,
            found.block_bin,
        )
    }

    /// Builds the axis and the index over blocks whose bins are decided.
    pub(crate) fn assemble(
        blocks: Vec<Block>,
        latency: Option<Vec<Latency>>,
        threads: Vec<ThreadInfo>,
        processes: Vec<ProcessInfo>,
        sites: Vec<SiteInfo>,
        diagnostics: Diagnostics,
        run: (u64, u64),
        mut bins: Vec<Bin>,
        block_bin: Vec<BinId>,
    ) -> AllocModel {
        let axis = AddressAxis::stack(&mut bins);
        let index = TimeAddrIndex::build(&blocks, &block_bin, &bins, run);
        AllocModel {
            blocks,
            latency,
            threads,
            processes,
            sites,
            diagnostics,
            run: TimeRange {
                start_ns: run.0,
                end_ns: run.1,
            },
            bins,
            block_bin,
            axis,
            index,
            attributes: Derived::default(),
            overview: Derived::default(),
            time_origin: run.0,
            window: false,
            whole_run: None,
        }
    }

    /// Every block, sorted by allocation time (then address); [`BlockId`]s index it.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// One block.
    pub fn block(&self, id: BlockId) -> &Block {
        &self.blocks[id.index()]
    }

    /// The bin of a block.
    pub fn bin_of(&self, id: BlockId) -> BinId {
        self.block_bin[id.index()]
    }

    /// Where a block starts on the compact address axis.
    pub fn axis_position(&self, id: BlockId) -> u64 {
        let bin = &self.bins[self.bin_of(id).index()];
        bin.axis_start + (self.blocks[id.index()].addr - bin.start)
    }

    /// The run: from the first event to the end of the last trace (a model of a
    /// window: the window).
    pub fn run(&self) -> TimeRange {
        self.run
    }

    /// The instant shown times count from: the run's start, or for a model of a window
    /// of a run ([`crate::AllocModelBuilder::start_at`]) the run's time 0, so that the
    /// window's times read as they do in the whole run.
    pub fn time_origin(&self) -> u64 {
        self.time_origin
    }

    /// Whether the model holds a window of a run ([`crate::AllocModelBuilder::start_at`])
    /// rather than the whole run.
    pub fn is_window(&self) -> bool {
        self.window
    }

    /// The bins: per process, by address.
    pub fn bins(&self) -> &[Bin] {
        &self.bins
    }

    /// The compact address axis that stacks the bins.
    pub fn axis(&self) -> &AddressAxis {
        &self.axis
    }

    /// The threads.
    pub fn threads(&self) -> &[ThreadInfo] {
        &self.threads
    }

    /// The processes.
    pub fn processes(&self) -> &[ProcessInfo] {
        &self.processes
    }

    /// The sites; [`SiteId::UNKNOWN`] is first.
    pub fn sites(&self) -> &[SiteInfo] {
        &self.sites
    }

    /// The process of a thread.
    pub fn process_of(&self, thread: ThreadId) -> ProcessId {
        self.threads[thread.index()].process
    }

    /// Gives the model of a window the whole run's occupancy at a glance.
    pub fn set_whole_run(&mut self, map: std::sync::Arc<crate::WholeRunMap>) {
        self.whole_run = Some(map);
    }

    /// The whole run's occupancy at a glance, when the model holds a window of a run
    /// and the pass that read it saw the whole run (or it was kept from such a pass).
    pub fn whole_run(&self) -> Option<&std::sync::Arc<crate::WholeRunMap>> {
        self.whole_run.as_ref()
    }

    /// Adds a sentence for the user to the model's diagnostics (every view of the
    /// model shows them).
    pub fn add_note(&mut self, note: String) {
        self.diagnostics.notes.push(note);
    }

    /// What the builder repaired.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// True when the trace recorded allocator latencies (`memlens record --latency`).
    pub fn has_latency(&self) -> bool {
        self.latency.is_some()
    }

    /// A block's allocator latency, when recorded.
    pub fn latency(&self, id: BlockId) -> Option<Latency> {
        self.latency.as_ref().map(|l| l[id.index()])
    }

    /// The brushing details of a block.
    pub fn info(&self, id: BlockId) -> BlockInfo {
        let b = &self.blocks[id.index()];
        let thread = &self.threads[b.thread.index()];
        let process = &self.processes[thread.process.index()];
        BlockInfo {
            id,
            bin: self.bin_of(id),
            t_alloc: b.t_alloc,
            t_free: b.freed.then_some(b.t_free),
            addr: b.addr,
            requested: b.requested,
            reserved: b.reserved,
            waste: b.waste(),
            lifetime: b.lifetime(),
            thread: b.thread,
            tid: thread.tid,
            thread_name: thread.name.clone(),
            process: thread.process,
            pid: process.pid,
            site: b.site,
            site_label: self.site_label(b.site).to_owned(),
            free_site: b.free_site,
            free_site_label: self.site_label(b.free_site).to_owned(),
            from_realloc: b.from_realloc,
            mapping: b.mapping,
            latency: self.latency(id),
        }
    }

    /// The block drawn at time `t_ns` and compact axis position `y` (what lies under
    /// the mouse), if any. Uses the index: O(log N + blocks near the point).
    pub fn block_at(&self, t_ns: u64, y: u64) -> Option<BlockInfo> {
        let mut found = None;
        self.index.query(
            t_ns,
            t_ns.saturating_add(1),
            y,
            y.saturating_add(1),
            |rec| {
                if found.is_none() && rec.t0 <= t_ns && t_ns < rec.t1.max(rec.t0 + 1) {
                    found = Some(BlockId(rec.id));
                }
            },
        );
        found.map(|id| self.info(id))
    }

    /// The bin with this id.
    pub fn bin(&self, id: BinId) -> Option<&Bin> {
        self.bins.get(id.index())
    }

    /// A site's label (empty when unknown).
    pub fn site_label(&self, site: SiteId) -> &str {
        self.sites
            .get(site.index())
            .map_or("", |s| s.label.as_str())
    }
}
