//! The sums of one option set (α, colour-by and filters): per stack and per cell, the
//! blocks' shares of their time cell `Σ s`, `Σ s^α` and `Σ s^α·c`, from one pass over
//! the blocks in stacks.

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
        let (stacks, ncolor) = match attrs {
            Attributes::Categorical { ids, palette } => (
                accumulate(model, geo, &lut, keep, filter.is_active(), |pos| {
                    &palette[ids[pos] as usize]
                }),
                3,
            ),
            Attributes::Continuous(values) => (
                accumulate(model, geo, &lut, keep, filter.is_active(), |pos| {
                    std::array::from_ref(&values[pos])
                }),
                1,
            ),
        };
        // A stack's blocks share its address extent, so its cell gets its sums times
        // the extent's share of the cell's height (f_K = s·h, f_K^α = s^α·h^α).
        let nch = 2 + ncolor;
        let mut cells = vec![0.0f32; (geo.tx.n * geo.ty.n) as usize * nch];
        let wy = geo.ty.n as f64 / geo.ty.len as f64;
        let st = &geo.stacks;
        for (i, sums) in stacks.chunks_exact(nch).enumerate() {
            let c = st.cell[i];
            if c == LOOSE || sums[1] == 0.0 {
                continue;
            }
            let h = (st.y1[i] - st.y0[i]) as f64 * wy;
            let (h32, ha) = (h as f32, lut.pow(h));
            let cell = &mut cells[c as usize * nch..(c as usize + 1) * nch];
            cell[0] += sums[0] * h32;
            for k in 1..nch {
                cell[k] += sums[k] * ha;
            }
        }
        Sums {
            ncolor,
            stacks,
            cells,
        }
    }

    pub(super) fn bytes(&self) -> usize {
        (self.stacks.len() + self.cells.len()) * 4
    }
}

/// One pass over the blocks in stacks that `keep` accepts (all when not `filtered`):
/// from [`PARALLEL_BLOCKS`] blocks, each half of the index on its own thread into sums of
/// its own, then added (always two halves, whatever the cores: the sums do not
/// depend on the machine).
fn accumulate<'a, const NC: usize>(
    model: &AllocModel,
    geo: &Geometry,
    lut: &PowLut,
    keep: impl Fn(&IndexRec) -> bool + Sync,
    filtered: bool,
    color: impl Fn(usize) -> &'a [f32; NC] + Sync,
) -> Vec<f32> {
    let nch = 2 + NC;
    let n = geo.stack.len();
    let pass = |positions: std::ops::Range<usize>| {
        let mut out = vec![0.0f32; geo.stacks.y0.len() * nch];
        let recs = model.index.records();
        for pos in positions {
            let (s, f) = (geo.stack[pos], geo.share[pos]);
            if s >= LOOSE || (filtered && !keep(&recs[pos])) {
                continue;
            }
            let fa = lut.pow(f64::from(f));
            let col = color(pos);
            let px = &mut out[s as usize * nch..s as usize * nch + nch];
            px[0] += f;
            px[1] += fa;
            for k in 0..NC {
                px[2 + k] += fa * col[k];
            }
        }
        out
    };
    if n < PARALLEL_BLOCKS {
        return pass(0..n);
    }
    let (mut first, second) = both(true, || pass(0..n / 2), || pass(n / 2..n));
    for (a, b) in first.iter_mut().zip(&second) {
        *a += b;
    }
    first
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
