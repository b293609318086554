//! Unbiased estimates from a sampled recording (`memlens record --sample BYTES`, the
//! JVMTI agent's heap sampling): the one place that decides what a sampled
//! allocation stands for.
//!
//! A sampled recorder keeps an allocation of `s` bytes with probability
//! `p(s) = 1 − exp(−s/R)` for a mean interval of `R` bytes, independently of every
//! other allocation (a Poisson process over the bytes allocated, as tcmalloc,
//! heapprofd and Go do). Weighing each kept allocation by `1/p(s)` makes sums over
//! them unbiased estimates of the program's sums (the Horvitz–Thompson estimator,
//! which pprof applies to these profiles too): `E[Σ kept 1/p] = Σ all 1` for counts
//! and `E[Σ kept s/p] = Σ all s` for bytes, for any group of allocations (a site, a
//! thread, a size class, the live set at an instant — a free is recorded exactly
//! when its allocation was, so a kept block stands for its lifetime too).
//!
//! The models count whole objects and keep a row's mean size within its size
//! class, so a sampled allocation becomes [`Sampling::objects`] objects of its own
//! size: `⌊1/p⌋` or `⌈1/p⌉`, the larger with probability equal to the fractional
//! part, drawn from a hash of the event (the same for every model and every read of
//! one trace). The count is then an integer whose mean is exactly `1/p`, and its
//! bytes, that count times `s`, have mean `s/p`: both stay unbiased. The rounding
//! adds a variance of at most `s²/4` per sample, which matters only for blocks near
//! `R` and above (small blocks stand for thousands of objects, where it vanishes).

use crate::units::format_bytes;

/// How a trace was sampled: one allocation per about `mean_interval_bytes` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampling {
    mean_interval_bytes: u64,
}

impl Sampling {
    /// The sampling of a trace whose mean interval is `mean_interval_bytes`; `None`
    /// for 0 (every allocation recorded).
    pub fn new(mean_interval_bytes: u64) -> Option<Sampling> {
        (mean_interval_bytes > 0).then_some(Sampling {
            mean_interval_bytes,
        })
    }

    /// The mean number of bytes between two recorded allocations.
    pub fn mean_interval_bytes(&self) -> u64 {
        self.mean_interval_bytes
    }

    /// The probability that an allocation of `size` bytes was recorded (a zero-byte
    /// allocation, which a sampler never records, is treated as one byte).
    pub fn probability(&self, size: u64) -> f64 {
        let x = size.max(1) as f64 / self.mean_interval_bytes as f64;
        -(-x).exp_m1()
    }

    /// The number of allocations a recorded one of `size` bytes stands for, on
    /// average: `1/p(size)`.
    pub fn weight(&self, size: u64) -> f64 {
        1.0 / self.probability(size)
    }

    /// The whole number of allocations of `size` bytes that the recorded one with
    /// event hash `key` ([`event_key`]) stands for: `⌊w⌋` or `⌈w⌉` for `w =
    /// weight(size)`, with mean exactly `w` over keys.
    pub fn objects(&self, size: u64, key: u64) -> u64 {
        let w = self.weight(size).min(u32::MAX as f64);
        let whole = w.floor();
        let u = (mix(key) >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        whole as u64 + u64::from(u < w - whole)
    }

    /// The sentence every output prints about a sampled trace.
    pub fn note(&self) -> String {
        // The interval exactly, as users give it (`512K` is `512 KiB`, not `512.0 KiB`).
        let r = self.mean_interval_bytes;
        let interval = match r {
            _ if r.is_multiple_of(1 << 20) => format!("{} MiB", r >> 20),
            _ if r.is_multiple_of(1 << 10) => format!("{} KiB", r >> 10),
            _ => format_bytes(r),
        };
        format!(
            "sampled recording: about one allocation per {interval} recorded; bytes and counts are unbiased estimates"
        )
    }
}

/// The hash of an allocation event from which [`Sampling::objects`] rounds: every
/// model reading the same event draws the same count.
pub fn event_key(t_ns: u64, addr: u64, size: u64) -> u64 {
    mix(t_ns ^ mix(addr ^ mix(size)))
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_blocks_weigh_about_the_interval_over_their_size_and_large_ones_one() {
        let s = Sampling::new(512 << 10).unwrap();
        assert!((s.weight(32) - (512.0 * 1024.0 / 32.0 + 0.5)).abs() < 0.01);
        assert!((s.weight(64 << 20) - 1.0).abs() < 1e-12);
        assert_eq!(s.objects(1 << 30, 7), 1);
        assert!(Sampling::new(0).is_none());
        assert!(s.weight(0).is_finite());
        assert_eq!(
            s.note(),
            "sampled recording: about one allocation per 512 KiB recorded; bytes and counts are unbiased estimates"
        );
    }

    #[test]
    fn whole_counts_have_the_weight_as_their_mean() {
        let s = Sampling::new(4096).unwrap();
        for size in [1u64, 100, 3000, 4096, 9000] {
            let n = 200_000u64;
            let total: u64 = (0..n)
                .map(|i| s.objects(size, event_key(i, 0x1000 + i * 16, size)))
                .sum();
            let (got, want) = (total as f64 / n as f64, s.weight(size));
            assert!(
                (got / want - 1.0).abs() < 0.002,
                "size {size}: {got} vs {want}"
            );
        }
    }
}
