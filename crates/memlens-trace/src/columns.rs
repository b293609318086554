//! The columnar event encoding of event chunks, and its decoder.
//!
//! Events of one thread are split into ten byte columns, each compressed on
//! its own (codec 2), because values of one kind compress far better next
//! to each other. Addresses are *predicted* from state that the encoder and
//! the decoder both rebuild from the chunk itself (it starts empty in every
//! chunk, so chunks stay independently decodable):
//!
//! - a free names its block by how many allocations ago it was made (a
//!   back-reference) when that allocation is in the same chunk;
//! - an allocation's address is looked up among the recently freed blocks of
//!   the same glibc size class (allocators hand those back first: tcache and
//!   fastbins are LIFO, small bins FIFO), then among the ends of recently
//!   allocated blocks (the next split of the top chunk), and only then
//!   written as a delta from the previous allocation.
//!
//! On `alloc-bench` (random sizes, random lifetimes) this stores about
//! 3 bytes per event with addresses and nanosecond times kept, against
//! 5.1 for the same values row by row. See `docs/trace-format.md` for the
//! byte layout.
//!
//! Optionally (`memlens record --latency`) a chunk also carries how long each
//! allocator call took: two more columns, one for the allocation side and
//! one for frees, written only when the chunk has latencies, so chunks
//! without them are byte for byte what they were before, and readers that
//! know only the first ten columns skip the extra ones.
//!
//! Likewise (`memlens record --free-stacks`) a chunk whose frees carry their
//! call stacks has a thirteenth column, the stack of each free. Columns are
//! positional, so such a chunk has the latency columns too (zeros, "not
//! measured", when latencies were not recorded: they compress to a few
//! bytes), and readers that know twelve columns or ten read its events
//! unchanged.

use crate::column_room::ColumnBufs;
use crate::live_blocks::{LiveBlocks, Place};
use crate::predict::{ENDS_DEPTH, FreedByClass, Owned, size_class};
use crate::record::{AllocFn, Event, TimeNs};
use crate::varint::{Cursor, zigzag};

/// Number of columns this version knows (the latency and free-stack columns
/// included).
pub const COLUMNS: usize = 13;

/// Number of columns of a chunk with latencies but without free stacks (every
/// column before [`col::FREE_STACK`]).
pub const LATENCY_COLUMNS: usize = 12;

/// Number of columns of a chunk without latencies (every column before
/// [`col::LAT_ALLOC`]).
pub const BASE_COLUMNS: usize = 10;

/// The largest latency a chunk stores, in ns (longer calls are stored as
/// this value: about 4.3 s).
pub const MAX_LATENCY_NS: u32 = u32::MAX - 1;

/// Decodes a stored latency value: 0 means "not measured", `n + 1` is `n` ns.
#[inline]
pub fn latency_from_code(code: u32) -> Option<u32> {
    code.checked_sub(1)
}

/// Encodes an optional latency as stored (see [`latency_from_code`]).
#[inline]
pub fn latency_code(latency_ns: Option<u32>) -> u32 {
    latency_ns.map_or(0, |ns| ns.min(MAX_LATENCY_NS) + 1)
}

/// Column indices.
pub mod col {
    /// One op byte per event.
    pub const OPS: usize = 0;
    /// Time deltas of allocations and reallocations.
    pub const DT_ALLOC: usize = 1;
    /// Time deltas of frees.
    pub const DT_FREE: usize = 2;
    /// Low byte of sizes.
    pub const SIZE_LO: usize = 3;
    /// `size >> 8` as varints.
    pub const SIZE_HI: usize = 4;
    /// Stack ids as varints.
    pub const STACK: usize = 5;
    /// Address deltas (zigzag varints).
    pub const ADDR: usize = 6;
    /// Prediction indices (one byte each).
    pub const PRED: usize = 7;
    /// Low byte of back-reference distances.
    pub const REF_LO: usize = 8;
    /// `distance >> 8` as varints.
    pub const REF_HI: usize = 9;
    /// Latencies of allocations and reallocations (varint `ns + 1`, 0 = not
    /// measured); present only in chunks with latencies.
    pub const LAT_ALLOC: usize = 10;
    /// Latencies of frees, as [`LAT_ALLOC`]; present only with it.
    pub const LAT_FREE: usize = 11;
    /// Stack ids of frees as varints (0 = not recorded); present only in
    /// chunks with free stacks, which then have the latency columns too.
    pub const FREE_STACK: usize = 12;
}

