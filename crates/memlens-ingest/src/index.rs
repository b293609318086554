//! The on-disk index of a trace: what one pass over the events learned, kept so that the
//! next command does not read the events again.
//!
//! It holds the coalesced heap model (`memlens-heap`'s `HeapModelBuilder::coalescing`):
//! trees at every instant of its grid, the timeline's peaks and dips, growth, with the
//! symbolized context; once a command has read the allocation map of a run too large
//! for the map's memory, the windows of it that the map held (`memlens-alloc`'s
//! `AllocModel::encode`: its blocks and bins; see [`store_alloc`] for which), so that
//! reopening the map reads no event either; and once `memlens summary` has read the
//! events (of a trace large enough: see `pass.rs`), its summary with the allocator
//! latencies (`memlens-heap`'s `encode_summary`: a few bytes per stack), so that the
//! next one reads none; and with the window of a run too large for the map's memory
//! that reaches the run's end, the whole run at a glance (`memlens-alloc`'s
//! `WholeRunMap::encode`: at most 1024 × 512 cells), which every window of the map
//! then carries; and checkpoints of the allocation map's reading before its window
//! (`memlens-alloc`'s `AllocModelBuilder::checkpoint`: the live set, sites, threads and
//! mappings at a time), from which the reading of a later window goes on instead of
//! reading every event from the run's start (see `checkpoints.rs`). Each part is
//! written by the command that built it, keeping the others. It lives beside the
//! trace as `<trace>.mlidx`, or, when that directory is not writable, under
//! `$XDG_CACHE_HOME/memlens/` (`~/.cache/memlens/`) named by the trace's key. It is
//! never required: a missing index is built, a stale, damaged or foreign one is
//! rebuilt (with one sentence saying why), and deleting it is always safe.
//!
//! ```text
//!  0  magic          8  "MLIDX\r\n\x1a"
//!  8  version        4  INDEX_VERSION
//! 12  key           36  what the index was built from (see `IndexKey`)
//! 48  raw_len        8  payload bytes after decompression
//! 56  stored_len     8  payload bytes on disk
//! 64  payload_crc    4  CRC-32 of the stored payload
//! 68  header_crc     4  CRC-32 of bytes 0..68
//! 72  payload           zstd of the encoded heap model (empty: none yet)
//!     parts             none or more, one after the other after the payload, each:
//!  0  tag            4  "AMAP" (an allocation-map model), "SUMM" (a summary),
//!                       "WRUN" (the whole run at a glance) or "CKPT" (a checkpoint)
//!  4  window        16  an allocation map's window (from, to), or u64::MAX twice: the
//!                       whole run; a checkpoint's time and the mapping changes fed
//!                       before it; zeros for the other parts
//! 20  raw_len        8  payload bytes after decompression
//! 28  stored_len     8  payload bytes on disk
//! 36  payload_crc    4  CRC-32 of the stored payload
//! 40  header_crc     4  CRC-32 of bytes 0..40 of this part
//! 44  payload           zstd of the encoded allocation-map model, summary or map
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

use memlens_alloc::{ALLOC_CODEC_VERSION, AllocModel, AllocModelBuilder, WholeRunMap};
use memlens_heap::latency::LatencyTable;
use memlens_heap::summary::Summary;
use memlens_heap::{
    HeapModel, MODEL_CODEC_VERSION, SUMMARY_CODEC_VERSION, decode_summary, encode_summary,
};

use crate::input::TraceInput;

/// The version of this file layout and of what the model in it means: bumped when
/// the layout changes or when symbolizing names frames differently (2: unnamed
/// frames are labelled `0x… (in module+0x…)`, and the trace's `--wrapper` patterns
/// apply; 3: inlined frames of Rust's standard library are told by their source
/// file; 4: the allocation-map part; 5: the summary part; 6: the whole-run part; 7:
/// the checkpoint parts), so an index built by an older memlens is rebuilt, never
/// trusted.
const INDEX_VERSION: u32 = 7;
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
        build.write_u32(ALLOC_CODEC_VERSION);
        build.write_u32(SUMMARY_CODEC_VERSION);
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

