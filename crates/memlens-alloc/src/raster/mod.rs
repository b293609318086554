//! Drawing the allocation map: any viewport of a model (time → x, compact address →
//! y upwards) into an RGBA image with formula (1) of the paper:
//!
//! ```text
//! C = (F·c(Σ f_i^α a_i / F) + B·c_B) / (F + B),   F = Σ f_i^α,   B = (1 − Σ f_i)^α
//! ```
//!
//! where `f_i` is the exact fraction of the pixel block `i` covers, `a_i` its attribute,
//! `c` the colour map and `c_B` the background. α = 1 is plain area averaging; α < 1
//! boosts thin isolated blocks so they stay visible. Categorical attributes (thread,
//! site, process) have no meaningful average, so their colours are averaged instead:
//! `Σ f_i^α c(a_i) / F`. Cushion luminance multiplies the colour: `Σ f_i^α L_i / F`.
//!
//! The index ([`crate::index`]) hands over only the blocks that overlap the viewport,
//! and the [`Rasterizer`] costs O(1) per block plus O(pixels), so a whole picture of
//! 10 M blocks and a 256×256 tile deep inside it are both fast.

mod attributes;
mod color_by;
mod cushion;
mod formula;
mod overview;
mod parts;
mod pow_lut;
mod rasterizer;

pub use cushion::{CushionProfile, flat_intensity, intensity, slope};
pub use overview::{
    MIN_BLOCKS, OVERVIEW_LEVELS, TILE_SIDE, grid_bounds, overview_serves, render_from_overview,
    render_tile,
};
pub use pow_lut::PowLut;
pub use rasterizer::{Coverage, PixelSums, Rasterizer, recycle};

use attributes::Attributes;
pub use attributes::NO_LATENCY;
pub use color_by::ColorBy;
use parts::{addresses_of_rows, draw_in_parts, parts_for};

use crate::colormap::Rgb;
use crate::error::AllocError;
use crate::ids::BinId;
use crate::image::RgbaImage;
use crate::index::IndexRec;
use crate::model::AllocModel;
use crate::size_class::SizeFilter;
use crate::time_range::TimeRange;
use formula::resolve_pixel;

/// A viewport: a time window, a window of the compact address axis (see
/// [`crate::AddressAxis`]) and the image size. A tile is just a small view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// Time window (x, left to right).
    pub time: TimeRange,
    /// Axis window `[start, end)` (y, bottom to top).
    pub addr: (u64, u64),
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl View {
    /// The whole model at `width × height`.
    pub fn whole(model: &AllocModel, width: u32, height: u32) -> View {
        let run = model.run();
        View {
            time: TimeRange {
                start_ns: run.start_ns,
                end_ns: run.end_ns.max(run.start_ns + 1),
            },
            addr: (0, model.axis().len().max(1)),
            width,
            height,
        }
    }

    /// Checks that the view can be drawn.
    pub fn validate(&self) -> Result<(), AllocError> {
        if self.width == 0 || self.height == 0 || self.width > 16384 || self.height > 16384 {
            return Err(AllocError::BadImageSize {
                width: self.width,
                height: self.height,
            });
        }
        if self.time.end_ns <= self.time.start_ns {
            return Err(AllocError::EmptyTimeWindow {
                start_ns: self.time.start_ns,
                end_ns: self.time.end_ns,
            });
        }
        if self.addr.1 <= self.addr.0 {
            return Err(AllocError::EmptyAddressWindow {
                start: self.addr.0,
                end: self.addr.1,
            });
        }
        Ok(())
    }
}

