//! The overview's option-independent part, built once per model: every block's time
//! cell and share, the stacks (time-tiny blocks of one time cell with one address
//! extent) and their cells, and an index of the blocks the rasterizer still draws.

use std::ops::Range;

use super::grid::{GridAxis, TILE_SIDE};
use crate::block::Block;
use crate::halves::both;
use crate::ids::BinId;
use crate::index::{IndexRec, TimeAddrIndex};
use crate::model::AllocModel;
use crate::raster::View;
use crate::raster::parts::PARALLEL_BLOCKS;

/// Models with fewer blocks get no overview: the plain path draws any of their tiles
/// in a few milliseconds.
pub const MIN_BLOCKS: usize = 1 << 16;

/// A block without extent in time: it colours nothing.
const EMPTY: u32 = u32::MAX;
/// A block drawn by the rasterizer (not tiny at every served level).
pub(super) const LOOSE: u32 = u32::MAX - 1;

/// Time-tiny blocks of one time cell with the same address extent, merged: the
/// "stacks" of blocks an allocator's address reuse produces.
pub(super) struct Stacks {
    /// Per time cell (`tx.n + 1` offsets): its stacks, sorted by `(y0, y1)`.
    pub(super) start: Vec<u32>,
    /// Per stack: axis start and end.
    pub(super) y0: Vec<u64>,
    pub(super) y1: Vec<u64>,
    /// Per stack: the running maximum of `y1` within its time cell.
    pub(super) max_end: Vec<u64>,
    /// Per stack: its cell (`cx · ny + cy`), or [`LOOSE`] when it is not tiny in address.
    pub(super) cell: Vec<u32>,
}

/// The option-independent part: every block's time cell share and stack, and the
/// blocks drawn by the rasterizer.
pub(super) struct Geometry {
    /// The time axis of the cell grid.
    pub(super) tx: GridAxis,
    /// The address axis of the cell grid.
    pub(super) ty: GridAxis,
    /// Per position in the model's index: the block's stack, or [`LOOSE`] (not tiny in
    /// time) or [`EMPTY`].
    pub(super) stack: Vec<u32>,
    /// Per position: the block's share of its time cell, `dt / (len / n)` (0 unless in a stack).
    pub(super) share: Vec<f32>,
    pub(super) stacks: Stacks,
    /// The blocks not in a cell.
    pub(super) loose: TimeAddrIndex,
    /// Per record of `loose`, in its order (what a query reads in turn): the block's
    /// position in the model's index, and whether it is in a stack (tiny in time, not
    /// in address).
    pub(super) loose_at: Vec<(u32, bool)>,
}

/// A cheap hash for the stack keys (multiply and rotate; keys are not adversarial
/// beyond the trace itself, and a bad spread only costs time).
#[derive(Default, Clone, Copy)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(26) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
}

/// What identifies a stack: its time cell, its axis start and end.
type StackKey = (u32, u64, u64);

type KeyMap = std::collections::HashMap<StackKey, u32, std::hash::BuildHasherDefault<KeyHasher>>;

