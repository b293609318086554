//! The last N outcomes of a simulation, overall and per region, kept in bulk.
//!
//! The windowed miss rates and the temperature of a [`crate::Simulation`] only
//! depend on which outcomes are in the window when the summary is taken, so instead
//! of updating running counts per reference (six ring updates per reference for two
//! levels), [`RecentOutcomes`] keeps the raw outcome codes (see
//! [`Outcome::code`]) of the last N references overall and of the last N of each
//! region. A batch is recorded in bulk: its last N codes are copied into the overall
//! ring, and each region receives only its own last N, found by one backward scan
//! that stops as soon as every region of the batch has them. The rates and the
//! temperature are folded from the rings on demand, with the same
//! [`OutcomeWindow`] and [`Temperature`] arithmetic as the per-reference folds, so
//! the values are identical.

use crate::outcome::Outcome;
use crate::reference::{Reference, RegionId};
use crate::temperature::{Temperature, TemperatureConfig};
use crate::window::OutcomeWindow;

/// A ring of the last `capacity` codes.
#[derive(Clone, Debug)]
struct Ring {
    codes: Vec<u32>,
    /// Where the next code goes.
    next: usize,
    /// How many codes the ring holds (at most its capacity).
    len: usize,
}

impl Ring {
    fn new(capacity: usize) -> Ring {
        Ring {
            codes: vec![0; capacity],
            next: 0,
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, code: u32) {
        self.codes[self.next] = code;
        self.next += 1;
        if self.next == self.codes.len() {
            self.next = 0;
        }
        self.len = (self.len + 1).min(self.codes.len());
    }

    /// Appends codes in order; only the last `capacity` of them can stay.
    fn extend(&mut self, codes: &[u32]) {
        let capacity = self.codes.len();
        let codes = &codes[codes.len().saturating_sub(capacity)..];
        let first = codes.len().min(capacity - self.next);
        self.codes[self.next..self.next + first].copy_from_slice(&codes[..first]);
        self.codes[..codes.len() - first].copy_from_slice(&codes[first..]);
        self.next = (self.next + codes.len()) % capacity;
        self.len = (self.len + codes.len()).min(capacity);
    }

    /// Makes room for `count` (≤ capacity) codes written by [`Ring::set_back`] and
    /// returns the position of the last of them.
    fn reserve(&mut self, count: usize) -> usize {
        let capacity = self.codes.len();
        let last = (self.next + count - 1) % capacity;
        self.next = (self.next + count) % capacity;
        self.len = (self.len + count).min(capacity);
        last
    }

    /// The codes, oldest first.
    fn in_order(&self) -> impl Iterator<Item = u32> + '_ {
        let start = (self.next + self.codes.len() - self.len) % self.codes.len();
        (0..self.len).map(move |i| self.codes[(start + i) % self.codes.len()])
    }

    /// Folds the codes into the window of one level.
    fn window(&self, level: usize) -> OutcomeWindow {
        let mut window = OutcomeWindow::new(self.codes.len());
        for code in self.in_order() {
            window.push(Outcome::involvement_of_code(code, level));
        }
        window
    }
}

/// The last N outcome codes overall and per region.
#[derive(Clone, Debug)]
pub(crate) struct RecentOutcomes {
    window: usize,
    levels: usize,
    all: Ring,
    /// Indexed by region, grown on demand.
    regions: Vec<Ring>,
    /// Per region, the references of the batch being recorded, then what is left to
    /// place (scratch of [`RecentOutcomes::record`]).
    pending: Vec<usize>,
    /// Per region, where its next code (going backwards) goes (scratch).
    slot: Vec<usize>,
}

impl RecentOutcomes {
    /// Empty rings of `window` (at least 1) references for `levels` levels.
    pub(crate) fn new(levels: usize, window: usize) -> RecentOutcomes {
        let window = window.max(1);
        RecentOutcomes {
            window,
            levels,
            all: Ring::new(window),
            regions: Vec::new(),
            pending: Vec::new(),
            slot: Vec::new(),
        }
    }

