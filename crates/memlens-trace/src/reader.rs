//! [`TraceFile`]: opens a trace, indexes its chunks and reads their payloads.
//!
//! Opening reads the header and then only the 48-byte chunk headers, seeking
//! over payloads, so it is fast for any file size. The index stops at the
//! first byte that is not a valid chunk (a truncated tail, a flipped byte in a
//! header), records the exact offset as [`Damage`], and then resynchronises on
//! the next valid chunk header, so every complete chunk before *and* after the
//! damage stays usable. A payload whose checksum fails is reported when it is
//! read.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::chunk::{ChunkHeader, HeaderProblem};
use crate::format::{CHUNK_HEADER_LEN, CHUNK_MAGIC, Codec, READ_VERSION};
use crate::header::{FileHeader, HeaderError, parse_header};

/// A chunk found by the index scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkInfo {
    /// File offset of the chunk header.
    pub offset: u64,
    /// The parsed header.
    pub header: ChunkHeader,
}

/// A place where the file stops being valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte offset {offset}: {reason}")]
pub struct Damage {
    /// Byte offset in the file.
    pub offset: u64,
    /// What is wrong there, as a phrase.
    pub reason: String,
    /// Bytes skipped until the next valid chunk (or the end of the file).
    pub skipped: u64,
}

/// An error that prevents reading a file at all.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", .path.display())]
pub struct OpenError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong, as one sentence fragment.
    pub message: String,
}

/// An opened, indexed trace file.
#[derive(Debug)]
pub struct TraceFile {
    path: PathBuf,
    file: File,
    len: u64,
    header: FileHeader,
    chunks: Vec<ChunkInfo>,
    damage: Vec<Damage>,
}

fn header_message(e: HeaderError, len: u64) -> String {
    match e {
        HeaderError::TooShort(_) if len == 0 => {
            "the file is empty (it ends at byte offset 0), not a memlens trace".into()
        }
        HeaderError::TooShort(n) => {
            format!("the file ends at byte offset {n}, inside the trace header (truncated)")
        }
        HeaderError::NotATrace => {
            "not a memlens trace (byte offset 0 does not start with the memlens magic)".into()
        }
        HeaderError::Checksum => {
            "the trace header is damaged (checksum mismatch at byte offset 20)".into()
        }
        HeaderError::TooNew {
            version,
            min_read_version,
        } => format!(
            "written by a newer memlens (byte offset 8: format version {version}, needs reader version {min_read_version}); this build reads up to version {READ_VERSION}: upgrade memlens"
        ),
        HeaderError::BadLength(n) => {
            format!("the trace header claims an impossible length of {n} bytes at byte offset 12")
        }
    }
}

