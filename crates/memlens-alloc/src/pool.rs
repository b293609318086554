//! The pool-allocator replay: the allocator the paper studies, fed with a recorded
//! run's requests, so a designer can compare configurations on real workloads.
//!
//! The pool has B bins of fixed block sizes `dim_1 < … < dim_B`, bin `i` holding `N_i`
//! blocks, laid out one after the other from [`POOL_BASE`]; after them (page-aligned)
//! comes an unstructured heap. A request of `s` bytes goes to the bin whose block size
//! fits best (the smallest `dim_i ≥ s`) and takes that bin's lowest free block; if that
//! bin is full, or `s > dim_B`, it goes to the heap ("overflow"). The heap allocates
//! from high addresses down, as in the paper: with [`OverflowPolicy::FirstFit`] the
//! highest free run that fits, with [`OverflowPolicy::BestFit`] the smallest one (ties:
//! the highest); the block takes the top end of the run, and freed runs coalesce. Heap
//! blocks are rounded up to `heap_align` bytes. The heap holds `heap_size` bytes, or, when
//! that is not given, enough for every request at once (it never fails). A request the
//! heap cannot serve fails: it is counted and left out of the replayed model.
//!
//! Requests are replayed in time order (frees before allocations at equal times), with
//! their lifetimes, threads and sites kept, so the replayed model draws and measures
//! like the real one.

use std::collections::BTreeMap;

use crate::bin::{Bin, BinKind};
use crate::block::Block;
use crate::error::AllocError;
use crate::ids::{BinId, BlockId};
use crate::model::AllocModel;

/// Where the simulated pool starts.
pub const POOL_BASE: u64 = 0x1000_0000;

/// One bin of the pool: `count` blocks of `block_size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolBin {
    /// The fixed block size, bytes.
    pub block_size: u64,
    /// The number of blocks.
    pub count: u64,
}

/// How the heap picks a free run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OverflowPolicy {
    /// The highest free run that fits.
    #[default]
    FirstFit,
    /// The smallest free run that fits (ties: the highest).
    BestFit,
}

/// A pool configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// The bins, block sizes strictly increasing.
    pub bins: Vec<PoolBin>,
    /// The heap's policy.
    pub overflow: OverflowPolicy,
    /// The heap's size in bytes; `None`: large enough for every request at once.
    pub heap_size: Option<u64>,
    /// Heap blocks are rounded up to this (a power of two; 1 keeps exact sizes).
    pub heap_align: u64,
}

impl PoolConfig {
    /// A configuration with these bins, first-fit overflow, an unbounded heap and 16-byte
    /// heap alignment.
    pub fn new(bins: Vec<PoolBin>) -> PoolConfig {
        PoolConfig {
            bins,
            overflow: OverflowPolicy::FirstFit,
            heap_size: None,
            heap_align: 16,
        }
    }

    /// Parses a bin list `SIZE:COUNT,SIZE:COUNT,…` (sizes in bytes, `K`/`M` suffixes
    /// allowed), e.g. `16:1024,32:512,64:256`.
    pub fn parse_bins(spec: &str) -> Result<Vec<PoolBin>, AllocError> {
        spec.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| {
                let bad = || {
                    AllocError::BadPoolBin(format!(
                        "`{item}` is not a pool bin: write BLOCK_SIZE:COUNT, e.g. `32:512`"
                    ))
                };
                let (size, count) = item.split_once(':').ok_or_else(bad)?;
                Ok(PoolBin {
                    block_size: parse_bytes(size).ok_or_else(bad)?,
                    count: count.trim().parse().map_err(|_| bad())?,
                })
            })
            .collect()
    }

    /// Checks the configuration: at least one bin, sizes and counts above 0, sizes
    /// strictly increasing, a power-of-two alignment.
    pub fn validate(&self) -> Result<(), AllocError> {
        if self.bins.is_empty() {
            return Err(AllocError::BadPoolBin(
                "the pool has no bins: give at least one BLOCK_SIZE:COUNT".to_string(),
            ));
        }
        for (i, b) in self.bins.iter().enumerate() {
            if b.block_size == 0 || b.count == 0 {
                return Err(AllocError::BadPoolBin(format!(
                    "pool bin {} ({}:{}) is empty: block size and count must be above 0",
                    i + 1,
                    b.block_size,
                    b.count
                )));
            }
            if i > 0 && b.block_size <= self.bins[i - 1].block_size {
                return Err(AllocError::BinSizesNotIncreasing {
                    index: i,
                    size: b.block_size,
                    previous: self.bins[i - 1].block_size,
                });
            }
        }
        if !self.heap_align.is_power_of_two() {
            return Err(AllocError::BadPoolBin(format!(
                "the heap alignment {} is not a power of two",
                self.heap_align
            )));
        }
        if self.heap_size == Some(0) {
            return Err(AllocError::BadPoolBin(
                "the heap size must be above 0".to_string(),
            ));
        }
        Ok(())
    }
}

/// Parses `123`, `4K`, `4KiB`, `2M`, `1G` (powers of 1024): the one size grammar of
/// [`memlens_vocab::parse_size`].
pub fn parse_bytes(text: &str) -> Option<u64> {
    memlens_vocab::parse_size(text).ok()
}

