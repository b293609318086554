//! One cache level's storage: the line held in every slot, its dirty bit, the region
//! that filled it, and the replacement state.
//!
//! Slots are addressed as `set × ways + way` and keep a fixed physical way, so fill
//! and eviction events can say exactly where a glyph sits. A tag is
//! `line << 1 | dirty`, so a fill learns whether its victim is dirty from the tag it
//! replaces. Beside the tags, a 32-bit fingerprint per slot is what a lookup scans
//! (all ways at once, with vector compares and no early exit), confirming candidates
//! on the full tag; the owner region sits in a third array, written on fills and read
//! only for dirty victims. A lookup first tries the way at the front of the set's
//! replacement queue (the most recently used or filled line): a repeated access to
//! the same line, the common case in any loop, is found with one comparison (the set's
//! most recent key is kept apart for it) and needs no replacement update under any
//! policy.

use crate::config::{LevelConfig, WritePolicy};
use crate::geometry::Geometry;
use crate::policy::ReplacementState;
use crate::reference::RegionId;

/// The tag of an empty slot. Line numbers are addresses shifted right by at least two
/// bits (lines are at least 4 bytes), so no real tag (`line << 1 | dirty`, below
/// 2^63) can have this value. Its low bit is clear, so a tag's low bit alone says
/// "dirty", and its fingerprint ([`print_of`]) is even where every key's is odd: an
/// empty slot is never a lookup candidate.
pub(crate) const EMPTY: u64 = u64::MAX - 1;

/// Returns the tag of `line`, clean.
#[inline(always)]
pub(crate) fn tag_of(line: u64) -> u64 {
    line << 1
}

/// Returns the value a tag is compared with: [`tag_of`] with the dirty bit set, so
/// that `tag | 1 == key` matches clean and dirty copies alike (and never `EMPTY`).
#[inline(always)]
pub(crate) fn key_of(line: u64) -> u64 {
    line << 1 | 1
}

/// Direct access to a level's arrays for the lean fast path.
pub(crate) struct LeanParts<'a> {
    /// True for LRU, false for FIFO.
    pub lru: bool,
    /// `line << 1 | dirty` per slot, or [`EMPTY`].
    pub tags: &'a mut [u64],
    /// The low 32 bits of each slot's key (see [`print_of`]).
    pub prints: &'a mut [u32],
    /// The region that filled each slot.
    pub owners: &'a mut [RegionId],
    /// Per set, the key of the line at the front of its queue, or 0.
    pub mru: &'a mut [u64],
    /// One packed queue per set (see [`crate::order`]).
    pub queues: &'a mut [u64],
}

/// What a slot held when it was emptied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resident {
    /// The line number (at this level's line size).
    pub line: u64,
    /// Whether the line was modified since it was filled.
    pub dirty: bool,
    /// The region of the reference that filled it.
    pub owner: RegionId,
}

/// One level of the hierarchy.
#[derive(Clone, Debug)]
pub(crate) struct Level {
    pub geometry: Geometry,
    pub write_back: bool,
    pub write_allocate: bool,
    ways: usize,
    /// Per slot, `line << 1 | dirty`, or [`EMPTY`].
    tags: Vec<u64>,
    /// Per slot, the low 32 bits of `tag | 1`: a fingerprint scanned with 32-bit
    /// vector compares before the full tag is checked.
    prints: Vec<u32>,
    /// Per slot, the region of the reference that filled it.
    owners: Vec<RegionId>,
    /// Per set, the key of the line in the way at the front of its queue (the most
    /// recently used or filled), or 0 (no key) when that way is empty: what a
    /// lookup compares first. Every change of a set's front or of its tag updates it.
    mru: Vec<u64>,
    policy: ReplacementState,
}

/// Returns the fingerprint of a key: its low 32 bits. Many lines share one; a
/// fingerprint match is only a candidate, confirmed on the full tag. Empty slots
/// have the fingerprint of [`EMPTY`], which no key has.
#[inline(always)]
pub(crate) fn print_of(key: u64) -> u32 {
    key as u32
}