impl TraceFile {
    /// Opens and indexes `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<TraceFile, OpenError> {
        let path = path.as_ref().to_path_buf();
        let err = |message: String| OpenError {
            path: path.clone(),
            message,
        };
        let mut file = File::open(&path).map_err(|e| err(format!("cannot open: {e}")))?;
        let len = file
            .metadata()
            .map_err(|e| err(format!("cannot read metadata: {e}")))?
            .len();
        let mut start = vec![0u8; (len.min(4096)) as usize];
        file.read_exact(&mut start)
            .map_err(|e| err(format!("cannot read: {e}")))?;
        let header = match parse_header(&start) {
            Ok(h) => h,
            Err(HeaderError::TooShort(n)) if n == start.len() && len > start.len() as u64 => {
                // A header extension longer than the first read.
                let want = u32::from_le_bytes([start[12], start[13], start[14], start[15]]);
                let mut all = vec![0u8; want as usize];
                file.read_exact_at(&mut all, 0)
                    .map_err(|e| err(format!("cannot read: {e}")))?;
                parse_header(&all).map_err(|e| err(header_message(e, len)))?
            }
            Err(e) => return Err(err(header_message(e, len))),
        };
        let mut trace = TraceFile {
            path,
            file,
            len,
            header,
            chunks: Vec::new(),
            damage: Vec::new(),
        };
        trace.index();
        Ok(trace)
    }

    fn index(&mut self) {
        let mut offset = u64::from(self.header.header_len);
        let mut buf = [0u8; CHUNK_HEADER_LEN];
        while offset < self.len {
            let remaining = self.len - offset;
            if remaining < CHUNK_HEADER_LEN as u64 {
                self.damage.push(Damage {
                    offset,
                    reason: format!(
                        "the file ends {remaining} bytes into a chunk header (truncated)"
                    ),
                    skipped: remaining,
                });
                return;
            }
            if self.file.read_exact_at(&mut buf, offset).is_err() {
                self.damage.push(Damage {
                    offset,
                    reason: "cannot read the chunk header".into(),
                    skipped: remaining,
                });
                return;
            }
            match ChunkHeader::parse(&buf) {
                Ok(header) => {
                    let end = offset + CHUNK_HEADER_LEN as u64 + u64::from(header.stored_len);
                    if end > self.len {
                        self.damage.push(Damage {
                            offset,
                            reason: format!(
                                "the chunk here needs {} payload bytes but the file ends after {} (truncated)",
                                header.stored_len,
                                remaining - CHUNK_HEADER_LEN as u64
                            ),
                            skipped: remaining,
                        });
                        return;
                    }
                    self.chunks.push(ChunkInfo { offset, header });
                    offset = end;
                }
                Err(problem) => {
                    let reason = match problem {
                        HeaderProblem::Magic => "no chunk starts here (bad chunk magic)",
                        HeaderProblem::Checksum => {
                            "the chunk header is damaged (checksum mismatch)"
                        }
                        HeaderProblem::UnknownKindOrCodec => {
                            "the chunk has a kind or codec this version does not know"
                        }
                        HeaderProblem::Length => "the chunk header claims impossible lengths",
                    };
                    let next = self.resync(offset + 1);
                    self.damage.push(Damage {
                        offset,
                        reason: reason.into(),
                        skipped: next - offset,
                    });
                    offset = next;
                }
            }
        }
    }

    /// Finds the next offset at or after `from` holding a valid chunk header,
    /// or the end of the file.
    fn resync(&self, from: u64) -> u64 {
        const BLOCK: usize = 1 << 20;
        let mut block = vec![0u8; BLOCK + CHUNK_HEADER_LEN];
        let mut at = from;
        while at < self.len {
            let n = ((self.len - at) as usize).min(block.len());
            if self.file.read_exact_at(&mut block[..n], at).is_err() {
                return self.len;
            }
            let scan_end = n.saturating_sub(CHUNK_HEADER_LEN - 1).min(BLOCK);
            for i in 0..scan_end {
                if block[i..i + 4] == CHUNK_MAGIC {
                    let mut h = [0u8; CHUNK_HEADER_LEN];
                    h.copy_from_slice(&block[i..i + CHUNK_HEADER_LEN]);
                    if let Ok(header) = ChunkHeader::parse(&h) {
                        let start = at + i as u64;
                        let end = start + CHUNK_HEADER_LEN as u64 + u64::from(header.stored_len);
                        if end <= self.len {
                            return start;
                        }
                    }
                }
            }
            if n < block.len() {
                return self.len;
            }
            at += BLOCK as u64;
        }
        self.len
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for a file with no chunks.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The parsed file header.
    pub fn header(&self) -> FileHeader {
        self.header
    }

    /// Every valid chunk, in file order.
    pub fn chunks(&self) -> &[ChunkInfo] {
        &self.chunks
    }

    /// Damage found while indexing, in file order.
    pub fn index_damage(&self) -> &[Damage] {
        &self.damage
    }

    /// An independent handle for reading chunk payloads from another thread.
    pub fn chunk_reader(&self) -> std::io::Result<ChunkReader> {
        Ok(ChunkReader {
            file: self.file.try_clone()?,
            decompressor: zstd::bulk::Decompressor::new()?,
        })
    }

    /// Reads, checks and decompresses the payload of `chunk` into `out`
    /// (replacing its contents); `scratch` holds the stored bytes.
    pub fn read_payload(
        &self,
        chunk: &ChunkInfo,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<(), Damage> {
        read_payload_with(&self.file, None, chunk, scratch, out)
    }
}

fn read_payload_with(
    file: &File,
    mut decompressor: Option<&mut zstd::bulk::Decompressor<'static>>,
    chunk: &ChunkInfo,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), Damage> {
    {
        let h = &chunk.header;
        let damage = |reason: String| Damage {
            offset: chunk.offset,
            reason,
            skipped: CHUNK_HEADER_LEN as u64 + u64::from(h.stored_len),
        };
        scratch.resize(h.stored_len as usize, 0);
        file.read_exact_at(scratch, chunk.offset + CHUNK_HEADER_LEN as u64)
            .map_err(|e: io::Error| damage(format!("cannot read the chunk payload: {e}")))?;
        if crc32fast::hash(scratch) != h.payload_crc {
            return Err(damage(
                "the chunk payload is damaged (checksum mismatch)".into(),
            ));
        }
        out.clear();
        match h.codec {
            Codec::None => out.extend_from_slice(scratch),
            Codec::Columns => {
                crate::chunk::unpack_columns(
                    scratch,
                    h.raw_len as usize,
                    out,
                    decompressor.as_deref_mut(),
                )
                .map_err(|e| damage(format!("the chunk payload does not decode: {e}")))?;
            }
            Codec::Zstd => {
                let n = match decompressor {
                    // Into the vector's spare room: not zeroed first, as a slice
                    // would have to be (a memset of every chunk).
                    Some(d) => {
                        out.reserve(h.raw_len as usize);
                        d.decompress_to_buffer(scratch.as_slice(), out)
                    }
                    None => {
                        out.resize(h.raw_len as usize, 0);
                        zstd::bulk::decompress_to_buffer(scratch, out.as_mut_slice())
                    }
                }
                .map_err(|e| damage(format!("the chunk payload does not decompress: {e}")))?;
                if n != h.raw_len as usize {
                    return Err(damage(format!(
                        "the chunk payload decompresses to {n} bytes, not the {} its header says",
                        h.raw_len
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Reads chunk payloads through its own file handle and a reusable zstd
/// context (so a decoding thread needs no access to the [`TraceFile`]).
pub struct ChunkReader {
    file: File,
    decompressor: zstd::bulk::Decompressor<'static>,
}

impl std::fmt::Debug for ChunkReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChunkReader").finish_non_exhaustive()
    }
}

impl ChunkReader {
    /// Same as [`TraceFile::read_payload`].
    pub fn read_payload(
        &mut self,
        chunk: &ChunkInfo,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<(), Damage> {
        read_payload_with(
            &self.file,
            Some(&mut self.decompressor),
            chunk,
            scratch,
            out,
        )
    }
}
