//! Coarse grid tiles without touching every block: the overview.
//!
//! The viewer asks for 256×256 grid tiles: level `z` of an axis splits the run (or
//! the compact address axis) into `2^z` tiles whose bounds are rounded down to whole
//! units ([`grid_bounds`]). A tile of the coarsest time levels covers most of the run,
//! so the plain path ([`super::render`]) feeds it nearly every block of its address
//! window. But almost all of those blocks are *tiny* in time there, inside one pixel
//! column, where formula (1) needs only sums: coverage factorises (`f = fx·fy`,
//! `f^α = fx^α·fy^α`), and with `s` a block's share of an ideal grid column and `r`
//! that column's width over the tile pixel's, `fx = s·r`, `fx^α = s^α·r^α`. So for a
//! fixed option set the sums can be added up once and scaled per tile.
//!
//! **The grid.** Per axis, level `K` = [`OVERVIEW_LEVELS`] (or less on a short axis)
//! has `n = 256·2^K` cells of ideal (real-valued) width `len/n`. The real pixels of a
//! tile at level `L ≤ K` differ from the ideal ones by less than one unit (tile bounds
//! are rounded down; a pixel boundary inside a tile interpolates two of them), so a
//! span of whole units in ideal cell `c` lies, at every level `L ≤ K`, in the real
//! pixel numbered `c >> (K − L)` if it is inside one pixel there (its start is at or
//! after the ideal lower bound, which is at or after the real one, and at least one
//! unit before the ideal upper bound, which is less than one unit after the real one).
//! A span is *tiny* on an axis when that holds at every level: always when it ends at
//! least one unit before the cell's ideal upper bound; otherwise each level's real
//! pixel boundary is checked in exact integer arithmetic.
//!
//! **Stacks and cells.** Blocks tiny in time with the same time cell and the same
//! address extent form a **stack** (allocators reuse addresses: on the benchmark's
//! 10 M-block model, 9.1 M blocks tiny in time form 0.91 M stacks). A stack whose
//! extent is tiny in address too belongs to a **cell** of the `n × n` grid. Per option
//! set (α, colour-by and filters; the cushion profile does not touch blocks one column
//! wide, which the rasterizer draws flat), one pass over the blocks fills each stack
//! with `Σ s`, `Σ s^α` and `Σ s^α·c`, and the stacks fill the cells (times the
//! extent's share `h` of the cell's height and `h^α`). A tile of time level `L ≤ K`
//! then takes, at address levels up to `K`, its cells (`4^(K−L)` per pixel) plus the
//! blocks outside the cells through the rasterizer (from an index of their own); at
//! deeper address levels, or for any other address window, its stacks (each one
//! column, its rows as one block of its extent covers them) plus the blocks not tiny
//! in time. With `K = 2` the cells take 1024 × 1024 × 5 f32 = 20 MiB for a categorical
//! colouring, the stacks 20 bytes each; option sets are kept up to 256 MiB.
//!
//! **Exactness.** The pixels are those of formula (1) over the same blocks; they differ
//! from the plain path's only by rounding: `f^α` comes from the same table (relative
//! error ≤ α·2⁻¹², here per factor), sums are added in another order, and a block
//! whose edge lies exactly on a pixel boundary may get, in the plain path's floating
//! point, a sliver of ~10⁻¹³ of the neighbouring pixel, which the exact classification
//! here does not give it (a weight of ~10⁻¹³ᵅ). The tests check images of random
//! models equal to within 1/255 per channel.
//!
//! The parts: [`grid`] (tile bounds and cells), [`geometry`] (stacks and cells, once
//! per model), [`sums`] (once per option set), [`cache`] (what a model keeps) and
//! [`tile_sums`] (a tile's pixels from the sums); this file prepares the overview and
//! draws tiles with it.

mod cache;
mod geometry;
mod grid;
mod sums;
mod tile_sums;

use std::sync::Arc;

pub use geometry::MIN_BLOCKS;
pub use grid::{OVERVIEW_LEVELS, TILE_SIDE, grid_bounds};

use super::parts::{addresses_of_rows, parts_for};
use super::{Attributes, ColorBy, Rasterizer, RenderOptions, View, checked, recycle, resolve};
use crate::error::AllocError;
use crate::image::RgbaImage;
use crate::model::AllocModel;
use cache::OverviewCache;
use geometry::Geometry;
use grid::GridAxis;
use sums::{LooseAttributes, Sums, SumsKey};
use tile_sums::{add_cells, add_stacks};