/// What looking for one part of an index found.
pub(crate) enum Lookup<T> {
    /// A valid index with this part.
    Found(Box<T>),
    /// No index, or one without this part (or not the instants or window asked for):
    /// build it, silently.
    Missing,
    /// An index, or a part of it, that cannot be trusted: build it, and say why in
    /// this sentence.
    Rejected(String),
}

impl<T> Lookup<T> {
    /// What was found, if anything; a part that cannot be trusted adds its sentence
    /// to `notes` (and is built again, as a missing one is).
    pub(crate) fn or_note(self, notes: &mut Vec<String>) -> Option<T> {
        match self {
            Lookup::Found(found) => Some(*found),
            Lookup::Missing => None,
            Lookup::Rejected(why) => {
                notes.push(why);
                None
            }
        }
    }
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

/// The index file of `input`, if there is one: its path and bytes (beside the trace
/// first, then in the cache directory).
fn find(input: &TraceInput, key: IndexKey) -> Option<(PathBuf, Vec<u8>)> {
    let candidates = [
        Some(index_path(input.path())),
        cache_dir().map(|d| d.join(key.file_name())),
    ];
    candidates
        .into_iter()
        .flatten()
        .find_map(|path| std::fs::read(&path).ok().map(|bytes| (path, bytes)))
}

/// The sentence of an index (or a part of it) that cannot be trusted.
fn rejected(path: &Path, problem: Problem) -> String {
    match problem {
        Problem::Stale => format!(
            "the index {} belongs to another version of the trace; rebuilding it",
            path.display()
        ),
        Problem::Damaged(why) => {
            format!(
                "the index {} is damaged ({why}); rebuilding it",
                path.display()
            )
        }
    }
}

/// The index of a trace as read once for a command's lookups ([`open`]): each lookup
/// answers from these bytes instead of reading the file again.
pub(crate) struct Opened {
    key: IndexKey,
    /// The index file's path and bytes, if there is one.
    file: Option<(PathBuf, Vec<u8>)>,
}

/// Reads the index of `input`, if any, for its lookups.
pub(crate) fn open(input: &TraceInput) -> Opened {
    let key = IndexKey::of(input);
    Opened {
        key,
        file: find(input, key),
    }
}

impl Opened {
    /// Looks for the heap model that is exact at every time of `instants`.
    pub(crate) fn heap(&self, instants: &[u64]) -> Lookup<HeapModel> {
        let Some((path, bytes)) = &self.file else {
            return Lookup::Missing;
        };
        let heap = split(bytes, self.key).and_then(|parts| match parts.heap {
            Some(part) => part.decode(HeapModel::decode).map(Some),
            None => Ok(None),
        });
        match heap {
            Ok(Some(model)) if covers(&model, instants) => Lookup::Found(Box::new(model)),
            Ok(_) => Lookup::Missing,
            Err(problem) => Lookup::Rejected(rejected(path, problem)),
        }
    }

    /// Looks for the allocation-map model holding `window` (`None`: the whole run).
    pub(crate) fn alloc(&self, window: Option<(u64, u64)>) -> Lookup<AllocModel> {
        self.part(Kept::Alloc(window), AllocModel::decode)
    }

    /// Looks for the summary and its allocator latencies.
    pub(crate) fn summary(&self) -> Lookup<(Summary, LatencyTable)> {
        self.part(Kept::Summary, decode_summary)
    }

    /// Looks for the whole run at a glance (kept with the window of the allocation
    /// map that reaches the run's end).
    pub(crate) fn whole_run(&self) -> Lookup<WholeRunMap> {
        self.part(Kept::WholeRun, WholeRunMap::decode)
    }

