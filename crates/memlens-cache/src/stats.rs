//! Cumulative statistics per level and per region, kept by the simulator itself.
//!
//! The simulator keeps one [`LevelCounters`] per (region, level) pair and one
//! "served by" histogram per region; everything else (per-level totals, per-region
//! totals, reference-level miss counts) is summed from those on demand, so there is
//! no second copy to keep consistent. Windowed rates and temperature are folded from
//! the per-reference outcomes instead (see [`crate::window`] and
//! [`crate::temperature`]).
//!
//! Counting conventions (they matter when comparing with other simulators):
//! - A reference that straddles lines probes each line, so it counts once per line.
//!   [`Statistics::reference_misses`] counts whole references instead, as Cachegrind
//!   does.
//! - *Reads* are loads, instruction fetches, modifies (counted once) and line fetches
//!   requested by the level above. *Writes* are stores and the write-through or
//!   no-write-allocate traffic arriving from above. *Write-backs* are dirty lines
//!   arriving from the level above; they are counted apart from demand accesses.

use crate::reference::{AccessKind, RegionId};
use crate::tally::RegionTally;

/// The counters of one level (for one region, or summed over all).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelCounters {
    /// Demand reads that found their line.
    pub read_hits: u64,
    /// Demand reads that did not.
    pub read_misses: u64,
    /// Demand writes that found their line.
    pub write_hits: u64,
    /// Demand writes that did not.
    pub write_misses: u64,
    /// Dirty lines from the level above that found their line here.
    pub writeback_hits: u64,
    /// Dirty lines from the level above that did not.
    pub writeback_misses: u64,
    /// Lines placed in this level.
    pub fills: u64,
    /// Valid lines this level gave up to make room (replacement victims).
    pub evictions: u64,
    /// Evicted lines that were dirty and were written to the next level or memory.
    pub write_backs: u64,
    /// Lines removed because a lower level evicted them (inclusive), because they
    /// moved up to the first level (exclusive), or by a flush.
    pub invalidations: u64,
}

impl LevelCounters {
    /// Returns the number of demand accesses (reads and writes).
    pub fn accesses(&self) -> u64 {
        self.hits() + self.misses()
    }

    /// Returns the number of demand accesses that hit.
    pub fn hits(&self) -> u64 {
        self.read_hits + self.write_hits
    }

    /// Returns the number of demand accesses that missed.
    pub fn misses(&self) -> u64 {
        self.read_misses + self.write_misses
    }

    /// Returns misses / accesses, or 0 when the level saw no access.
    pub fn miss_rate(&self) -> f64 {
        match self.accesses() {
            0 => 0.0,
            n => self.misses() as f64 / n as f64,
        }
    }

    /// Adds another set of counters to this one.
    pub fn add(&mut self, other: &LevelCounters) {
        self.read_hits += other.read_hits;
        self.read_misses += other.read_misses;
        self.write_hits += other.write_hits;
        self.write_misses += other.write_misses;
        self.writeback_hits += other.writeback_hits;
        self.writeback_misses += other.writeback_misses;
        self.fills += other.fills;
        self.evictions += other.evictions;
        self.write_backs += other.write_backs;
        self.invalidations += other.invalidations;
    }
}

/// The statistics of one simulation.
///
/// Invariant: `counters.len() == regions × levels` and
/// `served.len() == regions × (levels + 1)`, region-major; both grow together when a
/// reference names a region not seen before.
#[derive(Clone, Debug)]
pub struct Statistics {
    levels: usize,
    regions: usize,
    counters: Vec<LevelCounters>,
    /// Per region, how many references were served by each level (index `levels` is
    /// memory). A reference is served by the deepest level any of its lines reached.
    served: Vec<u64>,
    /// Per region and first-level access kind (read, write), how many lines were
    /// served by each level, as counted by the fast paths instead of per-level
    /// counters: a line served by level `s` hit at `s` and missed, then was filled,
    /// at every level above it. [`Statistics::fold_lines`] turns it into counters.
    lines: Vec<u64>,
    /// The same histogram for single-line references, whose entry also counts the
    /// reference in `served` (one increment instead of two on the hot path).
    single: Vec<u64>,
}

