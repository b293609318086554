//! The per-thread single-producer/single-consumer ring of fixed 32-byte slots.
//!
//! The owning thread writes slots and publishes them with one release store
//! of `head`; the writer thread reads up to `head` and releases space with a
//! release store of `tail`. The two indices live on separate cache lines, so
//! a producer never writes a line that another producer touches: there is no
//! shared writable state on the hot path.
//!
//! What a slot holds is `slot.rs`'s; the ring only moves slots.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::slot::Slot;

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
        let slots = (tail..head).map(|i| ring.read(i)).collect();
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
    fn reset_drops_unread_slots() {
        let r = ring();
        push(&r.0, &[[1; 4], [2; 4]]);
        r.0.reset();
        assert_eq!(r.0.used(), 0);
        push(&r.0, &[[3; 4]]);
        assert_eq!(pop_all(&r.0), [[3; 4]]);
    }
}
