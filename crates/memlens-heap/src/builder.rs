//! The streaming builder that turns time-ordered allocation events into a
//! [`HeapModel`].
//!
//! The CLI decodes a trace and calls, in time order, [`alloc`](HeapModelBuilder::alloc),
//! [`free`](HeapModelBuilder::free), [`realloc`](HeapModelBuilder::realloc) and
//! [`mark`](HeapModelBuilder::mark), interleaved with the context calls
//! ([`add_frame`](HeapModelBuilder::add_frame), [`add_stack`](HeapModelBuilder::add_stack),
//! [`name_thread`](HeapModelBuilder::name_thread), [`add_type`](HeapModelBuilder::add_type)),
//! and finally [`end`](HeapModelBuilder::end). Each event costs one hash-map operation
//! on the address map plus a few column pushes. Nothing here panics on odd input: it is
//! repaired and counted in [`Diagnostics`].
//!
//! [`HeapModelBuilder::coalescing`] makes a builder whose memory is bounded by the live
//! set instead of the number of allocations: the same events, the same repairs and
//! statistics, but rows coalesced as [`crate::coalesce`] explains.
//!
//! [`HeapModelBuilder::sampled`] makes every allocation of a sampled trace stand for
//! the whole number of objects [`Sampling::objects`] draws: rows, live totals and
//! run statistics then count estimates. There a `realloc` is a free and a fresh
//! allocation, as the sampling recorder decides it.

use rustc_hash::FxHashMap;

use crate::coalesce::Coalescer;
use crate::context::{Context, FrameInfo};
use crate::diagnostics::Diagnostics;
use crate::ids::{AllocId, FrameId, StackId, ThreadIndex, TypeId};
use crate::model::{AllocKind, HeapModel, Mark, RESIZED, Resizes, RunStats, TimeWindow};
use crate::model::{KIND_MASK, NEVER_FREED};
use crate::sampling::{Sampling, event_key};

/// A live block as the address map knows it.
#[derive(Clone, Copy)]
struct LiveBlock {
    alloc: AllocId,
    /// All its objects' bytes.
    size: u64,
    /// The objects it stands for (1 unless the trace is sampled).
    objects: u64,
}

/// Builds a [`HeapModel`] from events given in time order.
#[derive(Clone)]
pub struct HeapModelBuilder {
    model: HeapModel,
    live: FxHashMap<u64, LiveBlock>,
    started: bool,
    last_t: u64,
    live_bytes: u64,
    live_objects: u64,
    last_thread: Option<(u64, ThreadIndex)>,
    /// Set for a coalescing builder: the open blocks and rows live there, and the
    /// model's columns are filled only at the end.
    coalesce: Option<Coalescer>,
    /// Set for a sampled trace: what each allocation stands for.
    sampling: Option<Sampling>,
}

impl Default for HeapModelBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl HeapModelBuilder {
    /// An empty builder. The run starts at the first event's time unless
    /// [`start`](Self::start) says otherwise.
    pub fn new() -> Self {
        HeapModelBuilder {
            model: HeapModel {
                run: TimeWindow {
                    start_ns: 0,
                    end_ns: 0,
                },
                t_alloc: Vec::new(),
                t_free: Vec::new(),
                size: Vec::new(),
                stack: Vec::new(),
                thread: Vec::new(),
                flags: Vec::new(),
                types: Vec::new(),
                containers: Vec::new(),
                resizes: Resizes::default(),
                free_order: Vec::new(),
                objects: Vec::new(),
                instants: Vec::new(),
                marks: Vec::new(),
                context: Context::new(),
                diagnostics: Diagnostics::default(),
                stats: RunStats::default(),
            },
            live: FxHashMap::default(),
            started: false,
            last_t: 0,
            live_bytes: 0,
            live_objects: 0,
            last_thread: None,
            coalesce: None,
            sampling: None,
        }
    }

    /// Weighs every allocation as `sampling` says (a sampled trace): the model's
    /// counts and bytes become unbiased estimates of the program's.
    pub fn sampled(&mut self, sampling: Sampling) {
        self.sampling = Some(sampling);
    }

