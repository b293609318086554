//! The byte columns of the event encoder (`columns.rs`), with room reserved
//! ahead so that writing an event's bytes checks no capacity.
//!
//! A `Vec::push` compares the length with the capacity for every byte, and
//! the recorder's writer pushes about ten bytes per event into its columns.
//! Here the capacity is checked once per [`BATCH`] events instead: every
//! column is given room for that many events of at most [`MAX_EVENT_BYTES`]
//! bytes each, and the encoder says when an event starts
//! ([`ColumnBufs::start_event`]); the writes in between store without a check.
//!
//! The bytes written are exactly those `Vec::push` and
//! [`crate::varint::put_u64`] would write: only the bookkeeping differs.

/// The most bytes one event adds to any one column: a reallocation's two
/// address deltas (two varints of at most 10 bytes each) are the largest.
/// Every other field of an event is one varint or one byte per column.
pub const MAX_EVENT_BYTES: usize = 20;

/// Events for which room is reserved at a time (about 1 KiB per column,
/// small beside a chunk's columns).
const BATCH: u32 = 64;

/// `N` byte columns, each with room for `room` more events.
#[derive(Debug)]
pub struct ColumnBufs<const N: usize> {
    cols: [Vec<u8>; N],
    /// Events that may still start before room is reserved again. Invariant:
    /// between events every column has at least `room * MAX_EVENT_BYTES`
    /// bytes of spare capacity; while an event is written (after its
    /// [`ColumnBufs::start_event`], which took one from `room`) that much
    /// plus what the event may still write, at most [`MAX_EVENT_BYTES`].
    room: u32,
}

impl<const N: usize> Default for ColumnBufs<N> {
    fn default() -> Self {
        ColumnBufs {
            cols: std::array::from_fn(|_| Vec::new()),
            room: 0,
        }
    }
}

impl<const N: usize> ColumnBufs<N> {
    /// The columns.
    #[inline]
    pub fn columns(&self) -> &[Vec<u8>; N] {
        &self.cols
    }

    /// Empties every column, keeping its capacity (and so the room reserved).
    pub fn clear(&mut self) {
        for c in &mut self.cols {
            c.clear();
        }
    }

    /// Starts an event: after this, the event may write up to
    /// [`MAX_EVENT_BYTES`] to every column with [`ColumnBufs::byte`] and
    /// [`ColumnBufs::varint`].
    #[inline(always)]
    pub fn start_event(&mut self) {
        if self.room == 0 {
            self.reserve();
        }
        self.room -= 1;
    }

    /// Gives every column room for [`BATCH`] more events.
    #[cold]
    #[inline(never)]
    fn reserve(&mut self) {
        for c in &mut self.cols {
            c.reserve(BATCH as usize * MAX_EVENT_BYTES);
        }
        self.room = BATCH;
    }

    /// Resizes column `col` to `len` bytes, new ones zero (the late start of
    /// an optional column, within an event), keeping its room: the spare
    /// capacity of `room` events and of the one being written.
    #[cold]
    pub fn resize(&mut self, col: usize, len: usize) {
        let c = &mut self.cols[col];
        c.resize(len, 0);
        c.reserve((self.room as usize + 1) * MAX_EVENT_BYTES);
    }

    /// Appends byte `b` to column `col`.
    ///
    /// # Safety
    /// [`ColumnBufs::start_event`] was called for the event being written,
    /// and with this byte the event writes at most [`MAX_EVENT_BYTES`] to
    /// this column.
    #[inline(always)]
    pub unsafe fn byte(&mut self, col: usize, b: u8) {
        let c = &mut self.cols[col];
        let len = c.len();
        debug_assert!(len < c.capacity());
        // SAFETY: the caller's promise and the room invariant leave spare
        // capacity for this byte, so `len` is inside the allocation; the
        // byte is initialised before the length covers it.
        unsafe {
            c.as_mut_ptr().add(len).write(b);
            c.set_len(len + 1);
        }
    }

