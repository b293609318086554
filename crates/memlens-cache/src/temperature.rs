//! Cache temperature, exactly as the paper defines it.
//!
//! "Each reference trace record causes a change in the cache: each level may either
//! hit, miss, or else be uninvolved in the transaction. These are assigned scores (a
//! negative value for a miss, a positive value for a hit, and zero for
//! noninvolvement) which are averaged over the last N reference trace records. The
//! assigned scores may vary for different levels; … the penalty for a miss is higher
//! for the L1 cache." (Choudhury & Rosen, §IV-D.)
//!
//! So a level's temperature is `(hits × hit_score − misses × miss_penalty) / N` over
//! the last N references (or over all of them while fewer than N were seen). A level
//! left idle sees its window fill with zeros and drifts back to 0 on its own.

use crate::events::EventSink;
use crate::outcome::Outcome;
use crate::reference::Reference;
use crate::window::OutcomeWindow;

/// One level's scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TemperatureWeights {
    /// The score of a hit (positive).
    pub hit: f64,
    /// The penalty of a miss, as a positive number (it is subtracted).
    pub miss: f64,
}

/// How temperature is computed for a hierarchy.
#[derive(Clone, Debug, PartialEq)]
pub struct TemperatureConfig {
    /// N, the number of most recent references averaged over.
    pub window: usize,
    /// One entry per level, first level first.
    pub weights: Vec<TemperatureWeights>,
}

impl TemperatureConfig {
    /// The defaults used by the viewer: N = 256, hits score +1 at every level, misses
    /// cost 2 at the first level and 1 below it (the paper's "higher penalty for L1").
    pub fn standard(levels: usize) -> TemperatureConfig {
        TemperatureConfig {
            window: 256,
            weights: (0..levels)
                .map(|level| TemperatureWeights {
                    hit: 1.0,
                    miss: if level == 0 { 2.0 } else { 1.0 },
                })
                .collect(),
        }
    }
}

/// The temperature of every level, updated one reference at a time.
#[derive(Clone, Debug)]
pub struct Temperature {
    weights: Vec<TemperatureWeights>,
    windows: Vec<OutcomeWindow>,
}

impl Temperature {
    /// Starts every level at temperature 0.
    pub fn new(config: &TemperatureConfig) -> Temperature {
        Temperature {
            weights: config.weights.clone(),
            windows: config
                .weights
                .iter()
                .map(|_| OutcomeWindow::new(config.window))
                .collect(),
        }
    }

    /// Scores one reference's outcome.
    #[inline]
    pub fn record(&mut self, outcome: &Outcome) {
        for (level, window) in self.windows.iter_mut().enumerate() {
            window.push(outcome.involvement(level));
        }
    }

    /// Returns a level's temperature: the average score over the last N references.
    pub fn value(&self, level: usize) -> f64 {
        let (Some(window), Some(weights)) = (self.windows.get(level), self.weights.get(level))
        else {
            return 0.0;
        };
        if window.is_empty() {
            return 0.0;
        }
        let score =
            f64::from(window.hits()) * weights.hit - f64::from(window.misses()) * weights.miss;
        score / window.len() as f64
    }

    /// Returns the temperature scaled to [-1, 1] by the level's largest weight, ready
    /// for a diverging colormap (blue for cold, white for neutral, red for warm).
    pub fn normalized(&self, level: usize) -> f64 {
        let scale = self
            .weights
            .get(level)
            .map_or(1.0, |w| w.hit.abs().max(w.miss.abs()));
        if scale == 0.0 {
            0.0
        } else {
            (self.value(level) / scale).clamp(-1.0, 1.0)
        }
    }
}

impl EventSink for Temperature {
    const WANTS_EVENTS: bool = false;

    #[inline]
    fn end_reference(&mut self, _reference: &Reference, outcome: &Outcome) {
        self.record(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(hit: u16, missed: u16) -> Outcome {
        Outcome {
            served_by: 0,
            hit,
            missed,
        }
    }

    #[test]
    fn hits_raise_misses_lower_and_idleness_drifts_to_zero() {
        let config = TemperatureConfig {
            window: 4,
            weights: vec![
                TemperatureWeights {
                    hit: 1.0,
                    miss: 2.0,
                },
                TemperatureWeights {
                    hit: 1.0,
                    miss: 1.0,
                },
            ],
        };
        let mut t = Temperature::new(&config);
        assert_eq!(t.value(0), 0.0);
        t.record(&outcome(0, 0b01));
        assert_eq!(t.value(0), -2.0);
        for _ in 0..4 {
            t.record(&outcome(0b01, 0));
        }
        assert_eq!(t.value(0), 1.0, "four hits fill the window");
        assert_eq!(t.value(1), 0.0, "level 2 stayed idle");
        t.record(&outcome(0b01, 0b10));
        assert_eq!(t.value(1), -0.25);
        let before = t.value(1);
        t.record(&outcome(0b01, 0));
        assert_eq!(
            t.value(1),
            before,
            "idle references keep the level's score while it is in the window"
        );
        for _ in 0..4 {
            t.record(&outcome(0, 0));
        }
        assert_eq!(
            (t.value(0), t.value(1)),
            (0.0, 0.0),
            "idle levels drift back to zero"
        );
    }

    #[test]
    fn misses_cost_more_on_the_first_level_by_default() {
        let mut t = Temperature::new(&TemperatureConfig::standard(2));
        t.record(&outcome(0, 0b11));
        assert!(t.value(0) < t.value(1));
        assert_eq!(t.normalized(0), -1.0);
        assert_eq!(t.normalized(1), -1.0);
    }
}