    /// A builder whose model is coalesced (see [`crate::coalesce`]): exact at every time
    /// of `instants` and at the peak and dip of every bucket between two of them, with
    /// memory bounded by the live set and the distinct groups. The run's end is always
    /// an instant.
    pub fn coalescing(instants: Vec<u64>) -> Self {
        HeapModelBuilder {
            coalesce: Some(Coalescer::new(instants)),
            ..Self::new()
        }
    }

    /// A coalescing builder for a run still being recorded, whose end is unknown: exact
    /// at `lines + 1` evenly spaced times over `[0, horizon]` (doubling, every other
    /// line going, each time the run passes it: between half and all of `lines` over
    /// the run so far), at every time of `pinned`, and at the peak and dip of every
    /// bucket between two of those. Memory as [`HeapModelBuilder::coalescing`]; feeding
    /// costs the same but for a pass over the rows each time the horizon doubles.
    pub fn coalescing_growing(horizon: u64, lines: u64, pinned: Vec<u64>) -> Self {
        HeapModelBuilder {
            coalesce: Some(Coalescer::growing(horizon, lines, pinned)),
            ..Self::new()
        }
    }

    /// Reserves room for about `allocations` allocations, to avoid regrowing columns.
    pub fn reserve(&mut self, allocations: usize) {
        if self.coalesce.is_some() {
            return;
        }
        let m = &mut self.model;
        m.t_alloc.reserve(allocations);
        m.t_free.reserve(allocations);
        m.size.reserve(allocations);
        m.stack.reserve(allocations);
        m.thread.reserve(allocations);
        m.flags.reserve(allocations);
        m.free_order.reserve(allocations);
    }

    /// Sets the run's start (the process start time), if it is known to be earlier than
    /// the first event. Must be called before any event.
    pub fn start(&mut self, t_ns: u64) {
        if !self.started {
            self.started = true;
            self.last_t = t_ns;
            self.model.run.start_ns = t_ns;
        }
    }

    /// Adds a frame and returns its id. `inlined_into` must name an earlier frame.
    pub fn add_frame(&mut self, frame: FrameInfo<'_>) -> FrameId {
        let cx = &mut self.model.context;
        let id = FrameId(cx.frames.len() as u32);
        let mut inlined_into = frame.inlined_into;
        if inlined_into.is_some_and(|f| f >= id) {
            self.model.diagnostics.invalid_table_refs += 1;
            inlined_into = None;
        }
        cx.frames.function.push(cx.strings.intern(frame.function));
        cx.frames.file.push(cx.strings.intern(frame.file));
        cx.frames.line.push(frame.line);
        cx.frames.module.push(cx.strings.intern(frame.module));
        cx.frames.inlined_into.push(inlined_into);
        cx.frames.kind.push(frame.kind);
        id
    }

    /// Adds a stack node (an existing `parent` plus one innermost `frame`) and returns
    /// its id. Ids are given densely from 1, so a trace whose stack table numbers nodes
    /// the same way keeps its ids.
    pub fn add_stack(&mut self, parent: StackId, frame: FrameId) -> StackId {
        let stacks = &mut self.model.context.stacks;
        let id = StackId(stacks.len() as u32);
        let parent = if parent < id {
            parent
        } else {
            self.model.diagnostics.invalid_table_refs += 1;
            StackId::ROOT
        };
        let frame = if frame.index() < self.model.context.frames.len() {
            frame
        } else {
            self.model.diagnostics.invalid_table_refs += 1;
            FrameId::UNKNOWN
        };
        stacks.parent.push(parent);
        stacks.frame.push(frame);
        id
    }

    /// Names (or renames) thread `tid`.
    pub fn name_thread(&mut self, tid: u64, name: &str) {
        let cx = &mut self.model.context;
        let index = cx.threads.index_of(tid);
        cx.threads.name[index.index()] = cx.strings.intern(name);
    }

    /// Adds a type name and returns its id (from 1; 0 is the unknown type).
    pub fn add_type(&mut self, name: &str) -> TypeId {
        let cx = &mut self.model.context;
        let id = TypeId(cx.types.len() as u32);
        let name = cx.strings.intern(name);
        cx.types.push(name);
        id
    }

