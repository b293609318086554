//! [`Bin`]: an address region whose blocks are drawn and measured together (a heap of
//! the real run, or a pool bin of a replay), and [`BinKind`], what it is.

use crate::ids::{BinId, ProcessId};

/// What a bin is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinKind {
    /// The main arena's heap (the `brk` area) of the real run.
    MainHeap,
    /// A thread arena's heap (one 64 MiB-aligned window) of the real run.
    ThreadArena,
    /// Chunks served by `mmap` (overlapping page ranges merged) of the real run.
    Mmap,
    /// The program's own mappings (`mmap` calls of the program and its libraries,
    /// recorded with `memlens record --mmap`) of one process of the real run.
    Mapping,
    /// A pool bin of a replay: `slots` blocks of `block_size` bytes.
    PoolBin {
        /// The fixed block size.
        block_size: u64,
        /// The number of blocks.
        slots: u64,
    },
    /// The unstructured heap of a replay (overflow and large requests).
    PoolHeap,
}

impl BinKind {
    /// A short name: `main-heap`, `arena`, `mmap`, `mapping`, `pool`, `heap`.
    pub fn name(self) -> &'static str {
        match self {
            BinKind::MainHeap => "main-heap",
            BinKind::ThreadArena => "arena",
            BinKind::Mmap => "mmap",
            BinKind::Mapping => "mapping",
            BinKind::PoolBin { .. } => "pool",
            BinKind::PoolHeap => "heap",
        }
    }
}

/// A bin: an address region whose blocks are drawn and measured together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bin {
    /// Its id.
    pub id: BinId,
    /// What it is.
    pub kind: BinKind,
    /// A readable name, e.g. `main heap`, `arena 0x7f3c00000000 (thread 2)`, `bin 3 (64 B × 512)`.
    pub name: String,
    /// The process whose address space it is in (`None` for replay bins).
    pub process: Option<ProcessId>,
    /// Lowest address of the region.
    pub start: u64,
    /// One past its highest address.
    pub end: u64,
    /// Where the region starts on the compact address axis.
    pub axis_start: u64,
    /// Blocks in the bin.
    pub blocks: u64,
}

impl Bin {
    /// The region's size in bytes: the capacity its occupancy is measured against.
    pub fn capacity(&self) -> u64 {
        self.end - self.start
    }

    /// The bin's range on the compact address axis.
    pub fn axis_range(&self) -> (u64, u64) {
        (self.axis_start, self.axis_start + self.capacity())
    }
}
