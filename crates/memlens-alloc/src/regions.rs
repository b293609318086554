//! Bins of the real run: the address regions a glibc process's blocks fall into,
//! found from the blocks' addresses and sizes alone (the trace has no map of the
//! allocator's regions). Per process:
//!
//! 1. **mmap'd chunks.** A block of at least 128 KiB (glibc's initial
//!    `M_MMAP_THRESHOLD`) whose address is 16 bytes past a page boundary is taken to
//!    be an mmap'd chunk (glibc puts the chunk header at the start of the mapping).
//!    Its mapping is `[addr − 16, addr − 16 + pages)`; mappings whose page ranges
//!    overlap over time (the kernel reuses address space) are merged into one bin.
//! 2. **Thread arenas.** Every other block lies in an arena. A non-main arena's heap
//!    is an mmap'd region of at most 64 MiB aligned to 64 MiB (glibc `HEAP_MAX_SIZE`),
//!    so blocks at or above 0x7000_0000_0000 (where Linux x86-64 places mappings) are
//!    grouped by their 64 MiB-aligned window, one bin per window, named after the thread
//!    that allocated there first.
//! 3. **Main heap.** Blocks below 0x7000_0000_0000 are in the main arena's `brk`
//!    heap, which grows contiguously past 64 MiB boundaries: consecutive windows merge
//!    into one bin; a second cluster (rare: `brk` failed and the arena went on in a
//!    mapping) becomes a further heap bin.
//!
//! 4. **The program's own mappings** (recorded with `memlens record --mmap`; blocks
//!    flagged [`Block::mapping`]) are one bin per process, whatever their addresses.
//!
//! A bin's extent is the lowest block address to the highest block end seen in it,
//! so the axis spends no room on address space the run never used. Other allocators
//! (jemalloc, mimalloc) get plausible regions from the same rules: 64 MiB windows of
//! their mappings.

use std::collections::BTreeMap;

use crate::bin::{Bin, BinKind};
use crate::block::{Block, glibc_chunk_size, glibc_usable_size};
use crate::ids::{BinId, ProcessId};
use crate::process::{ProcessInfo, ThreadInfo};

/// glibc's initial mmap threshold.
pub const MMAP_THRESHOLD: u64 = 128 * 1024;
/// glibc's `HEAP_MAX_SIZE` on 64-bit: arena heaps are this size and aligned to it.
pub const ARENA_HEAP_SIZE: u64 = 64 << 20;
/// Addresses from here up are in the mapping area (x86-64 Linux layout).
pub const MAPPING_AREA: u64 = 0x7000_0000_0000;

/// What [`detect`] found.
pub(crate) struct Found {
    pub bins: Vec<Bin>,
    pub block_bin: Vec<BinId>,
    pub mmapped: Vec<bool>,
}

/// True when a block looks like an mmap'd chunk.
pub fn looks_mmapped(requested: u64, addr: u64) -> bool {
    requested >= MMAP_THRESHOLD && addr % 4096 == 16
}

fn mapping_of(b: &Block) -> (u64, u64) {
    let start = b.addr - 16;
    let len = (glibc_chunk_size(b.requested).saturating_add(8 + 4095)) & !4095;
    (start, start.saturating_add(len))
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Mmap(u64),
    Window(u64),
    Mapping,
}

