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
    compressor: Option<&mut zstd::bulk::Compressor<'static>>,
) {
    let header_at = out.len();
    out.resize(header_at + CHUNK_HEADER_LEN, 0);
    let payload_at = out.len();
    let mut used = Codec::None;
    if let (Codec::Zstd, Some(c)) = (codec, compressor) {
        // One allocation per chunk (not per record), so `compress` is fine here.
        if let Ok(packed) = c.compress(raw) {
            if packed.len() < raw.len() {
                out.extend_from_slice(&packed);
                used = Codec::Zstd;
            }
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
