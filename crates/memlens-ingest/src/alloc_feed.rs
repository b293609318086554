//! Traces → allocation-map model: processes, threads, sites and events fed to
//! `memlens-alloc`'s builder.
//!
//! Several traces (a parent and its forked children) load into one model: each is a
//! process of its own, and their clocks are aligned on the wall-clock time of each
//! trace's time 0 (`start_unix_ns`), so the earliest process starts the common
//! timeline at 0. A block's site is its stack's allocation site as the frame policy
//! names it, found once per stack; the site that freed it is named the same way from
//! the free's stack (`memlens record --free-stacks`; unknown without). The program's
//! own mappings (`--mmap`) become mapping blocks, fed in time order between the
//! events, with the `mmap` call's stack as their site.

use std::path::Path;

use memlens_alloc::{
    AllocEvent, AllocModelBuilder, FreeEvent, MapEvent, ProcessId, ProcessInfo, ReallocEvent,
    SiteId, ThreadId, UnmapEvent,
};
use memlens_trace::{Event, MapChange, Metadata, StackId};
use rustc_hash::FxHashMap;

use crate::symbols::StackSymbols;

/// The most frames of a site's call path the allocation map keeps (from the site out).
const SITE_STACK_FRAMES: usize = 24;

/// Stack ids below this have their site in an array (memlens' recorder numbers stacks
/// densely from 1); larger ones (other writers) in a map.
const DENSE_STACKS: u32 = 1 << 22;

/// The per-trace part of feeding the allocation map: its process, clock offset and
/// site cache.
pub(crate) struct AllocFeed {
    process: ProcessId,
    offset: u64,
    /// The site of each stack id below [`DENSE_STACKS`] named so far (an array lookup
    /// per event instead of a hash).
    dense_sites: Vec<Option<SiteId>>,
    sites: FxHashMap<u32, SiteId>,
    threads: FxHashMap<u32, ThreadId>,
    /// The last thread looked up (events come in runs of one thread).
    last_thread: Option<(u32, ThreadId)>,
}

impl AllocFeed {
    /// Adds the process of the trace at `path` (with process stream `md`), whose clock
    /// starts `offset` ns after the earliest trace's.
    pub(crate) fn new(
        builder: &mut AllocModelBuilder,
        md: &Metadata,
        path: &Path,
        offset: u64,
    ) -> AllocFeed {
        let process = builder.add_process(process_info(md, path));
        AllocFeed::resumed(process, offset)
    }

    /// Goes on feeding `process` (with its clock `offset` ns after the earliest
    /// trace's) to a builder resumed from a checkpoint, which has its process already.
    pub(crate) fn resumed(process: ProcessId, offset: u64) -> AllocFeed {
        AllocFeed {
            process,
            offset,
            dense_sites: Vec::new(),
            sites: FxHashMap::default(),
            threads: FxHashMap::default(),
            last_thread: None,
        }
    }

    /// The clock offset of this trace.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Feeds one event with its allocator latency.
    #[inline]
    pub(crate) fn event(
        &mut self,
        builder: &mut AllocModelBuilder,
        md: &Metadata,
        symbols: &mut StackSymbols,
        event: &Event,
        latency_ns: Option<u32>,
    ) {
        let offset = self.offset;
        let thread = self.thread(builder, md, event.tid());
        match *event {
            Event::Alloc {
                t,
                addr,
                size,
                stack,
                ..
            } => {
                let site = self.site_of(builder, md, symbols, stack);
                builder.alloc(AllocEvent {
                    t: t + offset,
                    thread,
                    addr,
                    size,
                    site,
                    latency_ns,
                });
            }
            Event::Free { t, addr, stack, .. } => {
                let site = self.site_of(builder, md, symbols, stack);
                builder.free(FreeEvent {
                    t: t + offset,
                    thread,
                    addr,
                    site,
                    latency_ns,
                });
            }
            Event::Realloc {
                t,
                old_addr,
                new_addr,
                size,
                stack,
                ..
            } => {
                let site = self.site_of(builder, md, symbols, stack);
                builder.realloc(ReallocEvent {
                    t: t + offset,
                    thread,
                    old_addr,
                    new_addr,
                    size,
                    site,
                    latency_ns,
                });
            }
        }
    }

