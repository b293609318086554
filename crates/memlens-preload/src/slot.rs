//! The ring slot: the fixed 32-byte unit in which a recording thread hands
//! its events to the writer thread, and the only place that knows its layout.
//!
//! The hooks build slots with the `encode_*` functions (always inlined: each
//! is the handful of shifts and ors the hooks need, and the latency fields
//! fold away when latency is off) and publish them to the thread's ring; the
//! writer reads them back with [`Decoder`]. Slots never leave the process, so
//! the layout can change freely; the trace format is `memlens-trace`'s.
//!
//! A slot is four `u64` words. The low byte of word 3 is the record's kind.
//! A record is one slot, or a first slot and the continuation slots it
//! announces (published together, so the writer never sees half a record):
//!
//! ```text
//!             word 0     word 1     word 2                       word 3
//! bits        0‥64       0‥64       0‥48     48‥64               0‥8  8‥16  16‥32               32‥64
//! ALLOC       time       addr       size     latency ≫ 16 ᴸ      1    func  latency & 0xffff ᴸ  stack
//! FREE        time       addr       latency (whole word)         2    0     0                   stack ᶠ
//! REALLOC     time       new addr   size (whole word)            3    0     0                   stack
//!  + 1 slot   old addr   latency    0                            0 (whole word)
//! NODE        ip         local id   parent                       4    0     0                   0
//! MMAP        time       addr       length                       5    src   0                   stack
//!  + 1 slot   prot       flags      0                            0 (whole word)
//! MUNMAP      time       addr       length                       6    0     0                   0
//! ```
//!
//! - `time` is the raw clock (TSC ticks or monotonic nanoseconds) read after
//!   the real call, except for `FREE`, where it is read before: an address
//!   is always freed before another thread can be handed it again.
//! - `latency` is the allocator call's duration in raw ticks, at most
//!   [`MAX_LATENCY_TICKS`]; it is written only in latency mode and is 0
//!   otherwise. The fields marked ᴸ exist only in latency mode: there an
//!   `ALLOC`'s size keeps its low [`SIZE_BITS`] bits (sizes of successful
//!   allocations are smaller than the address space) and the latency is split
//!   into 16-bit halves; without latency the size takes the whole word.
//!   The writer must therefore decode in the mode the hooks encoded in.
//! - `func` is the [`AllocFn`] code; `stack` and `local id` are the thread's
//!   own stack ids (0 means no stack), which the writer maps to global ids.
//! - A `NODE` record defines the thread's stack `local id` as its stack
//!   `parent` (0: the empty stack) with the return address `ip` as the
//!   innermost frame (`interning.rs`); it comes before any record using it.
//! - ᶠ A `FREE`'s stack is captured only with `--free-stacks`; 0 otherwise.
//! - `MMAP` and `MUNMAP` (`--mmap`) are the program's own mappings: `src` has
//!   bit 0 set for a file mapping and bit 1 for the new range of an `mremap`
//!   (whose old range is the `MUNMAP` published with it); `time` is read after
//!   the call, except for a `MUNMAP` of `munmap`, where it is read before.

use memlens_trace::AllocFn;

/// One slot: four words.
pub type Slot = [u64; 4];

/// Slot kinds (low byte of word 3).
mod kind {
    /// An allocation.
    pub const ALLOC: u64 = 1;
    /// A free.
    pub const FREE: u64 = 2;
    /// A realloc (two slots).
    pub const REALLOC: u64 = 3;
    /// A new thread-local stack node.
    pub const NODE: u64 = 4;
    /// A mapping (two slots).
    pub const MMAP: u64 = 5;
    /// An unmapping.
    pub const MUNMAP: u64 = 6;
}

/// `MMAP` source bit: the mapping maps a file.
pub const MAP_FILE: u64 = 1;
/// `MMAP` source bit: the mapping is the new range of an `mremap`.
pub const MAP_REMAP: u64 = 2;

/// Bits of an `ALLOC` size in latency mode; the word's top 16 bits hold the
/// high half of the latency.
pub const SIZE_BITS: u32 = 48;

/// The largest `ALLOC` size latency mode keeps (larger sizes are clamped).
const MAX_TIMED_SIZE: u64 = (1 << SIZE_BITS) - 1;

