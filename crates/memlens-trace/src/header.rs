//! The file header: magic, format version, oldest reader version, header length.
//!
//! ```text
//!  0  magic              8  89 4D 4C 45 4E 53 0D 0A  ("\x89MLENS\r\n")
//!  8  version            2  format version the writer used
//! 10  min_read_version   2  oldest reader version that can read this file
//! 12  header_len         4  bytes from offset 0 to the first chunk (>= 24)
//! 16  flags              4  reserved, 0
//! 20  header_crc         4  CRC-32 of bytes 0..20 followed by bytes 24..header_len
//! ```
//! A reader accepts a file when `min_read_version <= READ_VERSION`, skips
//! `header_len - 24` extension bytes it may not understand, and skips sized
//! records with unknown tags, so newer files stay readable while their
//! additions are only additive.

use crate::format::{FILE_HEADER_LEN, FILE_MAGIC, FORMAT_VERSION, READ_VERSION};

/// A parsed file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// The format version the writer used.
    pub version: u16,
    /// The oldest reader version that can read the file.
    pub min_read_version: u16,
    /// Where the first chunk starts.
    pub header_len: u32,
}

/// Why the start of a file is not a header this build can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer bytes than a header.
    TooShort(usize),
    /// The magic does not match: not a memlens trace.
    NotATrace,
    /// The checksum does not match.
    Checksum,
    /// Written by a newer memlens that this build cannot read.
    TooNew {
        /// The file's version.
        version: u16,
        /// The oldest reader it accepts.
        min_read_version: u16,
    },
    /// The header length is impossible.
    BadLength(u32),
}

/// The bytes of a version-1 header with no extension.
pub fn header_bytes() -> [u8; FILE_HEADER_LEN] {
    let mut b = [0u8; FILE_HEADER_LEN];
    b[0..8].copy_from_slice(&FILE_MAGIC);
    b[8..10].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    b[10..12].copy_from_slice(&1u16.to_le_bytes());
    b[12..16].copy_from_slice(&(FILE_HEADER_LEN as u32).to_le_bytes());
    let crc = crc32fast::hash(&b[0..20]);
    b[20..24].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Parses the header at the start of `bytes` (which holds at least the whole
/// header when the file is long enough).
pub fn parse_header(bytes: &[u8]) -> Result<FileHeader, HeaderError> {
    if bytes.len() < FILE_MAGIC.len() || bytes[0..8] != FILE_MAGIC {
        if bytes.len() < FILE_MAGIC.len() && FILE_MAGIC.starts_with(bytes) {
            return Err(HeaderError::TooShort(bytes.len()));
        }
        return Err(HeaderError::NotATrace);
    }
    if bytes.len() < FILE_HEADER_LEN {
        return Err(HeaderError::TooShort(bytes.len()));
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    let min_read_version = u16::from_le_bytes([bytes[10], bytes[11]]);
    let header_len = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]);
    if (header_len as usize) < FILE_HEADER_LEN || header_len > 1 << 20 {
        return Err(HeaderError::BadLength(header_len));
    }
    if bytes.len() < header_len as usize {
        return Err(HeaderError::TooShort(bytes.len()));
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[0..20]);
    crc.update(&bytes[FILE_HEADER_LEN..header_len as usize]);
    let stored = u32::from_le_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
    if crc.finalize() != stored {
        return Err(HeaderError::Checksum);
    }
    if min_read_version > READ_VERSION {
        return Err(HeaderError::TooNew {
            version,
            min_read_version,
        });
    }
    Ok(FileHeader {
        version,
        min_read_version,
        header_len,
    })
}
