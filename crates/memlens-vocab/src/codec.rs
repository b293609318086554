//! The compact binary encoding the engines keep their models in (a trace's on-disk
//! index holds them): LEB128 varints written by a [`Writer`] and read back by a
//! [`Reader`] that checks every length against the bytes left and names the byte
//! offset and the section of whatever it refuses ([`DecodeError`]). Bytes in, bytes
//! out: no IO and no compression. Each engine's codec decides its own layout and
//! validates what it reads with these.

/// Why bytes could not be decoded: the byte offset at fault and one sentence saying
/// what was wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DecodeError {
    /// The byte offset at fault.
    pub offset: usize,
    /// The sentence.
    pub message: String,
}

impl DecodeError {
    /// The error at `offset` saying `message`.
    pub fn new(offset: usize, message: String) -> DecodeError {
        DecodeError { offset, message }
    }
}

/// A decoding result.
pub type Result<T> = std::result::Result<T, DecodeError>;

/// Appends LEB128 varints.
#[derive(Debug, Default)]
pub struct Writer {
    /// The bytes written so far.
    pub out: Vec<u8>,
}

impl Writer {
    /// Appends `v`.
    pub fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.out.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    /// Appends a string: its byte length, then its UTF-8 bytes.
    pub fn string(&mut self, s: &str) {
        self.varint(s.len() as u64);
        self.out.extend_from_slice(s.as_bytes());
    }

    /// A column: its length, then each value.
    pub fn column<T: Copy>(&mut self, values: &[T], value: impl Fn(usize, T) -> u64) {
        self.varint(values.len() as u64);
        for (i, &v) in values.iter().enumerate() {
            self.varint(value(i, v));
        }
    }

    /// An ascending column: its length, then the differences, the first from `from`.
    pub fn times(&mut self, values: impl ExactSizeIterator<Item = u64>, mut from: u64) {
        self.varint(values.len() as u64);
        for v in values {
            self.varint(v.wrapping_sub(from));
            from = v;
        }
    }
}

/// Reads LEB128 varints and checks every length against the bytes left.
#[derive(Debug)]
pub struct Reader<'a> {
    /// All the bytes.
    pub bytes: &'a [u8],
    /// The offset of the next byte to read.
    pub pos: usize,
    /// What is being read, for the error sentences ("allocation columns").
    pub section: &'static str,
    /// What the bytes hold, for the error sentences ("model").
    pub what: &'static str,
}