impl AllocModel {
    /// Prepares the overview for `options` (blocking: a pass over the blocks for the
    /// geometry the first time, about a second for 10 M blocks, then one for the
    /// option set, tens of ms; concurrent calls for one option set wait for one
    /// computation), so that [`render_tile`] draws grid tiles of the coarse time
    /// levels from sums. Returns false when the model is too small for an overview
    /// (fewer than [`MIN_BLOCKS`] blocks, or an axis shorter than 256 units), where
    /// plain rendering is fast anyway.
    pub fn prepare_overview(&self, options: &RenderOptions) -> Result<bool, AllocError> {
        options.validate()?;
        for bin in &options.bins {
            if self.bin(*bin).is_none() {
                return Err(AllocError::NoSuchBin(bin.0));
            }
        }
        let attrs = self.attributes(options.color_by)?;
        let cache = OverviewCache::of(self);
        let Some(geo) = cache.geometry(self) else {
            return Ok(false);
        };
        let slot = cache.slot(SumsKey::of(options));
        slot.get_or_init(|| Arc::new(Sums::build(self, geo, attrs, options)));
        cache.trim();
        Ok(true)
    }

    /// Prepares the overview of one more colouring of `options` (the same α and
    /// filters, the next attribute of [`ColorBy::ALL`] without sums yet) ahead of any
    /// request, so that switching the colouring in a viewer finds its sums ready. Its
    /// sums are the first dropped when the memory kept for sums runs short, so the most
    /// that memory holds is unchanged (256 MiB, what a user trying every colouring
    /// would fill it with). Returns the attribute prepared, or `None` once every
    /// attribute worth it has sums (latency without latencies and process with one
    /// process are not) or the next would not fit (the sums of `options` must be
    /// ready: their size gives the next's). Blocking, like
    /// [`AllocModel::prepare_overview`]; meant for a background thread.
    pub fn prepare_overview_ahead(&self, options: &RenderOptions) -> Option<ColorBy> {
        let cache = OverviewCache::of(self);
        let (geo, sums) = cache.ready(options)?;
        let next = ColorBy::ALL.into_iter().find(|&by| {
            let key = SumsKey::of(&RenderOptions {
                color_by: by,
                ..options.clone()
            });
            // Colourings that would say nothing are left to be asked for.
            let says_something = match by {
                ColorBy::Latency => self.has_latency(),
                ColorBy::Process => self.processes().len() > 1,
                _ => true,
            };
            says_something && !cache.has(&key)
        })?;
        if !cache.has_room_ahead(sums.bytes_of(next)) {
            return None;
        }
        let options = RenderOptions {
            color_by: next,
            ..options.clone()
        };
        let attrs = self.attributes(next).ok()?;
        let slot = cache.slot_ahead(SumsKey::of(&options))?;
        slot.get_or_init(|| Arc::new(Sums::build(self, geo, attrs, &options)));
        Some(next)
    }

    /// True when [`render_tile`] draws coarse tiles with `options` from the overview
    /// (after [`AllocModel::prepare_overview`]).
    pub fn overview_ready(&self, options: &RenderOptions) -> bool {
        OverviewCache::of(self).ready(options).is_some()
    }

    /// True when the overview's geometry is built (by a first
    /// [`AllocModel::prepare_overview`]): preparing another option set is then only
    /// its sums, a pass over the blocks on two threads, cheaper than drawing a coarse
    /// tile of a big model the plain way.
    pub fn overview_geometry_ready(&self) -> bool {
        OverviewCache::of(self).has_geometry()
    }
}

/// True when `view` is a grid tile of a time level the overview serves
/// ([`grid_bounds`] over the whole run, [`TILE_SIDE`] pixels wide; any address window):
/// where [`AllocModel::prepare_overview`] pays off.
pub fn overview_serves(model: &AllocModel, view: &View) -> bool {
    time_tile(model, view).is_some()
}

/// The level and number of the time grid tile `view` is.
fn time_tile(model: &AllocModel, view: &View) -> Option<(u32, u64)> {
    let whole = View::whole(model, TILE_SIDE, TILE_SIDE);
    GridAxis::new(whole.time.start_ns, whole.time.duration_ns())?.tile(
        view.time.start_ns,
        view.time.end_ns,
        view.width,
    )
}

