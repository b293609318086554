//! Chunk framing: the 48-byte header that makes every chunk independently
//! locatable, checkable and decodable.
//!
//! ```text
//!  0  magic        4  "MLCK"
//!  4  kind         1  ChunkKind
//!  5  codec        1  Codec
//!  6  flags        2  reserved, 0
//!  8  stream       4  tid for event chunks, 0 otherwise
//! 12  stored_len   4  payload bytes on disk
//! 16  raw_len      4  payload bytes after decompression
//! 20  records      4  number of records in the payload
//! 24  t_first      8  time of the first timed record (ns)
//! 32  t_last       8  time of the last timed record (ns)
//! 40  payload_crc  4  CRC-32 (IEEE) of the stored payload
//! 44  header_crc   4  CRC-32 of bytes 0..44
//! ```
//! All integers are little-endian.

use crate::format::{CHUNK_HEADER_LEN, CHUNK_MAGIC, ChunkKind, Codec, MAX_CHUNK_RAW_LEN};

/// A decoded chunk header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// What the records are.
    pub kind: ChunkKind,
    /// How the payload is stored.
    pub codec: Codec,
    /// The thread id for event chunks.
    pub stream: u32,
    /// Payload bytes on disk.
    pub stored_len: u32,
    /// Payload bytes once decompressed.
    pub raw_len: u32,
    /// Number of records.
    pub records: u32,
    /// Time of the first timed record.
    pub t_first: u64,
    /// Time of the last timed record.
    pub t_last: u64,
    /// CRC-32 of the stored payload.
    pub payload_crc: u32,
}

/// Why 48 bytes are not a valid chunk header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderProblem {
    /// The magic is wrong: this is not a chunk boundary.
    Magic,
    /// The header checksum does not match.
    Checksum,
    /// The kind or codec byte is unknown to this version.
    UnknownKindOrCodec,
    /// The lengths are impossible.
    Length,
}

