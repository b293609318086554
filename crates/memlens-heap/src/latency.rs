//! Allocator latency statistics: how long each allocation function took,
//! as percentiles per function, in one pass with bounded memory.
//!
//! Latencies (recorded with `memlens record --latency`) go into a
//! log-linear histogram per function: values below 256 ns are counted
//! exactly, larger ones in 128 buckets per power of two, so a percentile is
//! within 0.4 % of the true value whatever the trace length, and memory is
//! 26 KiB per function. Count, minimum, maximum and mean are exact.

use memlens_vocab::codec::{self, Reader, Writer};

/// Sub-buckets per power of two (2^7), and the largest exact value + 1.
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// Values below this are their own bucket.
const EXACT: u64 = 2 * SUB;
/// Buckets for every `u32`.
const BUCKETS: usize = (EXACT + (32 - SUB_BITS as u64 - 1) * SUB) as usize;

/// The bucket of a value.
fn bucket(v: u32) -> usize {
    let v = u64::from(v);
    if v < EXACT {
        return v as usize;
    }
    // The position of the leading one (≥ 8 here) and the next 7 bits.
    let e = 63 - v.leading_zeros() as u64;
    let shift = e - u64::from(SUB_BITS);
    let mantissa = (v >> shift) & (SUB - 1);
    (EXACT + (shift - 1) * SUB + mantissa) as usize
}

/// The smallest value and one past the largest value of a bucket.
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < EXACT {
        return (i, i + 1);
    }
    let shift = (i - EXACT) / SUB + 1;
    let mantissa = (i - EXACT) % SUB;
    let lo = (SUB + mantissa) << shift;
    (lo, lo + (1 << shift))
}

/// A histogram of latencies in ns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LatencyHistogram {
    /// Bucket counts (allocated with the first value).
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    min: u32,
    max: u32,
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one latency of `ns` nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u32) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
            self.min = ns;
        }
        self.counts[bucket(ns)] += 1;
        self.count += 1;
        self.sum += u128::from(ns);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// Number of latencies added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The smallest latency (0 when empty).
    pub fn min(&self) -> u32 {
        self.min
    }

    /// The largest latency (0 when empty).
    pub fn max(&self) -> u32 {
        self.max
    }

    /// The mean latency (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The `q`-quantile (`q` in 0..=1, nearest rank: the smallest latency
    /// with at least `q × count` latencies at or below it), exact below
    /// 256 ns, for the smallest and for the largest latency, and within
    /// 0.4 % otherwise; 0 when empty.
    pub fn quantile(&self, q: f64) -> u32 {
        if self.count == 0 {
            return 0;
        }
        let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        // The extremes are known exactly.
        if rank == self.count {
            return self.max;
        }
        if rank == 1 {
            return self.min;
        }
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bucket_range(i);
                // The middle of the bucket, inside the values actually seen.
                let mid = lo + (hi - lo - 1) / 2;
                return (mid as u32).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Appends the histogram to `w` (see `summary_codec.rs`).
    pub(crate) fn encode(&self, w: &mut Writer) {
        w.column(&self.counts, |_, c| c);
        w.varint(self.count);
        w.varint(self.sum as u64);
        w.varint((self.sum >> 64) as u64);
        w.varint(u64::from(self.min));
        w.varint(u64::from(self.max));
    }

    /// Reads a histogram [`LatencyHistogram::encode`] wrote: its buckets are none (no
    /// latency yet) or all of them.
    pub(crate) fn decode(r: &mut Reader<'_>) -> codec::Result<LatencyHistogram> {
        let at = r.pos;
        let counts = r.column(None, "latency buckets", |r, _| r.varint())?;
        r.check(counts.is_empty() || counts.len() == BUCKETS, at, || {
            format!("a histogram has {} buckets, not {BUCKETS}", counts.len())
        })?;
        let count = r.varint()?;
        let sum = u128::from(r.varint()?) | u128::from(r.varint()?) << 64;
        Ok(LatencyHistogram {
            counts,
            count,
            sum,
            min: r.u32()?,
            max: r.u32()?,
        })
    }
}

/// One function's latency figures.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyRow {
    /// The function (`malloc`, `free`, …).
    pub function: String,
    /// Calls with a measured latency.
    pub calls: u64,
    /// Median, ns.
    pub p50_ns: u32,
    /// 90th percentile, ns.
    pub p90_ns: u32,
    /// 99th percentile, ns.
    pub p99_ns: u32,
    /// The slowest call, ns.
    pub max_ns: u32,
    /// Mean, ns.
    pub mean_ns: f64,
}

/// Latency histograms per function, filled in one pass over the events.
#[derive(Debug, Clone, Default)]
pub struct LatencyTable {
    ops: Vec<(String, LatencyHistogram)>,
}