    /// The times of the checkpoints kept (see [`Opened::checkpoint`]), in order; none
    /// when the index has none or cannot be read.
    pub(crate) fn checkpoint_times(&self) -> Vec<u64> {
        let Some((_, bytes)) = &self.file else {
            return Vec::new();
        };
        let parts = split(bytes, self.key);
        parts.map_or_else(
            |_| Vec::new(),
            |p| p.checkpoints.iter().map(|c| c.0.0).collect(),
        )
    }

    /// Looks for the latest checkpoint taken at or before `at`, resumed into a builder
    /// of the window starting at `at`: its time, the mapping changes fed before it,
    /// and the builder.
    pub(crate) fn checkpoint(&self, at: u64) -> Lookup<(u64, u64, AllocModelBuilder)> {
        let Some((_, bytes)) = &self.file else {
            return Lookup::Missing;
        };
        let parts = split(bytes, self.key);
        let kept = parts.map_or(None, |p| {
            p.checkpoints
                .iter()
                .rev()
                .find(|c| c.0.0 <= at)
                .map(|c| c.0)
        });
        let Some((t, fed)) = kept else {
            return Lookup::Missing;
        };
        let resume = |bytes: &[u8]| AllocModelBuilder::resume_at(bytes, at);
        match self.part(Kept::Checkpoint(t), resume) {
            Lookup::Found(builder) => Lookup::Found(Box::new((t, fed, *builder))),
            Lookup::Missing => Lookup::Missing,
            Lookup::Rejected(why) => Lookup::Rejected(why),
        }
    }

    /// Looks for the part `kept`, read by `decode`.
    fn part<T, E: std::fmt::Display>(
        &self,
        kept: Kept,
        decode: impl FnOnce(&[u8]) -> Result<T, E>,
    ) -> Lookup<T> {
        let Some((path, bytes)) = &self.file else {
            return Lookup::Missing;
        };
        let parts = match split(bytes, self.key) {
            Ok(parts) => parts,
            Err(problem) => return Lookup::Rejected(rejected(path, problem)),
        };
        let (part, what) = match kept {
            Kept::Alloc(window) => {
                let held = parts.alloc.iter().find(|(held, _)| *held == window);
                (held.map(|&(_, part)| part), "its allocation map")
            }
            Kept::Summary => (parts.summary, "its summary"),
            Kept::WholeRun => (parts.whole_run, "its whole-run map"),
            Kept::Checkpoint(t) => {
                let held = parts.checkpoints.iter().find(|c| c.0.0 == t);
                (held.map(|&(_, part)| part), "a checkpoint")
            }
        };
        let found = match (part, parts.damage) {
            (Some(part), _) => part.decode(decode),
            (None, Some(why)) => Err(Problem::Damaged(why)),
            (None, None) => return Lookup::Missing,
        };
        match found {
            Ok(value) => Lookup::Found(Box::new(value)),
            Err(Problem::Damaged(why)) => {
                Lookup::Rejected(rejected(path, Problem::Damaged(format!("{what}: {why}"))))
            }
            Err(problem) => Lookup::Rejected(rejected(path, problem)),
        }
    }
}

/// A part after the heap model's.
#[derive(Clone, Copy)]
enum Kept {
    /// The allocation map of a window (`None`: the whole run).
    Alloc(Window),
    /// The summary.
    Summary,
    /// The whole run at a glance.
    WholeRun,
    /// The checkpoint taken at this time.
    Checkpoint(u64),
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

/// One part of an index: its compressed payload, whose checksum was verified.
#[derive(Clone, Copy)]
struct Part<'a> {
    raw_len: u64,
    stored: &'a [u8],
}

impl Part<'_> {
    /// The model in the part, decoded by `decode`.
    fn decode<T, E: std::fmt::Display>(
        self,
        decode: impl FnOnce(&[u8]) -> Result<T, E>,
    ) -> Result<T, Problem> {
        let cap = self
            .raw_len
            .min(self.stored.len() as u64 * 1024)
            .min(1 << 33);
        let raw = zstd::bulk::decompress(self.stored, cap as usize)
            .map_err(|e| Problem::Damaged(format!("cannot decompress: {e}")))?;
        decode(&raw).map_err(|e| Problem::Damaged(e.to_string()))
    }

