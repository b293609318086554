//! The time × address index behind zoomed views and brushing.
//!
//! A hierarchy of time slabs: level `k` cuts the run into `2^k` equal slabs, and a
//! block is stored at the deepest level where its whole lifetime fits into one slab
//! (a binary "loose" interval tree). Within a cell (level, slab) the blocks are sorted
//! by their start on the address axis, with the running maximum of their ends, so the
//! blocks of a cell overlapping an address window form one contiguous range found by
//! two binary searches. A query visits, per level, only the slabs that overlap its time
//! window: a tile a thousandth of the run wide touches a handful of cells per level,
//! not all blocks. The records hold what the rasterizer needs (times, axis positions,
//! id) in the order it reads them, 40 bytes each.

use crate::block::Block;
use crate::ids::BinId;
use crate::model::Bin;

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
        let mut counts = vec![0u32; cells + 1];
        let cell_ids: Vec<u32> = blocks
            .iter()
            .map(|b| {
                let c = cell_of(b);
                counts[c + 1] += 1;
                c as u32
            })
            .collect();
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let cell_start = counts.clone();
        let mut fill = counts;
        let mut recs = vec![
            IndexRec {
                t0: 0,
                t1: 0,
                y0: 0,
                y1: 0,
                id: 0,
                requested: 0,
            };
            n
        ];
        for (i, b) in blocks.iter().enumerate() {
            let c = cell_ids[i] as usize;
            let bin = &bins[block_bin[i].index()];
            let y0 = bin.axis_start + (b.addr - bin.start);
            recs[fill[c] as usize] = IndexRec {
                t0: b.t_alloc,
                t1: b.t_free,
                y0,
                y1: y0 + b.reserved.max(1),
                id: i as u32,
                requested: b.requested.min(u64::from(u32::MAX)) as u32,
            };
            fill[c] += 1;
        }
        let mut max_end = vec![0u64; n];
        for c in 0..cells {
            let (a, b) = (cell_start[c] as usize, cell_start[c + 1] as usize);
            let cell = &mut recs[a..b];
            cell.sort_unstable_by_key(|r| (r.y0, r.t0, r.id));
            let mut m = 0;
            for (j, r) in cell.iter().enumerate() {
                m = m.max(r.y1);
                max_end[a + j] = m;
            }
        }
        TimeAddrIndex {
            recs,
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
    /// fixed order (level, slab, address).
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
        let s_lo = (t0.clamp(self.start, self.end) - self.start) / self.unit;
        let s_hi = ((t1 - 1).clamp(self.start, self.end) - self.start) / self.unit;
        for level in 0..=self.depth {
            let shift = self.depth - level;
            let base = (1usize << level) - 1;
            for slab in (s_lo >> shift)..=(s_hi >> shift) {
                let c = base + slab as usize;
                let (a, b) = (self.cell_start[c] as usize, self.cell_start[c + 1] as usize);
                if a == b {
                    continue;
                }
                let from = a + self.max_end[a..b].partition_point(|&m| m <= y0);
                let to = a + self.recs[a..b].partition_point(|r| r.y0 < y1);
                let from = from.min(to);
                for (j, r) in self.recs[from..to].iter().enumerate() {
                    if r.y1 > y0 && r.t0 < t1 && r.t1 > t0 {
                        f(from + j, r);
                    }
                }
            }
        }
    }
}
