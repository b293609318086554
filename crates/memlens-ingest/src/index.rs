//! The on-disk index of a trace: what one pass over the events learned, kept so that the
//! next command does not read the events again.
//!
//! Today it holds the coalesced heap model (`memlens-heap`'s `HeapModelBuilder::coalescing`):
//! trees at every instant of its grid, the timeline's peaks and dips, growth, with the
//! symbolized context. It lives beside the trace as `<trace>.mlidx`, or, when that
//! directory is not writable, under `$XDG_CACHE_HOME/memlens/` (`~/.cache/memlens/`)
//! named by the trace's key. It is never required: a missing index is built, a stale,
//! damaged or foreign one is rebuilt (with one sentence saying why), and deleting it is
//! always safe.
//!
//! ```text
//!  0  magic          8  "MLIDX\r\n\x1a"
//!  8  version        4  INDEX_VERSION
//! 12  key           36  what the index was built from (see `IndexKey`)
//! 48  raw_len        8  payload bytes after decompression
//! 56  stored_len     8  payload bytes on disk
//! 64  payload_crc    4  CRC-32 of the stored payload
//! 68  header_crc     4  CRC-32 of bytes 0..68
//! 72  payload           zstd of the encoded heap model
//! ```
//!
//! The key identifies the trace by its content, never by its name: the file's length
//! and a hash of every chunk header (each of which holds its payload's CRC-32, length
//! and time range), plus the versions of the index, the model encoding and memlens.
//! Renaming or copying a trace keeps its index valid; appending to it or rewriting it
//! makes the index stale. A change that keeps every chunk header (a payload damaged
//! after indexing) keeps the index, which shows the trace as it was when indexed.

use std::hash::Hasher;
use std::io::Write;
use std::path::{Path, PathBuf};

use memlens_heap::{HeapModel, MODEL_CODEC_VERSION};

use crate::input::TraceInput;

/// The version of this file layout and of what the model in it means: bumped when
/// the layout changes or when symbolizing names frames differently (2: unnamed
/// frames are labelled `0x… (in module+0x…)`, and the trace's `--wrapper` patterns
/// apply; 3: inlined frames of Rust's standard library are told by their source
/// file), so an index built by an older memlens is rebuilt, never trusted.
const INDEX_VERSION: u32 = 3;
const MAGIC: &[u8; 8] = b"MLIDX\r\n\x1a";
const HEADER_LEN: usize = 72;
/// The index file's extension, appended to the trace's name.
pub const INDEX_EXTENSION: &str = "mlidx";

/// What an index was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IndexKey {
    trace_len: u64,
    chunks: u64,
    headers_hash: u64,
    headers_crc: u32,
    /// The model codec's version and memlens' version, hashed.
    build: u64,
}

impl IndexKey {
    fn of(input: &TraceInput) -> IndexKey {
        let mut crc = crc32fast::Hasher::new();
        let mut fx = rustc_hash::FxHasher::default();
        let header = input.file.header();
        let mut feed = |bytes: &[u8]| {
            crc.update(bytes);
            fx.write(bytes);
        };
        feed(&header.version.to_le_bytes());
        feed(&header.header_len.to_le_bytes());
        for chunk in input.file.chunks() {
            feed(&chunk.offset.to_le_bytes());
            feed(&chunk.header.to_bytes());
        }
        let mut build = rustc_hash::FxHasher::default();
        build.write_u32(MODEL_CODEC_VERSION);
        build.write(env!("CARGO_PKG_VERSION").as_bytes());
        IndexKey {
            trace_len: input.file.len(),
            chunks: input.file.chunks().len() as u64,
            headers_hash: fx.finish(),
            headers_crc: crc.finalize(),
            build: build.finish(),
        }
    }

    fn to_bytes(self) -> [u8; 36] {
        let mut out = [0u8; 36];
        out[0..8].copy_from_slice(&self.trace_len.to_le_bytes());
        out[8..16].copy_from_slice(&self.chunks.to_le_bytes());
        out[16..24].copy_from_slice(&self.headers_hash.to_le_bytes());
        out[24..28].copy_from_slice(&self.headers_crc.to_le_bytes());
        out[28..36].copy_from_slice(&self.build.to_le_bytes());
        out
    }

    /// The name of the index in the cache directory.
    fn file_name(self) -> String {
        format!(
            "{:016x}{:016x}{:08x}.{INDEX_EXTENSION}",
            self.trace_len, self.headers_hash, self.headers_crc
        )
    }
}

