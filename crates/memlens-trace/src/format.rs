//! The numbers that define the file format: magic, versions, chunk kinds,
//! codecs and record tags.
//!
//! `docs/trace-format.md` lists the same numbers; the test
//! `tests/format_doc.rs` fails when the two drift apart.

/// The first eight bytes of every trace: a non-ASCII byte (catches 7-bit
/// transfers), the name, and CR LF (catches newline conversion), as PNG does.
pub const FILE_MAGIC: [u8; 8] = *b"\x89MLENS\r\n";

/// The format version this build writes.
pub const FORMAT_VERSION: u16 = 1;

/// The newest format version this build can read.
pub const READ_VERSION: u16 = 1;

/// Length of the fixed part of the file header.
pub const FILE_HEADER_LEN: usize = 24;

/// The first four bytes of every chunk header.
pub const CHUNK_MAGIC: [u8; 4] = *b"MLCK";

/// Length of a chunk header.
pub const CHUNK_HEADER_LEN: usize = 48;

/// The largest decompressed chunk a reader accepts (a guard against damaged
/// or hostile lengths); writers stay far below it.
pub const MAX_CHUNK_RAW_LEN: u32 = 64 << 20;

/// What a chunk's records are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ChunkKind {
    /// The process stream: metadata records.
    Process = 1,
    /// One thread's allocation events; the chunk's `stream` field is the tid.
    Events = 2,
    /// Memory references for the cache lens.
    References = 3,
}

impl ChunkKind {
    /// Decodes a chunk kind byte.
    pub fn from_code(code: u8) -> Option<ChunkKind> {
        match code {
            1 => Some(ChunkKind::Process),
            2 => Some(ChunkKind::Events),
            3 => Some(ChunkKind::References),
            _ => None,
        }
    }
}

/// How a chunk's payload is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Codec {
    /// Stored as is.
    None = 0,
    /// One zstd frame.
    Zstd = 1,
    /// Columnar payload (event chunks): every column stored on its own,
    /// zstd-compressed when that makes it smaller.
    Columns = 2,
}

impl Codec {
    /// Decodes a codec byte.
    pub fn from_code(code: u8) -> Option<Codec> {
        match code {
            0 => Some(Codec::None),
            1 => Some(Codec::Zstd),
            2 => Some(Codec::Columns),
            _ => None,
        }
    }
}

/// Record tags of row-format chunks (the process stream). Every record is a
/// tag at or above [`tag::SIZED`] followed by a varint body length, so readers
/// skip the ones they do not know. (Events are columnar: see `columns.rs`.)
pub mod tag {
    /// Sized records start here.
    pub const SIZED: u8 = 0x80;
    /// Process information.
    pub const PROCESS: u8 = 0x80;
    /// A module was loaded.
    pub const MODULE_LOAD: u8 = 0x81;
    /// A module was unloaded.
    pub const MODULE_UNLOAD: u8 = 0x82;
    /// A thread's name.
    pub const THREAD_NAME: u8 = 0x83;
    /// A thread ended.
    pub const THREAD_END: u8 = 0x84;
    /// A stack prefix-tree node.
    pub const STACK_NODE: u8 = 0x85;
    /// A mark.
    pub const MARK: u8 = 0x86;
    /// A warning.
    pub const WARNING: u8 = 0x87;
    /// A clock calibration pair.
    pub const CLOCK: u8 = 0x88;
    /// The process ended cleanly.
    pub const END: u8 = 0x89;
    /// A type's name (Java class names).
    pub const TYPE_NAME: u8 = 0x8a;
    /// The name of a synthetic frame address (Java methods).
    pub const FRAME_NAME: u8 = 0x8b;
    /// A stack id that is another stack plus an allocation type.
    pub const TYPED_STACK: u8 = 0x8c;
    /// An allocation wrapper the user declared (`memlens record --wrapper`).
    pub const WRAPPER: u8 = 0x8d;
    /// The recorder's counts of the events it wrote, at the end of a clean run.
    pub const TOTALS: u8 = 0x8e;
    /// The program mapped memory (`memlens record --mmap`).
    pub const MMAP: u8 = 0x8f;
    /// The program unmapped memory (`memlens record --mmap`). (`0x90`–`0x92`
    /// are the records of reference chunks: see `refs.rs`.)
    pub const MUNMAP: u8 = 0x93;
    /// The recording is a Poisson sample by bytes (`memlens record --sample`).
    pub const SAMPLING: u8 = 0x94;
    /// The trace starts mid-run: the recorder was attached (`memlens attach`).
    pub const ATTACHED: u8 = 0x95;
    /// A heap walk of the JVMTI agent.
    pub const HEAP_WALK: u8 = 0xa0;
    /// Objects contained in one data structure at the latest heap walk.
    pub const CONTAINED: u8 = 0xa1;
}
