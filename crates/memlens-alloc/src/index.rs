//! The time × address index behind zoomed views and brushing.
//!
//! A hierarchy of time slabs: level `k` cuts the run into `2^k` equal slabs, and a
//! block is stored at the deepest level where its whole lifetime fits into one slab
//! (a binary "loose" interval tree). Within a cell (level, slab) the blocks are sorted
//! by their start on the address axis, with the running maximum of their ends, so the
//! blocks of a cell overlapping an address window form one contiguous range found by
//! two binary searches (skipped when the window covers the cell). A query visits only
//! the cells whose slabs overlap its time window: a tile a thousandth of the run wide
//! touches a handful of cells per level, not all blocks. The records hold what the
//! rasterizer needs (times, axis positions, id), 40 bytes each.
//!
//! Cells are visited in pre-order, left to right: walking the deepest slabs of the
//! window in time order, a cell comes at the first of its slabs inside the window
//! (a cell, then its left half, then its right half). A whole-run picture is thus
//! swept once from left to right, and the blocks of a cell land in pixel columns the
//! cells before it have just touched (with one pass per level instead, each level
//! swept the whole accumulator again, a cache miss per block on the sparse levels).

use std::mem::MaybeUninit;

use crate::bin::Bin;
use crate::block::Block;
use crate::halves::both;
use crate::ids::BinId;

/// Below this many blocks the index sorts its cells on one thread.
const PARALLEL_SORT_MIN: usize = 1 << 16;

/// One block as the rasterizer reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexRec {
    /// Allocation time, ns.
    pub t0: u64,
    /// Free time (or end of run), ns.
    pub t1: u64,
    /// Start on the compact address axis.
    pub y0: u64,
    /// End on the compact address axis (start + reserved size).
    pub y1: u64,
    /// The block id.
    pub id: u32,
    /// The requested size, saturated to `u32::MAX` (for size filters).
    pub requested: u32,
}

/// The index.
#[derive(Clone, Debug, Default)]
pub struct TimeAddrIndex {
    recs: Vec<IndexRec>,
    /// Running maximum of `y1` within each cell.
    max_end: Vec<u64>,
    /// `cells + 1` offsets into `recs`.
    cell_start: Vec<u32>,
    depth: u32,
    start: u64,
    end: u64,
    /// Width of a slab at the deepest level, ns.
    unit: u64,
    /// The bounding box of all records, `(t0, t1, y0, y1)`, when none is empty in time
    /// (`t1 > t0` for all): a window containing it contains every record.
    bounds: Option<(u64, u64, u64, u64)>,
}

impl TimeAddrIndex {
    /// Indexes `blocks` placed by `block_bin` on the axis of `bins` over the run `(start, end)`.
    pub(crate) fn build(
        blocks: &[Block],
        block_bin: &[BinId],
        bins: &[Bin],
        run: (u64, u64),
    ) -> TimeAddrIndex {
        let (start, end) = (run.0, run.1.max(run.0));
        let n = blocks.len();
        let depth = ((n / 256).max(1).ilog2()).min(14);
        let span = end - start + 1;
        let unit = span.div_ceil(1u64 << depth).max(1);
        let cells = (1usize << (depth + 1)) - 1;
        let cell_of = |b: &Block| -> usize {
            let s0 = (b.t_alloc.clamp(start, end) - start) / unit;
            let last = b.t_free.max(b.t_alloc + 1) - 1;
            let s1 = (last.clamp(start, end) - start) / unit;
            let bits = 64 - (s0 ^ s1).leading_zeros();
            let level = depth.saturating_sub(bits);
            let shift = depth - level;
            let slab = (s0 >> shift) as usize;
            (1usize << level) - 1 + slab
        };
        let (mut recs, cell_start, bounds) = place(blocks, block_bin, bins, cells, cell_of);
        let mut max_end = vec![0u64; n];
        // Two halves of the cells (by records) sorted on two threads: each cell is
        // independent, and the result does not depend on how they are shared out.
        let split = cell_start
            .partition_point(|&s| (s as usize) < n / 2)
            .min(cells);
        let at = cell_start[split] as usize;
        let (recs_a, recs_b) = recs.split_at_mut(at);
        let (max_a, max_b) = max_end.split_at_mut(at);
        let sort_cells = |recs: &mut [IndexRec], max_end: &mut [u64], cells: &[u32], base: u32| {
            for w in cells.windows(2) {
                let (a, b) = ((w[0] - base) as usize, (w[1] - base) as usize);
                let cell = &mut recs[a..b];
                cell.sort_unstable_by_key(|r| (r.y0, r.t0, r.id));
                let mut m = 0;
                for (j, r) in cell.iter().enumerate() {
                    m = m.max(r.y1);
                    max_end[a + j] = m;
                }
            }
        };
        both(
            n >= PARALLEL_SORT_MIN,
            || sort_cells(recs_a, max_a, &cell_start[..=split], 0),
            || sort_cells(recs_b, max_b, &cell_start[split..=cells], at as u32),
        );
        TimeAddrIndex {
            recs,
            bounds,
            max_end,
            cell_start,
            depth,
            start,
            end,
            unit,
        }
    }

