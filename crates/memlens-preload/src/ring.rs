//! The per-thread single-producer/single-consumer ring of fixed 32-byte slots.
//!
//! The owning thread writes slots and publishes them with one release store
//! of `head`; the writer thread reads up to `head` and releases space with a
//! release store of `tail`. The two indices live on separate cache lines, so
//! a producer never writes a line that another producer touches: there is no
//! shared writable state on the hot path. The producer keeps the last `tail`
//! it read beside `head` and reads the writer's line again only when that
//! copy says the ring is full, so publishing a slot touches no line the writer
//! writes.
//!
//! What a slot holds is `slot.rs`'s; the ring only moves slots.

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::slot::Slot;

/// Ring capacity in slots (a power of two): 1 MiB per thread.
pub const CAPACITY: u64 = 1 << 15;

#[repr(C, align(64))]
struct Line(AtomicU64);

/// The producer's line: `head`, and its copy of `tail`.
#[repr(C, align(64))]
struct Producer {
    head: AtomicU64,
    /// The `tail` the producer read last (only the producer uses it): the
    /// writer has released at least this much.
    tail_seen: Cell<u64>,
}

/// The ring. Allocated with `mmap` by its thread, never freed while the
/// writer may read it.
#[repr(C)]
pub struct Ring {
    head: Producer,
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
            head: Producer {
                head: AtomicU64::new(0),
                tail_seen: Cell::new(0),
            },
            tail: Line(AtomicU64::new(0)),
            slots: p.cast(),
        })
    }

    /// Producer: true when `n` slots are free. Reads the writer's `tail` only
    /// when the producer's copy of it says they are not.
    #[inline(always)]
    pub fn has_room(&self, n: u64) -> bool {
        let head = self.head.head.load(Ordering::Relaxed);
        if head + n - self.head.tail_seen.get() <= CAPACITY {
            return true;
        }
        let tail = self.tail.0.load(Ordering::Acquire);
        self.head.tail_seen.set(tail);
        head + n - tail <= CAPACITY
    }

    /// Producer: free slots right now.
    #[cfg(test)]
    pub fn free_slots(&self) -> u64 {
        CAPACITY - self.used()
    }

    /// Producer: slots published but not yet consumed (reads the writer's line).
    #[inline(always)]
    pub fn used(&self) -> u64 {
        let tail = self.tail.0.load(Ordering::Acquire);
        self.head.tail_seen.set(tail);
        self.head.head.load(Ordering::Relaxed) - tail
    }

    /// Producer: writes `slots` after the head without publishing them.
    /// The caller has checked there is room.
    #[inline(always)]
    pub fn stage(&self, offset: u64, slot: Slot) {
        let head = self.head.head.load(Ordering::Relaxed);
        let idx = (head + offset) & (CAPACITY - 1);
        // SAFETY: idx < CAPACITY and the slot is not visible to the consumer
        // until `publish`.
        unsafe { self.slots.add(idx as usize).write(slot) };
    }

    /// Producer: makes `n` staged slots visible to the writer; returns the
    /// new head.
    #[inline(always)]
    pub fn publish(&self, n: u64) -> u64 {
        let head = self.head.head.load(Ordering::Relaxed) + n;
        self.head.head.store(head, Ordering::Release);
        head
    }

    /// Producer (in a forked child): forgets everything, the parent's writer
    /// owns what was in the ring.
    pub fn reset(&self) {
        let head = self.head.head.load(Ordering::Relaxed);
        self.tail.0.store(head, Ordering::Release);
        self.head.tail_seen.set(head);
    }

    /// Consumer: the range of readable slot indices.
    pub fn readable(&self) -> (u64, u64) {
        (
            self.tail.0.load(Ordering::Relaxed),
            self.head.head.load(Ordering::Acquire),
        )
    }

    /// Consumer: the published slots from `from` to `to` (a range within the
    /// one `readable` gave), copied a block at a time into the reader's own
    /// buffer: one copy loads a block's lines back to back, where decoding
    /// slot after slot would wait for each line from the producer's core.
    pub fn slots(&self, from: u64, to: u64) -> Slots<'_> {
        Slots {
            ring: self,
            next: from,
            end: to,
            buf: [[0; 4]; BLOCK],
            at: 0,
            len: 0,
        }
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