/// Returns the first way whose tag matches `key` (see [`key_of`]), given the set's
/// tags and fingerprints. The fingerprints are compared first, all ways at once
/// without early exits (on x86-64, four ways per SSE2 compare; on a real trace the
/// matching way is unpredictable, so a branch per way would mispredict); the few
/// candidates are then confirmed on the full tag. Sets of 4,
/// 8 and 16 ways take fixed-size, fully unrolled scans.
#[inline(always)]
pub(crate) fn match_way(tags: &[u64], prints: &[u32], key: u64) -> Option<usize> {
    /// On x86-64, four ways per SSE2 compare, gathered with `movmskps` (the portable
    /// loop below compiles to about five times as many instructions).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn mask<const N: usize>(prints: &[u32; N], print: u32) -> u64 {
        use std::arch::x86_64::{
            _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_ps, _mm_set1_epi32,
        };
        const { assert!(N.is_multiple_of(4)) };
        let mut mask = 0u64;
        for (quarter, four) in prints.chunks_exact(4).enumerate() {
            // SAFETY: SSE and SSE2 are part of the x86-64 baseline, so these
            // instructions exist on every x86-64 CPU; `four` is 16 readable bytes,
            // loaded unaligned.
            let equal = unsafe {
                let ways = _mm_loadu_si128(four.as_ptr().cast());
                let wanted = _mm_set1_epi32(print as i32);
                _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(ways, wanted)))
            };
            mask |= (equal as u64) << (4 * quarter);
        }
        mask
    }
    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    fn mask<const N: usize>(prints: &[u32; N], print: u32) -> u64 {
        let mut mask = 0u64;
        for (way, &p) in prints.iter().enumerate() {
            mask |= u64::from(p == print) << way;
        }
        mask
    }
    let print = print_of(key);
    let mut candidates = match prints.len() {
        8 => mask::<8>(prints.try_into().unwrap_or(&[0; 8]), print),
        16 => mask::<16>(prints.try_into().unwrap_or(&[0; 16]), print),
        4 => mask::<4>(prints.try_into().unwrap_or(&[0; 4]), print),
        n if n <= 64 => {
            let mut mask = 0u64;
            for (way, &p) in prints.iter().enumerate() {
                mask |= u64::from(p == print) << way;
            }
            mask
        }
        _ => return tags.iter().position(|&t| t | 1 == key),
    };
    while candidates != 0 {
        let way = candidates.trailing_zeros() as usize;
        if tags.get(way).is_some_and(|&t| t | 1 == key) {
            return Some(way);
        }
        candidates &= candidates - 1;
    }
    None
}

impl Level {
    /// Makes an empty level of a validated geometry.
    pub fn new(config: &LevelConfig, geometry: Geometry) -> Level {
        let sets = geometry.sets as usize;
        let ways = geometry.ways as usize;
        Level {
            geometry,
            write_back: config.write_policy == WritePolicy::WriteBack,
            write_allocate: config.write_allocate,
            ways,
            tags: vec![EMPTY; sets * ways],
            prints: vec![print_of(EMPTY); sets * ways],
            owners: vec![RegionId::NONE; sets * ways],
            mru: vec![0; sets],
            policy: ReplacementState::new(config.replacement, sets, ways),
        }
    }

    /// Sets the set's [`Level::mru`] entry from its queue's front.
    #[inline(always)]
    fn refresh_mru(&mut self, set: usize) {
        let tag = self.tags[set * self.ways + self.policy.front(set)];
        self.mru[set] = if tag == EMPTY { 0 } else { tag | 1 };
    }

