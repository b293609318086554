//! The Firefox export's memory track: the bytes live after each event, downsampled so
//! that a long run stays a few hundred thousand points. Time is cut into intervals;
//! each interval with events gives its maximum (so every peak is drawn at its height and
//! instant) and, when it differs, the value it closes on (so the line returns to the
//! right level after a drop). The track starts at the export's first instant and ends
//! at its last with the value live then.

/// One point of the track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    /// ns since the process started.
    pub t_ns: u64,
    /// Bytes live.
    pub bytes: u64,
    /// Allocation-function calls since the previous point.
    pub ops: u32,
}

/// The points of a track, built one event at a time in time order.
#[derive(Debug)]
pub struct LiveTrack {
    interval_ns: u64,
    points: Vec<Point>,
    /// The interval being filled: its number, its maximum, the value it closes on (each
    /// with its instant) and the calls in it.
    open: Option<Interval>,
}

#[derive(Debug, Clone, Copy)]
struct Interval {
    number: u64,
    max: (u64, u64),
    close: (u64, u64),
    ops: u32,
}

impl LiveTrack {
    /// An empty track of intervals of `interval_ns` (at least 1), starting at `t_ns` with
    /// `bytes` live.
    pub fn new(interval_ns: u64, t_ns: u64, bytes: u64) -> LiveTrack {
        LiveTrack {
            interval_ns: interval_ns.max(1),
            points: vec![Point {
                t_ns,
                bytes,
                ops: 0,
            }],
            open: None,
        }
    }

    /// The interval that keeps a track of `span_ns` under about `max_points` points, and
    /// never under `min_ns`.
    pub fn interval_for(span_ns: u64, max_points: u64, min_ns: u64) -> u64 {
        (span_ns / max_points.max(1)).max(min_ns).max(1)
    }

    /// Records that `bytes` were live after one call at `t_ns` (not before the previous).
    pub fn record(&mut self, t_ns: u64, bytes: u64) {
        let number = t_ns / self.interval_ns;
        match &mut self.open {
            Some(open) if open.number == number => {
                if bytes > open.max.1 {
                    open.max = (t_ns, bytes);
                }
                open.close = (t_ns, bytes);
                open.ops = open.ops.saturating_add(1);
            }
            _ => {
                self.flush();
                self.open = Some(Interval {
                    number,
                    max: (t_ns, bytes),
                    close: (t_ns, bytes),
                    ops: 1,
                });
            }
        }
    }

    /// The points, the last at `end_ns` (when after every event) with the value live then.
    pub fn finish(mut self, end_ns: u64) -> Vec<Point> {
        self.flush();
        let last = *self.points.last().expect("a track starts with a point");
        if end_ns > last.t_ns {
            self.points.push(Point {
                t_ns: end_ns,
                bytes: last.bytes,
                ops: 0,
            });
        }
        self.points
    }

    fn flush(&mut self) {
        if let Some(open) = self.open.take() {
            self.points.push(Point {
                t_ns: open.max.0,
                bytes: open.max.1,
                ops: open.ops,
            });
            if open.close != open.max {
                self.points.push(Point {
                    t_ns: open.close.0,
                    bytes: open.close.1,
                    ops: 0,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_interval_keeps_its_peak_and_its_closing_value() {
        let mut track = LiveTrack::new(100, 0, 0);
        for (t, bytes) in [(10, 50), (20, 80), (30, 40), (150, 60), (160, 70), (420, 0)] {
            track.record(t, bytes);
        }
        let points: Vec<(u64, u64, u32)> = track
            .finish(1000)
            .iter()
            .map(|p| (p.t_ns, p.bytes, p.ops))
            .collect();
        assert_eq!(
            points,
            vec![
                (0, 0, 0),
                (20, 80, 3),
                (30, 40, 0),
                (160, 70, 2),
                (420, 0, 1),
                (1000, 0, 0),
            ]
        );
    }

    #[test]
    fn the_interval_bounds_the_number_of_points() {
        assert_eq!(
            LiveTrack::interval_for(1_000_000_000, 100_000, 100_000),
            100_000
        );
        assert_eq!(
            LiveTrack::interval_for(100_000_000_000, 100_000, 100_000),
            1_000_000
        );
        assert_eq!(LiveTrack::interval_for(0, 0, 0), 1);
        let mut track = LiveTrack::new(LiveTrack::interval_for(1_000_000, 10, 1), 0, 0);
        for t in 0..1_000_000u64 {
            track.record(t, t % 7);
        }
        assert!(track.finish(1_000_000).len() <= 1 + 2 * 10 + 1);
    }
}
