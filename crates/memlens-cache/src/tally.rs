//! What the batched loop (`batch.rs`) keeps of a batch beside the simulation: per
//! region, its references per access kind (which the statistics add up, see
//! `Statistics::add_batch`) and its last reference, and per reference the previous
//! one of its region, so that the windows (`recent.rs`) follow each region's last
//! references back without a pass of their own.
//!
//! A reference costs an increment, and for the links a load and two stores, all in
//! one 32-byte entry per region and one array per batch.

use crate::reference::{AccessKind, RegionId};

/// One region's tally of a batch (32 bytes, so that the tallies are indexed by a
/// shift).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
pub(crate) struct RegionTally {
    /// References per access kind (indexed by `AccessKind as usize`).
    pub kinds: [u32; 4],
    /// The region's last reference in the batch (index + 1), or 0.
    pub last: u32,
}

impl RegionTally {
    /// The region's references in the batch.
    pub(crate) fn references(&self) -> u64 {
        self.kinds.iter().map(|&k| u64::from(k)).sum()
    }
}

/// The tally of a batch.
#[derive(Clone, Debug, Default)]
pub(crate) struct BatchTally {
    /// Per region.
    pub regions: Vec<RegionTally>,
    /// Per reference, the previous one of its region (index + 1), or 0 (when the
    /// references are linked).
    pub previous: Vec<u32>,
}

impl BatchTally {
    /// The arrays for tallying a batch of `references` references (linked when
    /// `links`) of regions below `regions`: every tally starts at zero.
    pub(crate) fn start(
        &mut self,
        references: usize,
        regions: usize,
        links: bool,
    ) -> (&mut [RegionTally], &mut [u32]) {
        if self.regions.len() < regions {
            self.regions.resize(regions, RegionTally::default());
        }
        let references = if links { references } else { 0 };
        if self.previous.len() < references {
            self.previous.resize(references, 0);
        }
        (
            &mut self.regions[..regions],
            &mut self.previous[..references],
        )
    }

    /// Zeroes the tallies for the next batch.
    pub(crate) fn clear(&mut self) {
        self.regions.fill(RegionTally::default());
    }
}

/// Tallies reference `index` of a batch, of `region` and access `kind`, and links it
/// to the previous one of its region when `LINK`.
///
/// # Safety
///
/// `region < regions.len()`, and, when `LINK`, `index < previous.len()`.
#[inline(always)]
pub(crate) unsafe fn tally<const LINK: bool>(
    regions: &mut [RegionTally],
    previous: &mut [u32],
    index: usize,
    region: RegionId,
    kind: AccessKind,
) {
    // SAFETY: the caller's guarantees; `kind as usize < 4`.
    unsafe {
        let tally = regions.get_unchecked_mut(region.index());
        *tally.kinds.get_unchecked_mut(kind as usize) += 1;
        if LINK {
            *previous.get_unchecked_mut(index) = tally.last;
            tally.last = index as u32 + 1;
        }
    }
}
