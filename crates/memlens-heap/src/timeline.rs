//! Heap bytes and object count over time, at any resolution, without losing peaks.
//!
//! The live heap is a step function: its value at `t` is the state after *all* events
//! with a timestamp `<= t` (events sharing a timestamp are applied together, so a free
//! and an allocation at the same nanosecond never show a transient spike). A
//! [`Timeline`] cuts a window of it into buckets and keeps, per bucket, the minimum, the
//! maximum (each with the exact time it was first reached) and the last value, so a
//! short spike inside a wide bucket still shows as that bucket's maximum. The window's
//! global peak is reported exactly.
//!
//! A query replays the model in one merge of three already time-ordered streams
//! (allocations, size changes, frees): O(N) time, O(buckets) memory.

use crate::error::{HeapError, MAX_TIMELINE_BUCKETS, check_window};
use crate::ids::AllocId;
use crate::model::{HeapModel, NEVER_FREED, TimeWindow};

/// How finely to cut the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// This many equal buckets (fewer if the window has fewer nanoseconds).
    Points(usize),
    /// Buckets of this many nanoseconds (the last one may be shorter).
    BucketNs(u64),
}

/// One bucket of the timeline. All values describe live memory inside
/// `[start_ns, end_ns]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimelineBucket {
    /// First nanosecond of the bucket.
    pub start_ns: u64,
    /// Last nanosecond of the bucket.
    pub end_ns: u64,
    /// Smallest live byte count in the bucket.
    pub min_bytes: u64,
    /// When `min_bytes` was first reached.
    pub min_bytes_at_ns: u64,
    /// Largest live byte count in the bucket.
    pub max_bytes: u64,
    /// When `max_bytes` was first reached.
    pub max_bytes_at_ns: u64,
    /// Live bytes at the end of the bucket.
    pub last_bytes: u64,
    /// Smallest live object count in the bucket.
    pub min_objects: u64,
    /// Largest live object count in the bucket.
    pub max_objects: u64,
    /// Live objects at the end of the bucket.
    pub last_objects: u64,
}

/// A point of the live-heap curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeapPoint {
    /// When.
    pub time_ns: u64,
    /// Live bytes then.
    pub bytes: u64,
    /// Live objects then.
    pub objects: u64,
}

/// The live heap over a window, in buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// The window the buckets cover, in order and without gaps.
    pub window: TimeWindow,
    /// The buckets.
    pub buckets: Vec<TimelineBucket>,
    /// The highest byte count in the window and the first time it was reached.
    pub peak: HeapPoint,
}

impl HeapModel {
    /// The live heap over `window` (the whole run when `None`) at `resolution`.
    pub fn timeline(
        &self,
        resolution: Resolution,
        window: Option<TimeWindow>,
    ) -> Result<Timeline, HeapError> {
        let window = check_window(window, self.run())?;
        let span = window.duration_ns() as u128 + 1;
        let n = match resolution {
            Resolution::Points(0) | Resolution::BucketNs(0) => {
                return Err(HeapError::ZeroResolution);
            }
            Resolution::Points(n) => (n as u128).min(span),
            Resolution::BucketNs(ns) => span.div_ceil(ns as u128),
        };
        if n > MAX_TIMELINE_BUCKETS {
            return Err(HeapError::TooManyBuckets { buckets: n });
        }
        let n = n as usize;
        let width = |i: usize| -> u64 {
            match resolution {
                Resolution::Points(_) => (i as u128 * span).div_ceil(n as u128) as u64,
                Resolution::BucketNs(ns) => (i as u64).saturating_mul(ns),
            }
        };
        let bucket_of = |t: u64| -> usize {
            let offset = (t - window.start_ns) as u128;
            match resolution {
                Resolution::Points(_) => (offset * n as u128 / span) as usize,
                Resolution::BucketNs(ns) => (offset / ns as u128) as usize,
            }
        };
        let mut buckets: Vec<TimelineBucket> = (0..n)
            .map(|i| TimelineBucket {
                start_ns: window.start_ns + width(i),
                end_ns: (window.start_ns + width(i + 1))
                    .saturating_sub(1)
                    .min(window.end_ns),
                ..TimelineBucket::default()
            })
            .collect();

        let mut changes = HeapChanges::new(self);
        let mut live = HeapPoint {
            time_ns: window.start_ns,
            bytes: 0,
            objects: 0,
        };
        let mut peak: Option<HeapPoint> = None;
        let mut current = 0usize;
        // Whether the value carried into `current` from before its start still has to be
        // counted (it is not if an event group falls exactly on the bucket's start).
        let mut carry_pending = true;
        while let Some((t, bytes, objects)) = changes.next_group() {
            if t > window.end_ns {
                break;
            }
            if t >= window.start_ns {
                let b = bucket_of(t);
                while current < b {
                    if carry_pending {
                        carry_in(&mut buckets[current], live);
                    }
                    current += 1;
                    carry_pending = true;
                }
                if carry_pending && t > buckets[current].start_ns {
                    carry_in(&mut buckets[current], live);
                }
                let first = carry_pending && t == buckets[current].start_ns;
                carry_pending = false;
                live = HeapPoint {
                    time_ns: t,
                    bytes,
                    objects,
                };
                include(&mut buckets[current], live, t, first);
                if peak.is_none_or(|p| bytes > p.bytes) {
                    peak = Some(live);
                }
            } else {
                live = HeapPoint {
                    time_ns: t,
                    bytes,
                    objects,
                };
            }
        }
        for (i, bucket) in buckets.iter_mut().enumerate().skip(current) {
            if i > current || carry_pending {
                carry_in(bucket, live);
            }
        }
        let start_value = HeapPoint {
            time_ns: window.start_ns,
            ..live
        };
        let peak = match peak {
            Some(p) => p,
            None => start_value,
        };
        // The value carried in at the window's start can itself be the peak.
        let carried = buckets.first().map(|b| (b.max_bytes, b.max_bytes_at_ns));
        let peak = match carried {
            Some((bytes, at)) if bytes > peak.bytes => HeapPoint {
                time_ns: at,
                bytes,
                objects: buckets[0].max_objects,
            },
            _ => peak,
        };
        Ok(Timeline {
            window,
            buckets,
            peak,
        })
    }
}