/// How to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderOptions {
    /// The bias α of formula (1), above 0; 1 is area averaging.
    pub alpha: f64,
    /// The cushion profile.
    pub cushion: CushionProfile,
    /// The colouring attribute.
    pub color_by: ColorBy,
    /// Only blocks in these bins (all when empty).
    pub bins: Vec<BinId>,
    /// Only blocks whose requested size passes.
    pub size: SizeFilter,
    /// The background (free memory) colour.
    pub background: Rgb,
}

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions {
            alpha: 0.5,
            cushion: CushionProfile::Plateau,
            color_by: ColorBy::Thread,
            bins: Vec::new(),
            size: SizeFilter::ALL,
            background: [1.0, 1.0, 1.0],
        }
    }
}

impl RenderOptions {
    /// Checks α.
    pub fn validate(&self) -> Result<(), AllocError> {
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(AllocError::BadAlpha(self.alpha));
        }
        Ok(())
    }
}

/// The per-pixel sums of formula (1) for `view` (exposed for tests and for callers
/// that shade themselves).
pub fn coverage(
    model: &AllocModel,
    view: &View,
    options: &RenderOptions,
) -> Result<Coverage, AllocError> {
    coverage_in_parts(
        model,
        view,
        options,
        parts_for(model.blocks().len(), view.height),
    )
}

/// [`coverage`] drawn by `parts` rasterizers, each owning a band of rows.
fn coverage_in_parts(
    model: &AllocModel,
    view: &View,
    options: &RenderOptions,
    parts: usize,
) -> Result<Coverage, AllocError> {
    coverage_of_bands(view, options, parts, |rows| {
        rasterize(model, view, options, rows)
    })
}

/// The coverage of `view` drawn by `parts` rasterizers (on as many threads), each
/// made and fed by `draw(rows)` owning a band of rows (from the bottom; all of
/// them when `parts` is 1).
fn coverage_of_bands(
    view: &View,
    options: &RenderOptions,
    parts: usize,
    draw: impl Fn(std::ops::Range<usize>) -> Result<Rasterizer, AllocError> + Sync,
) -> Result<Coverage, AllocError> {
    if parts <= 1 {
        return Ok(draw(0..view.height as usize)?.finish());
    }
    let nch = 3 + ncolor(options);
    let (w, h) = (view.width as usize, view.height as usize);
    let mut sums = vec![0.0f32; w * h * nch];
    draw_in_parts(h, parts, &mut sums, w * nch, draw, |r, rows| {
        r.finish_rows(rows)
    })?;
    Ok(Coverage {
        width: view.width,
        height: view.height,
        color_channels: ncolor(options),
        alpha: options.alpha,
        sums,
    })
}

/// The colour channels of the options' colouring: 3 for categories, 1 for a
/// continuous attribute.
fn ncolor(options: &RenderOptions) -> usize {
    if options.color_by.is_categorical() {
        3
    } else {
        1
    }
}

/// An empty rasterizer for `view` owning only `rows` (see [`Rasterizer::for_rows`]),
/// with the options' bias, cushion and colour channels (3 for categorical
/// colourings, 1 for a continuous attribute).
fn rasterizer_of_rows(
    view: &View,
    options: &RenderOptions,
    rows: std::ops::Range<usize>,
) -> Rasterizer {
    Rasterizer::for_rows(
        view.width,
        view.height,
        options.alpha,
        ncolor(options),
        options.cushion,
        rows,
    )
}

/// Feeds the blocks of `view` that pass `options`' filters to a rasterizer owning
/// `rows` (from the bottom), reading only the blocks whose addresses reach them.
fn rasterize(
    model: &AllocModel,
    view: &View,
    options: &RenderOptions,
    rows: std::ops::Range<usize>,
) -> Result<Rasterizer, AllocError> {
    let attrs = checked(model, view, options)?;
    let addr = addresses_of_rows(view.addr, view.height, rows.clone());
    let mut r = rasterizer_of_rows(view, options, rows);
    let filter = Filter::new(model, options);
    let keep = |rec: &IndexRec| filter.keeps(model, rec);
    let filtered = filter.is_active();
    match (attrs, filtered) {
        (Attributes::Categorical { ids, palette }, false) => {
            feed(
                model,
                &mut r,
                view,
                addr,
                |_| true,
                |pos| &palette[ids[pos] as usize],
            );
        }
        (Attributes::Categorical { ids, palette }, true) => {
            feed(model, &mut r, view, addr, keep, |pos| {
                &palette[ids[pos] as usize]
            });
        }
        (Attributes::Continuous(values), false) => {
            feed(
                model,
                &mut r,
                view,
                addr,
                |_| true,
                |pos| std::array::from_ref(&values[pos]),
            );
        }
        (Attributes::Continuous(values), true) => {
            feed(model, &mut r, view, addr, keep, |pos| {
                std::array::from_ref(&values[pos])
            });
        }
    }
    Ok(r)
}