/// Op byte: bits 0–1 the event kind.
pub mod op {
    /// An allocation; bits 2–3 address mode, bits 4–6 the function.
    pub const ALLOC: u8 = 0;
    /// A free; bits 2–3 address mode (back-reference or delta).
    pub const FREE: u8 = 1;
    /// A reallocation; bits 2–3 old-address mode, bits 4–5 new-address mode.
    pub const REALLOC: u8 = 2;
    /// Address mode: a hit in the size class's freed list (allocations) or
    /// a back-reference (frees).
    pub const MODE_CLASS_OR_REF: u8 = 0;
    /// Address mode: a hit among recent block ends (allocations only).
    pub const MODE_END: u8 = 1;
    /// Address mode: a 16-aligned delta (`addr >> 4` minus previous `>> 4`).
    pub const MODE_DELTA: u8 = 2;
    /// Address mode: an unaligned delta.
    pub const MODE_DELTA_UNALIGNED: u8 = 3;
}

/// The decoder's prediction state (the encoder keeps the same lists, and
/// finds blocks by address where the decoder finds them by ordinal).
#[derive(Default, Debug)]
struct Model {
    prev_t: TimeNs,
    prev_alloc: u64,
    /// Allocations of this chunk by ordinal − 1: (address, size).
    allocs: Vec<(u64, u64)>,
    /// Recently freed addresses per size class.
    freed: FreedByClass,
    /// Ends of recent allocations.
    ends: Owned<ENDS_DEPTH>,
}

impl Model {
    #[inline(always)]
    fn after_alloc(&mut self, addr: u64, size: u64) {
        self.prev_alloc = addr;
        self.allocs.push((addr, size));
        self.ends.list().push(addr.wrapping_add(size_class(size)));
    }

    #[inline(always)]
    fn after_free(&mut self, addr: u64, size: u64) {
        self.freed.get_mut(size_class(size)).push(addr);
    }
}

/// Builds the columns of one event chunk.
#[derive(Default, Debug)]
pub struct ColumnEncoder {
    /// The columns, written without capacity checks (see `column_room.rs`).
    cols: ColumnBufs<COLUMNS>,
    prev_t: TimeNs,
    prev_alloc: u64,
    /// Allocations so far in this chunk (the last one's ordinal).
    allocs: u32,
    /// Live blocks allocated in this chunk: address → ordinal and size class.
    live: LiveBlocks,
    /// Recently freed addresses per size class.
    freed: FreedByClass,
    /// Ends of recent allocations.
    ends: Owned<ENDS_DEPTH>,
    events: u32,
    /// Events of this chunk on the allocation side (allocations and
    /// reallocations); the others are frees.
    alloc_side: u32,
    /// True once an event of this chunk came with a latency: the chunk then
    /// has the latency columns (earlier events get "not measured").
    latency: bool,
    /// True once a free of this chunk came with a stack: the chunk then has
    /// the free-stack column (earlier frees get 0) and the latency columns.
    free_stacks: bool,
}

impl ColumnEncoder {
    /// Starts a chunk whose first event is at `t_first`.
    pub fn reset(&mut self, t_first: TimeNs) {
        self.cols.clear();
        self.prev_t = t_first;
        self.prev_alloc = 0;
        self.allocs = 0;
        self.live.clear();
        self.freed.clear();
        self.ends.clear();
        self.events = 0;
        self.alloc_side = 0;
        self.latency = false;
        self.free_stacks = false;
    }

    /// True when the chunk being built has the latency columns.
    pub fn has_latency(&self) -> bool {
        self.latency
    }

