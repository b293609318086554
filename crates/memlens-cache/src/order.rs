//! Per-set queues of way indices, the state behind every replacement policy.
//!
//! Each set keeps its ways in an order (front = evicted last, back = next victim).
//! Sets of up to 16 ways pack the queue into one `u64`, four bits per way with the
//! front in the lowest nibble, so moving a way to the front or back is a handful of
//! branch-free bit operations: the position of a way is found with a SWAR "find the
//! zero nibble" and the nibbles in between shift by one. Wider sets use a plain
//! `u16` array per set.
//!
//! Invariant: each set's queue is a permutation of `0..ways`. The unused nibbles of
//! a packed queue (above the used ones) hold `0xF` at first and may hold anything
//! later: no operation lets them into the used nibbles. Each reads the used
//! nibbles, masks them, or moves bits only upwards (the search for a way's nibble
//! takes the lowest match, and its borrows run upwards), and keeps or shifts the
//! unused ones above.

/// One nibble set in each of the 16 positions.
const ONES: u64 = 0x1111_1111_1111_1111;

/// The most ways a packed queue holds.
const PACKED_WAYS: usize = 16;

#[derive(Clone, Debug)]
enum Queues {
    Packed(Vec<u64>),
    Wide(Vec<u16>),
}

/// The eviction-order queues of every set of one level.
#[derive(Clone, Debug)]
pub(crate) struct OrderQueues {
    ways: usize,
    queues: Queues,
}

/// Returns a mask of the nibbles below position `p` (`p <= 16`), without branches.
#[inline(always)]
fn low_nibbles(p: usize) -> u64 {
    // A shift by 64 (p = 16) gives None, and 0 - 1 is all nibbles.
    1u64.checked_shl(4 * p as u32).unwrap_or(0).wrapping_sub(1)
}

impl OrderQueues {
    /// Makes queues for `sets` sets of `ways` ways, way 0 at the back (so empty sets
    /// fill ways 0, 1, 2, … in order).
    pub fn new(sets: usize, ways: usize) -> OrderQueues {
        let queues = if ways <= PACKED_WAYS {
            let mut queue = u64::MAX;
            for position in 0..ways {
                let way = (ways - 1 - position) as u64;
                queue = (queue & !(0xF << (4 * position))) | (way << (4 * position));
            }
            Queues::Packed(vec![queue; sets])
        } else {
            Queues::Wide(
                (0..sets)
                    .flat_map(|_| (0..ways).rev().map(|w| w as u16))
                    .collect(),
            )
        };
        OrderQueues { ways, queues }
    }

    /// Returns the packed queues (one `u64` per set), if the sets have at most 16 ways.
    #[inline(always)]
    pub fn packed_mut(&mut self) -> Option<&mut [u64]> {
        match &mut self.queues {
            Queues::Packed(q) => Some(q),
            Queues::Wide(_) => None,
        }
    }

    /// Returns the way at the front of `set`'s queue.
    #[inline(always)]
    pub fn front(&self, set: usize) -> usize {
        match &self.queues {
            Queues::Packed(q) => (q[set] & 0xF) as usize,
            Queues::Wide(q) => usize::from(q[set * self.ways]),
        }
    }

    /// Returns the way at the back of `set`'s queue.
    #[inline(always)]
    pub fn back(&self, set: usize) -> usize {
        match &self.queues {
            Queues::Packed(q) => ((q[set] >> (4 * (self.ways - 1))) & 0xF) as usize,
            Queues::Wide(q) => usize::from(q[(set + 1) * self.ways - 1]),
        }
    }

    /// Returns the position of `way` in `set`'s queue (0 = front).
    #[inline]
    pub fn position(&self, set: usize, way: usize) -> usize {
        match &self.queues {
            Queues::Packed(q) => packed_position(q[set], way),
            Queues::Wide(q) => q[set * self.ways..(set + 1) * self.ways]
                .iter()
                .position(|&w| usize::from(w) == way)
                .unwrap_or(0),
        }
    }

    /// Moves the way at the back of `set`'s queue to the front.
    #[inline(always)]
    pub fn back_to_front(&mut self, set: usize) {
        let ways = self.ways;
        match &mut self.queues {
            Queues::Packed(q) => q[set] = packed_back_to_front(q[set], ways),
            Queues::Wide(q) => q[set * ways..(set + 1) * ways].rotate_right(1),
        }
    }

    /// Moves `way` to the front of `set`'s queue.
    #[inline]
    pub fn move_to_front(&mut self, set: usize, way: usize) {
        let ways = self.ways;
        match &mut self.queues {
            Queues::Packed(q) => q[set] = packed_to_front(q[set], way),
            Queues::Wide(q) => {
                let queue = &mut q[set * ways..(set + 1) * ways];
                if let Some(p) = queue.iter().position(|&w| usize::from(w) == way) {
                    queue[..=p].rotate_right(1);
                }
            }
        }
    }