impl ChunkHeader {
    /// Serialises the header.
    pub fn to_bytes(&self) -> [u8; CHUNK_HEADER_LEN] {
        let mut b = [0u8; CHUNK_HEADER_LEN];
        b[0..4].copy_from_slice(&CHUNK_MAGIC);
        b[4] = self.kind as u8;
        b[5] = self.codec as u8;
        b[8..12].copy_from_slice(&self.stream.to_le_bytes());
        b[12..16].copy_from_slice(&self.stored_len.to_le_bytes());
        b[16..20].copy_from_slice(&self.raw_len.to_le_bytes());
        b[20..24].copy_from_slice(&self.records.to_le_bytes());
        b[24..32].copy_from_slice(&self.t_first.to_le_bytes());
        b[32..40].copy_from_slice(&self.t_last.to_le_bytes());
        b[40..44].copy_from_slice(&self.payload_crc.to_le_bytes());
        let crc = crc32fast::hash(&b[0..44]);
        b[44..48].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Parses and checks a header.
    pub fn parse(b: &[u8; CHUNK_HEADER_LEN]) -> Result<ChunkHeader, HeaderProblem> {
        if b[0..4] != CHUNK_MAGIC {
            return Err(HeaderProblem::Magic);
        }
        if crc32fast::hash(&b[0..44]) != le32(b, 44) {
            return Err(HeaderProblem::Checksum);
        }
        let kind = ChunkKind::from_code(b[4]).ok_or(HeaderProblem::UnknownKindOrCodec)?;
        let codec = Codec::from_code(b[5]).ok_or(HeaderProblem::UnknownKindOrCodec)?;
        let header = ChunkHeader {
            kind,
            codec,
            stream: le32(b, 8),
            stored_len: le32(b, 12),
            raw_len: le32(b, 16),
            records: le32(b, 20),
            t_first: le64(b, 24),
            t_last: le64(b, 32),
            payload_crc: le32(b, 40),
        };
        if header.raw_len > MAX_CHUNK_RAW_LEN
            || header.stored_len > MAX_CHUNK_RAW_LEN
            || (codec == Codec::None && header.stored_len != header.raw_len)
            || (codec == Codec::Columns && kind != ChunkKind::Events)
        {
            return Err(HeaderProblem::Length);
        }
        Ok(header)
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Frames `raw` as one chunk appended to `out`, compressing it with
/// `compressor` when `codec` asks for it. Falls back to storing the payload
/// uncompressed when compression would not make it smaller.
pub fn frame_chunk(
    out: &mut Vec<u8>,
    kind: ChunkKind,
    stream: u32,
    records: u32,
    t_first: u64,
    t_last: u64,
    raw: &[u8],
    codec: Codec,
    compressor: Option<&mut Compressor>,
) {
    let header_at = out.len();
    out.resize(header_at + CHUNK_HEADER_LEN, 0);
    let payload_at = out.len();
    let mut used = Codec::None;
    if let (Codec::Zstd, Some(c)) = (codec, compressor) {
        // One allocation per chunk (not per record), so `compress` is fine here.
        if let Ok(packed) = c.matches.compress(raw)
            && packed.len() < raw.len()
        {
            out.extend_from_slice(&packed);
            used = Codec::Zstd;
        }
    }
    if used == Codec::None {
        out.extend_from_slice(raw);
    }
    let stored = &out[payload_at..];
    let header = ChunkHeader {
        kind,
        codec: used,
        stream,
        stored_len: stored.len() as u32,
        raw_len: raw.len() as u32,
        records,
        t_first,
        t_last,
        payload_crc: crc32fast::hash(stored),
    };
    out[header_at..payload_at].copy_from_slice(&header.to_bytes());
}

/// The chunk compressor (zstd), exposed so writers that drive
/// [`crate::ChunkBuilder`]s themselves need no direct zstd dependency.
///
/// It holds two zstd contexts. `matches` is zstd level 1 with matches of at
/// least 7 bytes and a 1 K-entry hash table (which stays in the first-level
/// cache): event columns are runs of small varints, where short matches cost
/// more time to find than they save bytes. `literals` searches no matches at
/// all and Huffman-codes every byte: for a column of nearly random small values
/// (the sizes, stacks and time steps of `alloc-bench`) that is smaller *and*
/// three times cheaper than `matches`, which finds many short matches there
/// and pays for each. Each event column picks one by a probe of its first
/// `PROBE_BYTES` (see [`Compressor::column`]). The trace records neither
/// setting: any zstd frame reads.
pub struct Compressor {
    matches: zstd::bulk::Compressor<'static>,
    literals: zstd::bulk::Compressor<'static>,
    /// The probes' output (and the second try of a column), kept between chunks.
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor").finish_non_exhaustive()
    }
}

/// The bytes of a column from which [`Compressor::column`] picks its mode.
const PROBE_BYTES: usize = 1024;

/// Compresses `src` with `z` to the end of `out`; the compressed size, when
/// smaller than `src`.
fn compress_to_end(
    z: &mut zstd::bulk::Compressor<'static>,
    src: &[u8],
    out: &mut Vec<u8>,
) -> Option<usize> {
    let at = out.len();
    out.reserve(zstd::compress_bound(src.len()));
    let mut cursor = std::io::Cursor::new(&mut *out);
    cursor.set_position(at as u64);
    let n = z.compress_to_buffer(src, &mut cursor).ok();
    match n.filter(|&n| n < src.len()) {
        Some(n) => Some(n),
        None => {
            out.truncate(at);
            None
        }
    }
}

impl Compressor {
    /// Compresses the event column `c` (over 64 bytes) to the end of `out`;
    /// its compressed size, or `None` (and `out` unchanged) when that is not
    /// smaller.
    ///
    /// The mode is picked per column and chunk from the column's bytes only
    /// (so a chunk's bytes depend on its events alone): its first
    /// `PROBE_BYTES` are compressed with `literals`, and when that does not
    /// already pack them below one byte in six (where only matches go further:
    /// a Huffman code spends at least a bit per byte) with `matches` too;
    /// `literals` is used when it packed the probe to at most 95 % of what
    /// `matches` did. A column that `literals` still packs below one byte in
    /// six is compressed with `matches` as well, and the smaller kept. A
    /// column no longer than the probe is compressed both ways.
    pub fn column(&mut self, c: &[u8], out: &mut Vec<u8>) -> Option<usize> {
        let scratch = &mut self.scratch;
        if c.len() <= PROBE_BYTES {
            scratch.clear();
            let by_literals = compress_to_end(&mut self.literals, c, scratch);
            let at = out.len();
            let by_matches = compress_to_end(&mut self.matches, c, out);
            return match (by_literals, by_matches) {
                (Some(l), m) if m.is_none_or(|m| l < m) => {
                    out.truncate(at);
                    out.extend_from_slice(&scratch[..l]);
                    Some(l)
                }
                (_, m) => m,
            };
        }
        let probe = &c[..PROBE_BYTES];
        scratch.clear();
        let l = compress_to_end(&mut self.literals, probe, scratch).unwrap_or(probe.len());
        let use_literals = l * 6 >= probe.len() && {
            scratch.clear();
            let m = compress_to_end(&mut self.matches, probe, scratch).unwrap_or(probe.len());
            l * 20 <= m * 19
        };
        if !use_literals {
            return compress_to_end(&mut self.matches, c, out);
        }
        let n = compress_to_end(&mut self.literals, c, out)?;
        if n * 6 < c.len() {
            scratch.clear();
            if let Some(m) = compress_to_end(&mut self.matches, c, scratch)
                && m < n
            {
                let at = out.len() - n;
                out.truncate(at);
                out.extend_from_slice(&scratch[..m]);
                return Some(m);
            }
        }
        Some(n)
    }
}

/// The chunk compressor (see [`Compressor`]).
pub fn compressor() -> std::io::Result<Compressor> {
    use zstd::stream::raw::CParameter;
    let mut matches = zstd::bulk::Compressor::new(1)?;
    matches.set_parameter(CParameter::MinMatch(7))?;
    matches.set_parameter(CParameter::HashLog(10))?;
    let mut literals = zstd::bulk::Compressor::new(1)?;
    literals.set_parameter(CParameter::MinMatch(7))?;
    literals.set_parameter(CParameter::HashLog(10))?;
    // The fast strategy's largest step: it looks for no match to speak of…
    literals.set_parameter(CParameter::TargetLength(1 << 17))?;
    // … and Huffman-codes the literals, which a step above 1 otherwise turns off.
    literals.set_parameter(CParameter::LiteralCompressionMode(
        zstd::zstd_safe::ParamSwitch::Enable,
    ))?;
    Ok(Compressor {
        matches,
        literals,
        scratch: Vec::new(),
    })
}

/// Frames an event chunk whose payload is `columns` (see `columns.rs`):
/// every column is compressed on its own when a compressor is given.
///
/// The decompressed payload is `varint C, C × varint column length, the
/// columns`; stored with codec 2 it is `varint C, C × (codec byte, varint
/// raw length, varint stored length), the stored columns`.
///
/// Columns are compressed straight into `out`, after room for the largest
/// column table, which is then written and the columns moved down to it: no
/// buffer is allocated per chunk or per column.
pub fn frame_columns(
    out: &mut Vec<u8>,
    kind: ChunkKind,
    stream: u32,
    records: u32,
    t_first: u64,
    t_last: u64,
    columns: &[Vec<u8>],
    mut compressor: Option<&mut Compressor>,
) {
    use crate::varint::put_u64;
    let header_at = out.len();
    out.resize(header_at + CHUNK_HEADER_LEN, 0);
    let payload_at = out.len();
    // A varint is at most 10 bytes: the table's largest size.
    let table_room = 10 + columns.len() * 21;
    out.resize(payload_at + table_room, 0);
    let bodies_at = out.len();
    let mut table = Vec::with_capacity(columns.len());
    let mut raw_len = varint_len(columns.len() as u64);
    for c in columns {
        raw_len += varint_len(c.len() as u64) + c.len();
        let packed = match compressor.as_deref_mut() {
            Some(z) if c.len() > 64 => z.column(c, out),
            _ => None,
        };
        table.push(match packed {
            Some(n) => (Codec::Zstd, c.len(), n),
            None => {
                out.extend_from_slice(c);
                (Codec::None, c.len(), c.len())
            }
        });
    }
    let mut head = Vec::with_capacity(table_room);
    put_u64(&mut head, columns.len() as u64);
    for &(codec, raw, stored) in &table {
        head.push(codec as u8);
        put_u64(&mut head, raw as u64);
        put_u64(&mut head, stored as u64);
    }
    let table_at = bodies_at - head.len();
    out[table_at..bodies_at].copy_from_slice(&head);
    out.copy_within(table_at.., payload_at);
    out.truncate(out.len() - (table_at - payload_at));
    let stored = &out[payload_at..];
    let header = ChunkHeader {
        kind,
        codec: Codec::Columns,
        stream,
        stored_len: stored.len() as u32,
        raw_len: raw_len as u32,
        records,
        t_first,
        t_last,
        payload_crc: crc32fast::hash(stored),
    };
    out[header_at..payload_at].copy_from_slice(&header.to_bytes());
}

/// Bytes of `value` as a varint.
fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// Expands a codec-2 stored payload into the decompressed columnar form
/// (`varint C, C × varint length, columns`) in `out`.
pub fn unpack_columns(
    stored: &[u8],
    raw_len: usize,
    out: &mut Vec<u8>,
    mut decompressor: Option<&mut zstd::bulk::Decompressor<'static>>,
) -> Result<(), String> {
    use crate::varint::{Cursor, put_u64};
    let mut c = Cursor::new(stored);
    let n = c.u64().ok_or("the column table is truncated")? as usize;
    if n > 64 {
        return Err(format!("the chunk claims {n} columns"));
    }
    let mut entries = Vec::with_capacity(n);
    for _ in 0..n {
        let codec = c.u8().ok_or("the column table is truncated")?;
        let raw = c.u64().ok_or("the column table is truncated")? as usize;
        let len = c.u64().ok_or("the column table is truncated")? as usize;
        if raw > raw_len || len > stored.len() {
            return Err("a column claims an impossible length".into());
        }
        entries.push((codec, raw, len));
    }
    out.clear();
    put_u64(out, n as u64);
    for &(_, raw, _) in &entries {
        put_u64(out, raw as u64);
    }
    for (i, &(codec, raw, len)) in entries.iter().enumerate() {
        let body = c
            .bytes(len)
            .ok_or("the columns run past the end of the chunk")?;
        match Codec::from_code(codec) {
            Some(Codec::None) if len == raw => out.extend_from_slice(body),
            Some(Codec::Zstd) => {
                let at = out.len();
                out.resize(at + raw, 0);
                let dst = &mut out[at..];
                let got = match decompressor.as_deref_mut() {
                    Some(d) => d.decompress_to_buffer(body, dst),
                    None => zstd::bulk::decompress_to_buffer(body, dst),
                }
                .map_err(|e| format!("column {i} does not decompress: {e}"))?;
                if got != raw {
                    return Err(format!("column {i} decompresses to {got} bytes, not {raw}"));
                }
            }
            _ => return Err(format!("column {i} has an unknown codec {codec}")),
        }
    }
    if out.len() != raw_len {
        return Err(format!(
            "the columns decompress to {} bytes, not the {raw_len} the header says",
            out.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns of every kind the probe tells apart (nearly random small values,
    /// runs that repeat, short ones, incompressible ones) come back whole from
    /// the mode picked, which is one of the two.
    #[test]
    fn every_column_decompresses_whatever_mode_it_took() {
        let mut z = compressor().unwrap();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let small: Vec<u8> = (0..100_000).map(|_| (next() % 7) as u8).collect();
        let runs: Vec<u8> = (0..100_000u32).map(|i| (i % 97 % 13) as u8).collect();
        let short: Vec<u8> = (0..500).map(|_| (next() % 5) as u8).collect();
        let noise: Vec<u8> = (0..5000).map(|_| next() as u8).collect();
        for (name, c) in [
            ("small", &small),
            ("runs", &runs),
            ("short", &short),
            ("noise", &noise),
        ] {
            let mut out = vec![7u8; 3];
            match z.column(c, &mut out) {
                Some(n) => {
                    assert_eq!(out.len(), 3 + n, "{name}");
                    let back = zstd::bulk::decompress(&out[3..], c.len()).unwrap();
                    assert!(back == *c, "{name}");
                }
                None => assert_eq!(out, [7; 3], "{name}"),
            }
        }
        let mut by_literals = Vec::new();
        let l = compress_to_end(&mut z.literals, &small, &mut by_literals).unwrap();
        let mut by_matches = Vec::new();
        let m = compress_to_end(&mut z.matches, &small, &mut by_matches).unwrap();
        let got = z.column(&small, &mut Vec::new());
        assert!(got == Some(l) || got == Some(m), "{got:?} {l} {m}");
        assert!(z.column(&noise, &mut Vec::new()).is_none());
    }
}