impl Statistics {
    pub(crate) fn new(levels: usize) -> Statistics {
        Statistics {
            levels,
            regions: 1,
            counters: vec![LevelCounters::default(); levels],
            served: vec![0; levels + 1],
            lines: vec![0; 2 * (levels + 1)],
            single: vec![0; 2 * (levels + 1)],
        }
    }

    /// Makes room for `region`'s counters.
    #[inline]
    pub(crate) fn ensure_region(&mut self, region: RegionId) {
        if region.index() >= self.regions {
            self.grow(region.index() + 1);
        }
    }

    #[cold]
    fn grow(&mut self, regions: usize) {
        self.regions = regions;
        self.counters
            .resize(regions * self.levels, LevelCounters::default());
        self.served.resize(regions * (self.levels + 1), 0);
        self.lines.resize(regions * 2 * (self.levels + 1), 0);
        self.single.resize(regions * 2 * (self.levels + 1), 0);
    }

    /// Records, for a fast path, that a single-line reference of `region` was served
    /// by `level`.
    #[inline(always)]
    pub(crate) fn record_single(&mut self, region: RegionId, write: bool, level: usize) {
        let row = region.index() * 2 + usize::from(write);
        self.single[row * (self.levels + 1) + level] += 1;
    }

    /// Adds a batch of single-line references as the batched loop counts them (the
    /// same as [`Statistics::record_single`] on each): per region and access kind,
    /// `regions[region].kinds[kind]` references, of which
    /// `below[(region × 4 + kind) × (levels + 1) + level]` were served by `level`,
    /// for every level below the first (the rest by the first). Zeroes `below`.
    pub(crate) fn add_batch(&mut self, regions: &[RegionTally], below: &mut [u32]) {
        let width = self.levels + 1;
        for (region, tally) in regions.iter().enumerate() {
            for (kind, &count) in tally.kinds.iter().enumerate() {
                if count == 0 {
                    continue;
                }
                let store = usize::from(kind == AccessKind::Write as usize);
                let (row, at) = ((region * 2 + store) * width, (region * 4 + kind) * width);
                let (Some(served), Some(lower)) = (
                    self.single.get_mut(row..row + width),
                    below.get_mut(at..at + width),
                ) else {
                    continue;
                };
                let mut first = u64::from(count);
                for (level, lower) in lower.iter_mut().enumerate().skip(1) {
                    let lower = u64::from(std::mem::take(lower));
                    served[level] += lower;
                    first -= lower;
                }
                served[0] += first;
            }
        }
    }

    /// Records, for a fast path, that a line of `region` was served by `level`.
    #[inline(always)]
    pub(crate) fn record_line(&mut self, region: RegionId, write: bool, level: usize) {
        let row = region.index() * 2 + usize::from(write);
        self.lines[row * (self.levels + 1) + level] += 1;
    }

    /// Moves the fast paths' histograms into the per-level counters and the
    /// reference counts.
    pub(crate) fn fold_lines(&mut self) {
        let width = self.levels + 1;
        for region in 0..self.regions {
            for write in [false, true] {
                let row = (region * 2 + usize::from(write)) * width;
                for served in 0..width {
                    let single = std::mem::take(&mut self.single[row + served]);
                    self.served[region * width + served] += single;
                    let count = std::mem::take(&mut self.lines[row + served]) + single;
                    if count == 0 {
                        continue;
                    }
                    for level in 0..served.min(self.levels) {
                        let counters = &mut self.counters[region * self.levels + level];
                        if write && level == 0 {
                            counters.write_misses += count;
                        } else {
                            counters.read_misses += count;
                        }
                        counters.fills += count;
                    }
                    if served < self.levels {
                        let counters = &mut self.counters[region * self.levels + served];
                        if write && served == 0 {
                            counters.write_hits += count;
                        } else {
                            counters.read_hits += count;
                        }
                    }
                }
            }
        }
    }

    /// Returns the counters of (`region`, `level`) for updating.
    #[inline]
    pub(crate) fn at(&mut self, region: RegionId, level: usize) -> &mut LevelCounters {
        &mut self.counters[region.index() * self.levels + level]
    }

    /// Records that a reference of `region` was served by `level`.
    #[inline]
    pub(crate) fn record_served(&mut self, region: RegionId, level: usize) {
        self.served[region.index() * (self.levels + 1) + level] += 1;
    }

