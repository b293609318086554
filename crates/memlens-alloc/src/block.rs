//! Blocks: one heap allocation as a rectangle `[t_alloc, t_free) × [addr, addr + reserved)`,
//! with the attributes the views colour by, and the glibc size model that estimates
//! what the allocator reserved for a request.
//!
//! # The glibc size model (x86-64, ptmalloc2)
//!
//! A request of `req` bytes gets a chunk of `max(32, (req + 8 + 15) & !15)` bytes
//! ([`glibc_chunk_size`]: 8 bytes of size header, 16-byte alignment, 32-byte minimum).
//! The pointer returned is 16 bytes into the chunk, and the block may use the next
//! chunk's 8-byte `prev_size` field, so `malloc_usable_size` is the chunk size − 8
//! ([`glibc_usable_size`]). That usable size is the block's *reserved* size: its
//! rectangle spans `[addr, addr + reserved)`, and consecutive chunks leave the 8-byte
//! size header between their rectangles. A chunk served by `mmap` (see
//! [`crate::regions`]) spans whole pages: `(chunk + 8)` rounded up to 4096, of which
//! 16 bytes are header, so its usable size is that − 16. Waste is reserved − requested.
//!
//! A *mapping* block is one of the program's own mappings (`memlens record --mmap`):
//! its rectangle spans whole pages, so it reserves its length rounded up to 4096.

use crate::ids::{BinId, BlockId, ProcessId, SiteId, ThreadId};

/// The page size the kernel maps in (x86-64, aarch64 with 4 KiB pages).
pub const PAGE_SIZE: u64 = 4096;

/// The bytes a mapping of `len` bytes takes: whole pages.
pub fn mapped_size(len: u64) -> u64 {
    len.saturating_add(PAGE_SIZE - 1) & !(PAGE_SIZE - 1)
}

/// One allocation's lifetime and place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// When the allocator returned the block, ns on the model's timeline.
    pub t_alloc: u64,
    /// When it was freed (or reallocated away); the end of the run if it never was.
    pub t_free: u64,
    /// Its address (in a replayed model: the simulated address).
    pub addr: u64,
    /// The requested size in bytes.
    pub requested: u64,
    /// The size the allocator reserved for it (see the module's size model); the
    /// rectangle's height. Never below `requested`.
    pub reserved: u64,
    /// The allocating thread.
    pub thread: ThreadId,
    /// The allocating site.
    pub site: SiteId,
    /// The site that freed it: the `free` (recorded with `--free-stacks`) or the
    /// `realloc` that moved it; [`SiteId::UNKNOWN`] when not recorded or not freed.
    pub free_site: SiteId,
    /// True when the block was freed (or moved by `realloc`) before the run ended.
    pub freed: bool,
    /// True when the block was made by `realloc` (a resized or moved block).
    pub from_realloc: bool,
    /// True when the block is one of the program's own mappings (`mmap`), not a
    /// heap allocation.
    pub mapping: bool,
}

impl Block {
    /// Internal fragmentation of this block: reserved − requested bytes.
    pub fn waste(&self) -> u64 {
        self.reserved.saturating_sub(self.requested)
    }

    /// How long the block lived (until the end of the run if never freed), ns.
    pub fn lifetime(&self) -> u64 {
        self.t_free.saturating_sub(self.t_alloc)
    }
}

/// How long the allocator took for a block's allocation and free, when the trace was
/// recorded with `memlens record --latency`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Latency {
    /// Duration of the call that allocated the block (malloc, calloc, realloc…), ns.
    pub alloc_ns: Option<u32>,
    /// Duration of the call that freed it, ns.
    pub free_ns: Option<u32>,
}

/// Everything the viewer shows about one block (brushing details).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockInfo {
    /// The block's id.
    pub id: BlockId,
    /// The bin it lies in.
    pub bin: BinId,
    /// Allocation time, ns.
    pub t_alloc: u64,
    /// Free time, ns; `None` when it was never freed.
    pub t_free: Option<u64>,
    /// Address.
    pub addr: u64,
    /// Requested size.
    pub requested: u64,
    /// Reserved size.
    pub reserved: u64,
    /// reserved − requested.
    pub waste: u64,
    /// Lifetime, ns (to the end of the run when never freed).
    pub lifetime: u64,
    /// The allocating thread.
    pub thread: ThreadId,
    /// Its kernel thread id.
    pub tid: u32,
    /// Its name (empty when unnamed).
    pub thread_name: String,
    /// The process.
    pub process: ProcessId,
    /// Its pid.
    pub pid: u32,
    /// The allocating site.
    pub site: SiteId,
    /// The site as text: `function (file:line)`, or empty when unknown.
    pub site_label: String,
    /// The site that freed it ([`SiteId::UNKNOWN`] when not recorded or never freed).
    pub free_site: SiteId,
    /// The freeing site as text, or empty when unknown.
    pub free_site_label: String,
    /// True when made by `realloc`.
    pub from_realloc: bool,
    /// True when it is one of the program's own mappings (`mmap`).
    pub mapping: bool,
    /// Allocator latency, when recorded.
    pub latency: Option<Latency>,
}

/// glibc's chunk size for a request of `req` bytes on x86-64: `max(32, (req + 8 + 15) & !15)`.
pub fn glibc_chunk_size(req: u64) -> u64 {
    (req.saturating_add(8 + 15) & !15).max(32)
}

/// glibc's `malloc_usable_size` estimate: for a heap chunk the chunk size − 8; for an
/// mmap'd chunk (`mmapped`) the chunk plus its header rounded up to 4 KiB pages, − 16.
pub fn glibc_usable_size(req: u64, mmapped: bool) -> u64 {
    let chunk = glibc_chunk_size(req);
    if mmapped {
        (chunk.saturating_add(8).saturating_add(4095) & !4095) - 16
    } else {
        chunk - 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_sizes_follow_request2size() {
        assert_eq!(glibc_chunk_size(0), 32);
        assert_eq!(glibc_chunk_size(1), 32);
        assert_eq!(glibc_chunk_size(24), 32);
        assert_eq!(glibc_chunk_size(25), 48);
        assert_eq!(glibc_chunk_size(100), 112);
        assert_eq!(glibc_usable_size(1, false), 24);
        assert_eq!(glibc_usable_size(24, false), 24);
        assert_eq!(glibc_usable_size(100, false), 104);
        // 200 KiB through mmap: 204800 + 8 → 204816 chunk, + 8 → page-rounded 208896.
        assert_eq!(glibc_usable_size(204_800, true), 208_896 - 16);
    }
}
