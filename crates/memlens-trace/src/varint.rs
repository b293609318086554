//! LEB128 varints and zigzag mapping, the integer encoding of every record body.
//!
//! Unsigned values are written 7 bits at a time, least significant group first,
//! with the high bit of each byte set when more bytes follow (at most 10 bytes
//! for a `u64`). Signed deltas are zigzag-mapped first so that small negative
//! numbers stay short: 0 → 0, −1 → 1, 1 → 2, −2 → 3, …

/// Appends `value` to `out` as an unsigned LEB128 varint. (A branch-free
/// form, the 7-bit groups spread into one 8-byte store, made the recorder's
/// writer slower on `alloc-bench`: most values are one byte.)
#[inline]
pub fn put_u64(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends `value` zigzag-mapped, then as a varint.
#[inline]
pub fn put_i64(out: &mut Vec<u8>, value: i64) {
    put_u64(out, zigzag(value));
}

/// Maps a signed integer to an unsigned one with small magnitudes first.
#[inline]
pub fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// Inverts [`zigzag`].
#[inline]
pub fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// A cursor over a byte slice that decodes varints and fixed fields without
/// ever panicking: every read returns `None` when the input is exhausted or
/// malformed.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// Starts reading at the beginning of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    /// The offset of the next unread byte.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// True when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Reads one byte.
    #[inline]
    pub fn u8(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes.
    #[inline]
    pub fn u64(&mut self) -> Option<u64> {
        // Most values fit in one byte: that case inlines into the caller.
        if let Some(&b) = self.bytes.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Some(u64::from(b));
        }
        self.u64_long()
    }

    /// [`Cursor::u64`] for values of two bytes and more (and the failures). (One
    /// 8-byte load with the groups gathered by shifts and masks took more
    /// instructions than this loop for the values the traces hold: mostly 2 bytes.)
    #[inline(never)]
    fn u64_long(&mut self) -> Option<u64> {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                return None; // would overflow 64 bits
            }
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    /// Reads a varint that must fit in a `u32`.
    #[inline]
    pub fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.u64()?).ok()
    }

    /// Reads a zigzag-mapped signed varint.
    #[inline]
    pub fn i64(&mut self) -> Option<i64> {
        Some(unzigzag(self.u64()?))
    }

    /// Reads exactly `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let slice = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(slice)
    }

    /// Reads a varint length followed by that many bytes of UTF-8 (invalid
    /// sequences are replaced, so a damaged name never stops a read).
    pub fn string(&mut self) -> Option<String> {
        let n = usize::try_from(self.u64()?).ok()?;
        Some(String::from_utf8_lossy(self.bytes(n)?).into_owned())
    }
}

/// Appends a varint length and the bytes of `s`.
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn u64_round_trips(v in any::<u64>(), bits in 0u32..64, before in proptest::collection::vec(any::<u8>(), 0..12)) {
            // Every length, after any bytes (the 8-byte store lands anywhere).
            for v in [v, v >> bits] {
                let mut buf = before.clone();
                put_u64(&mut buf, v);
                prop_assert_eq!(&buf[..before.len()], &before[..]);
                prop_assert_eq!(&buf[before.len()..], &byte_at_a_time(v)[..]);
                let mut c = Cursor::new(&buf[before.len()..]);
                prop_assert_eq!(c.u64(), Some(v));
                prop_assert!(c.is_empty());
            }
        }

        #[test]
        fn i64_round_trips(v in any::<i64>()) {
            let mut buf = Vec::new();
            put_i64(&mut buf, v);
            prop_assert_eq!(Cursor::new(&buf).i64(), Some(v));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
            let mut c = Cursor::new(&bytes);
            while c.u64().is_some() {}
            let _ = Cursor::new(&bytes).string();
        }
    }

    /// LEB128 as the format defines it, one byte at a time.
    fn byte_at_a_time(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    }

    /// `2^k − 1` and `2^k` for every `k`: each varint length, at its edges.
    fn edge_values() -> impl Iterator<Item = u64> {
        (0..=64u32).flat_map(|bits| {
            [
                1u64.checked_shl(bits).unwrap_or(0).wrapping_sub(1),
                1u64 << bits.min(63),
            ]
        })
    }

    #[test]
    fn every_length_is_written_as_leb128() {
        for v in edge_values() {
            let mut buf = vec![0xaa];
            put_u64(&mut buf, v);
            assert_eq!(buf[1..], byte_at_a_time(v)[..], "{v:#x}");
        }
    }

    #[test]
    fn every_length_reads_back_with_bytes_after_it_or_none() {
        for v in edge_values() {
            for after in [0usize, 3, 8, 12] {
                let mut buf = Vec::new();
                put_u64(&mut buf, v);
                let n = buf.len();
                buf.extend(std::iter::repeat_n(0xff, after));
                let mut c = Cursor::new(&buf);
                assert_eq!(c.u64(), Some(v), "{v:#x} with {after} bytes after");
                assert_eq!(c.position(), n);
            }
        }
        // Damaged: continuation bits to the end, or an 11th byte.
        assert_eq!(Cursor::new(&[0x80; 9]).u64(), None);
        assert_eq!(Cursor::new(&[0xff; 16]).u64(), None);
    }

    #[test]
    fn small_values_are_one_byte() {
        let mut buf = Vec::new();
        put_u64(&mut buf, 127);
        put_i64(&mut buf, -64);
        assert_eq!(buf, vec![127, 127]);
    }

    #[test]
    fn overlong_varint_is_rejected() {
        let bytes = [0xff; 11];
        assert_eq!(Cursor::new(&bytes).u64(), None);
        let too_big = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert_eq!(Cursor::new(&too_big).u64(), None);
    }
}