    /// Sets the type of an allocation made earlier.
    pub fn set_type(&mut self, alloc: AllocId, ty: TypeId) {
        let m = &mut self.model;
        if let Some(c) = self.coalesce.as_mut() {
            if ty.index() < m.context.types.len() {
                c.set_type(alloc, ty);
            } else {
                m.diagnostics.invalid_table_refs += 1;
            }
            return;
        }
        if alloc.index() >= m.t_alloc.len() || ty.index() >= m.context.types.len() {
            m.diagnostics.invalid_table_refs += 1;
            return;
        }
        if m.types.is_empty() {
            m.types.resize(m.t_alloc.len(), TypeId::UNKNOWN);
        }
        m.types[alloc.index()] = ty;
    }

    /// Applies a heap walk at `t_ns`: every live block whose address `contained` lists
    /// gets the data-structure key given there (0: in none); the others were not
    /// reached (garbage not collected yet) and keep theirs. A coalescing builder cuts
    /// a block's row where its key changes, so trees show each block in the structure
    /// of the latest walk before their time; the plain builder keeps the key of the
    /// last walk.
    pub fn heap_walk(&mut self, t_ns: u64, contained: &FxHashMap<u64, u64>) {
        let t = self.advance(t_ns);
        let m = &mut self.model;
        if self.coalesce.is_none() && m.containers.is_empty() {
            m.containers.resize(m.t_alloc.len(), 0);
        }
        for (addr, &key) in contained {
            let Some(block) = self.live.get(addr) else {
                continue;
            };
            match self.coalesce.as_mut() {
                Some(c) => c.set_container(block.alloc, t, key),
                None => m.containers[block.alloc.index()] = key,
            }
        }
    }

    /// Records an allocation of `size` bytes at `addr`. An allocation at an address that
    /// is still live first ends the older block (counted as a diagnostic).
    pub fn alloc(
        &mut self,
        t_ns: u64,
        tid: u64,
        addr: u64,
        size: u64,
        stack: StackId,
        kind: AllocKind,
    ) -> AllocId {
        let t = self.advance(t_ns);
        if let Some(old) = self.live.remove(&addr) {
            self.model.diagnostics.reused_live_addresses += 1;
            self.end_block(old, t);
        }
        let thread = self.thread_index(tid);
        let objects = self
            .sampling
            .map_or(1, |s| s.objects(size, event_key(t_ns, addr, size)));
        let block_size = size.saturating_mul(objects);
        self.model.stats.allocations += objects;
        self.live_bytes += block_size;
        self.live_objects += objects;
        if let Some(c) = self.coalesce.as_mut() {
            let defined = stack.index() < self.model.context.stacks.len();
            let flags = kind as u8 & KIND_MASK;
            let id = c.open(t, (size, objects), (stack, defined), thread, flags);
            let block = LiveBlock {
                alloc: id,
                size: block_size,
                objects,
            };
            self.live.insert(addr, block);
            return id;
        }
        let m = &mut self.model;
        let id = AllocId(m.t_alloc.len() as u32);
        if objects != 1 && m.objects.is_empty() {
            m.objects.resize(m.t_alloc.len(), 1);
        }
        if !m.objects.is_empty() {
            m.objects.push(objects.min(u64::from(u32::MAX)) as u32);
        }
        m.t_alloc.push(t);
        m.t_free.push(NEVER_FREED);
        m.size.push(block_size);
        m.stack.push(stack);
        m.thread.push(thread);
        m.flags.push(kind as u8 & KIND_MASK);
        if !m.types.is_empty() {
            m.types.push(TypeId::UNKNOWN);
        }
        if !m.containers.is_empty() {
            m.containers.push(0);
        }
        let block = LiveBlock {
            alloc: id,
            size: block_size,
            objects,
        };
        self.live.insert(addr, block);
        id
    }

    /// Records a free. Freeing a null pointer does nothing; freeing an unknown address
    /// is counted and ignored.
    pub fn free(&mut self, t_ns: u64, _tid: u64, addr: u64) {
        let t = self.advance(t_ns);
        if addr == 0 {
            return;
        }
        match self.live.remove(&addr) {
            Some(block) => self.end_block(block, t),
            None => self.model.diagnostics.unknown_frees += 1,
        }
    }