/// Ticks of the longest latency a slot holds (32 bits: over a second).
pub const MAX_LATENCY_TICKS: u64 = u32::MAX as u64;

/// An allocation that returned `addr` at raw time `time`, with stack `stack`
/// and, when `LATENCY`, the call's duration (at most [`MAX_LATENCY_TICKS`]).
/// Without `LATENCY` the `latency` argument is ignored.
#[inline(always)]
pub fn encode_alloc<const LATENCY: bool>(
    time: u64,
    addr: u64,
    size: u64,
    func: AllocFn,
    stack: u32,
    latency: u64,
) -> Slot {
    let (size_word, latency_low) = if LATENCY {
        (
            size.min(MAX_TIMED_SIZE) | (latency >> 16) << SIZE_BITS,
            latency & 0xffff,
        )
    } else {
        (size, 0)
    };
    [
        time,
        addr,
        size_word,
        kind::ALLOC | (func as u64) << 8 | latency_low << 16 | u64::from(stack) << 32,
    ]
}

/// A free of `addr` at raw time `time` (before the call) that took `latency`
/// ticks (0 without latency mode), with its stack (0 without free stacks).
#[inline(always)]
pub fn encode_free(time: u64, addr: u64, latency: u64, stack: u32) -> Slot {
    [time, addr, latency, kind::FREE | u64::from(stack) << 32]
}

/// A mapping of `len` bytes at `addr` made at raw time `time` with stack
/// `stack`; `source` holds [`MAP_FILE`] and [`MAP_REMAP`] bits.
#[inline(always)]
pub fn encode_mmap(
    time: u64,
    addr: u64,
    len: u64,
    prot: u32,
    flags: u32,
    source: u64,
    stack: u32,
) -> [Slot; 2] {
    [
        [
            time,
            addr,
            len,
            kind::MMAP | (source & 0xff) << 8 | u64::from(stack) << 32,
        ],
        [u64::from(prot), u64::from(flags), 0, 0],
    ]
}

/// An unmapping of `len` bytes at `addr` at raw time `time`.
#[inline(always)]
pub fn encode_munmap(time: u64, addr: u64, len: u64) -> Slot {
    [time, addr, len, kind::MUNMAP]
}

/// A realloc of `old_addr` that returned `new_addr` at raw time `time`.
#[inline(always)]
pub fn encode_realloc(
    time: u64,
    old_addr: u64,
    new_addr: u64,
    size: u64,
    stack: u32,
    latency: u64,
) -> [Slot; 2] {
    [
        [time, new_addr, size, kind::REALLOC | u64::from(stack) << 32],
        [old_addr, latency, 0, 0],
    ]
}

/// The `NODE` record defining local stack `local_id` as the stack `parent`
/// with `ip` as its innermost frame.
#[inline(always)]
pub fn encode_node(local_id: u32, parent: u32, ip: u64) -> Slot {
    [ip, u64::from(local_id), u64::from(parent), kind::NODE]
}

/// A record as the writer reads it back. Times and latencies are raw ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// An allocation.
    Alloc {
        time: u64,
        addr: u64,
        size: u64,
        func: AllocFn,
        stack: u32,
        latency: u64,
    },
    /// A free.
    Free {
        time: u64,
        addr: u64,
        latency: u64,
        stack: u32,
    },
    /// A realloc.
    Realloc {
        time: u64,
        old_addr: u64,
        new_addr: u64,
        size: u64,
        stack: u32,
        latency: u64,
    },
    /// A new local stack: `parent` with `ip` as its innermost frame.
    Node { local_id: u32, parent: u32, ip: u64 },
    /// A mapping.
    Mmap {
        time: u64,
        addr: u64,
        len: u64,
        prot: u32,
        flags: u32,
        file: bool,
        remap: bool,
        stack: u32,
    },
    /// An unmapping.
    Munmap { time: u64, addr: u64, len: u64 },
    /// A slot of a kind this decoder does not know (skipped).
    Unknown,
}

impl Record {
    /// The raw interval the allocator call took, `(start, end)`: an
    /// allocation's time is its end, a free's its start.
    pub fn call_interval(&self) -> Option<(u64, u64)> {
        match *self {
            Record::Alloc { time, latency, .. } | Record::Realloc { time, latency, .. } => {
                Some((time.saturating_sub(latency), time))
            }
            Record::Free { time, latency, .. } => Some((time, time.saturating_add(latency))),
            Record::Node { .. } | Record::Mmap { .. } | Record::Munmap { .. } | Record::Unknown => {
                None
            }
        }
    }
}

