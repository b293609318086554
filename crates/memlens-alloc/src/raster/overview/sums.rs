//! The sums of one option set (α, colour-by and filters): per stack and per cell, the
//! blocks' shares of their time cell `Σ s`, `Σ s^α` and `Σ s^α·c`, from one pass over
//! the blocks in stacks.

use std::ops::Range;

use super::geometry::{Geometry, LOOSE};
use crate::halves::both;
use crate::ids::BinId;
use crate::index::IndexRec;
use crate::model::AllocModel;
use crate::raster::parts::PARALLEL_BLOCKS;
use crate::raster::{Attributes, ColorBy, Filter, PowLut, RenderOptions};
use crate::size_class::SizeFilter;

/// The sums of one option set: per stack `Σ s`, `Σ s^α`, then 1 or 3 colour sums
/// `Σ s^α·c` (`s` the blocks' shares of their time cell), and the same per cell
/// with the blocks' shares `f_K` of their cell.
pub(super) struct Sums {
    /// Colour channels: 3 for a categorical colouring, 1 for a continuous one.
    pub(super) ncolor: usize,
    /// Per stack, `2 + ncolor` sums.
    pub(super) stacks: Vec<f32>,
    /// Per cell (`cx · ny + cy`), `2 + ncolor` sums.
    pub(super) cells: Vec<f32>,
    /// The colouring attribute of the loose blocks, in the order of their index
    /// (`Geometry::loose`), which a tile's query reads in turn: the attribute in the
    /// model's index order would be read at scattered places, a cache miss per block.
    pub(super) loose: LooseAttributes,
}

/// The colouring attribute of the loose blocks (see [`Sums::loose`]).
pub(super) enum LooseAttributes {
    /// Category ids (the palette is the attribute's).
    Categorical(Vec<u32>),
    /// Values in 0..=1.
    Continuous(Vec<f32>),
}

impl Sums {
    pub(super) fn build(
        model: &AllocModel,
        geo: &Geometry,
        attrs: &Attributes,
        options: &RenderOptions,
    ) -> Sums {
        let filter = Filter::new(model, options);
        let keep = |rec: &IndexRec| filter.keeps(model, rec);
        let lut = PowLut::shared(options.alpha);
        let filtered = filter.is_active();
        let at = |pos: &(u32, bool)| pos.0 as usize;
        match attrs {
            Attributes::Categorical { ids, palette } => {
                let (stacks, cells) = build(model, geo, &lut, keep, filtered, |pos| {
                    &palette[ids[pos] as usize]
                });
                let loose = geo.loose_at.iter().map(|p| ids[at(p)]).collect();
                Sums {
                    ncolor: 3,
                    stacks,
                    cells,
                    loose: LooseAttributes::Categorical(loose),
                }
            }
            Attributes::Continuous(values) => {
                let (stacks, cells) = build(model, geo, &lut, keep, filtered, |pos| {
                    std::array::from_ref(&values[pos])
                });
                let loose = geo.loose_at.iter().map(|p| values[at(p)]).collect();
                Sums {
                    ncolor: 1,
                    stacks,
                    cells,
                    loose: LooseAttributes::Continuous(loose),
                }
            }
        }
    }

    pub(super) fn bytes(&self) -> usize {
        (self.stacks.len() + self.cells.len() + self.loose_len()) * 4
    }

    /// The bytes of the sums of the same option set coloured `by` (the same stacks,
    /// cells and loose blocks, `2 + ncolor` sums each).
    pub(super) fn bytes_of(&self, by: ColorBy) -> usize {
        let ncolor = if by.is_categorical() { 3 } else { 1 };
        let sums = (self.stacks.len() + self.cells.len()) / (2 + self.ncolor) * (2 + ncolor);
        (sums + self.loose_len()) * 4
    }

    fn loose_len(&self) -> usize {
        match &self.loose {
            LooseAttributes::Categorical(ids) => ids.len(),
            LooseAttributes::Continuous(values) => values.len(),
        }
    }
}