    /// Records a `realloc`. The block keeps its identity (allocation id, stack and
    /// thread): from `t_ns` on it lives at `new_addr` with `new_size` bytes. `stack` is
    /// used only when the call makes a fresh block: `realloc(NULL, n)`, or a realloc of an
    /// unknown address (counted). A null `new_addr` means the call failed (the old block
    /// is unchanged) or, with `new_size == 0`, that it freed the block.
    /// Returns the allocation the new block belongs to, if any.
    pub fn realloc(
        &mut self,
        t_ns: u64,
        tid: u64,
        old_addr: u64,
        new_addr: u64,
        new_size: u64,
        stack: StackId,
    ) -> Option<AllocId> {
        if new_addr == 0 {
            if new_size == 0 && old_addr != 0 {
                self.free(t_ns, tid, old_addr);
            } else {
                self.advance(t_ns);
            }
            return None;
        }
        if self.sampling.is_some() {
            // A sampled block is never resized: its weight is its size's.
            if old_addr != 0 {
                self.free(t_ns, tid, old_addr);
            }
            return Some(self.alloc(t_ns, tid, new_addr, new_size, stack, AllocKind::Realloc));
        }
        let Some(block) = (if old_addr == 0 {
            None
        } else {
            self.live.remove(&old_addr)
        }) else {
            if old_addr != 0 {
                self.model.diagnostics.unknown_reallocs += 1;
            }
            return Some(self.alloc(t_ns, tid, new_addr, new_size, stack, AllocKind::Realloc));
        };
        let t = self.advance(t_ns);
        if let Some(other) = self.live.remove(&new_addr) {
            self.model.diagnostics.reused_live_addresses += 1;
            self.end_block(other, t);
        }
        let m = &mut self.model;
        m.stats.reallocations += 1;
        if new_size != block.size
            && let Some(c) = self.coalesce.as_mut()
        {
            c.resize(block.alloc, t, new_size);
            self.live_bytes = self.live_bytes - block.size + new_size;
        } else if new_size != block.size {
            let r = &mut m.resizes;
            r.alloc.push(block.alloc);
            r.t_ns.push(t);
            r.old_size.push(block.size);
            r.new_size.push(new_size);
            m.flags[block.alloc.index()] |= RESIZED;
            self.live_bytes = self.live_bytes - block.size + new_size;
        }
        self.live.insert(
            new_addr,
            LiveBlock {
                alloc: block.alloc,
                size: new_size,
                objects: 1,
            },
        );
        Some(block.alloc)
    }

    /// Records a user mark.
    pub fn mark(&mut self, t_ns: u64, name: &str) {
        let t = self.advance(t_ns);
        if let Some(c) = self.coalesce.as_mut() {
            // A coalesced model is exact at every mark.
            c.pin(t);
        }
        let name = self.model.context.strings.intern(name);
        self.model.marks.push(Mark { t_ns: t, name });
    }

    /// The model of the events so far, as [`HeapModelBuilder::end`] would return it
    /// with the run ending at `t_ns`, leaving the builder to go on (a trace still being
    /// written). Costs a copy of the builder: the live set, the context and, for a
    /// coalescing builder, its rows.
    pub fn snapshot(&self, t_ns: u64) -> HeapModel {
        self.clone().end(t_ns)
    }

    /// Ends the run at `t_ns` and returns the model. Blocks still live stay live
    /// ([`NEVER_FREED`]).
    pub fn end(mut self, t_ns: u64) -> HeapModel {
        let t = self.advance(t_ns);
        self.commit_peak();
        let m = &mut self.model;
        m.run.end_ns = t;
        if let Some(mut c) = self.coalesce.take() {
            c.settle(t, self.live_bytes);
            c.finish(t, m);
        }
        let stacks = m.context.stacks.len();
        for stack in &mut m.stack {
            if stack.index() >= stacks {
                *stack = StackId::ROOT;
                m.diagnostics.invalid_stack_refs += 1;
            }
        }
        let r = &mut m.resizes;
        r.by_alloc = (0..r.alloc.len() as u32).collect();
        r.by_alloc.sort_by_key(|&i| r.alloc[i as usize]);
        m.stats.live_at_exit_bytes = self.live_bytes;
        m.stats.live_at_exit_objects = self.live_objects;
        self.model
    }

