//! Parsing of the numeric fields of text traces, directly on bytes.
//!
//! Hand-written so the importers need no UTF-8 validation or allocation per line;
//! every function rejects overflow instead of wrapping.

/// Parses an unsigned hexadecimal number (no prefix), at most 16 digits.
pub fn parse_hex(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut value = 0u64;
    for &d in digits {
        let nibble = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        value = (value << 4) | u64::from(nibble);
    }
    Some(value)
}

/// Parses an unsigned hexadecimal number with an optional `0x`/`0X` prefix.
pub fn parse_hex_prefixed(text: &[u8]) -> Option<u64> {
    match text {
        [b'0', b'x' | b'X', rest @ ..] => parse_hex(rest),
        _ => parse_hex(text),
    }
}

/// Parses an unsigned decimal number that fits in a `u64`.
pub fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    let mut value = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(value)
}

/// Splits off the next run of non-whitespace bytes, skipping leading spaces and tabs.
pub fn next_field(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let start = text.iter().position(|&b| b != b' ' && b != b'\t')?;
    let rest = &text[start..];
    let end = rest
        .iter()
        .position(|&b| b == b' ' || b == b'\t')
        .unwrap_or(rest.len());
    Some((&rest[..end], &rest[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_and_reject_overflow() {
        assert_eq!(parse_hex(b"1fff000688"), Some(0x1f_ff00_0688));
        assert_eq!(parse_hex(b"FFFFFFFFFFFFFFFF"), Some(u64::MAX));
        assert_eq!(parse_hex(b"10000000000000000"), None);
        assert_eq!(parse_hex(b"12g"), None);
        assert_eq!(parse_hex(b""), None);
        assert_eq!(parse_hex_prefixed(b"0x10"), Some(16));
        assert_eq!(parse_decimal(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
        assert_eq!(parse_decimal(b"1a"), None);
        assert_eq!(next_field(b"  ab\tcd"), Some((&b"ab"[..], &b"\tcd"[..])));
        assert_eq!(next_field(b"   "), None);
    }
}