    /// Number of indexed blocks.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// The records in index order (positions are what [`TimeAddrIndex::query_positions`] reports).
    pub fn records(&self) -> &[IndexRec] {
        &self.recs
    }

    /// Calls `f` with every block whose rectangle overlaps `[t0, t1) × [y0, y1)`, in a
    /// fixed order (cells in pre-order as the module describes, by address within a cell).
    pub fn query(&self, t0: u64, t1: u64, y0: u64, y1: u64, mut f: impl FnMut(&IndexRec)) {
        self.query_positions(t0, t1, y0, y1, |_, r| f(r));
    }

    /// Like [`TimeAddrIndex::query`], also passing each record's position in [`TimeAddrIndex::records`].
    pub fn query_positions(
        &self,
        t0: u64,
        t1: u64,
        y0: u64,
        y1: u64,
        mut f: impl FnMut(usize, &IndexRec),
    ) {
        if self.recs.is_empty() || t1 <= t0 || y1 <= y0 || t1 <= self.start || t0 > self.end {
            return;
        }
        // A window around everything (a whole-run picture) needs no test per record.
        let contains_all = self
            .bounds
            .is_some_and(|b| t0 <= b.0 && b.1 <= t1 && y0 <= b.2 && b.3 <= y1);
        let s_lo = (t0.clamp(self.start, self.end) - self.start) / self.unit;
        let s_hi = ((t1 - 1).clamp(self.start, self.end) - self.start) / self.unit;
        // Cells in pre-order (a cell, then the halves of its slab): walking the
        // deepest slabs left to right, each cell is visited at the first slab of it
        // inside the window, so the picture is swept once from left to right and
        // the pixels a cell touches are still cached from its neighbours.
        for s in s_lo..=s_hi {
            for level in 0..=self.depth {
                let shift = self.depth - level;
                if s != s_lo && s & ((1 << shift) - 1) != 0 {
                    continue;
                }
                let c = (1usize << level) - 1 + (s >> shift) as usize;
                let (a, b) = (self.cell_start[c] as usize, self.cell_start[c + 1] as usize);
                if a == b {
                    continue;
                }
                // A window that covers the whole cell (a whole-run picture) needs no search.
                let from = if self.max_end[a] > y0 {
                    a
                } else {
                    a + self.max_end[a..b].partition_point(|&m| m <= y0)
                };
                let to = if self.recs[b - 1].y0 < y1 {
                    b
                } else {
                    a + self.recs[a..b].partition_point(|r| r.y0 < y1)
                };
                let from = from.min(to);
                for (j, r) in self.recs[from..to].iter().enumerate() {
                    if contains_all || (r.y1 > y0 && r.t0 < t1 && r.t1 > t0) {
                        f(from + j, r);
                    }
                }
            }
        }
    }
}

/// The bounding box of some records as [`TimeAddrIndex::bounds`] has it, folded one
/// record at a time: `None` once a record is empty in time.
type Bounds = Option<(u64, u64, u64, u64)>;

/// The bounds of no records.
const NO_BOUNDS: Bounds = Some((u64::MAX, 0, u64::MAX, 0));