/// The filters of a [`RenderOptions`]: requested sizes and bins (by axis range).
pub(crate) struct Filter {
    size: SizeFilter,
    bin_ranges: Vec<(u64, u64)>,
}

impl Filter {
    /// The filters of `options` (bins the model lacks are ignored: callers check them).
    pub(crate) fn new(model: &AllocModel, options: &RenderOptions) -> Filter {
        Filter {
            size: options.size,
            bin_ranges: options
                .bins
                .iter()
                .filter_map(|b| model.bin(*b).map(|b| b.axis_range()))
                .collect(),
        }
    }

    /// False when every block passes.
    pub(crate) fn is_active(&self) -> bool {
        self.size != SizeFilter::ALL || !self.bin_ranges.is_empty()
    }

    /// True when the block of `rec` passes.
    #[inline]
    pub(crate) fn keeps(&self, model: &AllocModel, rec: &IndexRec) -> bool {
        let requested = if rec.requested == u32::MAX {
            model.blocks[rec.id as usize].requested
        } else {
            u64::from(rec.requested)
        };
        self.size.keeps(requested)
            && (self.bin_ranges.is_empty()
                || self
                    .bin_ranges
                    .iter()
                    .any(|&(s, e)| s <= rec.y0 && rec.y0 < e))
    }
}

/// Checks what [`render`] checks before drawing: the view, α, the bins, and the
/// colouring attribute (whose values it returns).
fn checked<'m>(
    model: &'m AllocModel,
    view: &View,
    options: &RenderOptions,
) -> Result<&'m Attributes, AllocError> {
    view.validate()?;
    options.validate()?;
    for bin in &options.bins {
        if model.bin(*bin).is_none() {
            return Err(AllocError::NoSuchBin(bin.0));
        }
    }
    model.attributes(options.color_by)
}

/// Maps the blocks of `view` that `keep` accepts to pixel units and adds them with
/// the colour `color(position in the index)`.
#[inline(always)]
fn feed<'a, const NC: usize>(
    model: &AllocModel,
    r: &mut Rasterizer,
    view: &View,
    (q0, q1): (u64, u64),
    keep: impl Fn(&IndexRec) -> bool,
    color: impl Fn(usize) -> &'a [f32; NC],
) {
    let (t0, t1) = (view.time.start_ns, view.time.end_ns);
    let (a0, a1) = view.addr;
    let sx = f64::from(view.width) / (t1 - t0) as f64;
    let sy = f64::from(view.height) / (a1 - a0) as f64;
    let (t0f, a0f) = (t0 as f64, a0 as f64);
    model.index.query_positions(t0, t1, q0, q1, |pos, rec| {
        if !keep(rec) {
            return;
        }
        let x0 = (rec.t0 as f64 - t0f) * sx;
        let x1 = (rec.t1 as f64 - t0f) * sx;
        let y0 = (rec.y0 as f64 - a0f) * sy;
        let y1 = (rec.y1 as f64 - a0f) * sy;
        r.add_n(x0, x1, y0, y1, color(pos));
    });
}

