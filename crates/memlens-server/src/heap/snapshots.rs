//! The viewer's snapshot times: the points of the timeline that the user steps through
//! and clicks, each with the reason it was chosen.
//!
//! DESIGN §5.1 names the sources: evenly spaced points, the user's marks, and the
//! timeline's peaks and dips. The run's start is always included, so that every series
//! the engine builds spans the whole window: the meta tree then compares the same first
//! and last trees however many times a user adds, and the stable order never changes
//! under the user's feet.

use memlens_heap::{
    ExtremumKind, HeapModel, Resolution, SnapshotTimes, TimeWindow, peaks_and_dips,
};

/// At most this many marks become snapshot times (evenly picked when there are more).
const MAX_MARK_SNAPSHOTS: usize = 32;
/// At most this many peaks and dips, the most prominent first.
const MAX_EXTREMA: usize = 8;
/// Peaks and dips must rise or fall by at least this share of the peak heap.
const MIN_PROMINENCE: f64 = 0.1;
/// The timeline resolution on which extrema are found.
const EXTREMA_BUCKETS: usize = 200;

/// Why a snapshot time was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SnapshotKind {
    /// One of the evenly spaced points.
    Point,
    /// A local minimum of the heap.
    Dip,
    /// A local maximum of the heap (or the global peak).
    Peak,
    /// A mark placed by the program.
    Mark,
    /// The start of the window.
    Start,
}

impl SnapshotKind {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            SnapshotKind::Point => "point",
            SnapshotKind::Start => "start",
            SnapshotKind::Dip => "dip",
            SnapshotKind::Peak => "peak",
            SnapshotKind::Mark => "mark",
        }
    }
}

/// One snapshot time of the viewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The trace time.
    pub time_ns: u64,
    /// Why it was chosen; when several reasons meet at one time, the most specific.
    pub kind: SnapshotKind,
    /// A short label: the mark's name, `peak`, `dip`, `start` or empty for points.
    pub label: String,
}

/// Whether `points` evenly spaced snapshot points can be asked for (1 to 500); else
/// the sentence saying so.
pub fn check_points(points: usize) -> Result<(), String> {
    if (1..=500).contains(&points) {
        return Ok(());
    }
    Err(format!(
        "`--points {points}` is out of range: ask for 1 to 500 snapshot points"
    ))
}

/// The snapshot times of `model` within `window` (the whole run when `None`) with
/// `points` evenly spaced points: sorted, distinct, inside the window, its start first
/// and its end last.
pub fn snapshot_plan(
    model: &HeapModel,
    points: usize,
    window: Option<TimeWindow>,
) -> Vec<Snapshot> {
    let run = window.unwrap_or(model.run());
    let mut plan = vec![Snapshot {
        time_ns: run.start_ns,
        kind: SnapshotKind::Start,
        label: if window.is_some() {
            "window start"
        } else {
            "start"
        }
        .to_owned(),
    }];
    if let Ok(times) = SnapshotTimes::Points(points.max(1)).resolve(model, window) {
        plan.extend(times.into_iter().map(|time_ns| Snapshot {
            time_ns,
            kind: SnapshotKind::Point,
            label: String::new(),
        }));
    }
    let marks: Vec<_> = model
        .marks()
        .iter()
        .filter(|m| run.contains(m.t_ns))
        .collect();
    let stride = marks.len().div_ceil(MAX_MARK_SNAPSHOTS).max(1);
    plan.extend(marks.iter().step_by(stride).map(|mark| Snapshot {
        time_ns: mark.t_ns,
        kind: SnapshotKind::Mark,
        label: model.context().strings.get(mark.name).to_owned(),
    }));
    if let Ok(timeline) = model.timeline(Resolution::Points(EXTREMA_BUCKETS), window) {
        let threshold = (timeline.peak.bytes as f64 * MIN_PROMINENCE).ceil() as u64;
        let mut extrema = peaks_and_dips(&timeline, threshold);
        extrema.sort_by_key(|e| std::cmp::Reverse(e.prominence_bytes));
        extrema.truncate(MAX_EXTREMA);
        plan.extend(extrema.into_iter().map(|e| {
            let (kind, label) = match e.kind {
                ExtremumKind::Peak => (SnapshotKind::Peak, "peak"),
                ExtremumKind::Dip => (SnapshotKind::Dip, "dip"),
            };
            Snapshot {
                time_ns: e.time_ns,
                kind,
                label: label.to_owned(),
            }
        }));
        if timeline.peak.bytes > 0 {
            plan.push(Snapshot {
                time_ns: timeline.peak.time_ns,
                kind: SnapshotKind::Peak,
                label: "peak".to_owned(),
            });
        }
    }
    plan.retain(|s| run.contains(s.time_ns));
    // One entry per time, keeping the most specific reason.
    plan.sort_by(|a, b| a.time_ns.cmp(&b.time_ns).then(b.kind.cmp(&a.kind)));
    plan.dedup_by_key(|s| s.time_ns);
    if let Some(last) = plan
        .last_mut()
        .filter(|s| window.is_some() && s.kind == SnapshotKind::Point)
    {
        last.label = "window end".to_owned();
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use memlens_heap::{AllocKind, HeapModelBuilder, StackId};

    #[test]
    fn plan_has_start_points_marks_and_the_peak() {
        let mut b = HeapModelBuilder::new();
        b.start(0);
        b.alloc(100, 1, 0x10, 100, StackId::ROOT, AllocKind::Malloc);
        b.mark(300, "phase 2");
        b.alloc(450, 1, 0x20, 5000, StackId::ROOT, AllocKind::Malloc);
        b.free(460, 1, 0x20);
        let model = b.end(1000);
        let plan = snapshot_plan(&model, 4, None);
        let times: Vec<u64> = plan.iter().map(|s| s.time_ns).collect();
        assert_eq!(plan[0].kind, SnapshotKind::Start);
        for t in [0, 250, 300, 450, 460, 500, 750, 1000] {
            assert!(times.contains(&t), "{t} missing from {times:?}");
        }
        assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
        let mark = plan.iter().find(|s| s.time_ns == 300).unwrap();
        assert_eq!(
            (mark.kind, mark.label.as_str()),
            (SnapshotKind::Mark, "phase 2")
        );
        let peak = plan.iter().find(|s| s.time_ns == 450).unwrap();
        assert_eq!(peak.kind, SnapshotKind::Peak);
    }

    #[test]
    fn a_window_plan_stays_inside_it_from_its_start_to_its_end() {
        let mut b = HeapModelBuilder::new();
        b.start(0);
        b.alloc(100, 1, 0x10, 100, StackId::ROOT, AllocKind::Malloc);
        b.mark(300, "phase 2");
        b.alloc(450, 1, 0x20, 5000, StackId::ROOT, AllocKind::Malloc);
        b.free(460, 1, 0x20);
        b.mark(700, "phase 3");
        let model = b.end(1000);
        let window = TimeWindow {
            start_ns: 200,
            end_ns: 600,
        };
        let plan = snapshot_plan(&model, 4, Some(window));
        let times: Vec<u64> = plan.iter().map(|s| s.time_ns).collect();
        assert_eq!((times[0], *times.last().unwrap()), (200, 600), "{times:?}");
        assert!(times.iter().all(|&t| window.contains(t)), "{times:?}");
        for t in [300, 450] {
            assert!(times.contains(&t), "{t} missing from {times:?}");
        }
        assert_eq!(plan[0].label, "window start");
        assert_eq!(plan.last().unwrap().label, "window end");
    }
}