    /// Fills in the evictions of `level`, given how many lines of each region it
    /// holds now: every line filled has since been evicted, invalidated, or is still
    /// resident.
    pub(crate) fn derive_evictions(&mut self, level: usize, resident: &[u64]) {
        for region in 0..self.regions {
            let counters = &mut self.counters[region * self.levels + level];
            let held = resident.get(region).copied().unwrap_or(0);
            counters.evictions = counters.fills.saturating_sub(counters.invalidations + held);
        }
    }

    /// Returns the number of region rows (one past the largest region id seen).
    pub fn region_count(&self) -> usize {
        self.regions
    }

    /// Returns the number of levels.
    pub fn level_count(&self) -> usize {
        self.levels
    }

    /// Returns the counters of `level` summed over all regions.
    pub fn level(&self, level: usize) -> LevelCounters {
        let mut total = LevelCounters::default();
        for region in 0..self.regions {
            total.add(&self.counters[region * self.levels + level]);
        }
        total
    }

    /// Returns the counters of `level` for references attributed to `region`.
    /// Evictions, write-backs and invalidations are attributed to the region that
    /// filled the line.
    pub fn region_level(&self, region: RegionId, level: usize) -> LevelCounters {
        if region.index() >= self.regions || level >= self.levels {
            return LevelCounters::default();
        }
        self.counters[region.index() * self.levels + level]
    }

    /// Returns the number of references simulated.
    pub fn references(&self) -> u64 {
        self.served.iter().sum()
    }

    /// Returns the number of references of `region`.
    pub fn region_references(&self, region: RegionId) -> u64 {
        self.served_row(region).iter().sum()
    }

    fn served_row(&self, region: RegionId) -> &[u64] {
        let start = region.index() * (self.levels + 1);
        self.served
            .get(start..start + self.levels + 1)
            .unwrap_or(&[])
    }

    /// Returns how many references were served by `level` (`level_count()` is memory).
    pub fn served_by(&self, level: usize) -> u64 {
        (0..self.regions)
            .map(|r| self.served[r * (self.levels + 1) + level])
            .sum()
    }

    /// Returns how many whole references missed at `level`, i.e. needed a deeper
    /// level or memory. A reference that straddles two lines counts once, as in
    /// Cachegrind.
    pub fn reference_misses(&self, level: usize) -> u64 {
        (level + 1..=self.levels).map(|l| self.served_by(l)).sum()
    }

    /// Returns how many whole references of `region` missed at `level`.
    pub fn region_reference_misses(&self, region: RegionId, level: usize) -> u64 {
        self.served_row(region).iter().skip(level + 1).sum()
    }

    /// Returns the ids of regions that saw at least one reference, in id order.
    pub fn active_regions(&self) -> Vec<RegionId> {
        (0..self.regions)
            .map(|r| RegionId(r as u16))
            .filter(|&r| self.region_references(r) > 0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_are_sums_over_regions() {
        let mut stats = Statistics::new(2);
        stats.ensure_region(RegionId(2));
        stats.at(RegionId(2), 0).read_hits += 3;
        stats.at(RegionId(0), 0).write_misses += 1;
        stats.at(RegionId(2), 1).read_misses += 1;
        stats.record_served(RegionId(2), 0);
        stats.record_served(RegionId(2), 2);
        stats.record_served(RegionId(0), 1);
        let l1 = stats.level(0);
        assert_eq!((l1.accesses(), l1.hits(), l1.misses()), (4, 3, 1));
        assert_eq!(stats.region_level(RegionId(2), 0).hits(), 3);
        assert_eq!(stats.references(), 3);
        assert_eq!(stats.reference_misses(0), 2);
        assert_eq!(stats.reference_misses(1), 1);
        assert_eq!(stats.region_reference_misses(RegionId(2), 0), 1);
        assert_eq!(stats.region_reference_misses(RegionId(0), 0), 1);
        assert_eq!(stats.region_reference_misses(RegionId(0), 1), 0);
        assert_eq!(stats.active_regions(), vec![RegionId(0), RegionId(2)]);
        assert_eq!(stats.region_level(RegionId(9), 0), LevelCounters::default());
    }
}