    fn ensure_region(&mut self, region: RegionId) {
        if region.index() >= self.regions.len() {
            let window = self.window;
            self.regions
                .resize_with(region.index() + 1, || Ring::new(window));
            self.pending.resize(region.index() + 1, 0);
            self.slot.resize(region.index() + 1, 0);
        }
    }

    /// Records one reference's outcome.
    pub(crate) fn record_one(&mut self, region: RegionId, code: u32) {
        self.ensure_region(region);
        self.all.push(code);
        self.regions[region.index()].push(code);
    }

    /// Records a batch: `codes[i]` is the outcome code of `references[i]`.
    pub(crate) fn record(&mut self, references: &[Reference], codes: &[u32]) {
        self.all.extend(codes);
        // Count each region's references (one pass), keep at most N of them.
        for reference in references {
            let region = reference.region;
            if region.index() >= self.pending.len() {
                self.ensure_region(region);
            }
            self.pending[region.index()] += 1;
        }
        let mut left = 0;
        for (region, pending) in self.pending.iter_mut().enumerate() {
            if *pending > 0 {
                *pending = (*pending).min(self.window);
                left += *pending;
                self.slot[region] = self.regions[region].reserve(*pending);
            }
        }
        // Walk back from the end until every region has its last codes.
        let window = self.window;
        for (reference, &code) in references.iter().zip(codes).rev() {
            if left == 0 {
                break;
            }
            let r = reference.region.index();
            if self.pending[r] == 0 {
                continue;
            }
            self.pending[r] -= 1;
            left -= 1;
            let slot = &mut self.slot[r];
            self.regions[r].codes[*slot] = code;
            *slot = if *slot == 0 { window - 1 } else { *slot - 1 };
        }
    }

    /// The miss rate of `level` over the last N references.
    pub(crate) fn level(&self, level: usize) -> Option<f64> {
        (level < self.levels)
            .then(|| self.all.window(level).miss_rate())
            .flatten()
    }

    /// The miss rate of `level` over the last N references of `region`.
    pub(crate) fn region(&self, region: RegionId, level: usize) -> Option<f64> {
        let ring = self.regions.get(region.index())?;
        (level < self.levels)
            .then(|| ring.window(level).miss_rate())
            .flatten()
    }

    /// The standard temperature of every level over the last N references.
    pub(crate) fn temperature(&self) -> Temperature {
        let mut temperature = Temperature::new(&TemperatureConfig {
            window: self.window,
            ..TemperatureConfig::standard(self.levels)
        });
        for code in self.all.in_order() {
            temperature.record(&Outcome::from_code(code));
        }
        temperature
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::WindowedMissRate;

    #[test]
    fn bulk_recording_equals_per_reference_windows() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for window in [1, 3, 7, 64] {
            let mut bulk = RecentOutcomes::new(3, window);
            let mut one = RecentOutcomes::new(3, window);
            let mut rates = WindowedMissRate::new(3, window);
            for batch in [0, 1, 5, 2, 100, 9, 300] {
                let references: Vec<Reference> = (0..batch)
                    .map(|_| {
                        let region = RegionId((next() % 4) as u16 * (next() % 2) as u16);
                        Reference::read(0, 1).with(region, Default::default())
                    })
                    .collect();
                let codes: Vec<u32> = (0..batch)
                    .map(|_| Outcome::served((next() % 4) as usize, 3).code())
                    .collect();
                bulk.record(&references, &codes);
                for (r, &code) in references.iter().zip(&codes) {
                    one.record_one(r.region, code);
                    rates.record(r.region, &Outcome::from_code(code));
                }
                for level in 0..3 {
                    assert_eq!(bulk.level(level), rates.level(level), "{window}");
                    assert_eq!(one.level(level), rates.level(level), "{window}");
                    for region in 0..4 {
                        let region = RegionId(region);
                        assert_eq!(bulk.region(region, level), rates.region(region, level));
                        assert_eq!(one.region(region, level), rates.region(region, level));
                    }
                }
            }
        }
    }
}
