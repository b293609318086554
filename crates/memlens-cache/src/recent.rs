//! The last N outcomes of a simulation, overall and per region, kept as raw codes.
//!
//! The windowed miss rates and the temperature of a [`crate::Simulation`] only
//! depend on which outcomes are in the window when the summary is taken, so instead
//! of updating running counts per reference (six ring updates per reference for two
//! levels), [`RecentOutcomes`] keeps the raw outcome codes (see [`Outcome::code`])
//! of the last N references overall and of the last N of each region, in rings of
//! N rounded up to a power of two. The rates and the temperature are folded from the
//! rings on demand, with the same [`OutcomeWindow`] and [`Temperature`] arithmetic
//! as the per-reference folds, so the values are identical.
//!
//! It is the [`CodeSink`] of the simulator's statistics-only loops. A batch of
//! single-line references costs almost nothing per reference: the simulator links
//! each reference to the previous one of its region ([`BatchTally`]), then only the
//! last N references of each region are followed back from its last one and
//! stored, and only the batch's last N overall.

use crate::outcome::{CodeSink, Outcome};
use crate::reference::{Reference, RegionId};
use crate::tally::BatchTally;
use crate::temperature::{Temperature, TemperatureConfig};
use crate::window::OutcomeWindow;

/// The last N outcome codes overall and per region.
///
/// Invariants: `all.len()` is the ring capacity, a power of two `1 << shift` at
/// least the window, with `mask = capacity − 1`; `rings.len() == counts.len() <<
/// shift` (region `r`'s ring is `rings[r << shift ..][.. capacity]`).
#[derive(Clone, Debug)]
pub(crate) struct RecentOutcomes {
    window: usize,
    levels: usize,
    shift: u32,
    mask: usize,
    /// The last codes overall: code `i` (0-based, in reference order) at `i & mask`.
    all: Vec<u32>,
    /// How many codes were recorded overall.
    total: u64,
    /// Per region, how many codes were recorded.
    counts: Vec<u64>,
    /// Per region, its ring: its code `i` at `i & mask`.
    rings: Vec<u32>,
}

impl RecentOutcomes {
    /// Empty rings of `window` (at least 1) references for `levels` levels.
    pub(crate) fn new(levels: usize, window: usize) -> RecentOutcomes {
        let window = window.max(1);
        let capacity = window.next_power_of_two();
        RecentOutcomes {
            window,
            levels,
            shift: capacity.trailing_zeros(),
            mask: capacity - 1,
            all: vec![0; capacity],
            total: 0,
            counts: Vec::new(),
            rings: Vec::new(),
        }
    }

    /// Makes room for the ring of `region`.
    fn ensure_region(&mut self, region: RegionId) {
        let regions = region.index() + 1;
        if regions > self.counts.len() {
            self.counts.resize(regions, 0);
            self.rings.resize(regions << self.shift, 0);
        }
    }

    /// The last `min(count, window)` codes of a ring holding `count` codes, oldest
    /// first.
    fn in_order<'a>(&self, ring: &'a [u32], count: u64) -> impl Iterator<Item = u32> + 'a {
        let held = count.min(self.window as u64);
        let mask = self.mask as u64;
        (count - held..count).map(move |i| ring[(i & mask) as usize])
    }

    /// Folds a ring into the window of one level.
    fn window_of(&self, ring: &[u32], count: u64, level: usize) -> OutcomeWindow {
        let mut window = OutcomeWindow::new(self.window);
        for code in self.in_order(ring, count) {
            window.push(Outcome::involvement_of_code(code, level));
        }
        window
    }

    /// The miss rate of `level` over the last N references.
    pub(crate) fn level(&self, level: usize) -> Option<f64> {
        (level < self.levels)
            .then(|| self.window_of(&self.all, self.total, level).miss_rate())
            .flatten()
    }

    /// The miss rate of `level` over the last N references of `region`.
    pub(crate) fn region(&self, region: RegionId, level: usize) -> Option<f64> {
        let r = region.index();
        let count = *self.counts.get(r)?;
        let ring = &self.rings[r << self.shift..(r + 1) << self.shift];
        (level < self.levels)
            .then(|| self.window_of(ring, count, level).miss_rate())
            .flatten()
    }

    /// The standard temperature of every level over the last N references.
    pub(crate) fn temperature(&self) -> Temperature {
        let mut temperature = Temperature::new(&TemperatureConfig {
            window: self.window,
            ..TemperatureConfig::standard(self.levels)
        });
        for code in self.in_order(&self.all, self.total) {
            temperature.record(&Outcome::from_code(code));
        }
        temperature
    }
}

