//! One lean level (LRU or FIFO with at most 16 ways, see [`Level::lean_parts`]) as
//! the fast paths see it: its geometry and its arrays, and the few operations they
//! are made of — find a line (the front of the set's queue first, or a scan of the
//! whole set), move a hit to the front, fill the victim way (the back of the queue)
//! and mark a way dirty. `fast_path.rs` (one reference, events on demand) and
//! `batch.rs` (statistics-only batches) are both written with these, so the two
//! codings cannot drift apart. The front is tried with one comparison, against the
//! set's most recent key, which every change of the front updates.
//!
//! `WAYS` is the way count when the caller knows it at compile time (a power of
//! two), or 0. With a constant way count the slots of a set are found with shifts
//! and masks and read without bounds checks: a [`Set`] is only made by
//! [`LeanLevel::set_of`] (so it is below the set count) and a way is masked below
//! `WAYS`, and [`LeanLevel::new`] checks that every array holds `sets × WAYS` slots
//! (`sets` queues). With a way count known only at run time every access is checked.
//!
//! [`Level::lean_parts`]: crate::level::Level::lean_parts

use crate::geometry::Geometry;
use crate::level::{LeanParts, Level, key_of, match_way, print_of, tag_of};
use crate::order::{packed_back_to_front, packed_to_front};
use crate::reference::RegionId;

impl Level {
    /// The level as a [`LeanLevel`], if it is lean (LRU or FIFO, at most 16 ways).
    #[inline(always)]
    pub(crate) fn lean<const WAYS: usize>(&mut self) -> Option<LeanLevel<'_, WAYS>> {
        let geometry = self.geometry;
        self.lean_parts()
            .map(|parts| LeanLevel::new(geometry, parts))
    }
}

/// A set index below the level's set count (only [`LeanLevel::set_of`] makes one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Set(usize);

impl Set {
    /// The set's index.
    #[inline(always)]
    pub fn index(self) -> usize {
        self.0
    }
}

/// What [`LeanLevel::fill`] replaced.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Filled {
    /// The way filled.
    pub way: usize,
    /// The tag it held (`line << 1 | dirty`, or `EMPTY`).
    pub old_tag: u64,
    /// The region that had filled it.
    pub old_owner: RegionId,
}

/// A lean level's geometry and arrays (see the module documentation).
pub(crate) struct LeanLevel<'a, const WAYS: usize> {
    /// `log2` of the line size.
    line_shift: u32,
    /// The number of sets.
    sets: u64,
    /// `sets - 1`, the set of a line when the set count is a power of two.
    set_mask: u64,
    ways: usize,
    lru: bool,
    tags: &'a mut [u64],
    prints: &'a mut [u32],
    owners: &'a mut [RegionId],
    mru: &'a mut [u64],
    queues: &'a mut [u64],
}

