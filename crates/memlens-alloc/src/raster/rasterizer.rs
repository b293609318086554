//! The exact-coverage rasterizer of formula (1): rectangles in pixel units go in, the
//! per-pixel sums `S0 = Σ f`, `S1 = Σ f^α`, `S3 = Σ f^α·L` and the colour sums
//! `Σ f^α·c` come out (a [`Coverage`], or straight an image), where `f` is the exact
//! fraction of the pixel the rectangle covers and `L` its cushion luminance there.
//!
//! Coverage factorises per axis (`f = fx·fy`, so `f^α = fx^α·fy^α`), and each rectangle
//! is handled in O(1) or in time bounded by its own area:
//!
//! - **tiny** (inside one pixel): one update, on an inlined fast path (most blocks of a
//!   whole-run picture);
//! - **big** (≥ 3 columns and ≥ 3 rows, with cushions): every pixel it touches, with the
//!   cushion luminance at the centre of the covered part; blocks of one view do not
//!   overlap, so all big blocks together touch at most ~9× the image;
//! - **wide and thin** (at most 2 rows, more than 8 columns, e.g. a long-lived small
//!   block): one record per row, kept per band of rows; the final pass folds a band's
//!   records into a difference array along x (four updates per row and channel) while
//!   the band is in the cache, so a block living for the whole run costs what a tiny
//!   one does and the difference arrays never take more than one band of memory;
//! - everything else (small, or tall and narrow): every pixel it touches, flat.
//!
//! # Memory layout and cost
//!
//! A full-HD frame of 10 M blocks is bound by memory traffic, not arithmetic, so the
//! accumulator is laid out for the order blocks arrive in (see [`Rasterizer`]): bands
//! of [`BAND`] rows, column by column within a band. The final pass walks it band by
//! band, contiguously, adds the band's wide rows, resolves or transposes each pixel
//! and zeroes the band for the next frame while it is still cached. Buffers are kept
//! per thread between frames.
//!
//! Pixel rows count from the bottom (address grows upwards) while the sums are stored
//! top row first, as images are. Accumulation order is the caller's order, so output
//! is deterministic.
//!
//! A rasterizer may own only a range of whole bands ([`Rasterizer::for_rows`]): it
//! decides how to draw each rectangle from the whole rectangle, as one owning every
//! row would, and adds only its own rows, so rasterizers of disjoint ranges fed the
//! same rectangles in the same order together give exactly the pixels of one
//! (`render` draws big pictures that way, a range per core).

use std::cell::RefCell;
use std::sync::Arc;

use super::cushion::{self, CushionProfile};
use super::formula::resolve_pixel;
use super::pow_lut::PowLut;
use crate::colormap::Rgb;
use crate::image::RgbaImage;

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

/// Rows per band: wide blocks are collected per band and folded in band by band.
pub(super) const BAND: usize = 8;

/// One row of a wide, thin block, kept until the final pass folds it into its band's
/// difference arrays.
#[derive(Clone, Copy, Debug)]
struct WideRow {
    /// x coverage of the first and last column.
    fx_first: f64,
    fx_last: f64,
    /// y coverage of the row.
    fy: f64,
    /// `fx_first^α`, `fx_last^α`, `fy^α`.
    pa_first: f32,
    pa_last: f32,
    fya: f32,
    color: [f32; 3],
    /// First and last column.
    cx0: u32,
    cx1: u32,
    /// The row within its band.
    row: u16,
}

/// Reusable buffers of one thread: the banded accumulator (kept zeroed), the row-major sums
/// handed out in a [`Coverage`], the per-band lists of wide rows and one band's
/// difference grid.
#[derive(Default)]
struct Scratch {
    acc: Vec<f32>,
    sums: Vec<f32>,
    wide: Vec<Vec<WideRow>>,
    diff: Vec<f64>,
}

thread_local! {
    /// Buffers of earlier frames on this thread, reused so a frame does not pay for
    /// fresh pages.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Hands a coverage's buffer back for the next frame on this thread.
pub fn recycle(cov: Coverage) {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if cov.sums.capacity() > s.sums.capacity() {
            s.sums = cov.sums;
        }
    });
}