/// A request that did not get a block in its bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    /// The block in the *recorded* model.
    pub block: BlockId,
    /// When it was requested, ns.
    pub t_ns: u64,
    /// The requested size.
    pub size: u64,
    /// The bin (0-based) that fitted best, or `None` when larger than every bin.
    pub bin: Option<usize>,
    /// True when the heap could not serve it either.
    pub failed: bool,
}

/// Per-bin results of a replay.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct BinReport {
    /// The block size.
    pub block_size: u64,
    /// The number of blocks.
    pub slots: u64,
    /// Requests served by this bin.
    pub served: u64,
    /// Requests that fitted this bin best but found it full.
    pub overflowed: u64,
    /// The most blocks in use at once.
    pub high_water: u64,
    /// Σ (block size − requested) over the served requests.
    pub waste_bytes: u64,
    /// Σ requested over the served requests.
    pub requested_bytes: u64,
}

/// What a replay found.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ReplayReport {
    /// Requests replayed.
    pub requests: u64,
    /// One entry per pool bin.
    pub bins: Vec<BinReport>,
    /// Requests served by the heap.
    pub heap_served: u64,
    /// Requests larger than the largest bin.
    pub too_large: u64,
    /// Requests the heap could not serve (left out of the replayed model).
    pub failed: u64,
    /// The heap's high-water mark: the most bytes between its lowest block and its top.
    pub heap_high_water_bytes: u64,
    /// Σ (rounded − requested) over heap blocks.
    pub heap_waste_bytes: u64,
    /// Every request that did not get a block in its bin, in time order.
    pub overflows: Vec<Overflow>,
}

/// The heap: free runs by start address.
struct Heap {
    free: BTreeMap<u64, u64>,
    start: u64,
    top: u64,
    lowest: u64,
    policy: OverflowPolicy,
}

impl Heap {
    fn alloc(&mut self, need: u64) -> Option<u64> {
        let (&start, &len) = match self.policy {
            OverflowPolicy::FirstFit => self.free.iter().rev().find(|&(_, &len)| len >= need)?,
            OverflowPolicy::BestFit => self
                .free
                .iter()
                .rev()
                .filter(|&(_, &len)| len >= need)
                .min_by_key(|&(_, &len)| len)?,
        };
        if len == need {
            self.free.remove(&start);
        } else {
            self.free.insert(start, len - need);
        }
        let addr = start + len - need;
        self.lowest = self.lowest.min(addr);
        Some(addr)
    }

    fn free(&mut self, addr: u64, len: u64) {
        let (mut s, mut e) = (addr, addr + len);
        if let Some((&ps, &pl)) = self.free.range(..addr).next_back()
            && ps + pl == addr
        {
            self.free.remove(&ps);
            s = ps;
        }
        if let Some(&nl) = self.free.get(&e) {
            self.free.remove(&e);
            e += nl;
        }
        self.free.insert(s, e - s);
    }
}

/// Bin slots: the lowest free slot first.
struct Slots {
    free: std::collections::BinaryHeap<std::cmp::Reverse<u64>>,
    next: u64,
    count: u64,
    used: u64,
}

impl Slots {
    fn take(&mut self) -> Option<u64> {
        let slot = match self.free.peek() {
            Some(&std::cmp::Reverse(s)) => {
                self.free.pop();
                s
            }
            None if self.next < self.count => {
                self.next += 1;
                self.next - 1
            }
            None => return None,
        };
        self.used += 1;
        Some(slot)
    }

    fn give_back(&mut self, slot: u64) {
        self.free.push(std::cmp::Reverse(slot));
        self.used -= 1;
    }
}

/// Where a replayed block went.
#[derive(Clone, Copy)]
enum Place {
    Bin(usize, u64),
    Heap(u64, u64),
    Failed,
}