    /// True when the chunk being built has the free-stack column.
    pub fn has_free_stacks(&self) -> bool {
        self.free_stacks
    }

    /// Adds the latency columns, with "not measured" for the `events_before`
    /// events already in the chunk.
    fn start_latency(&mut self, events_before: u32) {
        self.latency = true;
        let frees = events_before - self.alloc_side;
        self.cols.resize(col::LAT_ALLOC, self.alloc_side as usize);
        self.cols.resize(col::LAT_FREE, frees as usize);
    }

    /// Adds the free-stack column (and the latency columns before it), with
    /// stack 0 for the frees already in the chunk.
    #[cold]
    fn start_free_stacks(&mut self) {
        self.free_stacks = true;
        let frees = self.events - self.alloc_side;
        self.cols.resize(col::FREE_STACK, frees as usize);
        if !self.latency {
            self.start_latency(self.events);
        }
    }

    /// Bytes so far (before compression).
    pub fn len(&self) -> usize {
        self.cols.columns().iter().map(Vec::len).sum()
    }

    /// True when no event was added.
    pub fn is_empty(&self) -> bool {
        self.events == 0
    }

    /// Writes the time delta to `t` (one varint to `column`).
    ///
    /// # Safety
    /// For this and the column writers below: the event was started, and with
    /// these bytes it writes at most `MAX_EVENT_BYTES` to any column (the
    /// event's `*_fields` function adds up what its writers say they write).
    #[inline(always)]
    unsafe fn dt(&mut self, t: TimeNs, column: usize) {
        let dt = t.saturating_sub(self.prev_t);
        self.prev_t = t.max(self.prev_t);
        // SAFETY: the caller's promise (see above).
        unsafe { self.cols.varint(column, dt) };
    }

    /// Writes a size: one byte to `SIZE_LO`, one varint to `SIZE_HI`.
    #[inline(always)]
    unsafe fn size(&mut self, size: u64) {
        // SAFETY: the caller's promise (see `dt`).
        unsafe {
            self.cols.byte(col::SIZE_LO, size as u8);
            self.cols.varint(col::SIZE_HI, size >> 8);
        }
    }

    /// Writes an address delta: one varint (at most 10 bytes) to `ADDR`.
    #[inline(always)]
    unsafe fn delta(&mut self, addr: u64) -> u8 {
        let prev = self.prev_alloc;
        let (delta, mode) = if addr & 15 == 0 && prev & 15 == 0 {
            (
                ((addr >> 4) as i64).wrapping_sub((prev >> 4) as i64),
                op::MODE_DELTA,
            )
        } else {
            (
                (addr as i64).wrapping_sub(prev as i64),
                op::MODE_DELTA_UNALIGNED,
            )
        };
        // SAFETY: the caller's promise (see `dt`).
        unsafe { self.cols.varint(col::ADDR, zigzag(delta)) };
        mode
    }

    /// Encodes the address of a new block of size class `class`, whose place
    /// in the table of the chunk's blocks is `place`; returns its mode. The
    /// class's freed list is searched only when the table knows the address:
    /// an address the chunk has not seen is in no freed list (nor is one whose
    /// entry was forgotten, but for stale copies, which a delta encodes as
    /// well). Writes one byte to `PRED` or a delta to `ADDR`.
    #[inline(always)]
    unsafe fn new_addr(&mut self, addr: u64, class: u64, place: Option<Place>) -> u8 {
        if place.is_some_and(|p| self.live.known(p)) {
            let mut list = self.freed.get_mut(class);
            if let Some(k) = list.find(addr) {
                list.remove(k);
                // SAFETY: the caller's promise (see `dt`).
                unsafe { self.cols.byte(col::PRED, k as u8) };
                return op::MODE_CLASS_OR_REF;
            }
        }
        if let Some(k) = self.ends.list().find(addr) {
            // SAFETY: the caller's promise (see `dt`).
            unsafe { self.cols.byte(col::PRED, k as u8) };
            return op::MODE_END;
        }
        // SAFETY: the caller's promise (see `dt`).
        unsafe { self.delta(addr) }
    }

