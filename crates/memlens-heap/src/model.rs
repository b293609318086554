//! The live-set model: every allocation's lifetime, size history, stack and thread, in
//! columns.
//!
//! A [`HeapModel`] is produced once by the [`HeapModelBuilder`](crate::HeapModelBuilder)
//! and then only read. It stores one row per allocation in parallel `Vec`s (about 33
//! bytes per allocation, no per-allocation heap object), the size changes made by
//! `realloc` in a separate small table, and the order in which blocks were freed, so
//! that the timeline can be replayed without sorting.
//!
//! Lifetimes are half-open: an allocation is *live at* `t` when
//! `t_alloc <= t < t_free`. Blocks never freed have `t_free == NEVER_FREED`, so they are
//! live at every time after their allocation, including the end of the run.

use crate::context::Context;
use crate::diagnostics::Diagnostics;
use crate::ids::{AllocId, StackId, StringId, ThreadIndex, TypeId};

/// The `t_free` of a block that was still live when the run ended.
pub const NEVER_FREED: u64 = u64::MAX;

/// Which allocator entry point made a block. Informational; the classifiers do not use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AllocKind {
    /// `malloc` and anything not listed below.
    Malloc = 0,
    /// `calloc`.
    Calloc = 1,
    /// `realloc` of a null pointer or of an unknown block.
    Realloc = 2,
    /// `memalign`, `posix_memalign`, `aligned_alloc`, `valloc`, `pvalloc`.
    Aligned = 3,
    /// C++ `operator new` or a managed-runtime allocation.
    New = 4,
    /// An `mmap`'d region.
    Mmap = 5,
}

impl AllocKind {
    pub(crate) fn from_bits(bits: u8) -> AllocKind {
        match bits & KIND_MASK {
            1 => AllocKind::Calloc,
            2 => AllocKind::Realloc,
            3 => AllocKind::Aligned,
            4 => AllocKind::New,
            5 => AllocKind::Mmap,
            _ => AllocKind::Malloc,
        }
    }
}

pub(crate) const KIND_MASK: u8 = 0x0f;
/// Set in an allocation's flags when it has entries in the resize table.
pub(crate) const RESIZED: u8 = 0x80;

/// A user-placed point in time, a natural snapshot time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// When the mark was placed.
    pub t_ns: u64,
    /// The mark's name.
    pub name: StringId,
}

/// A closed time range `[start_ns, end_ns]` in trace time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWindow {
    /// First instant of the window.
    pub start_ns: u64,
    /// Last instant of the window; never before `start_ns`.
    pub end_ns: u64,
}

impl TimeWindow {
    /// The window's length in nanoseconds.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }

    /// Whether `t` lies inside the window (both ends included).
    pub fn contains(&self, t: u64) -> bool {
        self.start_ns <= t && t <= self.end_ns
    }
}

/// Size changes made by `realloc`, in time order, plus an index by allocation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resizes {
    pub alloc: Vec<AllocId>,
    pub t_ns: Vec<u64>,
    pub old_size: Vec<u64>,
    pub new_size: Vec<u64>,
    /// Indices into the columns above, sorted by (allocation, time).
    pub by_alloc: Vec<u32>,
}

impl Resizes {
    /// The resize entries of `alloc`, in time order, as indices into the columns.
    pub fn of(&self, alloc: AllocId) -> &[u32] {
        let from = self
            .by_alloc
            .partition_point(|&i| self.alloc[i as usize] < alloc);
        let to = self
            .by_alloc
            .partition_point(|&i| self.alloc[i as usize] <= alloc);
        &self.by_alloc[from..to]
    }
}