/// Reads records back from a ring's slots.
pub struct Decoder {
    /// The hooks encoded in latency mode.
    latency: bool,
}

impl Decoder {
    /// A decoder for slots encoded with (or without) latency.
    pub fn new(latency: bool) -> Self {
        Decoder { latency }
    }

    /// Decodes the record that starts at the next slot of `slots`, taking
    /// its continuation slot too. `None` once `slots` is exhausted. A record
    /// cut short by the end of `slots` (which publishing whole records rules
    /// out) reads as if padded with zeros.
    #[cfg(test)]
    pub fn decode(&self, slots: &mut impl Iterator<Item = Slot>) -> Option<Record> {
        let first = slots.next()?;
        Some(self.decode_from(first, slots))
    }

    /// The `(time, addr, size, func, stack)` of `slot` when it is an
    /// allocation encoded without latency: the fields [`Record::Alloc`] has,
    /// for a reader that looks at each slot's kind once (the kinds of
    /// consecutive records follow no pattern, so every dispatch on one costs
    /// a mispredicted branch).
    #[inline(always)]
    pub fn plain_alloc(&self, slot: &Slot) -> Option<(u64, u64, u64, AllocFn, u32)> {
        let [w0, w1, w2, w3] = *slot;
        (!self.latency && w3 & 0xff == kind::ALLOC)
            .then(|| (w0, w1, w2, func(w3), (w3 >> 32) as u32))
    }

    /// [`Decoder::plain_alloc`] for a free: its `(time, addr, stack)`.
    #[inline(always)]
    pub fn plain_free(&self, slot: &Slot) -> Option<(u64, u64, u32)> {
        let [w0, w1, _, w3] = *slot;
        (!self.latency && w3 & 0xff == kind::FREE).then_some((w0, w1, (w3 >> 32) as u32))
    }

    /// What the chunk encoder will look up for `slot`, a plain allocation or free
    /// still ahead: its address, and an allocation's size (for
    /// `ChunkBuilder::prefetch`).
    #[inline(always)]
    pub fn lookup(&self, slot: &Slot) -> Option<(u64, Option<u64>)> {
        let [_, w1, w2, w3] = *slot;
        match w3 & 0xff {
            _ if self.latency => None,
            kind::ALLOC => Some((w1, Some(w2))),
            kind::FREE => Some((w1, None)),
            _ => None,
        }
    }

    /// [`Decoder::decode`] of the record that starts with `first`.
    #[inline]
    pub fn decode_from(&self, first: Slot, slots: &mut impl Iterator<Item = Slot>) -> Record {
        let [w0, w1, w2, w3] = first;
        let stack = (w3 >> 32) as u32;
        match w3 & 0xff {
            kind::ALLOC => {
                let (size, latency) = if self.latency {
                    (
                        w2 & MAX_TIMED_SIZE,
                        (w2 >> SIZE_BITS) << 16 | (w3 >> 16) & 0xffff,
                    )
                } else {
                    (w2, 0)
                };
                Record::Alloc {
                    time: w0,
                    addr: w1,
                    size,
                    func: func(w3),
                    stack,
                    latency,
                }
            }
            kind::FREE => Record::Free {
                time: w0,
                addr: w1,
                latency: w2,
                stack,
            },
            kind::MMAP => {
                let [prot, flags, _, _] = slots.next().unwrap_or([0; 4]);
                let source = (w3 >> 8) & 0xff;
                Record::Mmap {
                    time: w0,
                    addr: w1,
                    len: w2,
                    prot: prot as u32,
                    flags: flags as u32,
                    file: source & MAP_FILE != 0,
                    remap: source & MAP_REMAP != 0,
                    stack,
                }
            }
            kind::MUNMAP => Record::Munmap {
                time: w0,
                addr: w1,
                len: w2,
            },
            kind::REALLOC => {
                let [old_addr, latency, _, _] = slots.next().unwrap_or([0; 4]);
                Record::Realloc {
                    time: w0,
                    old_addr,
                    new_addr: w1,
                    size: w2,
                    stack,
                    latency,
                }
            }
            kind::NODE => Record::Node {
                local_id: w1 as u32,
                parent: w2 as u32,
                ip: w0,
            },
            _ => Record::Unknown,
        }
    }
}