/// Slots a [`Slots`] reader copies at a time (2 KiB).
const BLOCK: usize = 64;

/// An iterator over published slots (see [`Ring::slots`]).
pub struct Slots<'a> {
    ring: &'a Ring,
    next: u64,
    end: u64,
    buf: [Slot; BLOCK],
    at: usize,
    len: usize,
}

impl Iterator for Slots<'_> {
    type Item = Slot;

    #[inline]
    fn next(&mut self) -> Option<Slot> {
        if self.at == self.len {
            self.refill();
            if self.len == 0 {
                return None;
            }
        }
        let slot = self.buf[self.at];
        self.at += 1;
        Some(slot)
    }
}

impl Slots<'_> {
    /// The next slot, read in place in the block buffer: [`Iterator::next`]
    /// returns a copy of it, which the writer's loop, reading most slots once,
    /// would only store and load again.
    #[inline(always)]
    pub fn next_ref(&mut self) -> Option<&Slot> {
        if self.at == self.len {
            self.refill();
            if self.len == 0 {
                return None;
            }
        }
        let at = self.at;
        self.at += 1;
        debug_assert!(at < self.len && self.len <= BLOCK);
        // SAFETY: `at < len` (tested above, or `refill` set `at` to 0 with
        // `len > 0`), and `len <= BLOCK`, the buffer's length.
        Some(unsafe { self.buf.get_unchecked(at) })
    }

    /// The slot `k` places after the one [`Slots::next_ref`] returns next, if it
    /// is already in the block buffer (a look ahead that never reads the ring).
    #[inline(always)]
    pub fn ahead(&self, k: usize) -> Option<&Slot> {
        self.buf[..self.len].get(self.at + k)
    }

    /// Copies the next block (up to the end of the mapping, or of the range).
    #[inline(never)]
    fn refill(&mut self) {
        let start = (self.next & (CAPACITY - 1)) as usize;
        let n = (self.end - self.next)
            .min(BLOCK as u64)
            .min(CAPACITY - start as u64) as usize;
        // SAFETY: slots `next..next + n` are published (below `end`, which is
        // at most `head`) and lie inside the mapping (not past its end).
        unsafe {
            core::ptr::copy_nonoverlapping(self.ring.slots.add(start), self.buf.as_mut_ptr(), n);
        }
        self.next += n as u64;
        self.at = 0;
        self.len = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring that is unmapped when the test ends.
    struct TestRing(Ring);

    impl Drop for TestRing {
        fn drop(&mut self) {
            // SAFETY: the test is done with the ring.
            unsafe { self.0.unmap() };
        }
    }

    fn ring() -> TestRing {
        TestRing(Ring::new().expect("mmap a ring"))
    }

    /// Stages and publishes `slots` as the producer does.
    fn push(ring: &Ring, slots: &[Slot]) {
        for (i, s) in slots.iter().enumerate() {
            ring.stage(i as u64, *s);
        }
        ring.publish(slots.len() as u64);
    }

    /// Reads and releases everything published, as the writer does.
    fn pop_all(ring: &Ring) -> Vec<Slot> {
        let (tail, head) = ring.readable();
        let slots = ring.slots(tail, head).collect();
        ring.release(head);
        slots
    }

    #[test]
    fn push_then_pop_in_order() {
        let r = ring();
        assert_eq!((r.0.used(), r.0.free_slots()), (0, CAPACITY));
        push(&r.0, &[[1, 2, 3, 4], [5, 6, 7, 8]]);
        assert_eq!((r.0.used(), r.0.free_slots()), (2, CAPACITY - 2));
        assert_eq!(pop_all(&r.0), [[1, 2, 3, 4], [5, 6, 7, 8]]);
        assert_eq!((r.0.used(), r.0.free_slots()), (0, CAPACITY));
    }

    #[test]
    fn room_is_known_without_reading_the_writer_line_until_full() {
        let r = ring();
        let slots: Vec<Slot> = (0..CAPACITY).map(|i| [i, 0, 0, 0]).collect();
        push(&r.0, &slots[..CAPACITY as usize - 1]);
        assert!(r.0.has_room(1) && !r.0.has_room(2));
        push(&r.0, &slots[..1]);
        assert!(!r.0.has_room(1));
        pop_all(&r.0);
        // The stale copy of `tail` says full; the writer's line says empty.
        assert!(r.0.has_room(CAPACITY));
    }

    #[test]
    fn staged_slots_stay_invisible_until_published() {
        let r = ring();
        r.0.stage(0, [9; 4]);
        assert_eq!(r.0.readable(), (0, 0));
        r.0.publish(1);
        assert_eq!(pop_all(&r.0), [[9; 4]]);
    }

    #[test]
    fn fills_exactly_to_capacity() {
        let r = ring();
        let slots: Vec<Slot> = (0..CAPACITY).map(|i| [i, 0, 0, 0]).collect();
        push(&r.0, &slots);
        assert_eq!(r.0.free_slots(), 0);
        assert_eq!(pop_all(&r.0), slots);
    }

    #[test]
    fn wraps_around_many_times() {
        let r = ring();
        // Batches of 7 never divide the capacity, so records straddle the
        // end of the mapping in every lap.
        let mut next = 0u64;
        let mut expected = 0u64;
        while next < 3 * CAPACITY + 5 {
            let batch: Vec<Slot> = (next..next + 7).map(|i| [i, !i, i ^ 0x55, i + 1]).collect();
            push(&r.0, &batch);
            next += 7;
            if r.0.free_slots() < 7 || next.is_multiple_of(3) {
                for s in pop_all(&r.0) {
                    assert_eq!(s, [expected, !expected, expected ^ 0x55, expected + 1]);
                    expected += 1;
                }
            }
        }
        expected += pop_all(&r.0).len() as u64;
        assert_eq!(expected, next);
        assert_eq!(r.0.readable().0, next);
    }

    #[test]
    fn the_block_reader_reads_what_was_published_across_the_end() {
        let r = ring();
        let before: Vec<Slot> = (0..CAPACITY - 100).map(|i| [i, 0, 0, 0]).collect();
        push(&r.0, &before);
        pop_all(&r.0);
        let slots: Vec<Slot> = (0..300).map(|i| [i, i + 1, 0, 7]).collect();
        push(&r.0, &slots);
        let (tail, head) = r.0.readable();
        assert_eq!(r.0.slots(tail, head).collect::<Vec<_>>(), slots);
        assert_eq!(r.0.slots(tail + 5, tail + 5).count(), 0);
    }

    #[test]
    fn reading_in_place_and_by_copy_mix_across_blocks() {
        let r = ring();
        let slots: Vec<Slot> = (0..300).map(|i| [i, i * 3, 0, 1]).collect();
        push(&r.0, &slots);
        let (tail, head) = r.0.readable();
        let mut reader = r.0.slots(tail, head);
        let mut got = Vec::new();
        // As the writer does: a slot in place, and every third one the slot
        // after it by copy (the second slot of a two-slot record).
        while let Some(&s) = reader.next_ref() {
            got.push(s);
            if s[0] % 3 == 0 {
                got.extend(reader.next());
            }
        }
        assert_eq!(got, slots);
    }

    #[test]
    fn reset_drops_unread_slots() {
        let r = ring();
        push(&r.0, &[[1; 4], [2; 4]]);
        r.0.reset();
        assert_eq!(r.0.used(), 0);
        push(&r.0, &[[3; 4]]);
        assert_eq!(pop_all(&r.0), [[3; 4]]);
    }
}
