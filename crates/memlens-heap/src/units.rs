//! Byte and time units for people: sizes, signed growth, durations and trace times,
//! as every text and message of the heap engine prints them.
//!
//! Byte units are binary (KiB = 1024 B) with three significant digits; durations use
//! ns, µs, ms and s with at most three decimals and no trailing zeros. A leaf module:
//! the error messages, the classifiers' labels and the tree renderer all use it.

/// `1536` → `1.50 KiB`; values below 1 KiB are exact (`512 B`).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {}", UNITS[unit])
}

/// Like [`format_bytes`] with an explicit sign: `+1.50 KiB`, `-512 B`, `0 B`.
pub fn format_signed_bytes(bytes: i64) -> String {
    match bytes {
        0 => "0 B".to_owned(),
        b if b > 0 => format!("+{}", format_bytes(b as u64)),
        b => format!("-{}", format_bytes(b.unsigned_abs())),
    }
}

pub use memlens_vocab::format_duration;

/// An allocator latency, compact: `850 ns`, `12.3 µs`, `4.56 ms`.
pub fn format_latency(ns: u32) -> String {
    let v = f64::from(ns);
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", v / 1e3)
    } else {
        format!("{:.2} ms", v / 1e6)
    }
}

/// A trace time for messages: readable and exact, e.g. `1.5 s (1500000000 ns)`.
pub fn format_time(ns: u64) -> String {
    if ns < 1_000 {
        format!("{ns} ns")
    } else {
        format!("{} ({ns} ns)", format_duration(ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_are_compact() {
        assert_eq!(format_latency(850), "850 ns");
        assert_eq!(format_latency(12_345), "12.3 µs");
        assert_eq!(format_latency(4_560_000), "4.56 ms");
    }

    #[test]
    fn byte_units() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1536), "1.50 KiB");
        assert_eq!(format_bytes(10 * 1024 * 1024 + 1), "10.0 MiB");
        assert_eq!(format_bytes(300 << 30), "300 GiB");
        assert_eq!(format_signed_bytes(-2048), "-2.00 KiB");
        assert_eq!(format_signed_bytes(5), "+5 B");
    }

    #[test]
    fn durations() {
        assert_eq!(format_duration(999), "999 ns");
        assert_eq!(format_duration(10_000), "10 µs");
        assert_eq!(format_duration(1_500_000), "1.5 ms");
        assert_eq!(format_duration(100_000_000_000), "100 s");
        assert_eq!(format_time(2_000_000_000), "2 s (2000000000 ns)");
    }
}
