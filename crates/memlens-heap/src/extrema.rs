//! Peaks and dips of the timeline, filtered by topographic prominence.
//!
//! A peak is a bucket (or a run of equal buckets) whose maximum is higher than the
//! neighbouring buckets' maxima. Its *prominence* is how far the heap must fall before it
//! can climb to a higher peak: on each side we take the lowest bucket minimum between the
//! peak and the nearest strictly higher bucket maximum (or the window's edge), and the
//! prominence is the peak's height minus the higher of the two lows. Dips mirror this
//! with minima and maxima swapped. Working on bucket minima and maxima means a spike
//! narrower than a bucket is still seen. Each extremum carries the exact time at which
//! its bucket reached the value, so a tree taken at that time shows exactly that heap.

use crate::timeline::{Timeline, TimelineBucket};

/// Whether an extremum is a local maximum or minimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtremumKind {
    /// A local maximum of live bytes.
    Peak,
    /// A local minimum of live bytes.
    Dip,
}

/// A local extremum of live bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extremum {
    /// Peak or dip.
    pub kind: ExtremumKind,
    /// The exact time the value was reached.
    pub time_ns: u64,
    /// Live bytes at that time.
    pub bytes: u64,
    /// The topographic prominence in bytes (see the module documentation).
    pub prominence_bytes: u64,
}

/// The peaks and dips of `timeline` whose prominence is at least `min_prominence_bytes`,
/// in time order. A flat timeline has none.
pub fn peaks_and_dips(timeline: &Timeline, min_prominence_bytes: u64) -> Vec<Extremum> {
    let buckets = &timeline.buckets;
    let high: Vec<u64> = buckets.iter().map(|b| b.max_bytes).collect();
    let low: Vec<u64> = buckets.iter().map(|b| b.min_bytes).collect();
    let mut found = Vec::new();
    // Peaks: maxima of `high`, bases from `low`.
    for (i, prominence) in extrema(&high, &low, |a, b| a > b) {
        found.push(extremum(ExtremumKind::Peak, &buckets[i], prominence));
    }
    // Dips: the same on the mirrored curve.
    for (i, prominence) in extrema(&low, &high, |a, b| a < b) {
        found.push(extremum(ExtremumKind::Dip, &buckets[i], prominence));
    }
    found.retain(|e| e.prominence_bytes >= min_prominence_bytes.max(1));
    found.sort_by_key(|e| (e.time_ns, e.kind == ExtremumKind::Dip));
    found
}

fn extremum(kind: ExtremumKind, bucket: &TimelineBucket, prominence_bytes: u64) -> Extremum {
    let (time_ns, bytes) = match kind {
        ExtremumKind::Peak => (bucket.max_bytes_at_ns, bucket.max_bytes),
        ExtremumKind::Dip => (bucket.min_bytes_at_ns, bucket.min_bytes),
    };
    Extremum {
        kind,
        time_ns,
        bytes,
        prominence_bytes,
    }
}

/// Finds the local extrema of `series` (where `beyond(a, b)` means "a is more extreme
/// than b") and their prominence measured against `opposite`, the other bound of each
/// bucket. Returns `(index of the first bucket of the plateau, prominence)`.
///
/// Ties are broken towards the earlier extremum: scanning left stops at an *equally*
/// extreme bucket, scanning right only at a *more* extreme one, so of two equal peaks the
/// first gets the full prominence. A side that is the window's edge does not count.
fn extrema(
    series: &[u64],
    opposite: &[u64],
    beyond: impl Fn(u64, u64) -> bool,
) -> Vec<(usize, u64)> {
    let n = series.len();
    // The opposite bound that is "least extreme" in the series' direction.
    let least =
        |acc: Option<u64>, o: u64| Some(acc.map_or(o, |a| if beyond(a, o) { o } else { a }));
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let v = series[i];
        let mut j = i;
        while j + 1 < n && series[j + 1] == v {
            j += 1;
        }
        let left_ok = i == 0 || beyond(v, series[i - 1]);
        let right_ok = j + 1 == n || beyond(v, series[j + 1]);
        if left_ok && right_ok {
            let own = opposite[i..=j].iter().fold(None, |acc, &o| least(acc, o));
            let mut left = None;
            if i > 0 {
                left = own;
                for k in (0..i).rev() {
                    if !beyond(v, series[k]) {
                        break;
                    }
                    left = least(left, opposite[k]);
                }
            }
            let mut right = None;
            if j + 1 < n {
                right = own;
                for k in j + 1..n {
                    if beyond(series[k], v) {
                        break;
                    }
                    right = least(right, opposite[k]);
                }
            }
            // The base is the side whose least extreme value is closer to `v`.
            let base = match (left, right) {
                (Some(l), Some(r)) => Some(if beyond(l, r) { l } else { r }),
                (l, r) => l.or(r).or(own),
            };
            out.push((i, v.abs_diff(base.unwrap_or(v))));
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TimeWindow;
    use crate::timeline::HeapPoint;

    fn timeline(values: &[u64]) -> Timeline {
        let buckets = values
            .iter()
            .enumerate()
            .map(|(i, &v)| TimelineBucket {
                start_ns: i as u64 * 10,
                end_ns: i as u64 * 10 + 9,
                min_bytes: v,
                min_bytes_at_ns: i as u64 * 10 + 1,
                max_bytes: v,
                max_bytes_at_ns: i as u64 * 10 + 2,
                last_bytes: v,
                ..TimelineBucket::default()
            })
            .collect();
        Timeline {
            window: TimeWindow {
                start_ns: 0,
                end_ns: values.len() as u64 * 10 - 1,
            },
            buckets,
            peak: HeapPoint::default(),
        }
    }

    #[test]
    fn prominence_ignores_small_wiggles() {
        // 0 10 2 3 2 100 0: the wiggle at 3 has prominence 1, the 10 has 8, 100 has 100.
        let t = timeline(&[0, 10, 2, 3, 2, 100, 0]);
        let all = peaks_and_dips(&t, 1);
        let peaks: Vec<(u64, u64)> = all
            .iter()
            .filter(|e| e.kind == ExtremumKind::Peak)
            .map(|e| (e.bytes, e.prominence_bytes))
            .collect();
        assert_eq!(peaks, vec![(10, 8), (3, 1), (100, 100)]);
        let big = peaks_and_dips(&t, 5);
        let kinds: Vec<(ExtremumKind, u64)> = big.iter().map(|e| (e.kind, e.bytes)).collect();
        assert_eq!(
            kinds,
            vec![
                (ExtremumKind::Dip, 0),
                (ExtremumKind::Peak, 10),
                (ExtremumKind::Dip, 2),
                (ExtremumKind::Peak, 100),
                (ExtremumKind::Dip, 0)
            ]
        );
        assert_eq!(
            big[3].time_ns, 52,
            "the peak carries its bucket's exact time"
        );
    }

    #[test]
    fn flat_timeline_has_no_extrema() {
        assert!(peaks_and_dips(&timeline(&[5, 5, 5]), 1).is_empty());
    }
}
