//! Occupancy bars (the paper's Figure 5) and stacked occupancy bars (Figure 6).
//!
//! A bar's colour in column x is the bin's occupancy averaged exactly over the column's
//! time span (every block contributes its reserved size × the part of the column it
//! lives in; a difference array makes it O(blocks + width)), over the capacity the
//! occupancy metric uses at the column's midpoint ([`crate::metrics::capacity_at`]),
//! mapped blue (empty) → red (full). Its luminance shows activity, in one of the
//! paper's styles:
//!
//! - [`BarStyle::Flat`] (5a): occupancy only;
//! - [`BarStyle::Outlined`] (5b): black lines at both ends of every no-activity zone (an
//!   interval between consecutive allocation or free events of the bin) at least
//!   `min_gap_px` wide;
//! - [`BarStyle::Cushioned`] (5c/5e): those zones shaded with a cushion (plateau or
//!   parabolic), high-activity stretches left flat;
//! - [`BarStyle::Antialiased`] (5d/5f): a cushion over *every* interval between
//!   consecutive events, combined per column with formula (1)'s weights `f^α`, so dense
//!   activity (many tiny intervals, each seen at its flat centre) reads as flat and bright
//!   and sparse activity as cushioned: activity maps to the cushions' visual density.

use crate::colormap::{continuous_color, to_u8};
use crate::error::AllocError;
use crate::ids::BinId;
use crate::image::RgbaImage;
use crate::model::AllocModel;
use crate::raster::{CushionProfile, PowLut, intensity, slope};
use crate::time_range::TimeRange;

/// How activity is shown on the bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BarStyle {
    /// Occupancy colour only.
    Flat,
    /// Black outlines around no-activity zones.
    Outlined,
    /// Cushions over no-activity zones.
    Cushioned,
    /// Antialiased cushions over every interval between events.
    #[default]
    Antialiased,
}

/// Options of the occupancy bars.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BarOptions {
    /// The activity style.
    pub style: BarStyle,
    /// The cushion profile (for the cushioned and antialiased styles).
    pub profile: CushionProfile,
    /// The bias α of the antialiased style.
    pub alpha: f64,
    /// The narrowest no-activity zone outlined or cushioned, pixels.
    pub min_gap_px: f64,
}

impl Default for BarOptions {
    fn default() -> BarOptions {
        BarOptions {
            style: BarStyle::Antialiased,
            profile: CushionProfile::Plateau,
            alpha: 0.5,
            min_gap_px: 3.0,
        }
    }
}

/// Occupancy per column (0..=1) and the bin's event times inside the window.
fn occupancy_and_events(
    model: &AllocModel,
    bin: Option<BinId>,
    time: TimeRange,
    width: usize,
) -> (Vec<f64>, Vec<u64>) {
    let (t0, t1) = (time.start_ns as f64, time.end_ns as f64);
    let sx = width as f64 / (t1 - t0);
    // Each column's capacity is the occupancy metric's at the column's midpoint, so the
    // bar and the occupancy chart agree (a real region grows to its high-water mark).
    let mids: Vec<u64> = (0..width)
        .map(|c| (t0 + (c as f64 + 0.5) / sx) as u64)
        .collect();
    let capacity = crate::metrics::capacity_at(model, bin, &mids);
    // Full columns through a difference array, partial end columns directly.
    let mut diff = vec![0f64; width + 1];
    let mut direct = vec![0f64; width];
    let mut events = Vec::new();
    for (i, b) in model.blocks.iter().enumerate() {
        if bin.is_some_and(|bin| model.block_bin[i] != bin) {
            continue;
        }
        for (t, real) in [(b.t_alloc, true), (b.t_free, b.freed)] {
            if real && t >= time.start_ns && t < time.end_ns {
                events.push(t);
            }
        }
        let x0 = ((b.t_alloc as f64 - t0) * sx).max(0.0);
        let x1 = ((b.t_free as f64 - t0) * sx).min(width as f64);
        if x1 <= x0 {
            continue;
        }
        let v = b.reserved as f64;
        let c0 = x0.floor() as usize;
        let c1 = ((x1.ceil() as usize).max(c0 + 1) - 1).min(width - 1);
        if c0 == c1 {
            direct[c0] += v * (x1 - x0);
            continue;
        }
        direct[c0] += v * ((c0 + 1) as f64 - x0);
        direct[c1] += v * (x1 - c1 as f64);
        if c1 > c0 + 1 {
            diff[c0 + 1] += v;
            diff[c1] -= v;
        }
    }
    let mut run = 0.0;
    let occ = (0..width)
        .map(|c| {
            run += diff[c];
            if capacity[c] == 0 {
                0.0
            } else {
                ((run + direct[c]) / capacity[c] as f64).clamp(0.0, 1.0)
            }
        })
        .collect();
    events.sort_unstable();
    (occ, events)
}