/// The [`AllocFn`] of an `ALLOC` slot's word 3 (an unknown code reads as `malloc`).
#[inline(always)]
fn func(w3: u64) -> AllocFn {
    AllocFn::from_code((w3 >> 8) as u8).unwrap_or(AllocFn::Malloc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator: the loops below want many varied values,
    /// reproducibly, without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        /// A value with a random number of significant bits, so small and
        /// boundary values come up as often as huge ones.
        fn any(&mut self) -> u64 {
            let bits = self.next() % 65;
            match bits {
                0 => 0,
                64 => self.next(),
                b => self.next() & ((1 << b) - 1),
            }
        }
    }

    fn decode_all(decoder: &Decoder, slots: &[Slot]) -> Vec<Record> {
        let mut it = slots.iter().copied();
        let mut records = Vec::new();
        while let Some(r) = decoder.decode(&mut it) {
            records.push(r);
        }
        records
    }

    #[test]
    fn slots_are_32_bytes() {
        assert_eq!(core::mem::size_of::<Slot>(), 32);
    }

    #[test]
    fn alloc_round_trip_without_latency_keeps_the_whole_size() {
        let slot = encode_alloc::<false>(7, 0x1000, u64::MAX, AllocFn::Calloc, 9, 12345);
        let records = decode_all(&Decoder::new(false), &[slot]);
        assert_eq!(
            records,
            [Record::Alloc {
                time: 7,
                addr: 0x1000,
                size: u64::MAX,
                func: AllocFn::Calloc,
                stack: 9,
                latency: 0,
            }]
        );
    }

    #[test]
    fn alloc_with_latency_splits_and_rejoins_it() {
        let slot = encode_alloc::<true>(
            100,
            0x2000,
            48,
            AllocFn::Pvalloc,
            u32::MAX,
            MAX_LATENCY_TICKS,
        );
        let records = decode_all(&Decoder::new(true), &[slot]);
        assert_eq!(
            records,
            [Record::Alloc {
                time: 100,
                addr: 0x2000,
                size: 48,
                func: AllocFn::Pvalloc,
                stack: u32::MAX,
                latency: MAX_LATENCY_TICKS,
            }]
        );
        assert_eq!(
            records[0].call_interval(),
            Some((100u64.saturating_sub(MAX_LATENCY_TICKS), 100))
        );
    }

    #[test]
    fn oversized_alloc_is_clamped_in_latency_mode() {
        let slot = encode_alloc::<true>(1, 2, u64::MAX, AllocFn::Malloc, 0, 3);
        let records = decode_all(&Decoder::new(true), &[slot]);
        let Record::Alloc { size, latency, .. } = records[0] else {
            panic!("not an allocation: {records:?}");
        };
        assert_eq!((size, latency), (MAX_TIMED_SIZE, 3));
    }

    #[test]
    fn unknown_function_code_reads_as_malloc() {
        let mut slot = encode_alloc::<false>(1, 2, 3, AllocFn::Malloc, 4, 0);
        slot[3] |= 0xee << 8;
        let records = decode_all(&Decoder::new(false), &[slot]);
        assert!(matches!(
            records[0],
            Record::Alloc {
                func: AllocFn::Malloc,
                ..
            }
        ));
    }

    #[test]
    fn free_interval_starts_at_its_time() {
        let records = decode_all(&Decoder::new(true), &[encode_free(50, 8, 5, 0)]);
        assert_eq!(
            records,
            [Record::Free {
                time: 50,
                addr: 8,
                latency: 5,
                stack: 0,
            }]
        );
        assert_eq!(records[0].call_interval(), Some((50, 55)));
    }

    #[test]
    fn the_plain_fields_are_the_decoded_ones() {
        let plain = Decoder::new(false);
        let alloc = encode_alloc::<false>(5, 0x40, 24, AllocFn::Calloc, 3, 0);
        let free = encode_free(6, 0x40, 0, 9);
        assert_eq!(
            plain.plain_alloc(&alloc),
            Some((5, 0x40, 24, AllocFn::Calloc, 3))
        );
        assert_eq!(plain.plain_free(&free), Some((6, 0x40, 9)));
        assert_eq!(
            (plain.plain_alloc(&free), plain.plain_free(&alloc)),
            (None, None)
        );
        // With latencies the slow path decodes them (the size word is shared).
        let timed = Decoder::new(true);
        assert_eq!(timed.plain_alloc(&alloc), None);
        assert_eq!(timed.plain_free(&free), None);
    }

    #[test]
    fn node_round_trip() {
        let slot = encode_node(u32::MAX, 7, 0x7fff_0000_1234);
        assert_eq!(
            decode_all(&Decoder::new(false), &[slot]),
            [Record::Node {
                local_id: u32::MAX,
                parent: 7,
                ip: 0x7fff_0000_1234,
            }]
        );
    }

    #[test]
    fn a_realloc_cut_short_reads_as_zero_padded() {
        let [first, _] = encode_realloc(9, 1, 2, 3, 4, 5);
        let records = decode_all(&Decoder::new(false), &[first]);
        assert_eq!(
            records,
            [Record::Realloc {
                time: 9,
                old_addr: 0,
                new_addr: 2,
                size: 3,
                stack: 4,
                latency: 0,
            }]
        );
    }

    #[test]
    fn unknown_kinds_are_skipped_one_slot_at_a_time() {
        let slots = [[1, 2, 3, 0x77], encode_free(1, 2, 0, 0)];
        let records = decode_all(&Decoder::new(false), &slots);
        assert_eq!(records[0], Record::Unknown);
        assert!(matches!(records[1], Record::Free { .. }));
    }

    /// Random records of every kind, in both modes, written back to back as
    /// a ring holds them, decode to exactly what was encoded.
    #[test]
    fn random_streams_round_trip() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for latency_mode in [false, true] {
            let decoder = Decoder::new(latency_mode);
            for _ in 0..2_000 {
                let mut slots = Vec::new();
                let mut expected = Vec::new();
                for _ in 0..rng.next() % 16 {
                    let (time, addr, stack) = (rng.any(), rng.any(), rng.any() as u32);
                    let latency = if latency_mode {
                        rng.any() & MAX_LATENCY_TICKS
                    } else {
                        0
                    };
                    match rng.next() % 6 {
                        0 => {
                            let func = AllocFn::ALL[(rng.next() % 7) as usize];
                            let size = if latency_mode {
                                rng.any() & MAX_TIMED_SIZE
                            } else {
                                rng.any()
                            };
                            slots.push(if latency_mode {
                                encode_alloc::<true>(time, addr, size, func, stack, latency)
                            } else {
                                encode_alloc::<false>(time, addr, size, func, stack, latency)
                            });
                            expected.push(Record::Alloc {
                                time,
                                addr,
                                size,
                                func,
                                stack,
                                latency,
                            });
                        }
                        1 => {
                            slots.push(encode_free(time, addr, latency, stack));
                            expected.push(Record::Free {
                                time,
                                addr,
                                latency,
                                stack,
                            });
                        }
                        4 => {
                            let (len, prot, flags) =
                                (rng.any(), rng.any() as u32, rng.any() as u32);
                            let source = rng.next() & 3;
                            slots.extend(encode_mmap(time, addr, len, prot, flags, source, stack));
                            expected.push(Record::Mmap {
                                time,
                                addr,
                                len,
                                prot,
                                flags,
                                file: source & MAP_FILE != 0,
                                remap: source & MAP_REMAP != 0,
                                stack,
                            });
                        }
                        5 => {
                            let len = rng.any();
                            slots.push(encode_munmap(time, addr, len));
                            expected.push(Record::Munmap { time, addr, len });
                        }
                        2 => {
                            let (old_addr, size) = (rng.any(), rng.any());
                            slots
                                .extend(encode_realloc(time, old_addr, addr, size, stack, latency));
                            expected.push(Record::Realloc {
                                time,
                                old_addr,
                                new_addr: addr,
                                size,
                                stack,
                                latency,
                            });
                        }
                        _ => {
                            let parent = rng.any() as u32;
                            slots.push(encode_node(stack, parent, addr));
                            expected.push(Record::Node {
                                local_id: stack,
                                parent,
                                ip: addr,
                            });
                        }
                    }
                }
                assert_eq!(decode_all(&decoder, &slots), expected);
            }
        }
    }
}