    /// Encodes the address of a block being freed; returns its mode. Writes
    /// one byte to `REF_LO` and a varint to `REF_HI`, or a delta to `ADDR`.
    #[inline(always)]
    unsafe fn old_addr(&mut self, addr: u64) -> u8 {
        match self.live.free(addr) {
            Some((ordinal, class)) => {
                let distance = u64::from(self.allocs - ordinal);
                // SAFETY: the caller's promise (see `dt`).
                unsafe {
                    self.cols.byte(col::REF_LO, distance as u8);
                    self.cols.varint(col::REF_HI, distance >> 8);
                }
                match self.freed.get_mut(class).push(addr) {
                    Some(dropped) if dropped != addr => self.live.forget_freed(dropped, class),
                    _ => {}
                }
                op::MODE_CLASS_OR_REF
            }
            // SAFETY: the caller's promise (see `dt`).
            None => unsafe { self.delta(addr) },
        }
    }

    /// After an allocation's address was encoded: it becomes the previous
    /// allocation, a live block (at `place`) and a block end.
    #[inline(always)]
    fn register(&mut self, addr: u64, class: u64, place: Option<Place>) {
        self.prev_alloc = addr;
        self.allocs += 1;
        if let Some(place) = place {
            self.live.set_live(place, addr, self.allocs, class);
        }
        self.ends.list().push(addr.wrapping_add(class));
    }

    /// Appends one event (its thread is the chunk's stream).
    #[inline]
    pub fn push(&mut self, event: &Event) {
        self.push_at(event, event.time(), None);
    }

    /// Appends one event with how long its allocator call took, in ns
    /// (`None`: not measured). The first latency of a chunk adds the latency
    /// columns to it.
    #[inline]
    pub fn push_with_latency(&mut self, event: &Event, latency_ns: Option<u32>) {
        self.push_at(event, event.time(), latency_ns);
    }

    /// [`ColumnEncoder::push_with_latency`] for `event` at time `t` (its own
    /// time, or the chunk's latest when that is later).
    #[inline(always)]
    pub fn push_at(&mut self, event: &Event, t: TimeNs, latency_ns: Option<u32>) {
        let code = latency_code(latency_ns);
        self.push_inner(event, t);
        if code == 0 {
            if self.latency {
                self.latency_value(event, 0);
            }
            return;
        }
        if !self.latency {
            // Every earlier event of the chunk: "not measured".
            let side = u32::from(!matches!(event, Event::Free { .. }));
            self.alloc_side -= side;
            self.start_latency(self.events - 1);
            self.alloc_side += side;
        }
        self.latency_value(event, code);
    }

    /// Writes the latency of the event just written (one varint to its
    /// latency column, which that event has not written yet).
    #[inline]
    fn latency_value(&mut self, event: &Event, code: u32) {
        let column = match event {
            Event::Free { .. } => col::LAT_FREE,
            _ => col::LAT_ALLOC,
        };
        // SAFETY: the event was started by its `*_fields` function and wrote
        // nothing to its latency column; a varint of a u32 is at most 5 bytes.
        unsafe { self.cols.varint(column, u64::from(code)) };
    }

    #[inline(always)]
    fn push_inner(&mut self, event: &Event, t: TimeNs) {
        match *event {
            Event::Alloc {
                addr,
                size,
                stack,
                func,
                ..
            } => self.alloc_fields(t, addr, size, stack, func),
            Event::Free { addr, stack, .. } => self.free_fields(t, addr, stack),
            Event::Realloc {
                old_addr,
                new_addr,
                size,
                stack,
                ..
            } => self.realloc_fields(t, old_addr, new_addr, size, stack),
        }
    }