/// The sums per stack and per cell of the blocks in stacks that `keep` accepts (all
/// when not `filtered`), coloured `color(position)`: from [`PARALLEL_BLOCKS`] blocks
/// on two threads, each taking one half of the time cells — their stacks and their
/// cells, disjoint ranges of both (always two halves, whatever the cores: the sums do
/// not depend on the machine).
fn build<'a, const NC: usize>(
    model: &AllocModel,
    geo: &Geometry,
    lut: &PowLut,
    keep: impl Fn(&IndexRec) -> bool + Sync,
    filtered: bool,
    color: impl Fn(usize) -> &'a [f32; NC] + Sync,
) -> (Vec<f32>, Vec<f32>) {
    let nch = 2 + NC;
    let mut stacks = vec![0.0f32; geo.stacks.y0.len() * nch];
    let mut cells = vec![0.0f32; (geo.tx.n * geo.ty.n) as usize * nch];
    let part = |cx: Range<usize>, stacks: &mut [f32], cells: &mut [f32]| {
        let first = geo.stacks.start[cx.start] as usize;
        accumulate(model, geo, lut, &keep, filtered, &color, first, stacks);
        add_to_cells(geo, lut, nch, (first, stacks), (cx.start, cells));
    };
    let nx = geo.tx.n as usize;
    if geo.stack.len() < PARALLEL_BLOCKS {
        part(0..nx, &mut stacks, &mut cells);
    } else {
        let mid = nx / 2;
        let (s0, s1) = stacks.split_at_mut(geo.stacks.start[mid] as usize * nch);
        let (c0, c1) = cells.split_at_mut(mid * geo.ty.n as usize * nch);
        both(true, || part(0..mid, s0, c0), || part(mid..nx, s1, c1));
    }
    (stacks, cells)
}

/// Adds the blocks in stacks `first..` (as many as `out` holds) that `keep` accepts
/// into `out`: per stack `Σ s`, `Σ s^α`, `Σ s^α·c`. Every block's stack is read,
/// but the index's order follows the stacks' closely (about a hundred switches between
/// the two halves' stacks on the 10⁹-event benchmark), so the test is predicted.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn accumulate<'a, const NC: usize>(
    model: &AllocModel,
    geo: &Geometry,
    lut: &PowLut,
    keep: &impl Fn(&IndexRec) -> bool,
    filtered: bool,
    color: &impl Fn(usize) -> &'a [f32; NC],
    first: usize,
    out: &mut [f32],
) {
    let nch = 2 + NC;
    write_zeros(out);
    let (lo, len) = (first as u32, (out.len() / nch) as u32);
    let recs = model.index.records();
    for (pos, (&s, &f)) in geo.stack.iter().zip(&geo.share).enumerate() {
        // (`LOOSE` and `EMPTY` are beyond every stack.)
        let k = s.wrapping_sub(lo);
        if k >= len || (filtered && !keep(&recs[pos])) {
            continue;
        }
        let fa = lut.pow(f64::from(f));
        let col = color(pos);
        let px = &mut out[k as usize * nch..k as usize * nch + nch];
        px[0] += f;
        px[1] += fa;
        for c in 0..NC {
            px[2 + c] += fa * col[c];
        }
    }
}

/// Adds the sums of stacks `first..` (`sums`, `nch` each) to their cells, which lie in
/// the time cells from `cx0` on (`cells`, `nch` each): a stack's blocks share its
/// address extent, so its cell gets its sums times the extent's share `h` of the
/// cell's height (`f_K = s·h`, `f_K^α = s^α·h^α`).
fn add_to_cells(
    geo: &Geometry,
    lut: &PowLut,
    nch: usize,
    (first, sums): (usize, &[f32]),
    (cx0, cells): (usize, &mut [f32]),
) {
    write_zeros(cells);
    let skip = cx0 * geo.ty.n as usize;
    let wy = geo.ty.n as f64 / geo.ty.len as f64;
    let st = &geo.stacks;
    for (k, sums) in sums.chunks_exact(nch).enumerate() {
        let i = first + k;
        let c = st.cell[i];
        if c == LOOSE || sums[1] == 0.0 {
            continue;
        }
        let h = (st.y1[i] - st.y0[i]) as f64 * wy;
        let (h32, ha) = (h as f32, lut.pow(h));
        let c = c as usize - skip;
        let cell = &mut cells[c * nch..(c + 1) * nch];
        cell[0] += sums[0] * h32;
        for k in 1..nch {
            cell[k] += sums[k] * ha;
        }
    }
}

/// Writes zeros over a fresh buffer before sums are added into it: a page of a fresh
/// allocation that is read before it is written maps the shared zero page, and is
/// copied at the first write, which in a process with several threads costs a TLB
/// shootdown (an interrupt to every core) per page — more than half the time of
/// building the sums, on a virtual machine. (`black_box`: the allocation is zeros
/// already, and the compiler would drop the writes.)
fn write_zeros(buffer: &mut [f32]) {
    std::hint::black_box(&mut *buffer).fill(0.0);
}

/// What identifies an option set's sums.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct SumsKey {
    alpha_bits: u64,
    color_by: ColorBy,
    bins: Vec<BinId>,
    size: SizeFilter,
}

impl SumsKey {
    pub(super) fn of(options: &RenderOptions) -> SumsKey {
        SumsKey {
            alpha_bits: options.alpha.to_bits(),
            color_by: options.color_by,
            bins: options.bins.clone(),
            size: options.size,
        }
    }
}