/// Resolves sums into pixels with formula (1) over `background`.
pub fn resolve(cov: &Coverage, background: Rgb) -> RgbaImage {
    let mut img = RgbaImage::new(cov.width, cov.height);
    let nch = 3 + cov.color_channels;
    let lut = PowLut::shared(cov.alpha);
    for (px, out) in cov
        .sums
        .chunks_exact(nch)
        .zip(img.pixels.chunks_exact_mut(4))
    {
        out.copy_from_slice(&resolve_pixel(px, &lut, background));
    }
    img
}

/// Draws `view` of `model`: the same pixels as [`resolve`] of [`coverage`], without
/// materialising the sums.
pub fn render(
    model: &AllocModel,
    view: &View,
    options: &RenderOptions,
) -> Result<RgbaImage, AllocError> {
    render_in_parts(
        model,
        view,
        options,
        parts_for(model.blocks().len(), view.height),
    )
}

/// [`render`] drawn by `parts` rasterizers, each owning a band of rows.
fn render_in_parts(
    model: &AllocModel,
    view: &View,
    options: &RenderOptions,
    parts: usize,
) -> Result<RgbaImage, AllocError> {
    if parts <= 1 {
        let all = 0..view.height as usize;
        return Ok(rasterize(model, view, options, all)?.finish_image(options.background));
    }
    let mut img = RgbaImage::new(view.width, view.height);
    let per_row = view.width as usize * 4;
    let draw = |rows| rasterize(model, view, options, rows);
    let h = view.height as usize;
    draw_in_parts(h, parts, &mut img.pixels, per_row, draw, |r, rows| {
        r.resolve_rows(options.background, rows)
    })?;
    Ok(img)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{AllocEvent, AllocModelBuilder, FreeEvent};
    use crate::ids::SiteId;
    use crate::process::ProcessInfo;

    /// A model deep enough for several index levels: 6000 blocks of three threads,
    /// short- and long-lived, one per 1 KiB slot of a main heap at a time.
    fn deeper_model() -> AllocModel {
        let mut b = AllocModelBuilder::new();
        let p = b.add_process(ProcessInfo {
            pid: 100,
            ppid: 1,
            name: "test".into(),
        });
        let threads = [b.thread(p, 1, ""), b.thread(p, 2, ""), b.thread(p, 3, "")];
        let mut events = Vec::new();
        let mut x: u64 = 777;
        for i in 0..6000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let size = 16 + (x % 500);
            let life = if x.is_multiple_of(10) {
                1 + (x >> 16) % 60_000
            } else {
                1 + (x >> 16) % 300
            };
            let t = i * 10;
            let addr = 0x5555_0000_0000 + i * 1024;
            // (time, 0 = free first, address, size, thread)
            events.push((t, 1, addr, size, threads[(i % 3) as usize]));
            events.push((t + life, 0, addr, 0, threads[(i % 3) as usize]));
        }
        events.sort_by_key(|e| (e.0, e.1, e.2));
        for (t, kind, addr, size, thread) in events {
            if kind == 1 {
                b.alloc(AllocEvent {
                    t,
                    thread,
                    addr,
                    size,
                    site: SiteId::UNKNOWN,
                    latency_ns: None,
                });
            } else {
                b.free(FreeEvent {
                    t,
                    thread,
                    addr,
                    site: SiteId::UNKNOWN,
                    latency_ns: None,
                });
            }
        }
        b.finish(120_000)
    }

    #[test]
    fn render_is_resolve_of_coverage() {
        // `render` resolves straight from the rasterizer's buffers; it must give exactly
        // the pixels of the public two-step path, filtered or not, for every colouring.
        let m = deeper_model();
        assert!(m.index.len() == 6000);
        let whole = View::whole(&m, 300, 170);
        let (t0, t1) = (whole.time.start_ns, whole.time.end_ns);
        let zoomed = View {
            time: TimeRange {
                start_ns: t0 + (t1 - t0) / 3,
                end_ns: t0 + (t1 - t0) / 3 + (t1 - t0) / 20,
            },
            addr: (whole.addr.1 / 4, whole.addr.1 / 2),
            width: 64,
            height: 48,
        };
        let small = SizeFilter { min: 0, max: 64 };
        let mid = SizeFilter { min: 100, max: 300 };
        for view in [whole, zoomed] {
            for (color_by, cushion, alpha, size) in [
                (
                    ColorBy::Thread,
                    CushionProfile::Plateau,
                    0.5,
                    SizeFilter::ALL,
                ),
                (
                    ColorBy::Size,
                    CushionProfile::Parabolic,
                    1.0,
                    SizeFilter::ALL,
                ),
                (ColorBy::Age, CushionProfile::None, 0.3, mid),
                (ColorBy::Thread, CushionProfile::Plateau, 0.7, small),
            ] {
                let opts = RenderOptions {
                    alpha,
                    cushion,
                    color_by,
                    size,
                    ..RenderOptions::default()
                };
                let direct = render(&m, &view, &opts).unwrap();
                let two_step = resolve(&coverage(&m, &view, &opts).unwrap(), opts.background);
                assert_eq!(
                    direct, two_step,
                    "{color_by:?} {cushion:?} α {alpha} {size:?}"
                );
                assert!(direct.pixels.chunks(4).any(|p| p[..3] != [255, 255, 255]));
            }
        }
    }

    #[test]
    fn pictures_drawn_in_parts_are_the_pictures_drawn_whole() {
        // Rectangles cross the parts' boundaries in every way (tiny, tall with
        // cushions, wide and thin, clipped by the view), and the top band is partial.
        let m = deeper_model();
        let whole = View::whole(&m, 300, 170);
        let (t0, t1) = (whole.time.start_ns, whole.time.end_ns);
        let around = |time: (u64, u64), addr: (u64, u64), height| View {
            time: TimeRange {
                start_ns: t0 + (t1 - t0) * time.0 / 1000,
                end_ns: t0 + (t1 - t0) * time.1 / 1000,
            },
            addr,
            width: 90,
            height,
        };
        // Eight 1 KiB slots around a block alive in the middle of the window.
        let live = (0..m.blocks().len())
            .map(|i| crate::ids::BlockId(i as u32))
            .find(|&id| {
                let b = m.block(id);
                b.t_alloc < t0 + (t1 - t0) * 300 / 1000 && b.t_free > t0 + (t1 - t0) * 305 / 1000
            })
            .unwrap();
        let y = m.axis_position(live);
        let tall = around((300, 305), (y - 4 * 1024, y + 4 * 1024), 203);
        let thin = around((0, 1000), (1000 * 1024, 3000 * 1024), 100);
        let mid = SizeFilter { min: 100, max: 300 };
        for view in [whole, tall, thin] {
            for (color_by, cushion, size) in [
                (ColorBy::Thread, CushionProfile::Plateau, SizeFilter::ALL),
                (ColorBy::Size, CushionProfile::Parabolic, mid),
            ] {
                let opts = RenderOptions {
                    cushion,
                    color_by,
                    size,
                    ..RenderOptions::default()
                };
                let one = render_in_parts(&m, &view, &opts, 1).unwrap();
                assert!(one.pixels.chunks(4).any(|p| p[..3] != [255, 255, 255]));
                let sums = coverage_in_parts(&m, &view, &opts, 1).unwrap().sums;
                for parts in [2, 3, 7] {
                    let what = format!("{view:?} {color_by:?} {parts} parts");
                    assert_eq!(
                        render_in_parts(&m, &view, &opts, parts).unwrap(),
                        one,
                        "{what}"
                    );
                    let in_parts = coverage_in_parts(&m, &view, &opts, parts).unwrap();
                    assert_eq!(in_parts.sums, sums, "{what}");
                }
            }
        }
    }
}