    /// Appends `value` to column `col` as an unsigned LEB128 varint (the
    /// bytes of [`crate::varint::put_u64`]).
    ///
    /// # Safety
    /// As for [`ColumnBufs::byte`], with the varint's bytes (at most 10).
    #[inline(always)]
    pub unsafe fn varint(&mut self, col: usize, mut value: u64) {
        let c = &mut self.cols[col];
        let mut len = c.len();
        let p = c.as_mut_ptr();
        debug_assert!(
            len + (64 - (value | 1).leading_zeros() as usize).div_ceil(7) <= c.capacity()
        );
        // SAFETY: the caller's promise and the room invariant leave spare
        // capacity for every byte of the varint; each is written before the
        // length covers it.
        unsafe {
            while value >= 0x80 {
                p.add(len).write(value as u8 | 0x80);
                value >>= 7;
                len += 1;
            }
            p.add(len).write(value as u8);
            c.set_len(len + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::put_u64;

    #[test]
    fn writes_what_push_and_put_u64_write_across_many_batches() {
        let mut bufs = ColumnBufs::<3>::default();
        let mut want: [Vec<u8>; 3] = Default::default();
        for i in 0..1000u64 {
            let v = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 64);
            bufs.start_event();
            // SAFETY: two varints (at most 20 bytes) in column 0, one byte in
            // column 1, one varint in column 2 per event.
            unsafe {
                bufs.varint(0, v);
                bufs.varint(0, u64::MAX);
                bufs.byte(1, v as u8);
                bufs.varint(2, v >> 7);
            }
            put_u64(&mut want[0], v);
            put_u64(&mut want[0], u64::MAX);
            want[1].push(v as u8);
            put_u64(&mut want[2], v >> 7);
            if i == 500 {
                bufs.resize(2, 4000);
                want[2].resize(4000, 0);
            }
            if i % 300 == 299 {
                bufs.clear();
                want.iter_mut().for_each(Vec::clear);
            }
        }
        assert_eq!(bufs.columns(), &want);
    }

    /// The encoder's heaviest events (reallocations between far, unaligned
    /// addresses, the largest sizes, time steps, stacks and latency codes, the
    /// latency and free-stack columns starting mid-chunk), over many more events
    /// than one reservation covers: no event writes more than
    /// [`MAX_EVENT_BYTES`] to a column but for a column it starts (whose earlier
    /// events' zeros it fills in), and no column is ever longer than its room.
    /// Release builds check none of this while encoding, so this test does.
    #[test]
    fn no_event_writes_more_than_its_room() {
        use crate::columns::ColumnEncoder;
        use crate::record::{AllocFn, Event};
        let mut encoder = ColumnEncoder::default();
        encoder.reset(0);
        let (mut t, mut x) = (0u64, 0x2545_F491_4F6C_DD1Du64);
        for i in 0..2000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t = t.saturating_add(if i % 5 == 0 { u64::MAX >> 3 } else { x >> 40 });
            let (far, near) = (x | 1 << 63 | 1, (x >> 1) & !15);
            let stack = if i >= 1200 { u32::MAX } else { 0 };
            let event = match i % 4 {
                0 => Event::Alloc {
                    t,
                    tid: 1,
                    addr: far,
                    size: u64::MAX >> (i % 64),
                    stack: u32::MAX,
                    func: AllocFn::Calloc,
                },
                1 => Event::Free {
                    t,
                    tid: 1,
                    addr: if i % 8 == 1 { far } else { near },
                    stack,
                },
                _ => Event::Realloc {
                    t,
                    tid: 1,
                    old_addr: far,
                    new_addr: near | 7,
                    size: u64::MAX,
                    stack: u32::MAX,
                },
            };
            let before: Vec<usize> = encoder.columns().iter().map(Vec::len).collect();
            let started = (encoder.has_latency(), encoder.has_free_stacks());
            let latency = (i >= 700).then_some(u32::MAX - 1);
            encoder.push_with_latency(&event, latency);
            let now = (encoder.has_latency(), encoder.has_free_stacks());
            for (c, column) in encoder.columns().iter().enumerate() {
                assert!(column.len() <= column.capacity(), "column {c}, event {i}");
                let was = before.get(c).copied().unwrap_or(0);
                if now == started {
                    assert!(
                        column.len() - was <= MAX_EVENT_BYTES,
                        "column {c}, event {i}"
                    );
                }
            }
            if i % 900 == 899 {
                encoder.reset(t);
            }
        }
        assert!(encoder.has_latency() && encoder.has_free_stacks());
    }
}