/// Totals over the whole run, maintained while building.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Allocations recorded (including fresh blocks made by `realloc`).
    pub allocations: u64,
    /// Blocks ended by a free (including implicit ends at a reused address).
    pub frees: u64,
    /// `realloc` calls that kept a block's identity.
    pub reallocations: u64,
    /// The largest number of live bytes after all events of one timestamp.
    pub peak_bytes: u64,
    /// The first time at which `peak_bytes` was reached.
    pub peak_time_ns: u64,
    /// Live objects at that time.
    pub peak_objects: u64,
    /// Bytes never freed (live at the end of the run).
    pub live_at_exit_bytes: u64,
    /// Blocks never freed.
    pub live_at_exit_objects: u64,
}

/// All allocations of one run with their lifetimes, and the context tables.
#[derive(Debug, Clone)]
pub struct HeapModel {
    pub(crate) run: TimeWindow,
    pub(crate) t_alloc: Vec<u64>,
    pub(crate) t_free: Vec<u64>,
    /// Size at allocation time; later sizes are in `resizes`.
    pub(crate) size: Vec<u64>,
    pub(crate) stack: Vec<StackId>,
    pub(crate) thread: Vec<ThreadIndex>,
    /// Low bits: [`AllocKind`]; bit 7: [`RESIZED`].
    pub(crate) flags: Vec<u8>,
    /// Empty when no allocation has a type; otherwise one entry per allocation.
    pub(crate) types: Vec<TypeId>,
    /// Empty when the trace has no heap walk; otherwise one data-structure key per
    /// row (see [`crate::classifiers::data_structure_key`]).
    pub(crate) containers: Vec<u64>,
    pub(crate) resizes: Resizes,
    /// Ended allocations in the order they ended (time order).
    pub(crate) free_order: Vec<AllocId>,
    /// Empty when every row is one allocation. In a coalesced model (see
    /// [`crate::coalesce`]) row `a` stands for `objects[a]` allocations of `size[a]`
    /// bytes in total.
    pub(crate) objects: Vec<u32>,
    /// Empty when the model is exact at every instant; otherwise the ascending instants
    /// at which a coalesced model is exact (between two, it shows the earlier one).
    pub(crate) instants: Vec<u64>,
    pub(crate) marks: Vec<Mark>,
    pub(crate) context: Context,
    pub(crate) diagnostics: Diagnostics,
    pub(crate) stats: RunStats,
}

impl HeapModel {
    /// The number of allocations.
    pub fn len(&self) -> usize {
        self.t_alloc.len()
    }

    /// Whether the run allocated nothing.
    pub fn is_empty(&self) -> bool {
        self.t_alloc.is_empty()
    }

    /// The recorded run: from the first event (or the builder's start) to `end`.
    pub fn run(&self) -> TimeWindow {
        self.run
    }

    /// Totals over the run.
    pub fn stats(&self) -> RunStats {
        self.stats
    }

    /// What the builder had to repair.
    pub fn diagnostics(&self) -> Diagnostics {
        self.diagnostics
    }

    /// The context tables (strings, frames, stacks, threads, types).
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The marks, in time order.
    pub fn marks(&self) -> &[Mark] {
        &self.marks
    }

    /// When `alloc` was allocated.
    pub fn t_alloc(&self, alloc: AllocId) -> u64 {
        self.t_alloc[alloc.index()]
    }

    /// When `alloc` was freed, or [`NEVER_FREED`].
    pub fn t_free(&self, alloc: AllocId) -> u64 {
        self.t_free[alloc.index()]
    }

    /// How many allocations row `alloc` stands for: 1 except in a coalesced model.
    pub fn objects_of(&self, alloc: AllocId) -> u64 {
        self.objects.get(alloc.index()).map_or(1, |&n| u64::from(n))
    }

    /// The ascending instants at which a coalesced model is exact, or `None` when the
    /// model is exact at every instant.
    pub fn exact_instants(&self) -> Option<&[u64]> {
        (!self.instants.is_empty()).then_some(&self.instants[..])
    }

    /// The latest instant at or before `t` at which the model is exact (`t` itself for
    /// an exact model; the first instant when `t` is before every instant).
    pub fn exact_at_or_before(&self, t: u64) -> u64 {
        self.exact_in(self.run, t)
    }