/// Replays `model`'s requests through the pool of `config`; returns the replayed model
/// (simulated addresses; bins = the pool's bins, then the heap) and the report.
pub fn replay(
    model: &AllocModel,
    config: &PoolConfig,
) -> Result<(AllocModel, ReplayReport), AllocError> {
    config.validate()?;
    let blocks = model.blocks();
    let align = config.heap_align;
    let rounded = |s: u64| s.max(1).div_ceil(align) * align;
    let mut bin_start = Vec::with_capacity(config.bins.len());
    let mut at = POOL_BASE;
    for b in &config.bins {
        bin_start.push(at);
        at = at.saturating_add(b.block_size.saturating_mul(b.count));
    }
    let heap_start = at.div_ceil(4096) * 4096;
    let heap_capacity = config.heap_size.unwrap_or_else(|| {
        blocks
            .iter()
            .filter(|b| !b.mapping)
            .map(|b| rounded(b.requested))
            .fold(0u64, u64::saturating_add)
            .max(align)
    });
    let heap_top = heap_start.saturating_add(heap_capacity);
    let mut heap = Heap {
        free: BTreeMap::from([(heap_start, heap_capacity)]),
        start: heap_start,
        top: heap_top,
        lowest: heap_top,
        policy: config.overflow,
    };
    let mut slots: Vec<Slots> = config
        .bins
        .iter()
        .map(|b| Slots {
            free: Default::default(),
            next: 0,
            count: b.count,
            used: 0,
        })
        .collect();
    let mut report = ReplayReport {
        bins: config
            .bins
            .iter()
            .map(|b| BinReport {
                block_size: b.block_size,
                slots: b.count,
                ..BinReport::default()
            })
            .collect(),
        ..ReplayReport::default()
    };
    // Events: (time, 0 = free / 1 = alloc, block).
    let mut events: Vec<(u64, u8, u32)> = Vec::with_capacity(blocks.len() * 2);
    // The program's own mappings are not allocator requests: they are left out.
    for (i, b) in blocks.iter().enumerate().filter(|(_, b)| !b.mapping) {
        events.push((b.t_alloc, 1, i as u32));
        if b.freed {
            events.push((b.t_free, 0, i as u32));
        }
    }
    events.sort_unstable();
    let mut place = vec![Place::Failed; blocks.len()];
    for (t, kind, i) in events {
        let b = &blocks[i as usize];
        if kind == 0 {
            match place[i as usize] {
                Place::Bin(k, slot) => slots[k].give_back(slot),
                Place::Heap(addr, len) => heap.free(addr, len),
                Place::Failed => {}
            }
            continue;
        }
        report.requests += 1;
        let fit = config.bins.partition_point(|p| p.block_size < b.requested);
        let in_bin = (fit < config.bins.len())
            .then(|| slots[fit].take())
            .flatten();
        if let Some(slot) = in_bin {
            let r = &mut report.bins[fit];
            r.served += 1;
            r.high_water = r.high_water.max(slots[fit].used);
            r.waste_bytes += config.bins[fit].block_size - b.requested;
            r.requested_bytes += b.requested;
            place[i as usize] = Place::Bin(fit, slot);
            continue;
        }
        if fit < config.bins.len() {
            report.bins[fit].overflowed += 1;
        } else {
            report.too_large += 1;
        }
        let need = rounded(b.requested);
        let got = heap.alloc(need);
        report.overflows.push(Overflow {
            block: BlockId(i),
            t_ns: t,
            size: b.requested,
            bin: (fit < config.bins.len()).then_some(fit),
            failed: got.is_none(),
        });
        match got {
            Some(addr) => {
                report.heap_served += 1;
                report.heap_waste_bytes += need - b.requested;
                report.heap_high_water_bytes =
                    report.heap_high_water_bytes.max(heap.top - heap.lowest);
                place[i as usize] = Place::Heap(addr, need);
            }
            None => report.failed += 1,
        }
    }
    // The replayed model: same lifetimes, simulated places.
    let heap_bin = BinId(config.bins.len() as u32);
    let mut out_blocks = Vec::with_capacity(blocks.len());
    let mut block_bin = Vec::with_capacity(blocks.len());
    let mut latency = model
        .latency
        .as_ref()
        .map(|_| Vec::with_capacity(blocks.len()));
    for (i, b) in blocks.iter().enumerate() {
        let (addr, reserved, bin) = match place[i] {
            Place::Bin(k, slot) => (
                bin_start[k] + slot * config.bins[k].block_size,
                config.bins[k].block_size,
                BinId(k as u32),
            ),
            Place::Heap(addr, len) => (addr, len, heap_bin),
            Place::Failed => continue,
        };
        out_blocks.push(Block {
            addr,
            reserved,
            ..*b
        });
        block_bin.push(bin);
        if let (Some(out), Some(lat)) = (latency.as_mut(), model.latency.as_ref()) {
            out.push(lat[i]);
        }
    }
    let mut bins: Vec<Bin> = config
        .bins
        .iter()
        .enumerate()
        .map(|(k, p)| Bin {
            id: BinId(k as u32),
            kind: BinKind::PoolBin {
                block_size: p.block_size,
                slots: p.count,
            },
            name: format!("bin {} ({} B × {})", k + 1, p.block_size, p.count),
            process: None,
            start: bin_start[k],
            end: bin_start[k] + p.block_size * p.count,
            axis_start: 0,
            blocks: report.bins[k].served,
        })
        .collect();
    // A bounded heap shows its whole extent; an unbounded one what it used.
    let heap_low = if config.heap_size.is_some() {
        heap.start
    } else {
        heap.lowest.min(heap.top.saturating_sub(align))
    };
    bins.push(Bin {
        id: heap_bin,
        kind: BinKind::PoolHeap,
        name: "heap".to_string(),
        process: None,
        start: heap_low,
        end: heap.top,
        axis_start: 0,
        blocks: report.heap_served,
    });
    let run = model.run();
    let mut replayed = AllocModel::assemble(
        out_blocks,
        latency,
        model.threads.clone(),
        model.processes.clone(),
        model.sites.clone(),
        model.diagnostics.clone(),
        (run.start_ns, run.end_ns),
        bins,
        block_bin,
    );
    replayed.time_origin = model.time_origin;
    replayed.window = model.window;
    Ok((replayed, report))
}