    /// Appends an allocation at time `t` (see [`ColumnEncoder::push_at`]) that
    /// has no latency: the kind of event is known, so nothing dispatches on it
    /// again (a recorder's writer decodes each kind on its own path).
    #[inline]
    pub fn alloc(&mut self, t: TimeNs, addr: u64, size: u64, stack: u32, func: AllocFn) {
        self.alloc_fields(t, addr, size, stack, func);
        if self.latency {
            // SAFETY: the event was started by its `*_fields` function and
            // wrote nothing to its latency column.
            unsafe { self.cols.byte(col::LAT_ALLOC, 0) };
        }
    }

    /// Starts loading what encoding an allocation of `size` bytes at `addr`, or
    /// with no size a free of `addr`, reads first (a hint, see `prefetch.rs`).
    #[inline(always)]
    pub fn prefetch(&self, addr: u64, size: Option<u64>) {
        self.live.prefetch(addr);
        if let Some(size) = size {
            self.freed.prefetch(size_class(size));
        }
    }

    /// [`ColumnEncoder::alloc`] for a free.
    #[inline]
    pub fn free(&mut self, t: TimeNs, addr: u64, stack: u32) {
        self.free_fields(t, addr, stack);
        if self.latency {
            // SAFETY: the event was started by its `*_fields` function and
            // wrote nothing to its latency column.
            unsafe { self.cols.byte(col::LAT_FREE, 0) };
        }
    }

    /// [`ColumnEncoder::alloc`] for a reallocation.
    #[inline]
    pub fn realloc(&mut self, t: TimeNs, old_addr: u64, new_addr: u64, size: u64, stack: u32) {
        self.realloc_fields(t, old_addr, new_addr, size, stack);
        if self.latency {
            // SAFETY: the event was started by its `*_fields` function and
            // wrote nothing to its latency column.
            unsafe { self.cols.byte(col::LAT_ALLOC, 0) };
        }
    }

    /// Starts an event and writes an allocation's fields (at most 10 bytes
    /// to any column: a time delta or an address delta).
    #[inline(always)]
    fn alloc_fields(&mut self, t: TimeNs, addr: u64, size: u64, stack: u32, func: AllocFn) {
        self.cols.start_event();
        let class = size_class(size);
        let place = self.live.place(addr);
        // SAFETY: the event is started; it writes one varint to `DT_ALLOC`,
        // `SIZE_HI` and `STACK` each, one byte to `OPS`, `SIZE_LO` and `PRED`
        // each or one delta to `ADDR`: at most 10 bytes to any column.
        unsafe {
            self.dt(t, col::DT_ALLOC);
            let mode = self.new_addr(addr, class, place);
            self.cols
                .byte(col::OPS, op::ALLOC | mode << 2 | (func as u8) << 4);
            self.size(size);
            self.cols.varint(col::STACK, u64::from(stack));
        }
        self.register(addr, class, place);
        self.alloc_side += 1;
        self.events += 1;
    }

    /// Starts an event and writes a free's fields (at most 10 bytes to any
    /// column).
    #[inline(always)]
    fn free_fields(&mut self, t: TimeNs, addr: u64, stack: u32) {
        self.cols.start_event();
        // SAFETY: the event is started; it writes one varint to `DT_FREE`,
        // one byte to `OPS`, one byte and one varint to `REF_LO` and `REF_HI`
        // or one delta to `ADDR`: at most 10 bytes to any column.
        unsafe {
            self.dt(t, col::DT_FREE);
            let mode = self.old_addr(addr);
            self.cols.byte(col::OPS, op::FREE | mode << 2);
        }
        if stack != 0 && !self.free_stacks {
            self.start_free_stacks();
        }
        if self.free_stacks {
            // SAFETY: as above, and one varint (at most 5 bytes) to
            // `FREE_STACK`, which `start_free_stacks` keeps room in.
            unsafe { self.cols.varint(col::FREE_STACK, u64::from(stack)) };
        }
        self.events += 1;
    }