    /// Moves `way` to the back of `set`'s queue.
    pub fn move_to_back(&mut self, set: usize, way: usize) {
        let ways = self.ways;
        match &mut self.queues {
            Queues::Packed(q) => {
                let queue = q[set];
                let p = packed_position(queue, way);
                let used = low_nibbles(ways);
                let shifted = (queue & low_nibbles(p)) | ((queue >> 4) & !low_nibbles(p));
                let last = 4 * (ways - 1);
                let reordered = (shifted & !(0xF << last)) | ((way as u64) << last);
                q[set] = (reordered & used) | (queue & !used);
            }
            Queues::Wide(q) => {
                let queue = &mut q[set * ways..(set + 1) * ways];
                if let Some(p) = queue.iter().position(|&w| usize::from(w) == way) {
                    queue[p..].rotate_left(1);
                }
            }
        }
    }
}

/// Moves `way` to the front of a packed queue.
#[inline(always)]
pub(crate) fn packed_to_front(queue: u64, way: usize) -> u64 {
    // The way's nibble is one of the 16, so the shift is at most 60.
    let shift = (4 * packed_position(queue, way)) & 63;
    let below = queue & ((1u64 << shift) - 1);
    let above = queue & (!0xFu64 << shift);
    above | (below << 4) | way as u64
}

/// Moves the way at the back of a packed queue of `ways` ways to the front.
#[inline(always)]
pub(crate) fn packed_back_to_front(queue: u64, ways: usize) -> u64 {
    // The used nibbles rotate by one. Queues of 16, 8 and 4 ways are plain rotations
    // of 64, 32 and 16 bits, which leave 0 in the unused nibbles above (no
    // operation lets those into the used ones: see the module documentation).
    match ways {
        16 => queue.rotate_left(4),
        8 => u64::from((queue as u32).rotate_left(4)),
        4 => u64::from((queue as u16).rotate_left(4)),
        _ => {
            let used = low_nibbles(ways);
            let back = (queue >> (4 * (ways - 1))) & 0xF;
            (((queue << 4) | back) & used) | (queue & !used)
        }
    }
}

/// Finds the nibble equal to `way` (the lowest one, which is the only one among the
/// used nibbles).
#[inline]
fn packed_position(queue: u64, way: usize) -> usize {
    let x = queue ^ (way as u64).wrapping_mul(ONES);
    let zero_nibbles = x.wrapping_sub(ONES) & !x & (ONES << 3);
    (zero_nibbles.trailing_zeros() / 4) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Returns the queue of set 0 from front to back.
    fn queue(order: &OrderQueues, ways: usize) -> Vec<usize> {
        let mut by_position = vec![0; ways];
        for way in 0..ways {
            by_position[order.position(0, way)] = way;
        }
        by_position
    }

    #[test]
    fn packed_and_wide_queues_agree_on_every_operation() {
        for ways in [1, 2, 3, 4, 8, 15, 16] {
            let mut packed = OrderQueues::new(2, ways);
            // Force the wide representation for the same number of ways.
            let mut wide = OrderQueues {
                ways,
                queues: Queues::Wide(
                    (0..2)
                        .flat_map(|_| (0..ways).rev().map(|w| w as u16))
                        .collect(),
                ),
            };
            assert_eq!(queue(&packed, ways), (0..ways).rev().collect::<Vec<_>>());
            let mut x = 12345u64;
            for step in 0..500 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let way = (x >> 33) as usize % ways;
                if step % 5 == 1 {
                    packed.back_to_front(0);
                    wide.back_to_front(0);
                } else if step % 3 == 0 {
                    packed.move_to_back(0, way);
                    wide.move_to_back(0, way);
                } else {
                    packed.move_to_front(0, way);
                    wide.move_to_front(0, way);
                }
                assert_eq!(
                    queue(&packed, ways),
                    queue(&wide, ways),
                    "{ways} ways, step {step}"
                );
                assert_eq!(
                    (packed.front(0), packed.back(0)),
                    (wide.front(0), wide.back(0))
                );
                let mut sorted = queue(&packed, ways);
                sorted.sort_unstable();
                assert_eq!(sorted, (0..ways).collect::<Vec<_>>(), "still a permutation");
            }
            assert_eq!(queue(&packed, ways).len(), ways);
            assert_eq!(packed.back(1), 0, "other sets are untouched");
        }
    }

    #[test]
    fn wide_sets_use_arrays() {
        let mut order = OrderQueues::new(1, 20);
        assert_eq!(order.back(0), 0);
        order.move_to_front(0, 0);
        assert_eq!((order.front(0), order.back(0)), (0, 1));
        order.move_to_back(0, 0);
        assert_eq!(order.back(0), 0);
    }
}
