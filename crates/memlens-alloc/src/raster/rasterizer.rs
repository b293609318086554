//! The exact-coverage rasterizer of formula (1): rectangles in pixel units go in, the
//! per-pixel sums `S0 = Σ f`, `S1 = Σ f^α`, `S3 = Σ f^α·L` and the colour sums
//! `Σ f^α·c` come out (a [`Coverage`]), where `f` is the exact fraction of the pixel
//! the rectangle covers and `L` its cushion luminance there.
//!
//! Coverage factorises per axis (`f = fx·fy`, so `f^α = fx^α·fy^α`), and each rectangle
//! is handled in O(1) or in time bounded by its own area:
//!
//! - **tiny** (inside one pixel): one update;
//! - **big** (≥ 3 columns and ≥ 3 rows, with cushions): every pixel it touches, with the
//!   cushion luminance at the centre of the covered part; blocks of one view do not
//!   overlap, so all big blocks together touch at most ~9× the image;
//! - **wide and thin** (at most 2 rows, more than 8 columns, e.g. a long-lived small
//!   block): four updates per row and channel of a per-row difference array, summed
//!   once at the end, so a block living for the whole run costs what a tiny one does;
//! - everything else (small, or tall and narrow): every pixel it touches, flat.
//!
//! Pixel rows count from the bottom (address grows upwards) while the sums are stored
//! top row first, as images are. Accumulation order is the caller's order, so output
//! is deterministic.

use std::cell::RefCell;
use std::sync::Arc;

use super::cushion::{self, CushionProfile};
use super::pow_lut::PowLut;

/// Channels of the accumulator: S0, S1, S3, then the colour channels.
const S0: usize = 0;
const S1: usize = 1;
const S3: usize = 2;
const C: usize = 3;

/// The per-pixel sums of formula (1) for one view.
#[derive(Clone, Debug)]
pub struct Coverage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Colour channels: 1 (a continuous attribute in 0..=1) or 3 (RGB of categories).
    pub color_channels: usize,
    /// The bias α the sums were taken with.
    pub alpha: f64,
    /// `3 + color_channels` f32 per pixel, top row first: S0, S1, S3, colour sums.
    pub sums: Vec<f32>,
}

/// The sums of one pixel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PixelSums {
    /// Σ f: the covered fraction of the pixel.
    pub coverage: f32,
    /// Σ f^α: the blocks' weight F in formula (1).
    pub weight: f32,
    /// Σ f^α·L: weighted cushion luminance.
    pub luminance: f32,
    /// Σ f^α·c (unused channels 0).
    pub color: [f32; 3],
}

impl Coverage {
    /// The sums at column `x`, row `y` (0 = top).
    pub fn at(&self, x: u32, y: u32) -> PixelSums {
        let nch = 3 + self.color_channels;
        let i = (y as usize * self.width as usize + x as usize) * nch;
        let s = &self.sums[i..i + nch];
        let mut color = [0.0; 3];
        color[..self.color_channels].copy_from_slice(&s[C..]);
        PixelSums {
            coverage: s[S0],
            weight: s[S1],
            luminance: s[S3],
            color,
        }
    }
}

/// Reusable buffers: an accumulator and per-row difference arrays.
type Scratch = (Vec<f32>, Vec<Box<[f64]>>);

thread_local! {
    /// Buffers of earlier frames on this thread, reused so a frame does not pay for
    /// fresh pages: the accumulator and the per-row difference arrays.
    static SCRATCH: RefCell<Scratch> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Hands a coverage's buffer back for the next frame on this thread.
pub fn recycle(cov: Coverage) {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if cov.sums.capacity() > s.0.capacity() {
            s.0 = cov.sums;
        }
    });
}

/// Accumulates rectangles into a [`Coverage`].
pub struct Rasterizer {
    w: usize,
    h: usize,
    ncolor: usize,
    nch: usize,
    alpha: f64,
    cushion: CushionProfile,
    lut: Arc<PowLut>,
    acc: Vec<f32>,
    /// Per image row: a difference array of `(w + 1) × (2 + ncolor)` f64 (S0, S1, colour).
    rows: Vec<Option<Box<[f64]>>>,
    scratch_x: Vec<f64>,
    scratch_y: Vec<f64>,
}

/// The columns (or rows) a span `[a, b)` touches, with its coverage of the first and
/// last one: `(first, last, f_first, f_last)`; `None` when it is outside `[0, n)`.
#[inline]
fn span(a: f64, b: f64, n: usize) -> Option<(usize, usize, f64, f64)> {
    let a = a.max(0.0);
    let b = b.min(n as f64);
    if b <= a {
        return None;
    }
    // Both ends are non-negative here: truncation is floor, and the ceiling is one more
    // unless the value is whole (no libm calls on the hot path).
    let first = (a as usize).min(n - 1);
    let tb = b as usize;
    let ceil_b = if (tb as f64) < b { tb + 1 } else { tb };
    let last = (ceil_b.max(first + 1) - 1).min(n - 1);
    if first == last {
        let f = b - a;
        return Some((first, last, f, f));
    }
    Some((first, last, (first + 1) as f64 - a, b - last as f64))
}