    /// The part compressed from `raw`.
    fn compress(raw: &[u8]) -> Result<(u64, Vec<u8>), String> {
        let stored = zstd::bulk::compress(raw, 3).map_err(|e| e.to_string())?;
        Ok((raw.len() as u64, stored))
    }
}

/// A checkpoint of the allocation map's reading taken by a pass, to keep in the index
/// ([`store_alloc`]): the time it was taken at, the mapping changes fed before it, and
/// its bytes, compressed as they will be stored (so that those held until the pass
/// ends take little memory).
pub(crate) struct TakenCheckpoint {
    /// The time it was taken at (every event before it fed, none at or after it).
    pub t: u64,
    /// The program's mapping changes fed before it.
    pub fed: u64,
    raw_len: u64,
    stored: Vec<u8>,
}

impl TakenCheckpoint {
    /// The checkpoint `raw` (`AllocModelBuilder::checkpoint`) taken at `t`, after
    /// `fed` mapping changes.
    pub(crate) fn new(t: u64, fed: u64, raw: &[u8]) -> Result<TakenCheckpoint, String> {
        let (raw_len, stored) = Part::compress(raw)?;
        Ok(TakenCheckpoint {
            t,
            fed,
            raw_len,
            stored,
        })
    }

    /// The bytes it takes.
    pub(crate) fn size(&self) -> u64 {
        self.stored.len() as u64
    }

    fn part(&self) -> ((u64, u64), Part<'_>) {
        let part = Part {
            raw_len: self.raw_len,
            stored: &self.stored,
        };
        ((self.t, self.fed), part)
    }
}

/// The most the checkpoints kept in an index take: an eighth of the trace's bytes
/// (with the allocation maps' quarter, the index stays under half the trace).
pub(crate) fn checkpoint_room(input: &TraceInput) -> u64 {
    input.file.len() / 8
}

/// Keeps `checkpoints` (sorted by time, no time twice) within `room` bytes: every
/// other one is dropped, the first kept, until they fit (so that those left stay
/// spread over the run).
pub(crate) fn thin<T>(checkpoints: &mut Vec<T>, size: impl Fn(&T) -> u64, room: u64) {
    while checkpoints.len() > 1 && checkpoints.iter().map(&size).sum::<u64>() > room {
        let mut i = 0;
        checkpoints.retain(|_| {
            i += 1;
            i % 2 == 1
        });
    }
    if checkpoints.iter().map(&size).sum::<u64>() > room {
        checkpoints.clear();
    }
}

/// A window of a run (`from`, `to`), or `None` for the whole run.
type Window = Option<(u64, u64)>;