/// Starts `bucket` with the value `p` carried in from before its start.
fn carry_in(bucket: &mut TimelineBucket, p: HeapPoint) {
    let at = bucket.start_ns;
    include(bucket, p, at, true);
}

/// Adds the value `p`, which holds from time `at`, to `bucket`. `first` says whether it
/// is the bucket's first value (which initialises the minimum and maximum).
fn include(bucket: &mut TimelineBucket, p: HeapPoint, at: u64, first: bool) {
    if first || p.bytes > bucket.max_bytes {
        bucket.max_bytes = p.bytes;
        bucket.max_bytes_at_ns = at;
    }
    if first || p.bytes < bucket.min_bytes {
        bucket.min_bytes = p.bytes;
        bucket.min_bytes_at_ns = at;
    }
    if first {
        bucket.max_objects = p.objects;
        bucket.min_objects = p.objects;
    } else {
        bucket.max_objects = bucket.max_objects.max(p.objects);
        bucket.min_objects = bucket.min_objects.min(p.objects);
    }
    bucket.last_bytes = p.bytes;
    bucket.last_objects = p.objects;
}

/// The model's heap changes in time order, summed per timestamp.
pub(crate) struct HeapChanges<'m> {
    model: &'m HeapModel,
    next_alloc: usize,
    next_resize: usize,
    next_free: usize,
    bytes: u64,
    objects: u64,
}

impl<'m> HeapChanges<'m> {
    pub(crate) fn new(model: &'m HeapModel) -> Self {
        HeapChanges {
            model,
            next_alloc: 0,
            next_resize: 0,
            next_free: 0,
            bytes: 0,
            objects: 0,
        }
    }