impl Rasterizer {
    /// A rasterizer for a `width × height` image with bias `alpha`, `color_channels`
    /// (1 or 3) colour sums and the given cushion profile.
    pub fn new(
        width: u32,
        height: u32,
        alpha: f64,
        color_channels: usize,
        cushion: CushionProfile,
    ) -> Rasterizer {
        let (w, h) = (width as usize, height as usize);
        let nch = 3 + color_channels;
        Rasterizer {
            w,
            h,
            ncolor: color_channels,
            nch,
            alpha,
            cushion,
            lut: PowLut::shared(alpha),
            acc: SCRATCH.with(|s| {
                let mut acc = std::mem::take(&mut s.borrow_mut().0);
                acc.clear();
                acc.resize(w * h * nch, 0.0);
                acc
            }),
            rows: vec![None; h],
            scratch_x: Vec::new(),
            scratch_y: Vec::new(),
        }
    }

    #[inline]
    fn add_pixel(&mut self, col: usize, row_up: usize, f: f32, fa: f32, lum: f32, color: &[f32]) {
        let i = ((self.h - 1 - row_up) * self.w + col) * self.nch;
        let px = &mut self.acc[i..i + self.nch];
        px[S0] += f;
        px[S1] += fa;
        px[S3] += fa * lum;
        for (k, &c) in color.iter().enumerate() {
            px[C + k] += fa * c;
        }
    }

