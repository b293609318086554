//! Converting raw timestamps (TSC ticks) to nanoseconds since start.
//!
//! The map is piecewise linear, continuous and monotonic: each
//! recalibration starts a new segment at the current tick with the current
//! nanosecond value, so an event converted later never lands before one
//! converted earlier. Recalibration happens whenever the elapsed time has
//! doubled (about 20 segments over a day), so the rate error shrinks to a
//! few parts per million within the first seconds. The first segment's rate
//! comes from a second pair of readings taken at least 100 µs after the
//! first, as the writer starts (`TickConverter::start`): its error is a few
//! parts in 10^4, so the first milliseconds of a run, all of a short one,
//! are not stretched by a guess.

/// Converts raw clock values to nanoseconds since the recorder started.
pub struct TickConverter {
    tsc: bool,
    raw0: u64,
    mono0: u64,
    /// (raw start, ns start, ns per tick as 32.32 fixed point)
    segments: Vec<(u64, u64, u64)>,
    /// The newest segment, kept apart as well: almost every conversion uses
    /// it, and then reads it without going through the vector.
    last: (u64, u64, u64),
    next_calibration_ns: u64,
}

/// The shortest span from which the first segment's rate is measured.
const FIRST_SPAN_NS: u64 = 100_000;

impl TickConverter {
    /// Starts from a simultaneous reading of both clocks, assuming 1 GHz until
    /// the first calibration.
    pub fn new(tsc: bool, raw0: u64, mono0: u64) -> Self {
        TickConverter {
            tsc,
            raw0,
            mono0,
            segments: vec![(raw0, 0, 1 << 32)],
            last: (raw0, 0, 1 << 32),
            next_calibration_ns: 2_000_000,
        }
    }

    /// [`TickConverter::new`], with the first segment's rate measured from a
    /// second pair of readings (`read`: raw, monotonic ns), taken at least
    /// [`FIRST_SPAN_NS`] after the first (waiting for it when the start-up has
    /// not lasted that long).
    pub fn start(tsc: bool, raw0: u64, mono0: u64, read: impl Fn() -> (u64, u64)) -> Self {
        let mut c = TickConverter::new(tsc, raw0, mono0);
        if !tsc {
            return c;
        }
        let (raw1, mono1) = loop {
            let (raw, mono) = read();
            if mono.saturating_sub(mono0) >= FIRST_SPAN_NS || mono < mono0 {
                break (raw, mono);
            }
        };
        if raw1 > raw0 && mono1 > mono0 {
            let rate = ((u128::from(mono1 - mono0) << 32) / u128::from(raw1 - raw0)) as u64;
            c.segments[0].2 = rate;
            c.last = c.segments[0];
        }
        c
    }

    /// Feeds a fresh pair of readings; returns true when a new segment began.
    pub fn calibrate(&mut self, raw_now: u64, mono_now: u64) -> bool {
        if !self.tsc {
            return false;
        }
        let elapsed = mono_now.saturating_sub(self.mono0);
        if elapsed < self.next_calibration_ns || raw_now <= self.raw0 {
            return false;
        }
        let rate = ((u128::from(elapsed) << 32) / u128::from(raw_now - self.raw0)) as u64;
        let ns_now = self.convert(raw_now);
        self.last = (raw_now, ns_now, rate);
        self.segments.push(self.last);
        self.next_calibration_ns = elapsed * 2;
        true
    }

    /// The nanoseconds since start of raw value `raw`.
    #[inline]
    pub fn convert(&self, raw: u64) -> u64 {
        if !self.tsc {
            return raw.saturating_sub(self.mono0);
        }
        // Almost every conversion falls in the newest segment.
        let last = self.last;
        let (r0, n0, rate) = if raw >= last.0 {
            last
        } else {
            let i = self.segments.partition_point(|s| s.0 <= raw);
            self.segments[i.saturating_sub(1)]
        };
        if raw <= r0 {
            return n0;
        }
        n0 + ((u128::from(raw - r0) * u128::from(rate)) >> 32) as u64
    }

    /// The newest segment, to convert the values of one drain of a ring with
    /// (the map does not change while a drain runs).
    #[inline]
    pub fn newest(&self) -> Newest {
        if self.tsc {
            let (raw0, ns0, rate) = self.last;
            Newest { raw0, ns0, rate }
        } else {
            Newest {
                raw0: self.mono0,
                ns0: 0,
                rate: 1 << 32,
            }
        }
    }

    /// The nanoseconds between raw values `from` and `to` (0 when `to` is
    /// not after `from`), on the same map as [`TickConverter::convert`].
    #[inline]
    pub fn span(&self, from: u64, to: u64) -> u64 {
        self.convert(to).saturating_sub(self.convert(from))
    }
}

/// The newest segment of a [`TickConverter`] ([`TickConverter::newest`]): it
/// converts the raw values from its start on exactly as the converter does,
/// with no lookup (the monotonic clock is one segment of rate 1 from the start).
#[derive(Clone, Copy, Debug)]
pub struct Newest {
    raw0: u64,
    ns0: u64,
    /// ns per tick as 32.32 fixed point.
    rate: u64,
}

