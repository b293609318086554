//! Drawing a grid tile from the overview's sums: the cells of a coarse address tile, or
//! the stacks of any other address window, scaled from cell shares to the tile's pixels
//! and added to the pixel sums of formula (1).

use super::geometry::Geometry;
use super::grid::TILE_SIDE;
use super::sums::Sums;
use crate::raster::rasterizer::{edge_fraction, span};
use crate::raster::{PowLut, View};

/// `(Σ s, Σ s^α)` of one cell's or stack's channels scaled to a tile: `s` times
/// `ratio`, `s^α` times `ratio^α`.
#[derive(Clone, Copy)]
struct Scale {
    ratio: f64,
    ratio_a: f64,
}

impl Scale {
    fn new(ratio: f64, alpha: f64) -> Scale {
        Scale {
            ratio,
            ratio_a: ratio.powf(alpha),
        }
    }
}

/// Adds `acc` (`Σ s`, `Σ s^α`, colour sums) scaled by `scale` and the row factors `fy`,
/// `fya` to the pixel sums `px` (S0, S1, S3, colours; luminance 1).
#[inline]
fn add_to_pixel(px: &mut [f32], acc: &[f64], ncolor: usize, scale: Scale, fy: f64, fya: f64) {
    let wa = scale.ratio_a * fya;
    px[0] += (acc[0] * scale.ratio * fy) as f32;
    px[1] += (acc[1] * wa) as f32;
    px[2] += (acc[1] * wa) as f32;
    for k in 0..ncolor {
        px[3 + k] += (acc[2 + k] * wa) as f32;
    }
}

/// Adds the cell sums of tile (`ix` at time level `lx`, `iy` at address level `ly`) to
/// the row-major pixel sums `out` (top row first), scaled from cell shares to the
/// tile's pixels.
pub(super) fn add_cells(
    out: &mut [f32],
    geo: &Geometry,
    sums: &Sums,
    view: &View,
    alpha: f64,
    (lx, ix): (u32, u64),
    (ly, iy): (u32, u64),
) {
    let side = TILE_SIDE as usize;
    let (gch, nch) = (2 + sums.ncolor, 3 + sums.ncolor);
    // f = f_K · (ideal cell area / the tile's pixel area).
    let cell_area = (geo.tx.len as f64 / geo.tx.n as f64) * (geo.ty.len as f64 / geo.ty.n as f64);
    let pixel_area = (view.time.duration_ns() as f64 / f64::from(TILE_SIDE))
        * ((view.addr.1 - view.addr.0) as f64 / f64::from(TILE_SIDE));
    let scale = Scale::new(cell_area / pixel_area, alpha);
    let (dx, dy) = (geo.tx.levels - lx, geo.ty.levels - ly);
    let (per_x, per_y) = (1usize << dx, 1usize << dy);
    let ny = geo.ty.n as usize;
    let col0 = (ix as usize * side) << dx;
    let row0 = (iy as usize * side) << dy;
    for i in 0..side {
        for j in 0..side {
            let mut acc = [0.0f64; 5];
            for cx in col0 + i * per_x..col0 + (i + 1) * per_x {
                let at = (cx * ny + row0 + j * per_y) * gch;
                for cell in sums.cells[at..at + per_y * gch].chunks_exact(gch) {
                    for (a, v) in acc.iter_mut().zip(cell) {
                        *a += f64::from(*v);
                    }
                }
            }
            if acc[1] == 0.0 {
                continue;
            }
            let o = ((side - 1 - j) * side + i) * nch;
            add_to_pixel(&mut out[o..o + nch], &acc, sums.ncolor, scale, 1.0, 1.0);
        }
    }
}

/// Adds the stacks of time tile `ix` at level `lx` inside the address window of `view`
/// to the row-major pixel sums `out`: a stack lies in one column, and covers its rows
/// as one block of its extent does (flat, `f^α = s^α·fy^α`).
pub(super) fn add_stacks(
    out: &mut [f32],
    geo: &Geometry,
    sums: &Sums,
    view: &View,
    alpha: f64,
    (lx, ix): (u32, u64),
) {
    let side = TILE_SIDE as usize;
    let (w, h) = (view.width as usize, view.height as usize);
    let (gch, nch) = (2 + sums.ncolor, 3 + sums.ncolor);
    let lut = PowLut::shared(alpha);
    // s·(ideal cell width / the tile's pixel width) is the share of a pixel column.
    let scale = Scale::new(
        (geo.tx.len as f64 / geo.tx.n as f64)
            / (view.time.duration_ns() as f64 / f64::from(TILE_SIDE)),
        alpha,
    );
    let (a0, a1) = view.addr;
    let sy = h as f64 / (a1 - a0) as f64;
    let a0f = a0 as f64;
    let dx = geo.tx.levels - lx;
    let st = &geo.stacks;
    let col0 = (ix as usize * side) << dx;
    let mut acc = [0.0f64; 5];
    for cx in col0..col0 + (side << dx) {
        let col = (cx >> dx) - ix as usize * side;
        let (a, b) = (st.start[cx] as usize, st.start[cx + 1] as usize);
        let from = a + st.max_end[a..b].partition_point(|&m| m <= a0);
        let to = a + st.y0[a..b].partition_point(|&y| y < a1);
        for s in from..to.max(from) {
            if st.y1[s] <= a0 {
                continue;
            }
            let sums_s = &sums.stacks[s * gch..(s + 1) * gch];
            if sums_s[1] == 0.0 {
                continue;
            }
            for (a, v) in acc.iter_mut().zip(sums_s) {
                *a = f64::from(*v);
            }
            let y0 = (st.y0[s] as f64 - a0f) * sy;
            let y1 = (st.y1[s] as f64 - a0f) * sy;
            let Some((r0, r1, f_first, f_last)) = span(y0, y1, h) else {
                continue;
            };
            for r in r0..=r1 {
                let fy = edge_fraction(r, r0, r1, f_first, f_last);
                let fya = if fy == 1.0 {
                    1.0
                } else {
                    f64::from(lut.pow(fy))
                };
                let o = ((h - 1 - r) * w + col) * nch;
                add_to_pixel(&mut out[o..o + nch], &acc, sums.ncolor, scale, fy, fya);
            }
        }
    }
}