impl CodeSink for RecentOutcomes {
    fn record(&mut self, region: RegionId, code: u32) {
        self.ensure_region(region);
        let r = region.index();
        self.all[self.total as usize & self.mask] = code;
        self.total += 1;
        let at = r << self.shift | (self.counts[r] as usize & self.mask);
        self.counts[r] += 1;
        self.rings[at] = code;
    }

    const LINKS: bool = true;

    fn record_batch(
        &mut self,
        references: &[Reference],
        served: &[u8],
        tally: &BatchTally,
        code_of: &[u32],
    ) {
        let n = references.len().min(served.len());
        let code = |i: usize| code_of[usize::from(served[i])];
        // Overall: the batch's last codes, each at its place in the ring.
        for i in n.saturating_sub(self.mask + 1)..n {
            self.all[(self.total as usize + i) & self.mask] = code(i);
        }
        self.total += n as u64;
        // Per region: its last codes, found from its last reference back.
        for (r, region) in tally.regions.iter().enumerate() {
            let batch = region.references();
            if batch == 0 {
                continue;
            }
            self.ensure_region(RegionId(r as u16));
            let (mut next, end) = (region.last as usize, self.counts[r] + batch);
            for ordinal in (end - batch.min(self.window as u64)..end).rev() {
                let i = next - 1;
                self.rings[r << self.shift | (ordinal as usize & self.mask)] = code(i);
                next = tally.previous[i] as usize;
            }
            self.counts[r] = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tally::tally as tally_one;
    use crate::window::WindowedMissRate;

    #[test]
    fn rings_equal_per_reference_windows() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let code_of: Vec<u32> = (0..4).map(|s| Outcome::served(s, 3).code()).collect();
        for window in [1, 3, 7, 64, 100] {
            let (mut one, mut batched) = (
                RecentOutcomes::new(3, window),
                RecentOutcomes::new(3, window),
            );
            let mut rates = WindowedMissRate::new(3, window);
            for batch in [0, 1, 5, 2, 100, 9, 300] {
                let (mut references, mut served) = (Vec::new(), Vec::new());
                for _ in 0..batch {
                    let region = RegionId((next() % 4) as u16 * (next() % 2) as u16);
                    let by = (next() % 4) as u8;
                    let outcome = Outcome::served(usize::from(by), 3);
                    one.record(region, outcome.code());
                    rates.record(region, &outcome);
                    references.push(Reference::read(0, 1).with(region, Default::default()));
                    served.push(by);
                }
                let mut tally = BatchTally::default();
                let (regions, previous) = tally.start(batch, 4, true);
                for (i, r) in references.iter().enumerate() {
                    // SAFETY: `i < batch` and regions are below 4.
                    unsafe { tally_one::<true>(regions, previous, i, r.region, r.kind) };
                }
                batched.record_batch(&references, &served, &tally, &code_of);
                for level in 0..3 {
                    assert_eq!(one.level(level), rates.level(level), "{window}");
                    assert_eq!(batched.level(level), rates.level(level), "{window}");
                    for region in 0..4 {
                        let region = RegionId(region);
                        assert_eq!(one.region(region, level), rates.region(region, level));
                        assert_eq!(batched.region(region, level), rates.region(region, level));
                    }
                }
                assert_eq!(batched.temperature().value(0), one.temperature().value(0));
            }
        }
    }
}