    /// The latest instant of `window` at or before `t` at which the model is exact: the
    /// window's first such instant when `t` is before them, `t` itself for an exact model
    /// or a window holding no instant. The one way a time is snapped to an instant.
    pub fn exact_in(&self, window: TimeWindow, t: u64) -> u64 {
        let Some(instants) = self.exact_instants() else {
            return t;
        };
        let inside = &instants[instants.partition_point(|&i| i < window.start_ns)
            ..instants.partition_point(|&i| i <= window.end_ns)];
        match inside.partition_point(|&i| i <= t) {
            _ if inside.is_empty() => t,
            0 => inside[0],
            n => inside[n - 1],
        }
    }

    /// The allocation's stack.
    pub fn stack(&self, alloc: AllocId) -> StackId {
        self.stack[alloc.index()]
    }

    /// The allocating thread.
    pub fn thread(&self, alloc: AllocId) -> ThreadIndex {
        self.thread[alloc.index()]
    }

    /// The allocator entry point that made the block.
    pub fn kind(&self, alloc: AllocId) -> AllocKind {
        AllocKind::from_bits(self.flags[alloc.index()])
    }

    /// The allocation's type, or [`TypeId::UNKNOWN`].
    pub fn type_of(&self, alloc: AllocId) -> TypeId {
        self.types
            .get(alloc.index())
            .copied()
            .unwrap_or(TypeId::UNKNOWN)
    }

    /// The data structure that held the allocation at the latest heap walk of its row
    /// (0, not contained, when the trace has no heap walk).
    pub fn container_of(&self, alloc: AllocId) -> u64 {
        self.containers.get(alloc.index()).copied().unwrap_or(0)
    }

    /// Whether any allocation carries a type.
    pub fn has_types(&self) -> bool {
        !self.types.is_empty()
    }

    /// Whether `realloc` changed the block's size at least once.
    pub fn was_resized(&self, alloc: AllocId) -> bool {
        self.flags[alloc.index()] & RESIZED != 0
    }

    /// The size requested at allocation time.
    pub fn initial_size(&self, alloc: AllocId) -> u64 {
        self.size[alloc.index()]
    }

    /// The block's size history: `(from_ns, size)` steps in time order, the first at
    /// `t_alloc`. Each size holds until the next step or until `t_free`.
    pub fn size_history(&self, alloc: AllocId) -> impl Iterator<Item = (u64, u64)> + '_ {
        let first = std::iter::once((self.t_alloc(alloc), self.initial_size(alloc)));
        let rest: &[u32] = if self.was_resized(alloc) {
            self.resizes.of(alloc)
        } else {
            &[]
        };
        first.chain(rest.iter().map(|&i| {
            let i = i as usize;
            (self.resizes.t_ns[i], self.resizes.new_size[i])
        }))
    }

    /// The block's size at `t` (its size when allocated if `t` is earlier).
    pub fn size_at(&self, alloc: AllocId, t: u64) -> u64 {
        let mut size = self.initial_size(alloc);
        for (from, s) in self.size_history(alloc).skip(1) {
            if from > t {
                break;
            }
            size = s;
        }
        size
    }

    /// The block's last size (the size it had when freed, or at exit).
    pub fn final_size(&self, alloc: AllocId) -> u64 {
        self.size_at(alloc, u64::MAX)
    }

    /// Whether `alloc` is live at `t` (`t_alloc <= t < t_free`).
    pub fn is_live_at(&self, alloc: AllocId, t: u64) -> bool {
        self.t_alloc(alloc) <= t && t < self.t_free(alloc)
    }

    /// The number of allocations made at or before `t` (allocation ids are in time order).
    pub fn allocated_by(&self, t: u64) -> usize {
        self.t_alloc.partition_point(|&a| a <= t)
    }
}