/// What looking for an index found.
pub(crate) enum Lookup {
    /// A valid index with the heap model.
    Found(Box<HeapModel>),
    /// No index (or one without the instants asked for): build one, silently.
    Missing,
    /// An index that cannot be trusted: build one, and say why in this sentence.
    Rejected(String),
}

/// Where the index of `trace` is kept beside it.
pub fn index_path(trace: &Path) -> PathBuf {
    let mut name = trace.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(INDEX_EXTENSION);
    trace.with_file_name(name)
}

/// The cache directory used when the trace's directory is not writable.
fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("memlens"))
}

/// Looks for the index of `input` that is exact at every time of `instants`.
pub(crate) fn load(input: &TraceInput, instants: &[u64]) -> Lookup {
    let key = IndexKey::of(input);
    let candidates = [
        Some(index_path(input.path())),
        cache_dir().map(|d| d.join(key.file_name())),
    ];
    for path in candidates.into_iter().flatten() {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        return match parse(&bytes, key) {
            Ok(model) if covers(&model, instants) => Lookup::Found(Box::new(model)),
            Ok(_) => Lookup::Missing,
            Err(Problem::Stale) => Lookup::Rejected(format!(
                "the index {} belongs to another version of the trace; rebuilding it",
                path.display()
            )),
            Err(Problem::Damaged(why)) => Lookup::Rejected(format!(
                "the index {} is damaged ({why}); rebuilding it",
                path.display()
            )),
        };
    }
    Lookup::Missing
}

/// Whether `model` is exact at every time of `instants`.
fn covers(model: &HeapModel, instants: &[u64]) -> bool {
    let exact = model.exact_instants().unwrap_or(&[]);
    instants
        .iter()
        .all(|t| exact.binary_search(t).is_ok() || *t > model.run().end_ns)
}

enum Problem {
    /// Built from another trace, another trace version or another memlens.
    Stale,
    /// Not a valid index file.
    Damaged(String),
}

fn parse(bytes: &[u8], key: IndexKey) -> Result<HeapModel, Problem> {
    let damaged = |why: &str| Problem::Damaged(why.to_owned());
    if bytes.len() < HEADER_LEN || &bytes[0..8] != MAGIC {
        return Err(damaged("not a memlens index"));
    }
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    if crc32fast::hash(&bytes[0..68]) != u32_at(68) {
        return Err(damaged("header checksum mismatch"));
    }
    if u32_at(8) != INDEX_VERSION || bytes[12..48] != key.to_bytes() {
        return Err(Problem::Stale);
    }
    let (raw_len, stored_len) = (u64_at(48), u64_at(56));
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != stored_len {
        return Err(damaged("truncated"));
    }
    if crc32fast::hash(payload) != u32_at(64) {
        return Err(damaged("payload checksum mismatch"));
    }
    let raw = zstd::bulk::decompress(
        payload,
        raw_len.min(stored_len.saturating_mul(1024)).min(1 << 33) as usize,
    )
    .map_err(|e| Problem::Damaged(format!("cannot decompress: {e}")))?;
    HeapModel::decode(&raw).map_err(|e| Problem::Damaged(e.to_string()))
}

/// Writes the index of `input` beside it, or in the cache directory when that fails;
/// returns where, or why neither worked.
pub(crate) fn store(input: &TraceInput, model: &HeapModel) -> Result<PathBuf, String> {
    let key = IndexKey::of(input);
    let raw = model.encode();
    let payload = zstd::bulk::compress(&raw, 3).map_err(|e| e.to_string())?;
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&INDEX_VERSION.to_le_bytes());
    bytes.extend_from_slice(&key.to_bytes());
    bytes.extend_from_slice(&(raw.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    let header_crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&header_crc.to_le_bytes());
    bytes.extend_from_slice(&payload);
    let beside = index_path(input.path());
    let first = write_atomically(&beside, &bytes);
    if first.is_ok() {
        return Ok(beside);
    }
    let Some(dir) = cache_dir() else {
        return Err(format!("cannot write {}", beside.display()));
    };
    let cached = dir.join(key.file_name());
    std::fs::create_dir_all(&dir)
        .and_then(|()| write_atomically(&cached, &bytes))
        .map(|()| cached)
        .map_err(|e| {
            format!(
                "cannot write {} nor {}: {e}",
                beside.display(),
                dir.display()
            )
        })
}

/// Writes `bytes` to a temporary file next to `path` and renames it over `path`, so a
/// reader never sees half an index.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(bytes));
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
