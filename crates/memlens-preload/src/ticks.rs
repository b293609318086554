//! Converting raw timestamps (TSC ticks) to nanoseconds since start.
//!
//! The map is piecewise linear, continuous and monotonic: each
//! recalibration starts a new segment at the current tick with the current
//! nanosecond value, so an event converted later never lands before one
//! converted earlier. Recalibration happens whenever the elapsed time has
//! doubled (about 20 segments over a day), so the rate error shrinks to a
//! few parts per million within the first seconds.

/// Converts raw clock values to nanoseconds since the recorder started.
pub struct TickConverter {
    tsc: bool,
    raw0: u64,
    mono0: u64,
    /// (raw start, ns start, ns per tick as 32.32 fixed point)
    segments: Vec<(u64, u64, u64)>,
    next_calibration_ns: u64,
}

impl TickConverter {
    /// Starts from a simultaneous reading of both clocks.
    pub fn new(tsc: bool, raw0: u64, mono0: u64) -> Self {
        // Until the first calibration assume 1 GHz; the first segment only
        // covers the writer's first 2 ms, before any event is converted.
        TickConverter {
            tsc,
            raw0,
            mono0,
            segments: vec![(raw0, 0, 1 << 32)],
            next_calibration_ns: 2_000_000,
        }
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
        self.segments.push((raw_now, ns_now, rate));
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
        let last = self.segments[self.segments.len() - 1];
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

    /// The nanoseconds between raw values `from` and `to` (0 when `to` is
    /// not after `from`), on the same map as [`TickConverter::convert`].
    #[inline]
    pub fn span(&self, from: u64, to: u64) -> u64 {
        self.convert(to).saturating_sub(self.convert(from))
    }
}