    /// Moves the clock to `t_ns` (never backwards) and returns the time to record.
    fn advance(&mut self, t_ns: u64) -> u64 {
        if !self.started {
            self.started = true;
            self.last_t = t_ns;
            self.model.run.start_ns = t_ns;
        }
        if t_ns < self.last_t {
            self.model.diagnostics.out_of_order_events += 1;
            return self.last_t;
        }
        if t_ns > self.last_t {
            // Every event at the previous timestamp has been applied: the live set at
            // `last_t` is final, so it may be the peak.
            self.commit_peak();
            if let Some(c) = self.coalesce.as_mut() {
                c.settle(self.last_t, self.live_bytes);
                c.advance_to(t_ns);
            }
            self.last_t = t_ns;
        }
        t_ns
    }

    fn commit_peak(&mut self) {
        let stats = &mut self.model.stats;
        if self.live_bytes > stats.peak_bytes {
            stats.peak_bytes = self.live_bytes;
            stats.peak_objects = self.live_objects;
            stats.peak_time_ns = self.last_t;
        }
    }

    fn end_block(&mut self, block: LiveBlock, t: u64) {
        let m = &mut self.model;
        if let Some(c) = self.coalesce.as_mut() {
            c.close(block.alloc, t);
        } else {
            m.t_free[block.alloc.index()] = t;
            m.free_order.push(block.alloc);
        }
        m.stats.frees += block.objects;
        self.live_bytes -= block.size;
        self.live_objects -= block.objects;
    }