    /// Returns the arrays the lean fast path works on, if this level is LRU or FIFO
    /// with at most 16 ways.
    #[inline(always)]
    pub fn lean_parts(&mut self) -> Option<LeanParts<'_>> {
        let (lru, queues) = self.policy.lean_parts()?;
        Some(LeanParts {
            lru,
            tags: &mut self.tags,
            prints: &mut self.prints,
            owners: &mut self.owners,
            mru: &mut self.mru,
            queues,
        })
    }

    /// Returns the number of ways.
    pub fn ways(&self) -> usize {
        self.ways
    }

    /// Returns the way of `set` holding `line`, if any.
    #[inline(always)]
    pub fn find(&self, set: usize, line: u64) -> Option<usize> {
        self.mru_way(set, line).or_else(|| {
            let base = set * self.ways;
            let ways = base..base + self.ways;
            match_way(&self.tags[ways.clone()], &self.prints[ways], key_of(line))
        })
    }

    /// Returns the way at the front of the set's queue if it holds `line`.
    #[inline(always)]
    pub fn mru_way(&self, set: usize, line: u64) -> Option<usize> {
        (self.mru[set] == key_of(line)).then(|| self.policy.front(set))
    }

    /// Records a demand hit on `way` of `set`.
    #[inline(always)]
    pub fn touch(&mut self, set: usize, way: usize) {
        if self.policy.front(set) != way {
            self.policy.on_hit(set, way);
            self.refresh_mru(set);
        }
    }

    /// Chooses the way of `set` the next fill goes to (an empty one first).
    #[inline(always)]
    pub fn choose_way(&mut self, set: usize) -> usize {
        let base = set * self.ways;
        self.policy
            .victim(set, &self.tags[base..base + self.ways], EMPTY)
    }

    /// Empties `way` of `set` and returns what it held, if anything. The way becomes
    /// the next to be filled.
    pub fn take(&mut self, set: usize, way: usize) -> Option<Resident> {
        let taken = self.take_victim(set, way);
        if taken.is_some() {
            self.policy.on_invalidate(set, way);
            self.refresh_mru(set);
        }
        taken
    }

    /// Empties the way [`Level::choose_way`] chose, for an immediate
    /// [`Level::install`]; the replacement state is left as it is.
    #[inline(always)]
    pub fn take_victim(&mut self, set: usize, way: usize) -> Option<Resident> {
        let slot = set * self.ways + way;
        let tag = std::mem::replace(&mut self.tags[slot], EMPTY);
        self.prints[slot] = print_of(EMPTY);
        self.refresh_mru(set);
        (tag != EMPTY).then(|| Resident {
            line: tag >> 1,
            dirty: tag & 1 != 0,
            owner: self.owners[slot],
        })
    }

    /// Places `line` in the (empty) `way` of `set`.
    #[inline(always)]
    pub fn install(&mut self, set: usize, way: usize, line: u64, dirty: bool, owner: RegionId) {
        let slot = set * self.ways + way;
        self.tags[slot] = tag_of(line) | u64::from(dirty);
        self.prints[slot] = print_of(key_of(line));
        self.owners[slot] = owner;
        self.policy.on_fill(set, way);
        self.refresh_mru(set);
    }

    /// Marks the line in `way` of `set` as modified.
    #[inline(always)]
    pub fn mark_dirty(&mut self, set: usize, way: usize) {
        self.tags[set * self.ways + way] |= 1;
    }

    /// Returns what `way` of `set` holds, if anything.
    pub fn resident(&self, set: usize, way: usize) -> Option<Resident> {
        let slot = set * self.ways + way;
        let tag = self.tags[slot];
        (tag != EMPTY).then(|| Resident {
            line: tag >> 1,
            dirty: tag & 1 != 0,
            owner: self.owners[slot],
        })
    }

    /// Calls `count` with the owner region of every resident line.
    pub fn for_each_owner(&self, mut count: impl FnMut(RegionId)) {
        for (tag, owner) in self.tags.iter().zip(&self.owners) {
            if *tag != EMPTY {
                count(*owner);
            }
        }
    }

    /// Returns the eviction rank of `way` in `set` (0 = evicted last).
    pub fn rank(&self, set: usize, way: usize) -> u32 {
        self.policy.rank(set, way)
    }

    /// Returns the eviction rank of a line that was just accessed.
    #[inline]
    pub fn rank_after_access(&self, set: usize, way: usize) -> u32 {
        self.policy.rank_after_access(set, way)
    }

    /// Returns true when `line` is resident.
    pub fn holds(&self, line: u64) -> bool {
        self.find(self.geometry.set_of(line), line).is_some()
    }

    /// Empties every slot, returning what each occupied `(set, way)` held.
    pub fn drain(&mut self) -> Vec<(usize, usize, Resident)> {
        let mut held = Vec::new();
        for set in 0..self.geometry.sets as usize {
            for way in 0..self.ways {
                if let Some(resident) = self.take(set, way) {
                    held.push((set, way, resident));
                }
            }
        }
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_of_every_width_find_the_first_match() {
        for ways in [1, 3, 4, 8, 16, 20, 64, 100] {
            // Line 5 and line 5 + 2^31 share a fingerprint: candidates are confirmed.
            let twin = 5 + (1 << 31);
            assert_eq!(print_of(key_of(twin)), print_of(key_of(5)));
            let mut tags = vec![tag_of(twin); ways];
            let mut prints = vec![print_of(key_of(twin)); ways];
            assert_eq!(match_way(&tags, &prints, key_of(5)), None, "{ways}");
            tags[ways - 1] = tag_of(5) | 1;
            assert_eq!(
                match_way(&tags, &prints, key_of(5)),
                Some(ways - 1),
                "dirty, {ways}"
            );
            tags[0] = tag_of(5);
            assert_eq!(
                match_way(&tags, &prints, key_of(5)),
                Some(0),
                "clean, {ways}"
            );
            tags.fill(EMPTY);
            prints.fill(print_of(EMPTY));
            assert_eq!(
                match_way(&tags, &prints, key_of(5)),
                None,
                "empty slots match nothing"
            );
        }
    }
}
