//! [`TimeRange`]: a window of the model's timeline, the time axis of every view, metric
//! series and occupancy bar.

/// A time window `[start_ns, end_ns)` on the model's timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeRange {
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

impl TimeRange {
    /// Its length, ns.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}
