//! Sliding windows over per-reference outcomes, and miss rates over them.
//!
//! An [`OutcomeWindow`] remembers how one level took part in each of the last N
//! references (idle, hit, miss) and keeps running counts, so pushing is O(1) and the
//! counts are exact integers (no floating-point drift over long traces). The cache
//! temperature and [`WindowedMissRate`] are both built on it.

use crate::events::EventSink;
use crate::outcome::{Involvement, Outcome};
use crate::reference::{Reference, RegionId};

/// The last `capacity` involvements of one level.
#[derive(Clone, Debug)]
pub struct OutcomeWindow {
    codes: Vec<Involvement>,
    next: usize,
    filled: usize,
    hits: u32,
    misses: u32,
}

impl OutcomeWindow {
    /// Makes an empty window of `capacity` references (at least 1).
    pub fn new(capacity: usize) -> OutcomeWindow {
        OutcomeWindow {
            codes: vec![Involvement::Idle; capacity.max(1)],
            next: 0,
            filled: 0,
            hits: 0,
            misses: 0,
        }
    }

    /// Records one reference, dropping the oldest once the window is full.
    #[inline]
    pub fn push(&mut self, involvement: Involvement) {
        let slot = &mut self.codes[self.next];
        match *slot {
            Involvement::Hit => self.hits -= 1,
            Involvement::Miss => self.misses -= 1,
            Involvement::Idle => {}
        }
        *slot = involvement;
        match involvement {
            Involvement::Hit => self.hits += 1,
            Involvement::Miss => self.misses += 1,
            Involvement::Idle => {}
        }
        self.next += 1;
        if self.next == self.codes.len() {
            self.next = 0;
        }
        self.filled = (self.filled + 1).min(self.codes.len());
    }

    /// Returns the number of hits in the window.
    pub fn hits(&self) -> u32 {
        self.hits
    }

    /// Returns the number of misses in the window.
    pub fn misses(&self) -> u32 {
        self.misses
    }

    /// Returns how many references the window holds (at most its capacity).
    pub fn len(&self) -> usize {
        self.filled
    }

    /// Returns true when no reference was pushed yet.
    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// Returns the window's capacity.
    pub fn capacity(&self) -> usize {
        self.codes.len()
    }

    /// Returns misses / (hits + misses) in the window, or `None` if the level was
    /// idle for the whole window.
    pub fn miss_rate(&self) -> Option<f64> {
        match self.hits + self.misses {
            0 => None,
            n => Some(f64::from(self.misses) / f64::from(n)),
        }
    }
}

/// Miss rates over the last N references, per level and per (region, level).
///
/// As a sink it wants no detailed events, so the simulator runs its fast path. The
/// per-region windows cover the last N references *of that region*.
#[derive(Clone, Debug)]
pub struct WindowedMissRate {
    window: usize,
    levels: Vec<OutcomeWindow>,
    /// Region-major: `regions[r][level]`, grown on demand.
    regions: Vec<Vec<OutcomeWindow>>,
}

impl WindowedMissRate {
    /// Makes empty windows of `window` references for `levels` levels.
    pub fn new(levels: usize, window: usize) -> WindowedMissRate {
        WindowedMissRate {
            window,
            levels: (0..levels).map(|_| OutcomeWindow::new(window)).collect(),
            regions: Vec::new(),
        }
    }

    /// Records one reference's outcome.
    pub fn record(&mut self, region: RegionId, outcome: &Outcome) {
        let levels = self.levels.len();
        if region.index() >= self.regions.len() {
            let window = self.window;
            self.regions.resize_with(region.index() + 1, || {
                (0..levels).map(|_| OutcomeWindow::new(window)).collect()
            });
        }
        let per_region = &mut self.regions[region.index()];
        for (level, (all, mine)) in self.levels.iter_mut().zip(per_region).enumerate() {
            let involvement = outcome.involvement(level);
            all.push(involvement);
            mine.push(involvement);
        }
    }

    /// Returns the miss rate of `level` over the last N references.
    pub fn level(&self, level: usize) -> Option<f64> {
        self.levels.get(level).and_then(OutcomeWindow::miss_rate)
    }

    /// Returns the miss rate of `level` over the last N references of `region`.
    pub fn region(&self, region: RegionId, level: usize) -> Option<f64> {
        self.regions
            .get(region.index())
            .and_then(|windows| windows.get(level))
            .and_then(OutcomeWindow::miss_rate)
    }
}

impl EventSink for WindowedMissRate {
    const WANTS_EVENTS: bool = false;

    #[inline]
    fn end_reference(&mut self, reference: &Reference, outcome: &Outcome) {
        self.record(reference.region, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_counts_only_the_last_n_references() {
        let mut w = OutcomeWindow::new(4);
        assert_eq!(w.miss_rate(), None);
        for inv in [
            Involvement::Miss,
            Involvement::Miss,
            Involvement::Hit,
            Involvement::Idle,
        ] {
            w.push(inv);
        }
        assert_eq!((w.hits(), w.misses(), w.len()), (1, 2, 4));
        assert_eq!(w.miss_rate(), Some(2.0 / 3.0));
        // Two hits push both misses out.
        w.push(Involvement::Hit);
        w.push(Involvement::Hit);
        assert_eq!((w.hits(), w.misses()), (3, 0));
        assert_eq!(w.miss_rate(), Some(0.0));
        for _ in 0..4 {
            w.push(Involvement::Idle);
        }
        assert_eq!(w.miss_rate(), None);
    }

    #[test]
    fn windowed_miss_rate_tracks_levels_and_regions_separately() {
        let mut rates = WindowedMissRate::new(2, 2);
        let miss_both = Outcome {
            served_by: 2,
            hit: 0,
            missed: 0b11,
        };
        let hit_first = Outcome {
            served_by: 0,
            hit: 0b01,
            missed: 0,
        };
        rates.record(RegionId(1), &miss_both);
        rates.record(RegionId(2), &hit_first);
        assert_eq!(rates.level(0), Some(0.5));
        assert_eq!(rates.level(1), Some(1.0));
        assert_eq!(rates.region(RegionId(1), 0), Some(1.0));
        assert_eq!(rates.region(RegionId(2), 0), Some(0.0));
        assert_eq!(rates.region(RegionId(2), 1), None);
        rates.record(RegionId(2), &hit_first);
        assert_eq!(rates.level(0), Some(0.0));
        assert_eq!(rates.region(RegionId(1), 0), Some(1.0));
    }
}