/// The parts of an index file: the heap model's, if any, the allocation maps' (each
/// with the window it holds), oldest first, the summary's and the whole run's, if
/// any, up to the first damaged part, if any (`damage` then says what is wrong with
/// it).
struct Parts<'a> {
    heap: Option<Part<'a>>,
    alloc: Vec<(Window, Part<'a>)>,
    summary: Option<Part<'a>>,
    whole_run: Option<Part<'a>>,
    /// Each with its time and the mapping changes fed before it, by time.
    checkpoints: Vec<((u64, u64), Part<'a>)>,
    damage: Option<String>,
}

/// The tags of the parts after the heap model's, and their header length.
const ALLOC_TAG: &[u8; 4] = b"AMAP";
const SUMMARY_TAG: &[u8; 4] = b"SUMM";
const WHOLE_RUN_TAG: &[u8; 4] = b"WRUN";
const CHECKPOINT_TAG: &[u8; 4] = b"CKPT";
const PART_HEADER_LEN: usize = 44;
/// The window of an allocation map holding the whole run.
const WHOLE_RUN: (u64, u64) = (u64::MAX, u64::MAX);

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Splits an index file of the trace keyed `key` into its parts, checking every
/// header and payload checksum.
fn split(bytes: &[u8], key: IndexKey) -> Result<Parts<'_>, Problem> {
    let damaged = |why: &str| Problem::Damaged(why.to_owned());
    if bytes.len() < HEADER_LEN || &bytes[0..8] != MAGIC {
        return Err(damaged("not a memlens index"));
    }
    if crc32fast::hash(&bytes[0..68]) != u32_at(bytes, 68) {
        return Err(damaged("header checksum mismatch"));
    }
    if u32_at(bytes, 8) != INDEX_VERSION || bytes[12..48] != key.to_bytes() {
        return Err(Problem::Stale);
    }
    let (raw_len, stored_len) = (u64_at(bytes, 48), u64_at(bytes, 56));
    let rest = &bytes[HEADER_LEN..];
    let Some(stored) = usize::try_from(stored_len).ok().and_then(|n| rest.get(..n)) else {
        return Err(damaged("truncated"));
    };
    if crc32fast::hash(stored) != u32_at(bytes, 64) {
        return Err(damaged("payload checksum mismatch"));
    }
    let heap = (stored_len > 0).then_some(Part { raw_len, stored });
    let mut parts = Parts {
        heap,
        alloc: Vec::new(),
        summary: None,
        whole_run: None,
        checkpoints: Vec::new(),
        damage: None,
    };
    let mut tail = &rest[stored.len()..];
    while !tail.is_empty() {
        match tail_part(tail) {
            Ok((tag, window, part)) => {
                tail = &tail[PART_HEADER_LEN + part.stored.len()..];
                match tag {
                    ALLOC_TAG => parts.alloc.push((window, part)),
                    SUMMARY_TAG => parts.summary = Some(part),
                    CHECKPOINT_TAG => {
                        let at = window.unwrap_or(WHOLE_RUN);
                        parts.checkpoints.push((at, part));
                    }
                    _ => parts.whole_run = Some(part),
                }
            }
            Err(why) => {
                parts.damage = Some(why.to_owned());
                break;
            }
        }
    }
    Ok(parts)
}

/// The part after the heap model's at the start of `tail`, checked: its tag (one of
/// [`ALLOC_TAG`], [`SUMMARY_TAG`], [`WHOLE_RUN_TAG`] and [`CHECKPOINT_TAG`]), its window
/// and its payload.
fn tail_part(tail: &[u8]) -> Result<(&[u8; 4], Window, Part<'_>), &'static str> {
    let tag = match tail.get(0..4) {
        Some(tag) if tag == ALLOC_TAG => ALLOC_TAG,
        Some(tag) if tag == SUMMARY_TAG => SUMMARY_TAG,
        Some(tag) if tag == WHOLE_RUN_TAG => WHOLE_RUN_TAG,
        Some(tag) if tag == CHECKPOINT_TAG => CHECKPOINT_TAG,
        _ => return Err("not a part this memlens knows"),
    };
    if tail.len() < PART_HEADER_LEN {
        return Err("truncated");
    }
    if crc32fast::hash(&tail[0..40]) != u32_at(tail, 40) {
        return Err("header checksum mismatch");
    }
    let window = match (u64_at(tail, 4), u64_at(tail, 12)) {
        WHOLE_RUN => None,
        window => Some(window),
    };
    let (raw_len, stored_len) = (u64_at(tail, 20), u64_at(tail, 28));
    let payload = &tail[PART_HEADER_LEN..];
    let stored = usize::try_from(stored_len)
        .ok()
        .and_then(|n| payload.get(..n));
    let stored = stored.ok_or("truncated")?;
    if crc32fast::hash(stored) != u32_at(tail, 36) {
        return Err("payload checksum mismatch");
    }
    Ok((tag, window, Part { raw_len, stored }))
}

/// Writes an index of the trace keyed `key` with these parts to `out`, part after part
/// (no copy of the whole index is made: its parts can be a good share of the trace).
fn write_index(out: &mut impl Write, key: IndexKey, parts: &Parts<'_>) -> std::io::Result<()> {
    let heap = parts.heap.unwrap_or(Part {
        raw_len: 0,
        stored: &[],
    });
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&INDEX_VERSION.to_le_bytes());
    header.extend_from_slice(&key.to_bytes());
    write_part(out, &mut header, heap)?;
    let alloc = parts.alloc.iter().map(|&(window, part)| {
        let window = window.unwrap_or(WHOLE_RUN);
        (ALLOC_TAG, window, part)
    });
    let summary = parts.summary.map(|part| (SUMMARY_TAG, (0, 0), part));
    let whole_run = parts.whole_run.map(|part| (WHOLE_RUN_TAG, (0, 0), part));
    let checkpoints = parts.checkpoints.iter();
    let checkpoints = checkpoints.map(|&(at, part)| (CHECKPOINT_TAG, at, part));
    let all = alloc.chain(summary).chain(whole_run).chain(checkpoints);
    for (tag, (from, to), part) in all {
        header.clear();
        header.extend_from_slice(tag);
        header.extend_from_slice(&from.to_le_bytes());
        header.extend_from_slice(&to.to_le_bytes());
        write_part(out, &mut header, part)?;
    }
    Ok(())
}