/// Draws the occupancy bar of `bin` (all bins when `None`) over `time`.
pub fn render_occupancy_bar(
    model: &AllocModel,
    bin: Option<BinId>,
    time: TimeRange,
    width: u32,
    height: u32,
    options: &BarOptions,
) -> Result<RgbaImage, AllocError> {
    if width == 0 || height == 0 || width > 16384 || height > 16384 {
        return Err(AllocError::BadImageSize { width, height });
    }
    if time.end_ns <= time.start_ns {
        return Err(AllocError::EmptyTimeWindow {
            start_ns: time.start_ns,
            end_ns: time.end_ns,
        });
    }
    if !(options.alpha.is_finite() && options.alpha > 0.0) {
        return Err(AllocError::BadAlpha(options.alpha));
    }
    if let Some(b) = bin
        && model.bin(b).is_none()
    {
        return Err(AllocError::NoSuchBin(b.0));
    }
    let (w, h) = (width as usize, height as usize);
    let (occ, events) = occupancy_and_events(model, bin, time, w);
    let sx = w as f64 / time.duration_ns() as f64;
    // Intervals between consecutive events (and the window's ends), in pixels.
    let mut cuts: Vec<f64> = Vec::with_capacity(events.len() + 2);
    cuts.push(0.0);
    cuts.extend(events.iter().map(|&t| (t - time.start_ns) as f64 * sx));
    cuts.push(w as f64);
    cuts.dedup();
    let row_slope: Vec<f64> = (0..h)
        .map(|r| slope(options.profile, (r as f64 + 0.5) / h as f64))
        .collect();
    let flat = |_: usize, _: usize| 1.0f32;
    let mut lum: Vec<f32> = vec![1.0; w * h];
    match options.style {
        BarStyle::Flat => {}
        BarStyle::Outlined | BarStyle::Cushioned => {
            for pair in cuts.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                if b - a < options.min_gap_px {
                    continue;
                }
                let c0 = (a.floor() as usize).min(w - 1);
                let c1 = ((b.ceil() as usize).max(c0 + 1) - 1).min(w - 1);
                for c in c0..=c1 {
                    for r in 0..h {
                        let v = if options.style == BarStyle::Outlined {
                            if c == c0 || c == c1 { 0.0 } else { flat(c, r) }
                        } else {
                            let mid = 0.5 * ((c as f64).max(a) + ((c + 1) as f64).min(b));
                            intensity(slope(options.profile, (mid - a) / (b - a)), row_slope[r])
                        };
                        lum[r * w + c] = v;
                    }
                }
            }
        }
        BarStyle::Antialiased => {
            let lut = PowLut::shared(options.alpha);
            // Per column: weight of the tiny intervals (seen at their flat centre) and
            // the (weight, slope) of the wider ones.
            let mut tiny = vec![0f64; w];
            let mut wide: Vec<Vec<(f64, f64)>> = vec![Vec::new(); w];
            for pair in cuts.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                let c0 = (a.floor() as usize).min(w - 1);
                let c1 = ((b.ceil() as usize).max(c0 + 1) - 1).min(w - 1);
                if c0 == c1 {
                    tiny[c0] += f64::from(lut.pow(b - a));
                    continue;
                }
                for (c, col) in wide.iter_mut().enumerate().take(c1 + 1).skip(c0) {
                    let lo = (c as f64).max(a);
                    let hi = ((c + 1) as f64).min(b);
                    let fa = f64::from(lut.pow(hi - lo));
                    let mid = 0.5 * (lo + hi);
                    col.push((fa, slope(options.profile, (mid - a) / (b - a))));
                }
            }
            for c in 0..w {
                for r in 0..h {
                    let mut num = tiny[c] * f64::from(intensity(0.0, row_slope[r]));
                    let mut den = tiny[c];
                    for &(fa, s) in &wide[c] {
                        num += fa * f64::from(intensity(s, row_slope[r]));
                        den += fa;
                    }
                    lum[r * w + c] = if den > 0.0 { (num / den) as f32 } else { 1.0 };
                }
            }
        }
    }
    let mut img = RgbaImage::new(width, height);
    for r in 0..h {
        for c in 0..w {
            let base = continuous_color(occ[c] as f32);
            let l = lum[r * w + c];
            let [rr, gg, bb] = to_u8([base[0] * l, base[1] * l, base[2] * l]);
            // Row 0 of the image is the bar's top.
            img.set(c as u32, (h - 1 - r) as u32, [rr, gg, bb, 255]);
        }
    }
    Ok(img)
}

/// Stacks the occupancy bars of `bins` (top to bottom, `gap` white rows between them):
/// the paper's Figure 6.
pub fn render_stacked_bars(
    model: &AllocModel,
    bins: &[BinId],
    time: TimeRange,
    width: u32,
    bar_height: u32,
    gap: u32,
    options: &BarOptions,
) -> Result<RgbaImage, AllocError> {
    if bins.is_empty() {
        return Err(AllocError::BadOption(
            "there are no bins to stack".to_string(),
        ));
    }
    let n = bins.len() as u32;
    let height = n * bar_height + (n - 1) * gap;
    if height > 16384 {
        return Err(AllocError::BadImageSize { width, height });
    }
    let mut img = RgbaImage::new(width, height);
    img.pixels.fill(255);
    for (k, &b) in bins.iter().enumerate() {
        let bar = render_occupancy_bar(model, Some(b), time, width, bar_height, options)?;
        img.paste_rows(&bar, k as u32 * (bar_height + gap));
    }
    Ok(img)
}