    /// Applies every change of the next timestamp and returns that timestamp with the
    /// live bytes and objects after it.
    pub(crate) fn next_group(&mut self) -> Option<(u64, u64, u64)> {
        let m = self.model;
        let alloc_t = m
            .t_alloc
            .get(self.next_alloc)
            .copied()
            .unwrap_or(NEVER_FREED);
        let resize_t = m
            .resizes
            .t_ns
            .get(self.next_resize)
            .copied()
            .unwrap_or(NEVER_FREED);
        let free_t = self
            .model
            .free_order
            .get(self.next_free)
            .map_or(NEVER_FREED, |&a| m.t_free(a));
        let t = alloc_t.min(resize_t).min(free_t);
        if t == NEVER_FREED {
            return None;
        }
        while m.t_alloc.get(self.next_alloc) == Some(&t) {
            self.bytes += m.size[self.next_alloc];
            self.objects += m.objects_of(AllocId(self.next_alloc as u32));
            self.next_alloc += 1;
        }
        while m.resizes.t_ns.get(self.next_resize) == Some(&t) {
            let r = self.next_resize;
            self.bytes = self.bytes + m.resizes.new_size[r] - m.resizes.old_size[r];
            self.next_resize += 1;
        }
        while let Some(&a) = m.free_order.get(self.next_free) {
            if m.t_free(a) != t {
                break;
            }
            self.bytes -= m.final_size(a);
            self.objects -= m.objects_of(a);
            self.next_free += 1;
        }
        Some((t, self.bytes, self.objects))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HeapModelBuilder;
    use crate::ids::StackId;
    use crate::model::AllocKind;

    /// A heap with a 1 ns spike of 1000 bytes at t = 503 on a base of 10 bytes.
    fn spiky() -> HeapModel {
        let mut b = HeapModelBuilder::new();
        b.start(0);
        b.alloc(100, 1, 0x10, 10, StackId::ROOT, AllocKind::Malloc);
        b.alloc(503, 1, 0x20, 1000, StackId::ROOT, AllocKind::Malloc);
        b.free(504, 1, 0x20);
        b.alloc(700, 1, 0x30, 50, StackId::ROOT, AllocKind::Malloc);
        b.realloc(800, 1, 0x30, 0x30, 70, StackId::ROOT);
        b.free(900, 1, 0x30);
        b.end(999)
    }

    #[test]
    fn coarse_buckets_keep_the_exact_peak() {
        let model = spiky();
        let t = model.timeline(Resolution::Points(4), None).unwrap();
        assert_eq!(t.buckets.len(), 4);
        assert_eq!(
            t.peak,
            HeapPoint {
                time_ns: 503,
                bytes: 1010,
                objects: 2
            }
        );
        let b = t.buckets[2];
        assert_eq!((b.start_ns, b.end_ns), (500, 749));
        assert_eq!(
            (b.min_bytes, b.max_bytes, b.max_bytes_at_ns, b.last_bytes),
            (10, 1010, 503, 60)
        );
        assert_eq!((b.min_objects, b.max_objects, b.last_objects), (1, 2, 2));
        let b = t.buckets[3];
        assert_eq!(
            (b.min_bytes, b.max_bytes, b.max_bytes_at_ns, b.last_bytes),
            (10, 80, 800, 10)
        );
        assert_eq!(t.buckets[0].min_bytes, 0);
        assert_eq!(t.buckets[0].max_bytes, 10);
        assert_eq!(t.peak.bytes, model.stats().peak_bytes);
    }

    #[test]
    fn window_and_bucket_width() {
        let model = spiky();
        let window = TimeWindow {
            start_ns: 600,
            end_ns: 899,
        };
        let t = model
            .timeline(Resolution::BucketNs(100), Some(window))
            .unwrap();
        assert_eq!(t.buckets.len(), 3);
        assert_eq!(
            t.buckets[0].min_bytes, 10,
            "the value carried into the window"
        );
        assert_eq!(
            t.peak,
            HeapPoint {
                time_ns: 800,
                bytes: 80,
                objects: 2
            }
        );
        assert_eq!(
            model.timeline(Resolution::Points(0), None),
            Err(HeapError::ZeroResolution)
        );
        let mut b = HeapModelBuilder::new();
        b.start(0);
        let huge = b.end(u64::MAX / 2);
        assert!(matches!(
            huge.timeline(Resolution::BucketNs(1), None),
            Err(HeapError::TooManyBuckets { .. })
        ));
        let outside = TimeWindow {
            start_ns: 0,
            end_ns: 5_000,
        };
        assert!(matches!(
            model.timeline(Resolution::Points(3), Some(outside)),
            Err(HeapError::InvalidWindow { .. })
        ));
    }

    #[test]
    fn fine_buckets_match_a_direct_replay() {
        let model = spiky();
        let t = model.timeline(Resolution::Points(1000), None).unwrap();
        assert_eq!(t.buckets.len(), 1000);
        for bucket in &t.buckets {
            let time = bucket.start_ns;
            let live: u64 = (0..model.len() as u32)
                .map(crate::ids::AllocId)
                .filter(|&a| model.is_live_at(a, time))
                .map(|a| model.size_at(a, time))
                .sum();
            assert_eq!(bucket.last_bytes, live, "at {time}");
        }
    }
}