    /// Starts an event and writes a reallocation's fields (at most 20 bytes
    /// to any column: two address deltas).
    #[inline(always)]
    fn realloc_fields(&mut self, t: TimeNs, old_addr: u64, new_addr: u64, size: u64, stack: u32) {
        self.cols.start_event();
        // SAFETY: the event is started; it writes a free's fields and an
        // allocation's (see `free_fields`, `alloc_fields`) but one op byte and
        // one time delta: only `ADDR` gets two varints, at most 20 bytes.
        let (class, place) = unsafe {
            self.dt(t, col::DT_ALLOC);
            // The old block is freed first (its entry may move), then the new
            // one's place is found.
            let old_mode = self.old_addr(old_addr);
            let class = size_class(size);
            let place = self.live.place(new_addr);
            let new_mode = self.new_addr(new_addr, class, place);
            self.cols
                .byte(col::OPS, op::REALLOC | old_mode << 2 | new_mode << 4);
            self.size(size);
            self.cols.varint(col::STACK, u64::from(stack));
            (class, place)
        };
        self.register(new_addr, class, place);
        self.alloc_side += 1;
        self.events += 1;
    }

    /// The columns to store, in order: [`BASE_COLUMNS`] of them,
    /// [`LATENCY_COLUMNS`] when the chunk has latencies, or [`COLUMNS`] when
    /// it has free stacks.
    pub fn columns(&self) -> &[Vec<u8>] {
        let cols = self.cols.columns();
        if self.free_stacks {
            cols
        } else if self.latency {
            &cols[..LATENCY_COLUMNS]
        } else {
            &cols[..BASE_COLUMNS]
        }
    }
}

/// Decodes the events of one chunk from its columns.
#[derive(Debug)]
pub struct ColumnDecoder<'a> {
    /// The columns, in an array so that indexing by a column constant needs no
    /// bounds check.
    cols: [Cursor<'a>; COLUMNS],
    model: Model,
    tid: u32,
    left: u32,
    /// The chunk has the latency columns.
    latency: bool,
    /// The chunk has the free-stack column.
    free_stacks: bool,
    /// The stored latency of the last event decoded (see [`latency_from_code`]).
    last_latency: u32,
}

impl<'a> ColumnDecoder<'a> {
    /// Starts decoding `records` events of thread `tid` from `columns`
    /// (fewer than [`COLUMNS`] columns means the rest are empty; more than
    /// [`BASE_COLUMNS`] means the chunk has latencies, and then every event
    /// must have its latency value; more than [`LATENCY_COLUMNS`] that it has
    /// free stacks, and then every free must have its stack; columns past
    /// those this version knows are skipped).
    pub fn new(columns: Vec<&'a [u8]>, records: u32, tid: u32, t_first: TimeNs) -> Self {
        let latency = columns.len() > col::LAT_ALLOC;
        let free_stacks = columns.len() > col::FREE_STACK;
        let mut given = columns.into_iter();
        let cols = std::array::from_fn(|_| Cursor::new(given.next().unwrap_or(&[])));
        ColumnDecoder {
            cols,
            model: Model {
                prev_t: t_first,
                ..Model::default()
            },
            tid,
            left: records,
            latency,
            free_stacks,
            last_latency: 0,
        }
    }

    /// True when the chunk has latencies (the events may still have none).
    pub fn has_latency(&self) -> bool {
        self.latency
    }

    /// How long the allocator call of the event last returned by `next`
    /// took, in ns; `None` when it was not measured.
    pub fn latency_ns(&self) -> Option<u32> {
        latency_from_code(self.last_latency)
    }

    /// The stored latency value of the last event (0 = not measured, else
    /// `ns + 1`; see [`latency_from_code`]).
    pub fn latency_code(&self) -> u32 {
        self.last_latency
    }

    fn read_latency(&mut self, event: &Event) -> Option<()> {
        if self.latency {
            let column = match event {
                Event::Free { .. } => col::LAT_FREE,
                _ => col::LAT_ALLOC,
            };
            self.last_latency = u32::try_from(self.cols[column].u64()?).ok()?;
        }
        Some(())
    }

    fn dt(&mut self, column: usize) -> Option<TimeNs> {
        let t = self.model.prev_t.checked_add(self.cols[column].u64()?)?;
        self.model.prev_t = t;
        Some(t)
    }