/// Accumulates rectangles into a [`Coverage`].
///
/// The accumulator is laid out in bands of 8 rows from the bottom, column by
/// column within a band: the index hands blocks over slab by slab in time, sorted by
/// address within a slab, so consecutive blocks land in one column in increasing rows,
/// i.e. in a few cache lines per band that stay cached while the column is swept again
/// for the next slab; the final pass reads each band as one contiguous run.
/// [`Rasterizer::finish`] transposes to the row-major [`Coverage`].
pub struct Rasterizer {
    w: usize,
    h: usize,
    /// The rows it owns, `[lo, hi)` from the bottom (`lo` a multiple of [`BAND`]).
    lo: usize,
    hi: usize,
    /// `w`, `lo` and `hi` as f64.
    wf: f64,
    lof: f64,
    hif: f64,
    ncolor: usize,
    nch: usize,
    alpha: f64,
    cushion: CushionProfile,
    lut: Arc<PowLut>,
    /// `nch` f32 per pixel, band by band (rows from `lo` up), column-major within a
    /// band: pixel (column c, row r) at `(((r − lo) / BAND · w + c) · BAND + r % BAND)
    /// · nch`.
    acc: Vec<f32>,
    /// The rows of wide, thin blocks per band of [`BAND`] rows (from `lo` up), in the
    /// order they came.
    wide: Vec<Vec<WideRow>>,
    scratch_x: Vec<f64>,
    scratch_y: Vec<f64>,
}

