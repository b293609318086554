//! Sizes, durations and times as users write them, parsed one way everywhere.
//!
//! - **Sizes**: plain bytes or a number with a binary suffix, case-insensitive: `512`,
//!   `512B`, `32K`, `32KB`, `32KiB`, `8M`, `1G`, `2T`. `K` means 1024 bytes: cache and
//!   allocator sizes are powers of two, and nobody means 32,000 bytes by `32K` there.
//! - **Durations**: a number (decimals allowed) and a unit: `ns`, `us` or `µs`, `ms`,
//!   `s`, `m` (minutes): `250us`, `100ms`, `1.5s`.
//! - **Times in a run**: a duration since the process start, or a percentage of the
//!   run (`50%`), checked against the run.

/// Why a size, duration or time could not be read: one sentence naming the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Not a size.
    #[error(
        "`{text}` is not a size: write bytes or a number with K, KiB, M, MiB, G or T (`32K`, `8M`)"
    )]
    NotASize {
        /// The text as given.
        text: String,
    },
    /// A size past 2^64 bytes.
    #[error("`{text}` is too large: a size must fit in 64 bits")]
    SizeTooLarge {
        /// The text as given.
        text: String,
    },
    /// Not a duration.
    #[error(
        "`{text}` is not a duration: write a number with a unit (`1.5s`, `200ms`, `10us`, `500ns`)"
    )]
    NotADuration {
        /// The text as given.
        text: String,
    },
    /// Not a time in the run.
    #[error(
        "`{text}` is not a time: write a number with a unit (`1.5s`, `200ms`, `10us`, `500ns`) \
         or a percentage of the run (`50%`)"
    )]
    NotATime {
        /// The text as given.
        text: String,
    },
    /// A percentage above 100.
    #[error("`{text}` is out of range: a percentage of the run must be between 0 and 100")]
    PercentOutOfRange {
        /// The text as given.
        text: String,
    },
    /// Not a range.
    #[error("`{text}` is not a range: write A..B (either end may be empty)")]
    NotARange {
        /// The text as given.
        text: String,
    },
    /// Not an address.
    #[error("`{text}` is not an address: write hex (0x55d0…) or decimal")]
    NotAnAddress {
        /// The text as given.
        text: String,
    },
}

/// `1_500_000` → `1.5 ms`; `10_000` → `10 µs`: a duration as every output writes it.
pub fn format_duration(ns: u64) -> String {
    let (scale, unit) = match ns {
        0..1_000 => return format!("{ns} ns"),
        1_000..1_000_000 => (1e3, "µs"),
        1_000_000..1_000_000_000 => (1e6, "ms"),
        _ => (1e9, "s"),
    };
    let text = format!("{:.3}", ns as f64 / scale);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

/// Splits `A..B` into its ends, trimmed; an empty end is `None`.
pub fn split_range(text: &str) -> Result<(Option<&str>, Option<&str>), UnitError> {
    let (a, b) = text.split_once("..").ok_or_else(|| UnitError::NotARange {
        text: text.to_owned(),
    })?;
    fn end(s: &str) -> Option<&str> {
        (!s.trim().is_empty()).then_some(s.trim())
    }
    Ok((end(a), end(b)))
}

/// Reads an address: hex with `0x`, or decimal; `_` separates digits.
pub fn parse_address(text: &str) -> Result<u64, UnitError> {
    let t = text.trim().replace('_', "");
    let value = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    };
    value.ok_or_else(|| UnitError::NotAnAddress {
        text: text.to_owned(),
    })
}

impl UnitError {
    /// The sentence with the option that was given the text: `` `--at 5` is not a
    /// time: … `` instead of `` `5` is not a time: … ``.
    pub fn for_argument(&self, arg: &str) -> String {
        let sentence = self.to_string();
        // Every message starts with the text in backticks.
        match sentence.strip_prefix('`') {
            Some(rest) => format!("`{arg} {rest}"),
            None => format!("{arg}: {sentence}"),
        }
    }
}

/// Writes a size the way [`parse_size`] reads it, exactly: `32K`, `8M`, or bytes.
pub fn format_size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}K", b >> 10),
        b => b.to_string(),
    }
}

/// A count with commas between thousands, as the CLI's sentences write counts: `4,001`.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut text = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            text.push(',');
        }
        text.push(c);
    }
    text
}

/// Reads a size in bytes (see the module documentation).
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, suffix) = trimmed.split_at(digits_end);
    let not_a_size = || UnitError::NotASize {
        text: text.to_owned(),
    };
    if digits.is_empty() {
        return Err(not_a_size());
    }
    let value: u64 = digits.parse().map_err(|_| UnitError::SizeTooLarge {
        text: text.to_owned(),
    })?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(not_a_size()),
    };
    value
        .checked_mul(1u64 << shift)
        .ok_or_else(|| UnitError::SizeTooLarge {
            text: text.to_owned(),
        })
}