    fn size(&mut self) -> Option<u64> {
        let lo = u64::from(self.cols[col::SIZE_LO].u8()?);
        let hi = self.cols[col::SIZE_HI].u64()?;
        Some(hi.checked_mul(256)? | lo)
    }

    fn delta(&mut self, mode: u8) -> Option<u64> {
        let d = self.cols[col::ADDR].i64()?;
        let prev = self.model.prev_alloc;
        Some(match mode {
            op::MODE_DELTA => (((prev >> 4) as i64).wrapping_add(d) as u64) << 4,
            _ => (prev as i64).wrapping_add(d) as u64,
        })
    }

    #[inline(always)]
    fn new_addr(&mut self, mode: u8, size: u64) -> Option<u64> {
        match mode {
            op::MODE_CLASS_OR_REF => {
                let k = usize::from(self.cols[col::PRED].u8()?);
                self.model.freed.get_mut(size_class(size)).remove(k)
            }
            op::MODE_END => {
                let k = usize::from(self.cols[col::PRED].u8()?);
                self.model.ends.list().get(k)
            }
            _ => self.delta(mode),
        }
    }

    #[inline(always)]
    fn old_addr(&mut self, mode: u8) -> Option<u64> {
        match mode {
            op::MODE_CLASS_OR_REF => {
                let lo = u64::from(self.cols[col::REF_LO].u8()?);
                let hi = self.cols[col::REF_HI].u64()?;
                let distance = hi.checked_mul(256)? | lo;
                let ordinal = (self.model.allocs.len() as u64).checked_sub(distance)?;
                let &(addr, size) = self
                    .model
                    .allocs
                    .get(usize::try_from(ordinal).ok()?.checked_sub(1)?)?;
                self.model.after_free(addr, size);
                Some(addr)
            }
            op::MODE_END => None,
            _ => self.delta(mode),
        }
    }

    fn next_event(&mut self) -> Option<Event> {
        let tid = self.tid;
        let o = self.cols[col::OPS].u8()?;
        match o & 3 {
            op::ALLOC => {
                let t = self.dt(col::DT_ALLOC)?;
                let func = AllocFn::from_code(o >> 4)?;
                let mode = (o >> 2) & 3;
                // The size is needed to find a class prediction: read it first.
                let size = self.size()?;
                let addr = self.new_addr(mode, size)?;
                let stack = self.cols[col::STACK].u32()?;
                self.model.after_alloc(addr, size);
                Some(Event::Alloc {
                    t,
                    tid,
                    addr,
                    size,
                    stack,
                    func,
                })
            }
            op::FREE => {
                let t = self.dt(col::DT_FREE)?;
                let addr = self.old_addr((o >> 2) & 3)?;
                let stack = if self.free_stacks {
                    self.cols[col::FREE_STACK].u32()?
                } else {
                    0
                };
                Some(Event::Free {
                    t,
                    tid,
                    addr,
                    stack,
                })
            }
            op::REALLOC => {
                let t = self.dt(col::DT_ALLOC)?;
                let old_addr = self.old_addr((o >> 2) & 3)?;
                let size = self.size()?;
                let new_addr = self.new_addr((o >> 4) & 3, size)?;
                let stack = self.cols[col::STACK].u32()?;
                self.model.after_alloc(new_addr, size);
                Some(Event::Realloc {
                    t,
                    tid,
                    old_addr,
                    new_addr,
                    size,
                    stack,
                })
            }
            _ => None,
        }
    }
}

impl Iterator for ColumnDecoder<'_> {
    type Item = Result<Event, usize>;

    /// The next event, or `Err(index)` naming the first event that does not decode.
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let index = self.cols[col::OPS].position();
        self.left -= 1;
        match self
            .next_event()
            .and_then(|e| self.read_latency(&e).map(|()| e))
        {
            Some(e) => Some(Ok(e)),
            None => {
                self.left = 0;
                Some(Err(index))
            }
        }
    }
}

#[cfg(test)]
mod tests;