impl Geometry {
    /// The geometry of `model`, or `None` when it has fewer than [`MIN_BLOCKS`] blocks or
    /// an axis is shorter than a tile's pixels.
    pub(super) fn build(model: &AllocModel) -> Option<Geometry> {
        if model.index.len() < MIN_BLOCKS {
            return None;
        }
        let whole = View::whole(model, TILE_SIDE, TILE_SIDE);
        let tx = GridAxis::new(whole.time.start_ns, whole.time.duration_ns())?;
        let ty = GridAxis::new(whole.addr.0, whole.addr.1 - whole.addr.0)?;
        let recs = model.index.records();
        let wx = tx.n as f64 / tx.len as f64;
        let parallel = recs.len() >= PARALLEL_BLOCKS;
        // Each record's time cell (or `LOOSE`, `EMPTY`), on two threads.
        let cell_of = |r: &IndexRec| match r.t1 > r.t0 {
            true => tx.cell(r.t0, r.t1).map_or(LOOSE, |c| c as u32),
            false => EMPTY,
        };
        let (first, second) = recs.split_at(recs.len() / 2);
        let (mut stack, rest) = both(
            parallel,
            || first.iter().map(cell_of).collect::<Vec<u32>>(),
            || second.iter().map(cell_of).collect::<Vec<u32>>(),
        );
        stack.extend(rest);
        // The stacks of each half of the time cells, on two threads: the second's
        // numbers follow the first's.
        let mid = (tx.n / 2) as u32;
        let ((low, mut keys), (high, high_keys)) = both(
            parallel,
            || number_stacks(recs, &stack, 0..mid),
            || number_stacks(recs, &stack, mid..tx.n as u32),
        );
        let offset = keys.len() as u32;
        for (pos, id) in low {
            stack[pos as usize] = id;
        }
        for (pos, id) in high {
            stack[pos as usize] = offset + id;
        }
        keys.extend(high_keys);
        let share = stack
            .iter()
            .zip(recs)
            .map(|(&s, r)| match s < LOOSE {
                true => ((r.t1 - r.t0) as f64 * wx) as f32,
                false => 0.0,
            })
            .collect();
        let mut stacks = Stacks {
            start: vec![0; tx.n as usize + 1],
            y0: Vec::with_capacity(keys.len()),
            y1: Vec::with_capacity(keys.len()),
            max_end: Vec::with_capacity(keys.len()),
            cell: Vec::with_capacity(keys.len()),
        };
        let mut last_cx = u32::MAX;
        let mut run_max = 0;
        for &(cx, y0, y1) in &keys {
            stacks.start[cx as usize + 1] += 1;
            if cx != last_cx {
                (last_cx, run_max) = (cx, 0);
            }
            run_max = run_max.max(y1);
            stacks.y0.push(y0);
            stacks.y1.push(y1);
            stacks.max_end.push(run_max);
            stacks.cell.push(
                ty.cell(y0, y1)
                    .map_or(LOOSE, |cy| (u64::from(cx) * ty.n + cy) as u32),
            );
        }
        for c in 1..stacks.start.len() {
            stacks.start[c] += stacks.start[c - 1];
        }
        // The blocks not in a cell.
        let mut loose_blocks: Vec<Block> = Vec::new();
        let mut loose_bins: Vec<BinId> = Vec::new();
        let mut loose_pos = Vec::new();
        for (pos, (r, &s)) in recs.iter().zip(&stack).enumerate() {
            let in_cell = s < LOOSE && stacks.cell[s as usize] != LOOSE;
            if s != EMPTY && !in_cell {
                loose_blocks.push(model.blocks[r.id as usize]);
                loose_bins.push(model.block_bin[r.id as usize]);
                loose_pos.push((pos as u32, s != LOOSE));
            }
        }
        let run = model.run();
        let loose = TimeAddrIndex::build(
            &loose_blocks,
            &loose_bins,
            &model.bins,
            (run.start_ns, run.end_ns),
        );
        let loose_at = loose
            .records()
            .iter()
            .map(|r| loose_pos[r.id as usize])
            .collect();
        Some(Geometry {
            tx,
            ty,
            stack,
            share,
            stacks,
            loose,
            loose_at,
        })
    }
}

/// The stacks of the records whose time cell (`cells[position]`) is in `range`: per
/// such record, its position and its stack's number, and the stacks' keys (time
/// cell, axis start and end), numbered in the order of their keys.
fn number_stacks(
    recs: &[IndexRec],
    cells: &[u32],
    range: Range<u32>,
) -> (Vec<(u32, u32)>, Vec<StackKey>) {
    // Numbered in order of appearance first, renumbered by key below.
    let mut ids = KeyMap::default();
    let mut keys: Vec<StackKey> = Vec::new();
    let mut members = Vec::new();
    for (pos, (&cx, r)) in cells.iter().zip(recs).enumerate() {
        // (`LOOSE` and `EMPTY` are beyond every cell.)
        if !range.contains(&cx) {
            continue;
        }
        let key = (cx, r.y0, r.y1);
        let next = keys.len() as u32;
        let id = *ids.entry(key).or_insert_with(|| {
            keys.push(key);
            next
        });
        members.push((pos as u32, id));
    }
    drop(ids);
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_unstable_by_key(|&i| keys[i as usize]);
    let mut renumber = vec![0u32; keys.len()];
    for (new, &old) in order.iter().enumerate() {
        renumber[old as usize] = new as u32;
    }
    for member in &mut members {
        member.1 = renumber[member.1 as usize];
    }
    let keys = order.iter().map(|&i| keys[i as usize]).collect();
    (members, keys)
}
