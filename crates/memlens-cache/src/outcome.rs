//! The summary of one reference's trip through the hierarchy.
//!
//! An [`Outcome`] says which level served the reference and, per level, whether the
//! level hit, missed or was not involved. That per-level triple is exactly what the
//! paper's cache temperature scores, and what windowed miss rates count. It is a
//! small `Copy` value with one bit per level, so folding it costs almost nothing.

use crate::reference::{Reference, RegionId};
use crate::tally::BatchTally;

/// How one level took part in one reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Involvement {
    /// The level was not probed by the reference's demand traffic.
    Idle,
    /// Every demand probe of the level found its line.
    Hit,
    /// At least one demand probe of the level missed.
    Miss,
}

/// The result of simulating one reference.
///
/// Invariant: a level's bit is set in `missed` or `hit` only if it was probed; a level
/// whose bit is set in both counts as a miss.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The deepest level the reference's demand traffic reached: a level index, or
    /// the number of levels when memory served it.
    pub served_by: u8,
    /// One bit per level whose demand probes hit.
    pub hit: u16,
    /// One bit per level where a demand probe missed.
    pub missed: u16,
}

impl Outcome {
    /// Returns how `level` took part.
    #[inline]
    pub fn involvement(&self, level: usize) -> Involvement {
        let bit = 1u16 << level;
        if self.missed & bit != 0 {
            Involvement::Miss
        } else if self.hit & bit != 0 {
            Involvement::Hit
        } else {
            Involvement::Idle
        }
    }

    /// The outcome of a single-line reference served by level `served` of `levels`:
    /// it missed every level above and hit `served` (unless memory served it).
    #[inline]
    pub(crate) fn served(served: usize, levels: usize) -> Outcome {
        Outcome {
            served_by: served as u8,
            hit: if served < levels { 1 << served } else { 0 },
            missed: ((1u32 << served) - 1) as u16,
        }
    }

    /// The per-level part of the outcome in 32 bits (`hit | missed << 16`): what
    /// windows and temperature count.
    #[inline]
    pub(crate) fn code(&self) -> u32 {
        u32::from(self.hit) | u32::from(self.missed) << 16
    }

    /// The per-level part of an outcome back from its [`Outcome::code`]
    /// (`served_by` is not kept and reads 0).
    #[inline]
    pub(crate) fn from_code(code: u32) -> Outcome {
        Outcome {
            served_by: 0,
            hit: code as u16,
            missed: (code >> 16) as u16,
        }
    }

    /// How `level` took part, from an [`Outcome::code`].
    #[inline]
    pub(crate) fn involvement_of_code(code: u32, level: usize) -> Involvement {
        if code >> 16 >> level & 1 != 0 {
            Involvement::Miss
        } else if code >> level & 1 != 0 {
            Involvement::Hit
        } else {
            Involvement::Idle
        }
    }

    #[inline]
    pub(crate) fn record_hit(&mut self, level: usize) {
        self.hit |= 1 << level;
    }

    #[inline]
    pub(crate) fn record_miss(&mut self, level: usize) {
        self.missed |= 1 << level;
    }
}

/// Where [`crate::Hierarchy`]'s statistics-only loops put every reference's
/// [`Outcome::code`], in reference order: one at a time, or a batch of single-line
/// references at once.
pub(crate) trait CodeSink {
    /// Takes the code of the next reference, of `region`.
    fn record(&mut self, region: RegionId, code: u32);

    /// Whether the batched loop links a batch's references (see [`BatchTally`])
    /// for [`CodeSink::record_batch`]: whether the sink wants codes at all.
    const LINKS: bool;

    /// Takes the codes of the next references, tallied and linked in `tally`:
    /// `references[i]` was served by level `served[i]`, its code is
    /// `code_of[served[i]]`.
    fn record_batch(
        &mut self,
        references: &[Reference],
        served: &[u8],
        tally: &BatchTally,
        code_of: &[u32],
    );
}

/// A [`CodeSink`] that wants no codes.
pub(crate) struct NoCodes;

impl CodeSink for NoCodes {
    #[inline(always)]
    fn record(&mut self, _region: RegionId, _code: u32) {}

    const LINKS: bool = false;

    #[inline(always)]
    fn record_batch(&mut self, _: &[Reference], _: &[u8], _: &BatchTally, _: &[u32]) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_miss_wins_over_a_hit_on_the_same_level() {
        let mut o = Outcome::default();
        o.record_hit(0);
        o.record_hit(1);
        o.record_miss(1);
        assert_eq!(o.involvement(0), Involvement::Hit);
        assert_eq!(o.involvement(1), Involvement::Miss);
        assert_eq!(o.involvement(2), Involvement::Idle);
    }
}
