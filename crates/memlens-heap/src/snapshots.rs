//! Choosing the snapshot times at which memory trees are computed.
//!
//! Four sources, as DESIGN §5.1 lists them: the user's marks, K evenly spaced points,
//! explicit times, and the timeline's peaks and dips. Every source yields a sorted list
//! of distinct times inside the run, or an error value that names the problem (zero
//! times, a time outside the run with the run's range, no marks). On a coalesced model
//! every time is moved to the latest instant at or before it at which the model is
//! exact, so a tree is always labelled with the instant it shows.

use crate::error::{HeapError, check_window};
use crate::extrema::peaks_and_dips;
use crate::model::{HeapModel, TimeWindow};
use crate::timeline::Resolution;

/// Where snapshot times come from.
#[derive(Debug, Clone, PartialEq)]
pub enum SnapshotTimes {
    /// Every mark inside the window.
    Marks,
    /// K evenly spaced points: `start + i·(end − start)/K` for `i = 1..=K`, so the last
    /// point is the window's end (where never-freed blocks are still live).
    Points(usize),
    /// These times (sorted and de-duplicated); each must lie inside the run.
    Explicit(Vec<u64>),
    /// The timeline's peaks and dips, found on `buckets` buckets with a prominence of at
    /// least `min_prominence` times the window's peak; the global peak is always included.
    PeaksAndDips {
        /// Timeline resolution used to find extrema.
        buckets: usize,
        /// Minimum prominence as a fraction of the peak (0.05 = 5 %).
        min_prominence: f64,
    },
}

impl SnapshotTimes {
    /// Peaks and dips with the default settings: 200 buckets, 5 % prominence.
    pub fn peaks_and_dips() -> Self {
        SnapshotTimes::PeaksAndDips {
            buckets: 200,
            min_prominence: 0.05,
        }
    }

    /// The sorted, distinct snapshot times inside `window` (the run when `None`).
    pub fn resolve(
        &self,
        model: &HeapModel,
        window: Option<TimeWindow>,
    ) -> Result<Vec<u64>, HeapError> {
        let run = model.run();
        let window = check_window(window, run)?;
        let mut times = match self {
            SnapshotTimes::Marks => {
                let times: Vec<u64> = model
                    .marks()
                    .iter()
                    .map(|m| m.t_ns)
                    .filter(|&t| window.contains(t))
                    .collect();
                if times.is_empty() {
                    return Err(HeapError::NoMarks { window });
                }
                times
            }
            SnapshotTimes::Points(0) => return Err(HeapError::NoSnapshotTimes),
            SnapshotTimes::Points(k) => {
                let k = *k as u128;
                let span = window.duration_ns() as u128;
                (1..=k)
                    .map(|i| window.start_ns + (span * i / k) as u64)
                    .collect()
            }
            SnapshotTimes::Explicit(times) => {
                if times.is_empty() {
                    return Err(HeapError::NoSnapshotTimes);
                }
                if let Some(&time_ns) = times.iter().find(|&&t| !run.contains(t)) {
                    return Err(HeapError::TimeOutsideRun { time_ns, run });
                }
                times.clone()
            }
            SnapshotTimes::PeaksAndDips {
                buckets,
                min_prominence,
            } => {
                let timeline =
                    model.timeline(Resolution::Points((*buckets).max(1)), Some(window))?;
                let threshold =
                    (timeline.peak.bytes as f64 * min_prominence.max(0.0)).ceil() as u64;
                // A dip to an empty heap (the start of the run) has a tree of zeros.
                let mut times: Vec<u64> = peaks_and_dips(&timeline, threshold)
                    .iter()
                    .filter(|e| e.bytes > 0)
                    .map(|e| e.time_ns)
                    .collect();
                times.push(timeline.peak.time_ns);
                times
            }
        };
        for t in &mut times {
            *t = model.exact_in(window, *t);
        }
        times.sort_unstable();
        times.dedup();
        Ok(times)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HeapModelBuilder;
    use crate::ids::StackId;
    use crate::model::AllocKind;

    #[test]
    fn peaks_and_dips_give_the_exact_extremum_times() {
        // 100 B from t = 100, a 1 ns spike of 1000 B at t = 503, then a dip to 0 at 700
        // and 400 B from t = 800 to the end.
        let mut b = HeapModelBuilder::new();
        b.start(0);
        b.alloc(100, 1, 0x10, 100, StackId::ROOT, AllocKind::Malloc);
        b.alloc(503, 1, 0x20, 1000, StackId::ROOT, AllocKind::Malloc);
        b.free(504, 1, 0x20);
        b.free(700, 1, 0x10);
        b.alloc(800, 1, 0x30, 400, StackId::ROOT, AllocKind::Malloc);
        let model = b.end(999);
        let rule = SnapshotTimes::PeaksAndDips {
            buckets: 10,
            min_prominence: 0.05,
        };
        let times = rule.resolve(&model, None).unwrap();
        assert!(times.contains(&503), "{times:?}");
        // The dips to an empty heap (at the start and at 700) would be trees of zeros.
        assert!(!times.contains(&700) && !times.contains(&0), "{times:?}");
    }
}