/// Folds a record into [`Bounds`].
fn bound(bounds: Bounds, r: &IndexRec) -> Bounds {
    let (t0, t1, y0, y1) = bounds?;
    (r.t1 > r.t0).then_some((t0.min(r.t0), t1.max(r.t1), y0.min(r.y0), y1.max(r.y1)))
}

/// Puts the record of every block in its cell (`cell_of`, below `cells`), the blocks of
/// a cell in block order: a counting sort, on two threads for many blocks (each
/// places half of the blocks, into its own part of every cell). Returns the records,
/// the `cells + 1` cell offsets and the records' bounds.
fn place(
    blocks: &[Block],
    block_bin: &[BinId],
    bins: &[Bin],
    cells: usize,
    cell_of: impl Fn(&Block) -> usize + Sync,
) -> (Vec<IndexRec>, Vec<u32>, Bounds) {
    let n = blocks.len();
    let parallel = n >= PARALLEL_SORT_MIN;
    let mid = if parallel { n / 2 } else { n };
    // Each half's cell per block and count per cell.
    let count = |range: std::ops::Range<usize>| {
        let mut counts = vec![0usize; cells];
        let ids: Vec<u32> = blocks[range]
            .iter()
            .map(|b| {
                let c = cell_of(b);
                counts[c] += 1;
                c as u32
            })
            .collect();
        (ids, counts)
    };
    let ((ids_a, counts_a), (ids_b, counts_b)) = both(parallel, || count(0..mid), || count(mid..n));
    let mut total = 0u32;
    let mut cell_start = Vec::with_capacity(cells + 1);
    cell_start.push(total);
    for (a, b) in counts_a.iter().zip(&counts_b) {
        total += (a + b) as u32;
        cell_start.push(total);
    }
    // Every cell's slots, the first half's then the second's: disjoint slices of the
    // records' room, each filled front to back.
    let mut recs: Vec<IndexRec> = Vec::with_capacity(n);
    let (mut slots_a, mut slots_b) = (Vec::with_capacity(cells), Vec::with_capacity(cells));
    let mut rest = &mut recs.spare_capacity_mut()[..n];
    for (&a, &b) in counts_a.iter().zip(&counts_b) {
        let (cell_a, after) = std::mem::take(&mut rest).split_at_mut(a);
        let (cell_b, after) = after.split_at_mut(b);
        slots_a.push(cell_a);
        slots_b.push(cell_b);
        rest = after;
    }
    let fill = |first: usize, ids: &[u32], slots: &mut [&mut [MaybeUninit<IndexRec>]]| {
        let mut bounds = NO_BOUNDS;
        for (k, &c) in ids.iter().enumerate() {
            let i = first + k;
            let b = &blocks[i];
            let bin = &bins[block_bin[i].index()];
            let y0 = bin.axis_start + (b.addr - bin.start);
            let rec = IndexRec {
                t0: b.t_alloc,
                t1: b.t_free,
                y0,
                y1: y0 + b.reserved.max(1),
                id: i as u32,
                requested: b.requested.min(u64::from(u32::MAX)) as u32,
            };
            bounds = bound(bounds, &rec);
            let cell = &mut slots[c as usize];
            let Some((slot, after)) = std::mem::take(cell).split_first_mut() else {
                unreachable!("a cell has a slot for each of its blocks (counted above)")
            };
            slot.write(rec);
            *cell = after;
        }
        (bounds, slots.iter().all(|cell| cell.is_empty()))
    };
    let ((bounds_a, full_a), (bounds_b, full_b)) = both(
        parallel,
        || fill(0, &ids_a, &mut slots_a),
        || fill(mid, &ids_b, &mut slots_b),
    );
    assert!(full_a && full_b, "every slot of every cell is written");
    // SAFETY: the slots of all cells partition the first `n` places of the room (they
    // were split off it one after the other, `n` in all), and every one was written
    // (asserted just above: each cell's slices were filled to their end).
    unsafe { recs.set_len(n) };
    let bounds = match (bounds_a, bounds_b) {
        (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1), a.2.min(b.2), a.3.max(b.3))),
        _ => None,
    };
    (recs, cell_start, bounds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bin::BinKind;
    use crate::ids::{SiteId, ThreadId};

    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// `n` random blocks over the run `[0, 1_000_000)` in one bin at 0x1000, some of
    /// them empty in time when `empty` is set.
    fn index(n: usize, seed: u64, empty: bool) -> (Vec<Block>, TimeAddrIndex) {
        let mut x = seed;
        let blocks: Vec<Block> = (0..n)
            .map(|_| {
                let t_alloc = xorshift(&mut x) % 1_000_000;
                let life = match xorshift(&mut x) % 10 {
                    0 if empty => 0,
                    0..=6 => xorshift(&mut x) % 500,
                    7 | 8 => xorshift(&mut x) % 50_000,
                    _ => xorshift(&mut x) % 1_000_000,
                };
                let reserved = 8 + xorshift(&mut x) % 300;
                Block {
                    t_alloc,
                    t_free: (t_alloc + life).min(1_000_000),
                    addr: 0x1000 + xorshift(&mut x) % 100_000,
                    requested: reserved,
                    reserved,
                    thread: ThreadId(0),
                    site: SiteId::UNKNOWN,
                    free_site: SiteId::UNKNOWN,
                    freed: true,
                    from_realloc: false,
                    mapping: false,
                }
            })
            .collect();
        let bin = Bin {
            id: BinId(0),
            kind: BinKind::MainHeap,
            name: "main heap".into(),
            process: None,
            start: 0x1000,
            end: 0x1000 + 100_400,
            axis_start: 0,
            blocks: n as u64,
        };
        let idx = TimeAddrIndex::build(&blocks, &vec![BinId(0); n], &[bin], (0, 1_000_000));
        (blocks, idx)
    }

    #[test]
    fn queries_find_each_overlapping_block_exactly_once() {
        // 100,000 blocks are placed by two threads (`PARALLEL_SORT_MIN`).
        for (n, seed, empty) in [(20_000, 7, false), (20_000, 99, true), (100_000, 5, true)] {
            let (blocks, idx) = index(n, seed, empty);
            let mut ids: Vec<u32> = idx.records().iter().map(|r| r.id).collect();
            ids.sort_unstable();
            assert!(ids.iter().copied().eq(0..n as u32), "every block once");
            let expected_bounds = blocks.iter().try_fold((u64::MAX, 0, u64::MAX, 0), |b, r| {
                let (y0, y1) = (r.addr - 0x1000, r.addr - 0x1000 + r.reserved);
                (r.t_free > r.t_alloc).then_some((
                    b.0.min(r.t_alloc),
                    b.1.max(r.t_free),
                    b.2.min(y0),
                    b.3.max(y1),
                ))
            });
            assert_eq!(idx.bounds, expected_bounds, "{n} blocks, seed {seed}");
            assert!(idx.depth > 3, "the test should exercise several levels");
            let mut x = seed ^ 0xabcd;
            let mut windows = vec![(0, 1_000_000, 0, 100_400), (0, u64::MAX, 0, u64::MAX)];
            for _ in 0..200 {
                let t0 = xorshift(&mut x) % 1_000_000;
                let y0 = xorshift(&mut x) % 100_000;
                let tw = 1 + xorshift(&mut x) % [100, 10_000, 1_000_000][windows.len() % 3];
                let yw = 1 + xorshift(&mut x) % 50_000;
                windows.push((t0, t0 + tw, y0, y0 + yw));
            }
            for (t0, t1, y0, y1) in windows {
                let mut got = Vec::new();
                idx.query(t0, t1, y0, y1, |r| got.push(r.id));
                got.sort_unstable();
                let expected: Vec<u32> = (0..blocks.len() as u32)
                    .filter(|&i| {
                        let b = &blocks[i as usize];
                        let (by0, by1) = (b.addr - 0x1000, b.addr - 0x1000 + b.reserved);
                        b.t_alloc < t1 && b.t_free > t0 && by0 < y1 && by1 > y0
                    })
                    .collect();
                assert_eq!(got, expected, "window {t0}..{t1} × {y0}..{y1}");
            }
        }
    }
}