impl<'a> Reader<'a> {
    /// Reads `bytes` (holding a `what`) from the start.
    pub fn new(bytes: &'a [u8], what: &'static str) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            section: "header",
            what,
        }
    }

    /// The error of bytes that end too soon.
    pub fn truncated(&self) -> DecodeError {
        let (at, section, what) = (self.bytes.len(), self.section, self.what);
        DecodeError::new(
            at,
            format!("{what} bytes end at offset {at} inside the {section}"),
        )
    }

    /// The error of the value at `at`, with `problem` saying what is wrong with it.
    pub fn invalid(&self, at: usize, problem: String) -> DecodeError {
        let (section, what) = (self.section, self.what);
        let message =
            format!("{what} bytes at offset {at} in the {section} are invalid: {problem}");
        DecodeError::new(at, message)
    }

    /// Refuses the value at `at` with `problem` unless `ok`.
    pub fn check(&self, ok: bool, at: usize, problem: impl FnOnce() -> String) -> Result<()> {
        ok.then_some(()).ok_or_else(|| self.invalid(at, problem()))
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let bytes = self.bytes;
        let end = self.pos.saturating_add(n);
        let slice = bytes.get(self.pos..end).ok_or_else(|| self.truncated())?;
        self.pos = end;
        Ok(slice)
    }

    /// The next byte.
    pub fn byte(&mut self) -> Result<u8> {
        let b = *self.bytes.get(self.pos).ok_or_else(|| self.truncated())?;
        self.pos += 1;
        Ok(b)
    }

    /// The next varint.
    pub fn varint(&mut self) -> Result<u64> {
        let at = self.pos;
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                break;
            }
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.invalid(at, "a number does not fit in 64 bits".to_owned()))
    }

    /// The next varint, which must fit in 32 bits.
    pub fn u32(&mut self) -> Result<u32> {
        let at = self.pos;
        let v = self.varint()?;
        u32::try_from(v).map_err(|_| self.invalid(at, format!("{v} does not fit in 32 bits")))
    }

    /// The next string (see [`Writer::string`]), which must be UTF-8.
    pub fn string(&mut self) -> Result<String> {
        let at = self.pos;
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| self.truncated())?;
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| self.invalid(at, "a string is not UTF-8".to_owned()))
    }

    /// An id below `limit` of a table of `what`s.
    pub fn id(&mut self, limit: usize, what: &str) -> Result<u32> {
        let at = self.pos;
        let v = self.varint()?;
        let problem = || format!("{what} {v} does not exist (there are {limit})");
        self.check(v < limit as u64, at, problem)?;
        Ok(v as u32)
    }

    /// The value after `from` (read as a difference), at most `max`.
    pub fn time(&mut self, from: &mut u64, max: u64, what: &str) -> Result<u64> {
        let at = self.pos;
        let t = from.checked_add(self.varint()?).filter(|&t| t <= max);
        *from = t.ok_or_else(|| self.invalid(at, format!("the {what} is later than {max}")))?;
        Ok(*from)
    }

    /// A column's length: `n` when given, otherwise any length whose values (a byte
    /// at least each) fit in the bytes left, and at most `u32::MAX` (ids are `u32`).
    pub fn length(&mut self, n: Option<usize>, column: &str) -> Result<usize> {
        let at = self.pos;
        let len = self.varint()?;
        let left = self.bytes.len() - self.pos;
        match n {
            Some(n) if len != n as u64 => {
                let problem = format!("the {column} column has {len} entries instead of {n}");
                Err(self.invalid(at, problem))
            }
            None if len > left as u64 || len > u64::from(u32::MAX) => {
                let problem = format!("{len} {column} entries cannot fit in the {left} bytes left");
                Err(self.invalid(at, problem))
            }
            _ => Ok(len as usize),
        }
    }

    /// A column (see [`length`](Self::length)) whose values `value(self, index)` reads.
    pub fn column<T>(
        &mut self,
        n: Option<usize>,
        column: &str,
        mut value: impl FnMut(&mut Self, usize) -> Result<T>,
    ) -> Result<Vec<T>> {
        let len = self.length(n, column)?;
        let mut values = Vec::with_capacity(len);
        for i in 0..len {
            values.push(value(self, i)?);
        }
        Ok(values)
    }

    /// A column of ids below `limit`.
    pub fn ids<T>(
        &mut self,
        n: usize,
        limit: usize,
        what: &str,
        make: fn(u32) -> T,
    ) -> Result<Vec<T>> {
        self.column(Some(n), what, |r, _| r.id(limit, what).map(make))
    }

    /// A value, added to `total`, which must stay at most `max`.
    pub fn counted(&mut self, total: &mut u64, max: u64, what: &str) -> Result<u64> {
        let at = self.pos;
        let value = self.varint()?;
        let sum = total.checked_add(value).filter(|&sum| sum <= max);
        *total = sum.ok_or_else(|| self.invalid(at, format!("the {what} add up to over {max}")))?;
        Ok(value)
    }

    /// Refuses bytes left after the end.
    pub fn finish(&self) -> Result<()> {
        let (at, extra) = (self.pos, self.bytes.len() - self.pos);
        let what = self.what;
        self.check(extra == 0, at, || {
            format!("{extra} bytes follow the end of the {what}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_strings_and_columns_read_back() {
        let mut w = Writer::default();
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            w.varint(v);
        }
        w.string("größe");
        w.times([3u64, 5, 5, 9].into_iter(), 1);
        let mut r = Reader::new(&w.out, "test");
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(r.varint().unwrap(), v);
        }
        assert_eq!(r.string().unwrap(), "größe");
        let mut from = 1;
        let n = r.length(None, "times").unwrap();
        let times: Vec<u64> = (0..n)
            .map(|_| r.time(&mut from, 9, "time").unwrap())
            .collect();
        assert_eq!(times, [3, 5, 5, 9]);
        r.finish().unwrap();
    }

    #[test]
    fn damage_is_refused_with_its_offset() {
        let mut r = Reader::new(&[0xff; 11], "test");
        let e = r.varint().unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(e.message.contains("64 bits"), "{e}");
        let mut r = Reader::new(&[5, b'a'], "test");
        r.section = "names";
        let e = r.string().unwrap_err();
        assert_eq!(e.message, "test bytes end at offset 2 inside the names");
        let mut r = Reader::new(&[200, 1], "test");
        assert!(
            r.length(None, "blocks").is_err(),
            "200 entries cannot fit in 0 bytes"
        );
        let mut r = Reader::new(&[7], "test");
        assert!(
            r.id(7, "thread")
                .unwrap_err()
                .message
                .contains("thread 7 does not exist")
        );
    }
}
