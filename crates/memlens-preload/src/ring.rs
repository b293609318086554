//! The per-thread single-producer/single-consumer ring of fixed 32-byte slots.
//!
//! The owning thread writes slots and publishes them with one release store
//! of `head`; the writer thread reads up to `head` and releases space with a
//! release store of `tail`. The two indices live on separate cache lines, so
//! a producer never writes a line that another producer touches: there is no
//! shared writable state on the hot path.
//!
//! Slot layout (four `u64` words):
//! - `ALLOC`:   `[time, addr, size | lat_hi << 48, kind | func << 8 | lat_lo << 16 | local_stack << 32]`
//! - `FREE`:    `[time, addr, lat, kind]`
//! - `REALLOC`: `[time, new_addr, size, kind | local_stack << 32]`, then one
//!   slot `[old_addr, lat, 0, 0]`
//!
//! `lat` is the allocator call's duration in raw clock ticks (at most 32
//! bits; an allocation splits it into 16-bit halves), written only in latency
//! mode and 0 otherwise; `time` is taken after the call, except for `FREE`.
//! - `STACK`:   `[0, local_id, depth, kind]`, then `ceil(depth / 4)` slots of
//!   return addresses, innermost first.

use core::sync::atomic::{AtomicU64, Ordering};

/// Slot kinds (low byte of word 3).
pub mod kind {
    /// An allocation.
    pub const ALLOC: u64 = 1;
    /// A free.
    pub const FREE: u64 = 2;
    /// A realloc (two slots).
    pub const REALLOC: u64 = 3;
    /// A new thread-local stack definition (variable length).
    pub const STACK: u64 = 4;
}

/// One slot.
pub type Slot = [u64; 4];

/// Ring capacity in slots (a power of two): 1 MiB per thread.
pub const CAPACITY: u64 = 1 << 15;

#[repr(C, align(64))]
struct Line(AtomicU64);

/// The ring. Allocated with `mmap` by its thread, never freed while the
/// writer may read it.
#[repr(C)]
pub struct Ring {
    head: Line,
    tail: Line,
    slots: *mut Slot,
}

// SAFETY: the protocol above makes concurrent use by one producer and one
// consumer sound; the pointer is to memory owned by the ring.
unsafe impl Send for Ring {}
// SAFETY: see above.
unsafe impl Sync for Ring {}

impl Ring {
    /// Maps a new ring; `None` when `mmap` fails.
    pub fn new() -> Option<Ring> {
        let bytes = (CAPACITY as usize) * core::mem::size_of::<Slot>();
        // SAFETY: anonymous private mapping; result checked.
        let p = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        Some(Ring {
            head: Line(AtomicU64::new(0)),
            tail: Line(AtomicU64::new(0)),
            slots: p.cast(),
        })
    }

    /// Producer: free slots right now.
    #[inline(always)]
    pub fn free_slots(&self) -> u64 {
        CAPACITY - (self.head.0.load(Ordering::Relaxed) - self.tail.0.load(Ordering::Acquire))
    }

    /// Producer: slots published but not yet consumed.
    #[inline(always)]
    pub fn used(&self) -> u64 {
        self.head.0.load(Ordering::Relaxed) - self.tail.0.load(Ordering::Acquire)
    }

    /// Producer: writes `slots` after the head without publishing them.
    /// The caller has checked there is room.
    #[inline(always)]
    pub fn stage(&self, offset: u64, slot: Slot) {
        let head = self.head.0.load(Ordering::Relaxed);
        let idx = (head + offset) & (CAPACITY - 1);
        // SAFETY: idx < CAPACITY and the slot is not visible to the consumer
        // until `publish`.
        unsafe { self.slots.add(idx as usize).write(slot) };
    }

    /// Producer: makes `n` staged slots visible to the writer.
    #[inline(always)]
    pub fn publish(&self, n: u64) {
        let head = self.head.0.load(Ordering::Relaxed);
        self.head.0.store(head + n, Ordering::Release);
    }

    /// Producer (in a forked child): forgets everything, the parent's writer
    /// owns what was in the ring.
    pub fn reset(&self) {
        let head = self.head.0.load(Ordering::Relaxed);
        self.tail.0.store(head, Ordering::Release);
    }

    /// Consumer: the range of readable slot indices.
    pub fn readable(&self) -> (u64, u64) {
        (
            self.tail.0.load(Ordering::Relaxed),
            self.head.0.load(Ordering::Acquire),
        )
    }

    /// Consumer: reads slot `index` (from the range given by `readable`).
    #[inline(always)]
    pub fn read(&self, index: u64) -> Slot {
        // SAFETY: the index is below `head`, so the slot was published.
        unsafe { self.slots.add((index & (CAPACITY - 1)) as usize).read() }
    }

    /// Unmaps the slots.
    ///
    /// # Safety
    /// Neither the producer nor the consumer may use the ring afterwards.
    pub unsafe fn unmap(&self) {
        let bytes = (CAPACITY as usize) * core::mem::size_of::<Slot>();
        // SAFETY: the mapping was created by `new` with this size.
        unsafe { libc::munmap(self.slots.cast(), bytes) };
    }

    /// Consumer: releases every slot before `index`.
    pub fn release(&self, index: u64) {
        self.tail.0.store(index, Ordering::Release);
    }
}