    /// Adds the rectangle `[x0, x1) × [y0, y1)` in pixel units (y upwards from the
    /// bottom edge; it may extend past the image, the cushion follows the whole
    /// rectangle) with `color` (`color_channels` values).
    pub fn add(&mut self, x0: f64, x1: f64, y0: f64, y1: f64, color: &[f32]) {
        let Some((cx0, cx1, fx_first, fx_last)) = span(x0, x1, self.w) else {
            return;
        };
        let Some((ry0, ry1, fy_first, fy_last)) = span(y0, y1, self.h) else {
            return;
        };
        let ncols = cx1 - cx0 + 1;
        let nrows = ry1 - ry0 + 1;
        if ncols == 1 && nrows == 1 {
            let f = fx_first * fy_first;
            let fa = self.lut.pow(f);
            self.add_pixel(cx0, ry0, f as f32, fa, 1.0, color);
            return;
        }
        let cushioned = self.cushion != CushionProfile::None;
        if cushioned && ncols >= 3 && nrows >= 3 {
            self.add_big(
                x0,
                x1,
                y0,
                y1,
                (cx0, cx1, fx_first, fx_last),
                (ry0, ry1, fy_first, fy_last),
                color,
            );
        } else if nrows <= 2 && ncols > 8 {
            self.add_wide(
                (cx0, cx1, fx_first, fx_last),
                (ry0, ry1, fy_first, fy_last),
                color,
            );
        } else {
            for r in ry0..=ry1 {
                let fy = if r == ry0 {
                    fy_first
                } else if r == ry1 {
                    fy_last
                } else {
                    1.0
                };
                let fya = if fy == 1.0 { 1.0 } else { self.lut.pow(fy) };
                for c in cx0..=cx1 {
                    let fx = if c == cx0 {
                        fx_first
                    } else if c == cx1 {
                        fx_last
                    } else {
                        1.0
                    };
                    let fxa = if fx == 1.0 { 1.0 } else { self.lut.pow(fx) };
                    self.add_pixel(c, r, (fx * fy) as f32, fxa * fya, 1.0, color);
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn add_big(
        &mut self,
        x0: f64,
        x1: f64,
        y0: f64,
        y1: f64,
        (cx0, cx1, fx_first, fx_last): (usize, usize, f64, f64),
        (ry0, ry1, fy_first, fy_last): (usize, usize, f64, f64),
        color: &[f32],
    ) {
        let profile = self.cushion;
        let mut sx = std::mem::take(&mut self.scratch_x);
        let mut sy = std::mem::take(&mut self.scratch_y);
        // Slope at the centre of the covered part of each column and row.
        sx.clear();
        sx.extend((cx0..=cx1).map(|c| {
            let mid = 0.5 * ((c as f64).max(x0) + ((c + 1) as f64).min(x1));
            cushion::slope(profile, (mid - x0) / (x1 - x0))
        }));
        sy.clear();
        sy.extend((ry0..=ry1).map(|r| {
            let mid = 0.5 * ((r as f64).max(y0) + ((r + 1) as f64).min(y1));
            cushion::slope(profile, (mid - y0) / (y1 - y0))
        }));
        for (j, r) in (ry0..=ry1).enumerate() {
            let fy = if r == ry0 {
                fy_first
            } else if r == ry1 {
                fy_last
            } else {
                1.0
            };
            let fya = if fy == 1.0 { 1.0 } else { self.lut.pow(fy) };
            for (i, c) in (cx0..=cx1).enumerate() {
                let fx = if c == cx0 {
                    fx_first
                } else if c == cx1 {
                    fx_last
                } else {
                    1.0
                };
                let fxa = if fx == 1.0 { 1.0 } else { self.lut.pow(fx) };
                let lum = cushion::intensity(sx[i], sy[j]);
                self.add_pixel(c, r, (fx * fy) as f32, fxa * fya, lum, color);
            }
        }
        self.scratch_x = sx;
        self.scratch_y = sy;
    }

    fn add_wide(
        &mut self,
        (cx0, cx1, fx_first, fx_last): (usize, usize, f64, f64),
        (ry0, ry1, fy_first, fy_last): (usize, usize, f64, f64),
        color: &[f32],
    ) {
        let dch = 2 + self.ncolor;
        let stride = self.w + 1;
        let pa_first = f64::from(self.lut.pow(fx_first));
        let pa_last = f64::from(self.lut.pow(fx_last));
        for r in ry0..=ry1 {
            let fy = if r == ry0 { fy_first } else { fy_last };
            let fya = f64::from(self.lut.pow(fy));
            let row_img = self.h - 1 - r;
            let diff = self.rows[row_img].get_or_insert_with(|| {
                SCRATCH
                    .with(|s| s.borrow_mut().1.pop())
                    .filter(|b| b.len() == stride * dch)
                    .map(|mut b| {
                        b.fill(0.0);
                        b
                    })
                    .unwrap_or_else(|| vec![0.0; stride * dch].into_boxed_slice())
            });
            // The x profile p (first, 1, …, 1, last) as a difference array:
            // +p_first at cx0, +(1 − p_first) at cx0+1, +(p_last − 1) at cx1, −p_last at cx1+1.
            let mut put = |ch: usize, p_first: f64, p_last: f64, scale: f64| {
                diff[cx0 * dch + ch] += p_first * scale;
                diff[(cx0 + 1) * dch + ch] += (1.0 - p_first) * scale;
                diff[cx1 * dch + ch] += (p_last - 1.0) * scale;
                diff[(cx1 + 1) * dch + ch] -= p_last * scale;
            };
            put(0, fx_first, fx_last, fy);
            put(1, pa_first, pa_last, fya);
            for (k, &c) in color.iter().enumerate() {
                put(2 + k, pa_first, pa_last, fya * f64::from(c));
            }
        }
    }

    /// Folds the difference arrays in and returns the sums.
    pub fn finish(mut self) -> Coverage {
        let dch = 2 + self.ncolor;
        let nch = self.nch;
        let rows = std::mem::take(&mut self.rows);
        let mut spare = Vec::new();
        for (row, diff) in rows.into_iter().enumerate() {
            let Some(diff) = diff else { continue };
            let mut run = [0.0f64; 5];
            let base = row * self.w * nch;
            for x in 0..self.w {
                for (ch, r) in run.iter_mut().enumerate().take(dch) {
                    *r += diff[x * dch + ch];
                }
                let px = &mut self.acc[base + x * nch..base + (x + 1) * nch];
                px[S0] += run[0] as f32;
                px[S1] += run[1] as f32;
                // Thin blocks are flat: luminance 1.
                px[S3] += run[1] as f32;
                for k in 0..self.ncolor {
                    px[C + k] += run[2 + k] as f32;
                }
            }
            spare.push(diff);
        }
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            if s.1.is_empty() {
                s.1 = spare;
            }
        });
        Coverage {
            width: self.w as u32,
            height: self.h as u32,
            color_channels: self.ncolor,
            alpha: self.alpha,
            sums: self.acc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_partial_ends() {
        assert_eq!(span(0.25, 0.75, 4), Some((0, 0, 0.5, 0.5)));
        assert_eq!(span(0.5, 2.25, 4), Some((0, 2, 0.5, 0.25)));
        assert_eq!(span(1.0, 3.0, 4), Some((1, 2, 1.0, 1.0)));
        assert_eq!(span(-5.0, 0.5, 4), Some((0, 0, 0.5, 0.5)));
        assert_eq!(span(3.5, 9.0, 4), Some((3, 3, 0.5, 0.5)));
        assert_eq!(span(4.0, 9.0, 4), None);
        assert_eq!(span(1.0, 1.0, 4), None);
    }
}