/// The columns (or rows) a span `[a, b)` touches, with its coverage of the first and
/// last one: `(first, last, f_first, f_last)`; `None` when it is outside `[0, n)`.
#[inline]
pub(super) fn span(a: f64, b: f64, n: usize) -> Option<(usize, usize, f64, f64)> {
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

/// The coverage of column (or row) `i` of a span from [`span`]: its partial first and
/// last fractions at the ends, 1 in between.
#[inline]
pub(super) fn edge_fraction(i: usize, first: usize, last: usize, f_first: f64, f_last: f64) -> f64 {
    if i == first {
        f_first
    } else if i == last {
        f_last
    } else {
        1.0
    }
}

impl Rasterizer {
    /// A rasterizer for a `width × height` image with bias `alpha`, `color_channels`
    /// (1 or 3; anything else counts as 3) colour sums and the given cushion profile.
    pub fn new(
        width: u32,
        height: u32,
        alpha: f64,
        color_channels: usize,
        cushion: CushionProfile,
    ) -> Rasterizer {
        let rows = 0..height as usize;
        Rasterizer::for_rows(width, height, alpha, color_channels, cushion, rows)
    }

    /// [`Rasterizer::new`] owning only the rows `rows` (from the bottom; clamped to the
    /// image, its start rounded down to a multiple of [`BAND`]).
    pub fn for_rows(
        width: u32,
        height: u32,
        alpha: f64,
        color_channels: usize,
        cushion: CushionProfile,
        rows: std::ops::Range<usize>,
    ) -> Rasterizer {
        let (w, h) = (width as usize, height as usize);
        let hi = rows.end.min(h);
        let lo = (rows.start.min(hi) / BAND) * BAND;
        let color_channels = if color_channels == 1 { 1 } else { 3 };
        let nch = 3 + color_channels;
        Rasterizer {
            w,
            h,
            lo,
            hi,
            wf: w as f64,
            lof: lo as f64,
            hif: hi as f64,
            ncolor: color_channels,
            nch,
            alpha,
            cushion,
            lut: PowLut::shared(alpha),
            acc: SCRATCH.with(|s| {
                // A buffer of the same size comes back zeroed (see `drain_band`).
                let mut acc = std::mem::take(&mut s.borrow_mut().acc);
                let len = (hi - lo).div_ceil(BAND) * BAND * w * nch;
                if acc.len() != len {
                    acc.clear();
                    acc.resize(len, 0.0);
                }
                acc
            }),
            wide: SCRATCH.with(|s| {
                let mut wide = std::mem::take(&mut s.borrow_mut().wide);
                wide.resize_with((hi - lo).div_ceil(BAND), Vec::new);
                wide.iter_mut().for_each(Vec::clear);
                wide
            }),
            scratch_x: Vec::new(),
            scratch_y: Vec::new(),
        }
    }

    #[inline(always)]
    fn add_pixel<const NC: usize>(
        &mut self,
        col: usize,
        row_up: usize,
        f: f32,
        fa: f32,
        lum: f32,
        color: &[f32; NC],
    ) {
        // (`lo` is a multiple of BAND: `row_up % BAND` is the row within its band.)
        let i = ((((row_up - self.lo) / BAND) * self.w + col) * BAND + row_up % BAND) * (3 + NC);
        let px = &mut self.acc[i..i + 3 + NC];
        px[S0] += f;
        px[S1] += fa;
        px[S3] += fa * lum;
        for k in 0..NC {
            px[C + k] += fa * color[k];
        }
    }

    /// Adds the rectangle `[x0, x1) × [y0, y1)` in pixel units (y upwards from the
    /// bottom edge; it may extend past the image, the cushion follows the whole
    /// rectangle) with `color` (`color_channels` values).
    ///
    /// Missing colour values count as 0, extra ones are ignored.
    pub fn add(&mut self, x0: f64, x1: f64, y0: f64, y1: f64, color: &[f32]) {
        if self.ncolor == 1 {
            let c = [color.first().copied().unwrap_or(0.0)];
            self.add_n(x0, x1, y0, y1, &c);
        } else {
            let mut c = [0.0; 3];
            for (d, s) in c.iter_mut().zip(color) {
                *d = *s;
            }
            self.add_n(x0, x1, y0, y1, &c);
        }
    }

    /// [`Rasterizer::add`] with exactly `NC` colour values (`NC` = the colour channels).
    #[inline(always)]
    pub(crate) fn add_n<const NC: usize>(
        &mut self,
        x0: f64,
        x1: f64,
        y0: f64,
        y1: f64,
        color: &[f32; NC],
    ) {
        debug_assert_eq!(NC, self.ncolor);
        // Fast path: inside one pixel (most blocks of a whole-run picture). Exactly
        // what `span` computes for this case.
        if x0 >= 0.0 && y0 >= self.lof && x0 < self.wf && y0 < self.hif && x1 > x0 && y1 > y0 {
            // In range: the (signed, one-instruction) conversions truncate exactly.
            let (cx, ry) = (x0 as i64, y0 as i64);
            if x1 <= (cx + 1) as f64 && y1 <= (ry + 1) as f64 {
                let f = (x1 - x0) * (y1 - y0);
                let fa = self.lut.pow(f);
                self.add_pixel(cx as usize, ry as usize, f as f32, fa, 1.0, color);
                return;
            }
        }
        self.add_general(x0, x1, y0, y1, color);
    }

    #[inline(never)]
    fn add_general<const NC: usize>(
        &mut self,
        x0: f64,
        x1: f64,
        y0: f64,
        y1: f64,
        color: &[f32; NC],
    ) {
        let Some((cx0, cx1, fx_first, fx_last)) = span(x0, x1, self.w) else {
            return;
        };
        let Some((ry0, ry1, fy_first, fy_last)) = span(y0, y1, self.h) else {
            return;
        };
        // How the rectangle is drawn follows from all of it; only the rows in
        // `[lo, hi)` are added.
        if ry1 < self.lo || ry0 >= self.hi {
            return;
        }
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
            for r in self.own(ry0, ry1) {
                let fy = edge_fraction(r, ry0, ry1, fy_first, fy_last);
                let fya = if fy == 1.0 { 1.0 } else { self.lut.pow(fy) };
                for c in cx0..=cx1 {
                    let fx = edge_fraction(c, cx0, cx1, fx_first, fx_last);
                    let fxa = if fx == 1.0 { 1.0 } else { self.lut.pow(fx) };
                    self.add_pixel(c, r, (fx * fy) as f32, fxa * fya, 1.0, color);
                }
            }
        }
    }

    /// The rows of `ry0..=ry1` this rasterizer owns.
    #[inline(always)]
    fn own(&self, ry0: usize, ry1: usize) -> std::ops::RangeInclusive<usize> {
        ry0.max(self.lo)..=ry1.min(self.hi - 1)
    }

    #[allow(clippy::too_many_arguments)]
    fn add_big<const NC: usize>(
        &mut self,
        x0: f64,
        x1: f64,
        y0: f64,
        y1: f64,
        (cx0, cx1, fx_first, fx_last): (usize, usize, f64, f64),
        (ry0, ry1, fy_first, fy_last): (usize, usize, f64, f64),
        color: &[f32; NC],
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
        for r in self.own(ry0, ry1) {
            let j = r - ry0;
            let fy = edge_fraction(r, ry0, ry1, fy_first, fy_last);
            let fya = if fy == 1.0 { 1.0 } else { self.lut.pow(fy) };
            for (i, c) in (cx0..=cx1).enumerate() {
                let fx = edge_fraction(c, cx0, cx1, fx_first, fx_last);
                let fxa = if fx == 1.0 { 1.0 } else { self.lut.pow(fx) };
                let lum = cushion::intensity(sx[i], sy[j]);
                self.add_pixel(c, r, (fx * fy) as f32, fxa * fya, lum, color);
            }
        }
        self.scratch_x = sx;
        self.scratch_y = sy;
    }

    fn add_wide<const NC: usize>(
        &mut self,
        (cx0, cx1, fx_first, fx_last): (usize, usize, f64, f64),
        (ry0, ry1, fy_first, fy_last): (usize, usize, f64, f64),
        color: &[f32; NC],
    ) {
        let pa_first = self.lut.pow(fx_first);
        let pa_last = self.lut.pow(fx_last);
        let mut c = [0.0; 3];
        c[..NC].copy_from_slice(color);
        for r in self.own(ry0, ry1) {
            let fy = if r == ry0 { fy_first } else { fy_last };
            self.wide[(r - self.lo) / BAND].push(WideRow {
                fx_first,
                fx_last,
                fy,
                pa_first,
                pa_last,
                fya: self.lut.pow(fy),
                color: c,
                cx0: cx0 as u32,
                cx1: cx1 as u32,
                row: (r % BAND) as u16,
            });
        }
    }

    /// Folds the wide rows in, transposes to rows (top first) and returns the sums.
    pub fn finish(self) -> Coverage {
        let (w, h, nch) = (self.w, self.h, self.nch);
        let mut sums = SCRATCH.with(|s| std::mem::take(&mut s.borrow_mut().sums));
        sums.clear();
        sums.resize(w * h * nch, 0.0);
        let (ncolor, alpha) = (self.ncolor, self.alpha);
        let first = self.h - self.hi;
        let own = &mut sums[first * w * nch..(h - self.lo) * w * nch];
        self.finish_rows(own);
        Coverage {
            width: w as u32,
            height: h as u32,
            color_channels: ncolor,
            alpha,
            sums,
        }
    }

    /// The image rows (top first) of the rows it owns: `[h − hi, h − lo)`.
    pub(crate) fn image_rows(&self) -> std::ops::Range<usize> {
        self.h - self.hi..self.h - self.lo
    }

    /// [`Rasterizer::finish`] into `sums`, the sums of its [image rows](Self::image_rows)
    /// only (`3 + color channels` f32 per pixel).
    pub(crate) fn finish_rows(self, sums: &mut [f32]) {
        let (w, nch, first) = (self.w, self.nch, self.h - self.hi);
        self.drain(|row_img, x, px| {
            let o = ((row_img - first) * w + x) * nch;
            sums[o..o + nch].copy_from_slice(px);
        });
    }

    /// Resolves straight into an image (what `resolve(&self.finish(), background)`
    /// gives, without the intermediate sums).
    pub(crate) fn finish_image(self, background: Rgb) -> RgbaImage {
        let mut img = RgbaImage::new(self.w as u32, self.h as u32);
        let rows = self.image_rows();
        let w = self.w;
        self.resolve_rows(
            background,
            &mut img.pixels[rows.start * w * 4..rows.end * w * 4],
        );
        img
    }

    /// [`Rasterizer::finish_image`] into `pixels`, the RGBA bytes of its [image
    /// rows](Self::image_rows) only.
    pub(crate) fn resolve_rows(self, background: Rgb, pixels: &mut [u8]) {
        let (w, first) = (self.w, self.h - self.hi);
        let lut = Arc::clone(&self.lut);
        self.drain(|row_img, x, px| {
            let o = ((row_img - first) * w + x) * 4;
            pixels[o..o + 4].copy_from_slice(&resolve_pixel(px, &lut, background));
        });
    }

    /// Calls `sink(image row from the top, column, sums)` for every pixel, band by band,
    /// and hands the buffers back for the next frame.
    fn drain(mut self, mut sink: impl FnMut(usize, usize, &[f32])) {
        let mut diff = SCRATCH.with(|s| std::mem::take(&mut s.borrow_mut().diff));
        let wide = std::mem::take(&mut self.wide);
        for (band, rows) in wide.iter().enumerate() {
            if self.ncolor == 1 {
                self.drain_band::<1>(band, rows, &mut diff, &mut sink);
            } else {
                self.drain_band::<3>(band, rows, &mut diff, &mut sink);
            }
        }
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            s.acc = std::mem::take(&mut self.acc);
            s.wide = wide;
            s.diff = diff;
        });
    }

    /// The pixels of band `band` for [`Rasterizer::drain`], with its wide rows added
    /// through a difference array along x per row (`diff`: scratch space).
    fn drain_band<const NC: usize>(
        &mut self,
        band: usize,
        wide: &[WideRow],
        diff: &mut Vec<f64>,
        sink: &mut impl FnMut(usize, usize, &[f32]),
    ) {
        let (w, h) = (self.w, self.h);
        let nch = 3 + NC;
        let dch = 2 + NC;
        let stride = (w + 1) * dch;
        // `band` counts from `lo`.
        let r0 = self.lo + band * BAND;
        let rows = BAND.min(self.hi - r0);
        if !wide.is_empty() {
            diff.clear();
            diff.resize(rows * stride, 0.0);
            for e in wide {
                let row = &mut diff[usize::from(e.row) * stride..(usize::from(e.row) + 1) * stride];
                let (cx0, cx1) = (e.cx0 as usize, e.cx1 as usize);
                let (pa_first, pa_last, fya) = (
                    f64::from(e.pa_first),
                    f64::from(e.pa_last),
                    f64::from(e.fya),
                );
                // Per channel: the x profile (first, 1, …, 1, last) times a scale, as
                // a difference array: +p_first at cx0, +(1 − p_first) at cx0+1,
                // +(p_last − 1) at cx1, −p_last at cx1+1.
                let mut first = [pa_first; 5];
                let mut last = [pa_last; 5];
                let mut scale = [fya; 5];
                (first[0], last[0], scale[0]) = (e.fx_first, e.fx_last, e.fy);
                for k in 0..NC {
                    scale[2 + k] = fya * f64::from(e.color[k]);
                }
                for ch in 0..dch {
                    row[cx0 * dch + ch] += first[ch] * scale[ch];
                }
                for ch in 0..dch {
                    row[(cx0 + 1) * dch + ch] += (1.0 - first[ch]) * scale[ch];
                }
                for ch in 0..dch {
                    row[cx1 * dch + ch] += (last[ch] - 1.0) * scale[ch];
                }
                for ch in 0..dch {
                    row[(cx1 + 1) * dch + ch] -= last[ch] * scale[ch];
                }
            }
        }
        let mut run = [[0.0f64; 5]; BAND];
        let mut out = [0.0f32; 6];
        for x in 0..w {
            let at = (band * w + x) * BAND * nch;
            let src = &self.acc[at..at + rows * nch];
            for (j, px) in src.chunks_exact(nch).enumerate() {
                out[..nch].copy_from_slice(px);
                if !wide.is_empty() {
                    let d = &diff[j * stride + x * dch..j * stride + (x + 1) * dch];
                    let run = &mut run[j];
                    for ch in 0..dch {
                        run[ch] += d[ch];
                    }
                    out[S0] += run[0] as f32;
                    out[S1] += run[1] as f32;
                    // Thin blocks are flat: luminance 1.
                    out[S3] += run[1] as f32;
                    for k in 0..NC {
                        out[C + k] += run[2 + k] as f32;
                    }
                }
                sink(h - 1 - (r0 + j), x, &out[..nch]);
            }
        }
        // Leave the band zeroed for the next frame while it is still in the cache.
        self.acc[band * w * BAND * nch..(band + 1) * w * BAND * nch].fill(0.0);
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