    fn thread_index(&mut self, tid: u64) -> ThreadIndex {
        if let Some((last, index)) = self.last_thread
            && last == tid
        {
            return index;
        }
        let index = self.model.context.threads.index_of(tid);
        self.last_thread = Some((tid, index));
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realloc_keeps_identity_and_records_the_size_history() {
        let mut b = HeapModelBuilder::new();
        let a = b.alloc(10, 1, 0x100, 100, StackId::ROOT, AllocKind::Malloc);
        assert_eq!(b.realloc(20, 1, 0x100, 0x200, 300, StackId::ROOT), Some(a));
        assert_eq!(b.realloc(30, 1, 0x200, 0x200, 50, StackId::ROOT), Some(a));
        b.free(40, 1, 0x200);
        let m = b.end(50);
        assert_eq!(m.len(), 1, "realloc made no new allocation");
        assert_eq!(
            m.size_history(a).collect::<Vec<_>>(),
            vec![(10, 100), (20, 300), (30, 50)]
        );
        assert_eq!(
            (m.size_at(a, 19), m.size_at(a, 20), m.size_at(a, 35)),
            (100, 300, 50)
        );
        assert_eq!(m.final_size(a), 50);
        assert_eq!(m.t_free(a), 40);
        let s = m.stats();
        assert_eq!((s.allocations, s.frees, s.reallocations), (1, 1, 2));
        assert_eq!((s.peak_bytes, s.peak_time_ns), (300, 20));
        assert!(m.diagnostics().is_clean());
    }

    #[test]
    fn realloc_of_null_unknown_and_to_zero() {
        let mut b = HeapModelBuilder::new();
        let fresh = b.realloc(1, 1, 0, 0x10, 8, StackId::ROOT).unwrap();
        let unknown = b.realloc(2, 1, 0xdead, 0x20, 16, StackId::ROOT).unwrap();
        assert_ne!(fresh, unknown);
        assert_eq!(
            b.realloc(3, 1, 0x10, 0, 0, StackId::ROOT),
            None,
            "realloc(p, 0) frees"
        );
        assert_eq!(
            b.realloc(4, 1, 0x20, 0, 64, StackId::ROOT),
            None,
            "a failed realloc keeps the block"
        );
        let m = b.end(5);
        assert_eq!(m.kind(fresh), AllocKind::Realloc);
        assert_eq!(m.t_free(fresh), 3);
        assert_eq!(m.t_free(unknown), NEVER_FREED);
        assert_eq!(m.final_size(unknown), 16);
        assert_eq!(m.diagnostics().unknown_reallocs, 1);
    }

    #[test]
    fn odd_input_is_repaired_and_counted() {
        let mut b = HeapModelBuilder::new();
        b.free(1, 1, 0x999);
        b.free(1, 1, 0);
        let first = b.alloc(2, 1, 0x10, 8, StackId(42), AllocKind::Malloc);
        let second = b.alloc(3, 1, 0x10, 4, StackId::ROOT, AllocKind::Malloc);
        b.free(2, 1, 0x10);
        let bad_parent = b.add_stack(StackId(7), FrameId(99));
        let m = b.end(1);
        let d = m.diagnostics();
        assert_eq!(d.unknown_frees, 1, "free(NULL) is not odd");
        assert_eq!(d.reused_live_addresses, 1);
        assert_eq!(d.out_of_order_events, 2, "the late free and the early end");
        assert_eq!(d.invalid_stack_refs, 1);
        assert_eq!(d.invalid_table_refs, 2);
        assert_eq!(
            m.t_free(first),
            3,
            "the older block ends when its address is reused"
        );
        assert_eq!(
            m.t_free(second),
            3,
            "the late free is moved to the previous time"
        );
        assert_eq!(m.stack(first), StackId::ROOT);
        assert_eq!(m.context().stacks.parent[bad_parent.index()], StackId::ROOT);
        assert_eq!(
            m.run(),
            TimeWindow {
                start_ns: 1,
                end_ns: 3
            }
        );
    }

    #[test]
    fn peak_counts_the_state_after_all_events_of_a_timestamp() {
        let mut b = HeapModelBuilder::new();
        b.alloc(1, 1, 0x10, 100, StackId::ROOT, AllocKind::Malloc);
        // At t = 2 a block is freed and a bigger one allocated: the peak is 150, never 250.
        b.alloc(2, 1, 0x20, 150, StackId::ROOT, AllocKind::Malloc);
        b.free(2, 1, 0x10);
        b.free(3, 1, 0x20);
        let m = b.end(4);
        assert_eq!((m.stats().peak_bytes, m.stats().peak_time_ns), (150, 2));
    }

    /// The events of a small run: allocations, frees and reallocations over 100 ms.
    fn feed(b: &mut HeapModelBuilder, from: u64, to: u64) {
        for i in from..to {
            let t = i * 1_000_000;
            let addr = 0x1000 + (i % 7) * 0x100;
            match i % 5 {
                0 | 1 => b.free(t, 1, addr),
                2 => {
                    b.realloc(t, 1, addr, addr, 64 + i, StackId::ROOT);
                }
                _ => {
                    b.alloc(t, 1 + i % 2, addr, 32 + i, StackId::ROOT, AllocKind::Malloc);
                }
            }
        }
    }

    #[test]
    fn a_snapshot_is_the_end_of_the_events_so_far_and_leaves_the_builder_going_on() {
        let grid: Vec<u64> = (0..=16).map(|i| i * 6_250_000).collect();
        for coalescing in [false, true] {
            let new = || match coalescing {
                true => HeapModelBuilder::coalescing(grid.clone()),
                false => HeapModelBuilder::new(),
            };
            let (mut going, mut prefix, mut whole) = (new(), new(), new());
            feed(&mut going, 0, 60);
            feed(&mut prefix, 0, 60);
            let snapshot = going.snapshot(60_000_000);
            assert_eq!(
                format!("{snapshot:?}"),
                format!("{:?}", prefix.end(60_000_000)),
                "a snapshot is the model of the events so far"
            );
            assert!(!snapshot.is_empty());
            feed(&mut going, 60, 100);
            feed(&mut whole, 0, 100);
            assert_eq!(
                format!("{:?}", going.end(100_000_000)),
                format!("{:?}", whole.end(100_000_000)),
                "taking a snapshot changes nothing after it"
            );
        }
    }
}