impl LatencyTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The index of function `name`, added when new (call once per function
    /// before the pass, then [`LatencyTable::record`] by index).
    pub fn op(&mut self, name: &str) -> usize {
        match self.ops.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.ops.push((name.to_string(), LatencyHistogram::new()));
                self.ops.len() - 1
            }
        }
    }

    /// Adds a latency of `ns` to function `op` (an index from
    /// [`LatencyTable::op`]; unknown indices are ignored).
    #[inline]
    pub fn record(&mut self, op: usize, ns: u32) {
        if let Some((_, h)) = self.ops.get_mut(op) {
            h.record(ns);
        }
    }

    /// The histogram of function `name`, if it has one.
    pub fn histogram(&self, name: &str) -> Option<&LatencyHistogram> {
        self.ops.iter().find(|(n, _)| n == name).map(|(_, h)| h)
    }

    /// True when no latency was recorded.
    pub fn is_empty(&self) -> bool {
        self.ops.iter().all(|(_, h)| h.count() == 0)
    }

    /// The figures of every function with at least one latency, most calls
    /// first.
    pub fn rows(&self) -> Vec<LatencyRow> {
        let mut rows: Vec<LatencyRow> = self
            .ops
            .iter()
            .filter(|(_, h)| h.count() > 0)
            .map(|(name, h)| LatencyRow {
                function: name.clone(),
                calls: h.count(),
                p50_ns: h.quantile(0.50),
                p90_ns: h.quantile(0.90),
                p99_ns: h.quantile(0.99),
                max_ns: h.max(),
                mean_ns: h.mean(),
            })
            .collect();
        rows.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.function.cmp(&b.function)));
        rows
    }

    /// Appends the table to `w` (see `summary_codec.rs`): per function, its name and
    /// its histogram.
    pub(crate) fn encode(&self, w: &mut Writer) {
        w.varint(self.ops.len() as u64);
        for (name, histogram) in &self.ops {
            w.string(name);
            histogram.encode(w);
        }
    }

    /// Reads a table [`LatencyTable::encode`] wrote.
    pub(crate) fn decode(r: &mut Reader<'_>) -> codec::Result<LatencyTable> {
        let ops = r.column(None, "latency functions", |r, _| {
            Ok((r.string()?, LatencyHistogram::decode(r)?))
        })?;
        Ok(LatencyTable { ops })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut prev = 0;
        for v in (0u32..5000).chain([u32::MAX / 3, u32::MAX - 1, u32::MAX]) {
            let b = bucket(v);
            assert!(b < BUCKETS, "{v} → bucket {b}");
            let (lo, hi) = bucket_range(b);
            assert!(
                lo <= u64::from(v) && u64::from(v) < hi,
                "{v} in [{lo}, {hi})"
            );
            if v < 5000 {
                assert!(b >= prev, "buckets grow with values");
                prev = b;
            }
        }
        assert_eq!(bucket(u32::MAX), BUCKETS - 1);
        for v in 0..256u32 {
            assert_eq!(bucket_range(bucket(v)), (u64::from(v), u64::from(v) + 1));
        }
    }

    #[test]
    fn small_latencies_give_exact_percentiles() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100u32 {
            h.record(v);
        }
        assert_eq!(h.count(), 100);
        assert_eq!(h.quantile(0.5), 50);
        assert_eq!(h.quantile(0.99), 99);
        assert_eq!(h.quantile(1.0), 100);
        assert_eq!(h.quantile(0.0), 1);
        assert_eq!((h.min(), h.max()), (1, 100));
        assert!((h.mean() - 50.5).abs() < 1e-9);
    }

    #[test]
    fn percentiles_match_sorting_within_the_bucket_precision() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut values = Vec::new();
        let mut h = LatencyHistogram::new();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Log-uniform from 1 ns to ~16 ms, like allocator latencies' tails.
            let v = ((x % 1_000_000) as f64 / 1_000_000.0 * 24.0).exp2() as u32;
            values.push(v);
            h.record(v);
        }
        values.sort_unstable();
        for q in [0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let rank = ((q * values.len() as f64).ceil() as usize).max(1);
            let want = values[rank - 1];
            let got = h.quantile(q);
            let err = (f64::from(got) - f64::from(want)).abs() / f64::from(want.max(1));
            assert!(err <= 1.0 / 256.0, "q={q}: got {got}, want {want}");
        }
        assert_eq!(h.quantile(1.0), *values.last().unwrap());
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let h = LatencyHistogram::new();
        assert_eq!(
            (h.count(), h.quantile(0.5), h.max(), h.mean()),
            (0, 0, 0, 0.0)
        );
    }

    #[test]
    fn table_lists_functions_with_latencies_most_calls_first() {
        let mut t = LatencyTable::new();
        let malloc = t.op("malloc");
        let free = t.op("free");
        let _calloc = t.op("calloc");
        assert_eq!(t.op("malloc"), malloc);
        assert!(t.is_empty());
        for v in [10, 20, 30] {
            t.record(malloc, v);
        }
        t.record(free, 7);
        t.record(99, 1); // ignored
        let rows = t.rows();
        assert_eq!(rows.len(), 2, "calloc has no latency and is left out");
        assert_eq!(rows[0].function, "malloc");
        assert_eq!((rows[0].calls, rows[0].p50_ns, rows[0].max_ns), (3, 20, 30));
        assert_eq!((rows[1].function.as_str(), rows[1].p99_ns), ("free", 7));
        assert_eq!(t.histogram("free").map(LatencyHistogram::count), Some(1));
    }
}