    /// Feeds one change of the program's own mappings.
    pub(crate) fn mapping(
        &mut self,
        builder: &mut AllocModelBuilder,
        md: &Metadata,
        symbols: &mut StackSymbols,
        change: &MapChange,
    ) {
        let offset = self.offset;
        match *change {
            MapChange::Map(m) => {
                let thread = self.thread(builder, md, m.tid);
                let site = self.site_of(builder, md, symbols, m.stack);
                builder.map(MapEvent {
                    t: m.t + offset,
                    thread,
                    addr: m.addr,
                    len: m.len,
                    site,
                });
            }
            MapChange::Unmap(u) => {
                let thread = self.thread(builder, md, u.tid);
                builder.unmap(UnmapEvent {
                    t: u.t + offset,
                    thread,
                    addr: u.addr,
                    len: u.len,
                });
            }
        }
    }

    /// The builder's thread of `tid`, named from the process stream, found once.
    /// Inlined: nearly every event is of the thread of the event before.
    #[inline(always)]
    fn thread(&mut self, builder: &mut AllocModelBuilder, md: &Metadata, tid: u32) -> ThreadId {
        if let Some((last, id)) = self.last_thread
            && last == tid
        {
            return id;
        }
        self.other_thread(builder, md, tid)
    }

    /// [`AllocFeed::thread`] of a thread other than the last one's.
    #[inline(never)]
    fn other_thread(
        &mut self,
        builder: &mut AllocModelBuilder,
        md: &Metadata,
        tid: u32,
    ) -> ThreadId {
        let id = *self
            .threads
            .entry(tid)
            .or_insert_with(|| builder.thread(self.process, tid, md.thread_name(tid)));
        self.last_thread = Some((tid, id));
        id
    }

    /// The site of `stack`: inlined, as every event asks, and it is nearly always
    /// known already.
    #[inline(always)]
    fn site_of(
        &mut self,
        builder: &mut AllocModelBuilder,
        md: &Metadata,
        symbols: &mut StackSymbols,
        stack: StackId,
    ) -> SiteId {
        if stack == 0 {
            return SiteId::UNKNOWN;
        }
        let known = match stack < DENSE_STACKS {
            true => self.dense_sites.get(stack as usize).copied().flatten(),
            false => self.sites.get(&stack).copied(),
        };
        match known {
            Some(site) => site,
            None => self.new_site(builder, md, symbols, stack),
        }
    }

    /// Names the site of a stack [`AllocFeed::site_of`] has not seen yet.
    #[inline(never)]
    fn new_site(
        &mut self,
        builder: &mut AllocModelBuilder,
        md: &Metadata,
        symbols: &mut StackSymbols,
        stack: StackId,
    ) -> SiteId {
        if stack as usize >= md.stacks.len() {
            // Not defined (yet: a trace still being written defines it with a later
            // flush): unknown, and not kept as such.
            return SiteId::UNKNOWN;
        }
        // The site is the call path's first frame; the path goes with it (brushing
        // shows it).
        let path = symbols.call_path(md, stack, SITE_STACK_FRAMES);
        let site = match path.first() {
            Some(first) => {
                let id = builder.site(first);
                builder.set_site_stack(id, path);
                id
            }
            None => SiteId::UNKNOWN,
        };
        if stack < DENSE_STACKS {
            let at = stack as usize;
            if at >= self.dense_sites.len() {
                self.dense_sites.resize((at + 1).next_power_of_two(), None);
            }
            self.dense_sites[at] = Some(site);
        } else {
            self.sites.insert(stack, site);
        }
        site
    }
}

fn process_info(md: &Metadata, path: &Path) -> ProcessInfo {
    match &md.process {
        Some(p) => ProcessInfo {
            pid: p.pid,
            ppid: p.ppid,
            name: Path::new(&p.exe)
                .file_name()
                .map_or_else(|| p.exe.clone(), |n| n.to_string_lossy().into_owned()),
        },
        None => ProcessInfo {
            pid: 0,
            ppid: 0,
            name: path.display().to_string(),
        },
    }
}