/// Splits `12.5ms` into its number and unit; `None` when it does not start with one.
fn number_and_unit(text: &str) -> Option<(f64, &str)> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().ok()?;
    value.is_finite().then_some((value, unit.trim()))
}

/// Nanoseconds per unit of a duration unit, `None` for anything else.
fn unit_ns(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        _ => return None,
    })
}

/// Reads a duration in nanoseconds (see the module documentation). A unit is required.
pub fn parse_duration(text: &str) -> Result<u64, UnitError> {
    let trimmed = text.trim();
    number_and_unit(trimmed)
        .and_then(|(value, unit)| Some((value * unit_ns(unit)?).round() as u64))
        .ok_or_else(|| UnitError::NotADuration {
            text: text.to_owned(),
        })
}

/// Reads a time of a run that lasts from `start_ns` to `end_ns`: a duration since the
/// process start, or a percentage of the run. Whether the time lies inside the run is
/// for the caller to check (it knows which error to give).
pub fn parse_time(text: &str, start_ns: u64, end_ns: u64) -> Result<u64, UnitError> {
    let trimmed = text.trim();
    let not_a_time = || UnitError::NotATime {
        text: text.to_owned(),
    };
    let (value, unit) = number_and_unit(trimmed).ok_or_else(not_a_time)?;
    if unit == "%" {
        if value > 100.0 {
            return Err(UnitError::PercentOutOfRange {
                text: text.to_owned(),
            });
        }
        let span = end_ns.saturating_sub(start_ns) as f64;
        return Ok(start_ns + (span * value / 100.0).round() as u64);
    }
    let ns = unit_ns(unit).ok_or_else(not_a_time)?;
    Ok((value * ns).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_have_commas_between_thousands() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(4_001), "4,001");
        assert_eq!(format_count(1_234_567), "1,234,567");
    }

    #[test]
    fn sizes_use_binary_suffixes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("512B"), Ok(512));
        assert_eq!(parse_size("32K"), Ok(32 << 10));
        assert_eq!(parse_size("256KiB"), Ok(256 << 10));
        assert_eq!(parse_size("8m"), Ok(8 << 20));
        assert_eq!(parse_size(" 1G "), Ok(1 << 30));
        assert!(matches!(parse_size("K"), Err(UnitError::NotASize { .. })));
        assert!(matches!(
            parse_size("3 parsecs"),
            Err(UnitError::NotASize { .. })
        ));
        assert!(matches!(
            parse_size("99999999999999999999"),
            Err(UnitError::SizeTooLarge { .. })
        ));
        assert!(matches!(
            parse_size("17000000T"),
            Err(UnitError::SizeTooLarge { .. })
        ));
    }

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(parse_duration("500ns"), Ok(500));
        assert_eq!(parse_duration("10us"), Ok(10_000));
        assert_eq!(parse_duration("10 µs"), Ok(10_000));
        assert_eq!(parse_duration("100ms"), Ok(100_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("2m"), Ok(120_000_000_000));
        for bad in ["5", "-1s", "1.5 parsecs", "", "s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn times_take_units_and_percentages_of_the_run() {
        let at = |text| parse_time(text, 0, 4_000_000_000);
        assert_eq!(at("1.5s"), Ok(1_500_000_000));
        assert_eq!(at("25%"), Ok(1_000_000_000));
        assert_eq!(at("100%"), Ok(4_000_000_000));
        assert_eq!(parse_time("50%", 1_000, 3_000), Ok(2_000));
        assert!(matches!(
            at("101%"),
            Err(UnitError::PercentOutOfRange { .. })
        ));
        assert!(matches!(at("5"), Err(UnitError::NotATime { .. })));
        let message = at("1.5 parsecs").unwrap_err().to_string();
        assert!(message.contains("`1.5 parsecs` is not a time"), "{message}");
    }

    #[test]
    fn ranges_and_addresses() {
        assert_eq!(split_range(" 1s .. ").unwrap(), (Some("1s"), None));
        assert_eq!(split_range("..0x10").unwrap(), (None, Some("0x10")));
        assert!(
            split_range("5")
                .unwrap_err()
                .for_argument("--addr")
                .starts_with("`--addr 5` is not a range")
        );
        assert_eq!(parse_address("0x55d0_0000").unwrap(), 0x55d0_0000);
        assert_eq!(parse_address(" 4096 ").unwrap(), 4096);
        assert!(parse_address("0xzz").is_err());
    }
}