impl Newest {
    /// [`TickConverter::convert`] of `raw`, when `raw` is in this segment.
    #[inline(always)]
    pub fn convert(&self, raw: u64) -> Option<u64> {
        let ticks = raw.checked_sub(self.raw0)?;
        Some(self.ns0 + ((u128::from(ticks) * u128::from(self.rate)) >> 32) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_raw_values_are_nanoseconds_since_start() {
        let mut c = TickConverter::new(false, 0, 1_000);
        assert_eq!(c.convert(1_000), 0);
        assert_eq!(c.convert(5_000), 4_000);
        // Before the start clamps to 0; calibration never applies.
        assert_eq!(c.convert(10), 0);
        assert!(!c.calibrate(10_000_000, 10_000_000));
        assert_eq!(c.span(2_000, 1_500), 0);
        assert_eq!(c.span(1_500, 2_000), 500);
    }

    #[test]
    fn tsc_calibrates_to_the_measured_rate() {
        // A 2 GHz counter: 2 ticks per nanosecond.
        let (raw0, mono0) = (1_000_000, 50);
        let mut c = TickConverter::new(true, raw0, mono0);
        // Too early (under 2 ms) or not after the start: no new segment.
        assert!(!c.calibrate(raw0 + 2_000_000, mono0 + 1_000_000));
        assert!(!c.calibrate(raw0, mono0 + 5_000_000));
        assert!(c.calibrate(raw0 + 4_000_000, mono0 + 2_000_000));
        // The first segment assumed 1 GHz; from here 2 ticks are 1 ns.
        let ns = c.convert(raw0 + 4_000_000);
        assert_eq!(ns, 4_000_000);
        assert_eq!(c.convert(raw0 + 4_002_000), ns + 1_000);
        assert_eq!(c.span(raw0 + 9_000_000, raw0 + 9_000_200), 100);
        // The next calibration waits until the elapsed time has doubled.
        assert!(!c.calibrate(raw0 + 9_000_000, mono0 + 3_000_000));
        assert!(c.calibrate(raw0 + 12_000_000, mono0 + 4_000_000));
    }

    #[test]
    fn conversion_is_monotonic_and_continuous_across_segments() {
        let (raw0, mono0) = (0, 0);
        let mut c = TickConverter::new(true, raw0, mono0);
        // A clock whose rate drifts between calibrations (2.0, then 2.5 and
        // 1.5 ticks per ns on average since the start).
        for (raw, mono) in [
            (4_000_000, 2_000_000),
            (10_000_000, 4_000_000),
            (12_000_000, 8_000_000),
        ] {
            let before = c.convert(raw);
            assert!(c.calibrate(raw, mono));
            // A new segment starts where the old map was: no jump.
            assert_eq!(c.convert(raw), before);
        }
        let mut last = 0;
        for raw in (0..20_000_000).step_by(997) {
            let ns = c.convert(raw);
            assert!(ns >= last, "{raw}: {ns} < {last}");
            last = ns;
        }
    }

    #[test]
    fn the_first_segment_has_the_rate_measured_at_start() {
        // A 2 GHz counter, read again 200 µs after the start.
        let (raw0, mono0) = (1_000, 7);
        let c = TickConverter::start(true, raw0, mono0, || (raw0 + 400_000, mono0 + 200_000));
        assert_eq!(c.convert(raw0 + 200_000), 100_000);
        // The monotonic clock needs no rate.
        let m = TickConverter::start(false, 0, 1_000, || panic!("not read"));
        assert_eq!(m.convert(5_000), 4_000);
    }

    #[test]
    fn the_newest_segment_converts_as_the_converter_does() {
        let mut c = TickConverter::new(true, 1_000, 0);
        assert!(c.calibrate(4_000_000, 2_000_000));
        let newest = c.newest();
        for raw in [
            0,
            999,
            1_000,
            3_999_999,
            4_000_000,
            4_000_001,
            9_876_543,
            u64::MAX,
        ] {
            match newest.convert(raw) {
                Some(ns) => assert_eq!(ns, c.convert(raw), "{raw}"),
                None => assert!(raw < 4_000_000, "{raw}"),
            }
        }
        let m = TickConverter::new(false, 0, 1_000);
        for raw in [0, 999, 1_000, 5_000, u64::MAX] {
            match m.newest().convert(raw) {
                Some(ns) => assert_eq!(ns, m.convert(raw), "{raw}"),
                None => assert!(raw < 1_000, "{raw}"),
            }
        }
    }

    #[test]
    fn old_ticks_use_the_segment_they_fall_in() {
        let mut c = TickConverter::new(true, 0, 0);
        assert!(c.calibrate(4_000_000, 2_000_000));
        let early = c.convert(1_000_000);
        assert!(c.calibrate(20_000_000, 4_000_000));
        // Converting a value from before the newer segment gives the same
        // answer as before that segment existed.
        assert_eq!(c.convert(1_000_000), early);
    }
}