/// Draws `view` like [`super::render`], from the overview when it is prepared for
/// `options` and `view` is a grid tile it serves (then the pixels equal `render`'s up
/// to rounding, within 1/255: see the module documentation), else exactly as `render`.
pub fn render_tile(
    model: &AllocModel,
    view: &View,
    options: &RenderOptions,
) -> Result<RgbaImage, AllocError> {
    match render_from_overview(model, view, options)? {
        Some(img) => Ok(img),
        None => super::render(model, view, options),
    }
}

/// The overview's drawing of `view`, or `None` when it is not prepared for `options`
/// or `view` is not a grid tile it serves.
pub fn render_from_overview(
    model: &AllocModel,
    view: &View,
    options: &RenderOptions,
) -> Result<Option<RgbaImage>, AllocError> {
    let attrs = checked(model, view, options)?;
    let Some(x) = time_tile(model, view) else {
        return Ok(None);
    };
    let Some((geo, sums)) = OverviewCache::of(model).ready(options) else {
        return Ok(None);
    };
    // Address grid tiles of the coarse levels from the cells, any other window from
    // the stacks.
    let y = geo.ty.tile(view.addr.0, view.addr.1, view.height);
    let filter = super::Filter::new(model, options);
    let recs = model.index.records();
    let keep = |pos: usize| !filter.is_active() || filter.keeps(model, &recs[pos]);
    // With cells, every loose block is drawn; with stacks, those not in a stack. Many
    // of them (a coarse tile of a big model) are drawn in bands of rows on the cores.
    let all = y.is_some();
    let draw = |rows: std::ops::Range<usize>| {
        let addr = addresses_of_rows(view.addr, view.height, rows.clone());
        let mut r = super::rasterizer_of_rows(view, options, rows);
        match (attrs, &sums.loose) {
            (Attributes::Categorical { palette, .. }, LooseAttributes::Categorical(ids)) => {
                feed_loose(geo, &mut r, view, addr, all, keep, |k| {
                    &palette[ids[k] as usize]
                });
            }
            (Attributes::Continuous(_), LooseAttributes::Continuous(values)) => {
                feed_loose(geo, &mut r, view, addr, all, keep, |k| {
                    std::array::from_ref(&values[k])
                });
            }
            _ => unreachable!("the sums of a colouring hold its kind of attribute"),
        }
        Ok(r)
    };
    let parts = parts_for(geo.loose_at.len(), view.height);
    let mut cov = super::coverage_of_bands(view, options, parts, draw)?;
    debug_assert_eq!(cov.color_channels, sums.ncolor);
    match y {
        Some(y) => add_cells(&mut cov.sums, geo, &sums, view, options.alpha, x, y),
        None => add_stacks(&mut cov.sums, geo, &sums, view, options.alpha, x),
    }
    let img = resolve(&cov, options.background);
    recycle(cov);
    Ok(Some(img))
}

/// Adds the loose blocks of `view` whose addresses reach the axis window `(a0, a1)`
/// and whose position in the model's index `keep` accepts (with `all` unset, only
/// those not in a stack), coloured `color(k)` for the `k`-th record of the loose
/// blocks' index, as the plain path feeds blocks.
fn feed_loose<'a, const NC: usize>(
    geo: &Geometry,
    r: &mut Rasterizer,
    view: &View,
    (a0, a1): (u64, u64),
    all: bool,
    keep: impl Fn(usize) -> bool,
    color: impl Fn(usize) -> &'a [f32; NC],
) {
    let (t0, t1) = (view.time.start_ns, view.time.end_ns);
    let sx = f64::from(view.width) / (t1 - t0) as f64;
    let sy = f64::from(view.height) / (view.addr.1 - view.addr.0) as f64;
    let (t0f, a0f) = (t0 as f64, view.addr.0 as f64);
    geo.loose.query_positions(t0, t1, a0, a1, |k, rec| {
        let (pos, in_stack) = geo.loose_at[k];
        if (in_stack && !all) || !keep(pos as usize) {
            return;
        }
        let x0 = (rec.t0 as f64 - t0f) * sx;
        let x1 = (rec.t1 as f64 - t0f) * sx;
        let y0 = (rec.y0 as f64 - a0f) * sy;
        let y1 = (rec.y1 as f64 - a0f) * sy;
        r.add_n(x0, x1, y0, y1, color(k));
    });
}