/// Ends `header` (the file's or a part's, up to its lengths) with `part`'s raw and
/// stored lengths, its payload's CRC-32 and the header's own, and writes it and the
/// payload to `out`.
fn write_part(out: &mut impl Write, header: &mut Vec<u8>, part: Part<'_>) -> std::io::Result<()> {
    header.extend_from_slice(&part.raw_len.to_le_bytes());
    header.extend_from_slice(&(part.stored.len() as u64).to_le_bytes());
    header.extend_from_slice(&crc32fast::hash(part.stored).to_le_bytes());
    let header_crc = crc32fast::hash(header);
    header.extend_from_slice(&header_crc.to_le_bytes());
    out.write_all(header)?;
    out.write_all(part.stored)
}

/// Writes the heap model of `input` into its index (keeping the index's allocation
/// map, if valid), beside the trace or in the cache directory when that fails;
/// returns where, or why neither worked.
pub(crate) fn store(input: &TraceInput, model: &HeapModel) -> Result<PathBuf, String> {
    let (raw_len, stored) = Part::compress(&model.encode())?;
    let heap = Part {
        raw_len,
        stored: &stored,
    };
    update(input, New::Heap(heap))
}

/// Writes the allocation-map model of `input`, holding `window` (`None`: the whole
/// run), into its index (keeping the index's heap model, if valid), as [`store`] does,
/// when it is worth it: when it takes less than a quarter of the trace's bytes. A map is
/// stored in about 8 bytes per block against the trace's 5 per allocation and free,
/// so the whole run's map of a trace is not kept (it would be larger than the trace
/// and read only about 1.5 times faster), while the window of a run too large for the
/// map's memory is (reading the one reaching the run's end again means reading every
/// event: on 10⁹ events, 70 s instead of about 2; another, from a checkpoint, about 4). Maps of other windows (a window the viewer was
/// asked to read, then the default one) are kept beside it while they all take less
/// than that quarter, the oldest dropped first. The whole run at a glance the model
/// carries, if any, is kept in the same write (even when the map is not), and so are
/// the `checkpoints` its reading took, beside those kept (see `checkpoints.rs`; within
/// an eighth of the trace's bytes, [`thin`]ned). Returns `Ok(None)` when none of it is
/// kept.
pub(crate) fn store_alloc(
    input: &TraceInput,
    window: Option<(u64, u64)>,
    model: &AllocModel,
    checkpoints: &[TakenCheckpoint],
) -> Result<Option<PathBuf>, String> {
    let whole_run = match model.whole_run() {
        Some(map) => Some(Part::compress(&map.encode())?),
        None => None,
    };
    let whole_run = whole_run.as_ref().map(|(raw_len, stored)| Part {
        raw_len: *raw_len,
        stored,
    });
    let (raw_len, stored) = Part::compress(&model.encode())?;
    let alloc = (stored.len() as u64 <= input.file.len() / 4).then_some(Part {
        raw_len,
        stored: &stored,
    });
    if alloc.is_none() && whole_run.is_none() && checkpoints.is_empty() {
        return Ok(None);
    }
    let checkpoints = checkpoints.iter().map(TakenCheckpoint::part).collect();
    update(input, New::Alloc(window, alloc, whole_run, checkpoints)).map(Some)
}