impl<'a, const WAYS: usize> LeanLevel<'a, WAYS> {
    /// Views a level of `geometry` through its lean parts.
    ///
    /// Panics if `WAYS` is neither 0 nor the level's way count, or if the arrays do
    /// not hold one slot per way of every set (they always do: `Level` makes them).
    #[inline(always)]
    pub fn new(geometry: Geometry, parts: LeanParts<'a>) -> LeanLevel<'a, WAYS> {
        const { assert!(WAYS == 0 || (WAYS.is_power_of_two() && WAYS <= 16)) };
        let (sets, ways) = (geometry.sets as usize, geometry.ways as usize);
        assert!(
            WAYS == 0 || WAYS == ways,
            "a {ways}-way level viewed as {WAYS}-way"
        );
        assert!((1..=16).contains(&ways), "lean levels have 1 to 16 ways");
        let slots = sets * ways;
        assert!(
            parts.queues.len() == sets
                && parts.mru.len() == sets
                && parts.tags.len() == slots
                && parts.prints.len() == slots
                && parts.owners.len() == slots,
            "a lean level's arrays hold one slot per way of every set"
        );
        LeanLevel {
            line_shift: geometry.line_shift,
            sets: geometry.sets,
            set_mask: geometry.sets.wrapping_sub(1),
            ways,
            lru: parts.lru,
            tags: parts.tags,
            prints: parts.prints,
            owners: parts.owners,
            mru: parts.mru,
            queues: parts.queues,
        }
    }

    /// The number of ways.
    #[inline(always)]
    pub fn ways(&self) -> usize {
        if WAYS == 0 { self.ways } else { WAYS }
    }

    /// The line holding `addr`; `SHIFT` is `log2` of the line size when the caller
    /// knows it at compile time, or 0.
    #[inline(always)]
    pub fn line_of<const SHIFT: u32>(&self, addr: u64) -> u64 {
        addr >> if SHIFT == 0 { self.line_shift } else { SHIFT }
    }

    /// Whether `size` bytes from `addr` reach past the line holding `addr` (`SHIFT`
    /// as for [`LeanLevel::line_of`]; a size of 0 is one byte, which never does).
    #[inline(always)]
    pub fn spans<const SHIFT: u32>(&self, addr: u64, size: u16) -> bool {
        let line_size = 1u64 << if SHIFT == 0 { self.line_shift } else { SHIFT };
        (addr & (line_size - 1)) + u64::from(size) > line_size
    }

    /// The first byte of `line` (`SHIFT` as for [`LeanLevel::line_of`]).
    #[inline(always)]
    pub fn line_addr<const SHIFT: u32>(&self, line: u64) -> u64 {
        line << if SHIFT == 0 { self.line_shift } else { SHIFT }
    }

    /// The set of `line`; `POW2` says that the set count is a power of two.
    #[inline(always)]
    pub fn set_of<const POW2: bool>(&self, line: u64) -> Set {
        if POW2 {
            Set((line & self.set_mask) as usize)
        } else {
            Set((line % self.sets) as usize)
        }
    }

    /// The slot of `way` in `set`: below `sets × ways` when `WAYS` is constant.
    #[inline(always)]
    fn slot(&self, set: Set, way: usize) -> usize {
        if WAYS == 0 {
            set.0 * self.ways + way
        } else {
            set.0 * WAYS + (way & (WAYS - 1))
        }
    }

    /// The set's replacement queue (see [`crate::order`]).
    #[inline(always)]
    pub fn queue(&self, set: Set) -> u64 {
        if WAYS == 0 {
            self.queues[set.0]
        } else {
            // SAFETY: a `Set` is below the set count, which is `queues.len()` (`new`).
            unsafe { *self.queues.get_unchecked(set.0) }
        }
    }

    /// Gives the set a new queue, whose front holds the line whose key is `key`.
    #[inline(always)]
    fn set_queue(&mut self, set: Set, queue: u64, key: u64) {
        if WAYS == 0 {
            self.queues[set.0] = queue;
            self.mru[set.0] = key;
        } else {
            // SAFETY: as in `queue`; `mru` is as long as `queues` (`new`).
            unsafe {
                *self.queues.get_unchecked_mut(set.0) = queue;
                *self.mru.get_unchecked_mut(set.0) = key;
            }
        }
    }

    /// Whether the line at the front of the set's queue is the one whose key is
    /// `key` (see [`key_of`]): one comparison.
    #[inline(always)]
    pub fn at_front(&self, set: Set, key: u64) -> bool {
        if WAYS == 0 {
            self.mru[set.0] == key
        } else {
            // SAFETY: as in `set_queue`.
            unsafe { *self.mru.get_unchecked(set.0) == key }
        }
    }

    #[inline(always)]
    fn tag_mut(&mut self, slot: usize) -> &mut u64 {
        if WAYS == 0 {
            &mut self.tags[slot]
        } else {
            // SAFETY: with a constant way count, `slot` comes from `slot()`, which is
            // below `sets × WAYS`, the length of `tags` (`new`).
            unsafe { self.tags.get_unchecked_mut(slot) }
        }
    }

    /// Returns the way of `set` holding the line whose key is `key`, scanning every
    /// way (see [`match_way`]).
    #[inline(always)]
    pub fn scan(&self, set: Set, key: u64) -> Option<usize> {
        let ways = self.ways();
        let base = set.0 * ways;
        if WAYS == 0 {
            match_way(
                &self.tags[base..base + ways],
                &self.prints[base..base + ways],
                key,
            )
        } else {
            // SAFETY: `base + WAYS ≤ sets × WAYS`, the length of both arrays (`new`).
            let (tags, prints) = unsafe {
                (
                    self.tags.get_unchecked(base..base + WAYS),
                    self.prints.get_unchecked(base..base + WAYS),
                )
            };
            match_way(tags, prints, key)
        }
    }

    /// Returns the way of `set` holding the line whose key is `key`: the front of
    /// `queue` is tried first, then the whole set.
    #[inline(always)]
    pub fn find(&self, set: Set, queue: u64, key: u64) -> Option<usize> {
        match self.at_front(set, key) {
            true => Some((queue & 0xF) as usize),
            false => self.scan(set, key),
        }
    }

    /// Records a demand hit on `way` of `set` whose queue is `queue`, on the line
    /// whose key is `key`: under LRU the way moves to the front (it may be there
    /// already).
    #[inline(always)]
    pub fn touch(&mut self, set: Set, queue: u64, way: usize, key: u64) {
        if self.lru && (queue & 0xF) as usize != way {
            self.set_queue(set, packed_to_front(queue, way), key);
        }
    }

    /// Places `line` (dirty or not, filled by `owner`) in the way at the back of
    /// `queue`, the queue of `set`, which moves to the front; returns what the way
    /// held.
    #[inline(always)]
    pub fn fill(
        &mut self,
        set: Set,
        queue: u64,
        line: u64,
        dirty: bool,
        owner: RegionId,
    ) -> Filled {
        let ways = self.ways();
        let way = ((queue >> (4 * (ways - 1))) & 0xF) as usize;
        let slot = self.slot(set, way);
        let old_tag = std::mem::replace(self.tag_mut(slot), tag_of(line) | u64::from(dirty));
        let old_owner = if WAYS == 0 {
            self.prints[slot] = print_of(key_of(line));
            std::mem::replace(&mut self.owners[slot], owner)
        } else {
            // SAFETY: as in `tag_mut`; `prints` and `owners` are as long as `tags`.
            unsafe {
                *self.prints.get_unchecked_mut(slot) = print_of(key_of(line));
                std::mem::replace(self.owners.get_unchecked_mut(slot), owner)
            }
        };
        self.set_queue(set, packed_back_to_front(queue, ways), key_of(line));
        Filled {
            way,
            old_tag,
            old_owner,
        }
    }

    /// Marks the line in `way` of `set` as modified.
    #[inline(always)]
    pub fn mark_dirty(&mut self, set: Set, way: usize) {
        let slot = self.slot(set, way);
        *self.tag_mut(slot) |= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LevelConfig, Replacement};

    /// Whether every set's most recent key is the key of the line at its front.
    fn mru_is_the_front(level: &mut Level) -> bool {
        let sets = level.geometry.sets as usize;
        (0..sets).all(|set| {
            let front = level.lean_parts().map(|p| p.queues[set] & 0xF);
            let front = front.unwrap_or(0) as usize;
            let key = level.resident(set, front).map_or(0, |r| key_of(r.line));
            level.lean_parts().is_some_and(|p| p.mru[set] == key)
        })
    }

    #[test]
    fn the_most_recent_key_follows_the_front_through_every_operation() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for replacement in [Replacement::Lru, Replacement::Fifo] {
            for ways in [1, 3, 8] {
                let config = LevelConfig::new("L", 4 * ways as u64 * 64, ways, 64)
                    .with_replacement(replacement);
                let geometry = Geometry::new(&config).unwrap();
                let mut level = Level::new(&config, geometry);
                for _ in 0..3000 {
                    let line = next() % 40;
                    let set = geometry.set_of(line);
                    match next() % 4 {
                        // The lean operations, as the fast paths use them.
                        0 | 1 => {
                            let mut lean = level.lean::<0>().unwrap();
                            let set = lean.set_of::<false>(line);
                            let (queue, key) = (lean.queue(set), key_of(line));
                            match lean.find(set, queue, key) {
                                Some(way) => lean.touch(set, queue, way, key),
                                None => {
                                    lean.fill(
                                        set,
                                        queue,
                                        line,
                                        next().is_multiple_of(2),
                                        RegionId(1),
                                    );
                                }
                            }
                        }
                        // The general ones, as write-backs and invalidations use them.
                        2 => match level.find(set, line) {
                            Some(way) => level.touch(set, way),
                            None => {
                                let way = level.choose_way(set);
                                level.take_victim(set, way);
                                level.install(set, way, line, false, RegionId(2));
                            }
                        },
                        _ => {
                            if let Some(way) = level.find(set, line) {
                                level.take(set, way);
                            }
                        }
                    }
                    assert!(mru_is_the_front(&mut level), "{replacement:?}, {ways} ways");
                }
            }
        }
    }
}