/// Finds the bins of every process and assigns each block to one.
pub(crate) fn detect(blocks: &[Block], threads: &[ThreadInfo], processes: &[ProcessInfo]) -> Found {
    let process_of = |b: &Block| threads[b.thread.index()].process;
    let mut mmapped = Vec::with_capacity(blocks.len());
    // Per process: the lowest address of its own mappings.
    let mut own_maps: BTreeMap<ProcessId, u64> = BTreeMap::new();
    // Per process: the merged mmap ranges and the arena windows.
    let mut maps: BTreeMap<ProcessId, Vec<(u64, u64)>> = BTreeMap::new();
    let mut windows: BTreeMap<ProcessId, BTreeMap<u64, u32>> = BTreeMap::new();
    // Consecutive blocks are nearly always in the window of the one before: the maps
    // are only searched when the window changes (for millions of blocks, most of
    // this function's time otherwise).
    let mut last_window = None;
    for (i, b) in blocks.iter().enumerate() {
        let p = process_of(b);
        let mapped = !b.mapping && looks_mmapped(b.requested, b.addr);
        mmapped.push(mapped);
        if b.mapping {
            let low = own_maps.entry(p).or_insert(b.addr);
            *low = (*low).min(b.addr);
        } else if mapped {
            maps.entry(p).or_default().push(mapping_of(b));
        } else if last_window != Some((p, b.addr / ARENA_HEAP_SIZE)) {
            // The first block seen in a window (blocks are in time order) names it.
            let w = b.addr / ARENA_HEAP_SIZE;
            windows.entry(p).or_default().entry(w).or_insert(i as u32);
            last_window = Some((p, w));
        }
    }
    for ranges in maps.values_mut() {
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for &(s, e) in ranges.iter() {
            match merged.last_mut() {
                Some(last) if s < last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        *ranges = merged;
    }
    // Bins in (process, start) order; windows map to the bin that holds them.
    struct Pending {
        process: ProcessId,
        start: u64,
        kind: BinKind,
        name: String,
        key: Key,
    }
    let mut pending: Vec<Pending> = Vec::new();
    let mut window_key: BTreeMap<(ProcessId, u64), Key> = BTreeMap::new();
    let all_processes: std::collections::BTreeSet<ProcessId> = maps
        .keys()
        .chain(windows.keys())
        .chain(own_maps.keys())
        .copied()
        .collect();
    let multi = processes.len() > 1;
    for &p in &all_processes {
        let prefix = if multi {
            format!("pid {}: ", processes[p.index()].pid)
        } else {
            String::new()
        };
        if let Some(ws) = windows.get(&p) {
            let mut cluster_start: Option<(u64, u64)> = None; // (first window, last window)
            let mut heaps = 0;
            for (&w, &first) in ws {
                let addr = w * ARENA_HEAP_SIZE;
                if addr < MAPPING_AREA {
                    match cluster_start {
                        Some((first_w, last)) if w == last + 1 => {
                            cluster_start = Some((first_w, w));
                            window_key.insert((p, w), Key::Window(first_w));
                        }
                        _ => {
                            cluster_start = Some((w, w));
                            heaps += 1;
                            let name = if heaps == 1 {
                                format!("{prefix}main heap")
                            } else {
                                format!("{prefix}heap {addr:#x}")
                            };
                            pending.push(Pending {
                                process: p,
                                start: addr,
                                kind: BinKind::MainHeap,
                                name,
                                key: Key::Window(w),
                            });
                            window_key.insert((p, w), Key::Window(w));
                        }
                    }
                } else {
                    let thread = &threads[blocks[first as usize].thread.index()];
                    let who = if thread.name.is_empty() {
                        format!("thread {}", thread.tid)
                    } else {
                        format!("thread {} {}", thread.tid, thread.name)
                    };
                    pending.push(Pending {
                        process: p,
                        start: addr,
                        kind: BinKind::ThreadArena,
                        name: format!("{prefix}arena {addr:#x} ({who})"),
                        key: Key::Window(w),
                    });
                    window_key.insert((p, w), Key::Window(w));
                }
            }
        }
        if let Some(&low) = own_maps.get(&p) {
            pending.push(Pending {
                process: p,
                start: low,
                kind: BinKind::Mapping,
                name: format!("{prefix}mappings"),
                key: Key::Mapping,
            });
        }
        if let Some(ranges) = maps.get(&p) {
            for &(s, _) in ranges {
                pending.push(Pending {
                    process: p,
                    start: s,
                    kind: BinKind::Mmap,
                    name: format!("{prefix}mmap {s:#x}"),
                    key: Key::Mmap(s),
                });
            }
        }
    }
    pending.sort_by_key(|b| (b.process, b.start));
    let mut bin_of_key: BTreeMap<(ProcessId, Key), BinId> = BTreeMap::new();
    let bins: Vec<Bin> = pending
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            bin_of_key.insert((p.process, p.key), BinId(i as u32));
            Bin {
                id: BinId(i as u32),
                kind: p.kind,
                name: p.name,
                process: Some(p.process),
                start: p.start,
                end: p.start,
                axis_start: 0,
                blocks: 0,
            }
        })
        .collect();
    // As above: a block in the same window of the same process as the one before is
    // in its bin.
    let mut last: Option<((ProcessId, u64), BinId)> = None;
    let block_bin = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let p = process_of(b);
            let key = if b.mapping {
                Key::Mapping
            } else if mmapped[i] {
                let ranges = &maps[&p];
                let at = ranges.partition_point(|r| r.0 <= b.addr - 16) - 1;
                Key::Mmap(ranges[at].0)
            } else {
                let window = (p, b.addr / ARENA_HEAP_SIZE);
                match last {
                    Some((w, bin)) if w == window => return bin,
                    _ => {
                        let bin = bin_of_key[&(p, window_key[&window])];
                        last = Some((window, bin));
                        return bin;
                    }
                }
            };
            bin_of_key[&(p, key)]
        })
        .collect();
    Found {
        bins,
        block_bin,
        mmapped,
    }
}

/// Gives every heap block its reserved size (glibc's usable size, see
/// [`glibc_usable_size`]; an mmap'd chunk's as `mmapped` says), then sets each bin's
/// extent to its blocks' lowest address and highest end, and counts them: one walk
/// over the blocks.
pub(crate) fn size_and_fit(
    bins: &mut [Bin],
    blocks: &mut [Block],
    block_bin: &[BinId],
    mmapped: &[bool],
) {
    let mut lo = vec![u64::MAX; bins.len()];
    let mut hi = vec![0u64; bins.len()];
    for ((b, bin), &mmapped) in blocks.iter_mut().zip(block_bin).zip(mmapped) {
        if !b.mapping {
            b.reserved = glibc_usable_size(b.requested, mmapped);
        }
        let i = bin.index();
        lo[i] = lo[i].min(b.addr);
        hi[i] = hi[i].max(b.addr.saturating_add(b.reserved.max(1)));
        bins[i].blocks += 1;
    }
    for (i, bin) in bins.iter_mut().enumerate() {
        if lo[i] <= hi[i] {
            bin.start = lo[i];
            bin.end = hi[i];
        }
    }
}