/// Writes the summary of `input` and its allocator latencies into its index (keeping
/// the index's other parts, if valid), as [`store`] does.
pub(crate) fn store_summary(
    input: &TraceInput,
    summary: &Summary,
    latency: &LatencyTable,
) -> Result<PathBuf, String> {
    let (raw_len, stored) = Part::compress(&encode_summary(summary, latency))?;
    let summary = Part {
        raw_len,
        stored: &stored,
    };
    update(input, New::Summary(summary))
}

/// The part an index gets.
enum New<'a> {
    Heap(Part<'a>),
    /// An allocation map's window and its model, if kept, with the whole run at a
    /// glance, if any, and the checkpoints its reading took.
    Alloc(
        Option<(u64, u64)>,
        Option<Part<'a>>,
        Option<Part<'a>>,
        Vec<((u64, u64), Part<'a>)>,
    ),
    Summary(Part<'a>),
}

/// Writes the index of `input` with the `new` part and the other parts of its current
/// index that are valid (see [`store_alloc`] for which allocation maps stay).
fn update(input: &TraceInput, new: New<'_>) -> Result<PathBuf, String> {
    let key = IndexKey::of(input);
    let current = find(input, key);
    let kept = current
        .as_ref()
        .and_then(|(_, bytes)| split(bytes, key).ok());
    let (mut heap, mut alloc, mut summary, mut whole_run, mut checkpoints) = kept
        .map_or((None, Vec::new(), None, None, Vec::new()), |k| {
            (k.heap, k.alloc, k.summary, k.whole_run, k.checkpoints)
        });
    match new {
        New::Heap(part) => heap = Some(part),
        New::Summary(part) => summary = Some(part),
        New::Alloc(window, part, map, taken) => {
            whole_run = map.or(whole_run);
            checkpoints.retain(|(at, _)| taken.iter().all(|(t, _)| t.0 != at.0));
            checkpoints.extend(taken);
            checkpoints.sort_unstable_by_key(|(at, _)| at.0);
            let room = checkpoint_room(input);
            thin(&mut checkpoints, |(_, p)| p.stored.len() as u64, room);
            alloc.retain(|(held, _)| *held != window);
            alloc.extend(part.map(|part| (window, part)));
            let room = input.file.len() / 4;
            let size = |alloc: &[(_, Part<'_>)]| -> u64 {
                alloc.iter().map(|(_, p)| p.stored.len() as u64).sum()
            };
            while alloc.len() > 1 && size(&alloc) > room {
                alloc.remove(0);
            }
        }
    }
    let parts = Parts {
        heap,
        alloc,
        summary,
        whole_run,
        checkpoints,
        damage: None,
    };
    let write = |out: &mut std::io::BufWriter<std::fs::File>| write_index(out, key, &parts);
    let beside = index_path(input.path());
    let first = write_atomically(&beside, write);
    if first.is_ok() {
        return Ok(beside);
    }
    let Some(dir) = cache_dir() else {
        return Err(format!("cannot write {}", beside.display()));
    };
    let cached = dir.join(key.file_name());
    std::fs::create_dir_all(&dir)
        .and_then(|()| write_atomically(&cached, write))
        .map(|()| cached)
        .map_err(|e| {
            format!(
                "cannot write {} nor {}: {e}",
                beside.display(),
                dir.display()
            )
        })
}

/// Writes a file with `write` to a temporary file next to `path` and renames it over
/// `path`, so a reader never sees half an index.
fn write_atomically(
    path: &Path,
    write: impl Fn(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = std::fs::File::create(&tmp).and_then(|file| {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        write(&mut out)?;
        out.flush()
    });
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
