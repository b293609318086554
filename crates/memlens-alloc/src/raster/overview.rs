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

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::rasterizer::{edge_fraction, span};
use super::{
    Attributes, ColorBy, PowLut, Rasterizer, RenderOptions, View, checked, recycle, resolve,
};
use crate::block::Block;
use crate::error::AllocError;
use crate::ids::BinId;
use crate::image::RgbaImage;
use crate::index::{IndexRec, TimeAddrIndex};
use crate::model::AllocModel;
use crate::size_class::SizeFilter;

/// The side of the grid tiles the overview serves, pixels (the viewer's tiles).
pub const TILE_SIDE: u32 = 256;

/// The finest grid level the overview serves on each axis (`K`): tiles of levels
/// 0..=K, i.e. at most 4 × 4 tiles across the model, come from the cell sums.
pub const OVERVIEW_LEVELS: u32 = 2;

/// Models with fewer blocks get no overview: the plain path draws any of their tiles
/// in a few milliseconds.
pub const MIN_BLOCKS: usize = 1 << 16;

/// A block without extent in time: it colours nothing.
const EMPTY: u32 = u32::MAX;
/// A block drawn by the rasterizer (not tiny at every served level).
const LOOSE: u32 = u32::MAX - 1;

/// `[lo, hi)` of part `i` when `[start, start + len)` is split into `2^level` equal
/// parts, each bound rounded down to a whole unit (so neighbours share their bounds):
/// the bounds of grid tiles.
pub fn grid_bounds(start: u64, len: u64, level: u32, i: u64) -> (u64, u64) {
    let at = |k: u64| start + ((u128::from(len) * u128::from(k)) >> level) as u64;
    (at(i), at(i + 1))
}

/// One axis of the cell grid.
#[derive(Clone, Copy, Debug)]
struct GridAxis {
    start: u64,
    len: u64,
    /// The finest level served (`K` of this axis).
    levels: u32,
    /// Cells: `TILE_SIDE << levels`.
    n: u64,
}

impl GridAxis {
    /// The grid over `[start, start + len)`, if the axis has at least one unit per pixel
    /// at level 0.
    fn new(start: u64, len: u64) -> Option<GridAxis> {
        let side = u64::from(TILE_SIDE);
        if len < side {
            return None;
        }
        let mut levels = OVERVIEW_LEVELS;
        while side << levels > len {
            levels -= 1;
        }
        Some(GridAxis {
            start,
            len,
            levels,
            n: side << levels,
        })
    }

    /// The level of the grid tile whose bounds are `[lo, hi)` with `pixels` pixels, and
    /// its number, if it is one the overview serves.
    fn tile(&self, lo: u64, hi: u64, pixels: u32) -> Option<(u32, u64)> {
        if pixels != TILE_SIDE || lo < self.start {
            return None;
        }
        let rel = u128::from(lo - self.start);
        (0..=self.levels).find_map(|level| {
            let guess = ((rel << level) / u128::from(self.len)) as u64;
            (guess.saturating_sub(1)..=guess + 1)
                .filter(|&i| i < 1 << level)
                .find(|&i| grid_bounds(self.start, self.len, level, i) == (lo, hi))
                .map(|i| (level, i))
        })
    }

    /// The cell holding `[a, b)` (whole units, `a < b`) in the same real pixel at every
    /// level `0..=levels`, as the module explains; `None` when there is none.
    fn cell(&self, a: u64, b: u64) -> Option<u64> {
        if a < self.start || b - self.start > self.len {
            return None;
        }
        let (u, v) = (u128::from(a - self.start), u128::from(b - self.start));
        let (n, len) = (u128::from(self.n), u128::from(self.len));
        // c = ⌊u·n / len⌋ from a floating-point guess and exact corrections.
        let un = u * n;
        let mut c = ((a - self.start) as f64 * (self.n as f64 / self.len as f64)) as u128;
        c = c.min(n - 1);
        while c > 0 && c * len > un {
            c -= 1;
        }
        while (c + 1) * len <= un {
            c += 1;
        }
        // n × the cell's ideal upper bound.
        let upper = (c + 1) * len;
        let vn = v * n;
        if vn + n <= upper {
            return Some(c as u64);
        }
        if vn > upper {
            return None;
        }
        let tiny_everywhere = (0..=self.levels).all(|level| {
            let pixel = c >> (self.levels - level);
            self.ends_by_pixel_end(level, pixel, v)
        });
        tiny_everywhere.then_some(c as u64)
    }

    /// True when `v` (relative to the start) is at or before the real upper bound of
    /// pixel `pixel` (counted across the axis) at `level`.
    fn ends_by_pixel_end(&self, level: u32, pixel: u128, v: u128) -> bool {
        let side = u128::from(TILE_SIDE);
        let next = pixel + 1;
        let (tile, i) = (next / side, next % side);
        let len = u128::from(self.len);
        let t0 = (len * tile) >> level;
        if i == 0 {
            return v <= t0;
        }
        let t1 = (len * (tile + 1)) >> level;
        // The bound is t0 + (t1 − t0)·i / side.
        side * v <= side * t0 + (t1 - t0) * i
    }
}

/// Time-tiny blocks of one time cell with the same address extent, merged: the
/// "stacks" of blocks an allocator's address reuse produces.
struct Stacks {
    /// Per time cell (`tx.n + 1` offsets): its stacks, sorted by `(y0, y1)`.
    start: Vec<u32>,
    /// Per stack: axis start and end.
    y0: Vec<u64>,
    y1: Vec<u64>,
    /// Per stack: the running maximum of `y1` within its time cell.
    max_end: Vec<u64>,
    /// Per stack: its cell (`cx · ny + cy`), or [`LOOSE`] when it is not tiny in address.
    cell: Vec<u32>,
}

/// The option-independent part: every block's time cell share and stack, and the
/// blocks drawn by the rasterizer.
struct Geometry {
    tx: GridAxis,
    ty: GridAxis,
    /// Per position in the model's index: the block's stack, or [`LOOSE`] (not tiny in
    /// time) or [`EMPTY`].
    stack: Vec<u32>,
    /// Per position: the block's share of its time cell, `dt / (len / n)` (0 unless in a stack).
    share: Vec<f32>,
    stacks: Stacks,
    /// The blocks not in a cell (record ids number them).
    loose: TimeAddrIndex,
    /// Per loose block: its position in the model's index, and whether it is in a stack
    /// (tiny in time, not in address).
    loose_pos: Vec<(u32, bool)>,
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

type KeyMap =
    std::collections::HashMap<(u32, u64, u64), u32, std::hash::BuildHasherDefault<KeyHasher>>;

impl Geometry {
    /// The geometry of `model`, or `None` when it has fewer than [`MIN_BLOCKS`] blocks or
    /// an axis is shorter than a tile's pixels.
    fn build(model: &AllocModel) -> Option<Geometry> {
        if model.index.len() < MIN_BLOCKS {
            return None;
        }
        let whole = View::whole(model, TILE_SIDE, TILE_SIDE);
        let tx = GridAxis::new(whole.time.start_ns, whole.time.duration_ns())?;
        let ty = GridAxis::new(whole.addr.0, whole.addr.1 - whole.addr.0)?;
        let recs = model.index.records();
        let wx = tx.n as f64 / tx.len as f64;
        // Stacks numbered in order of appearance first, renumbered by key below.
        let mut ids = KeyMap::default();
        let mut keys: Vec<(u32, u64, u64)> = Vec::new();
        let mut stack = Vec::with_capacity(recs.len());
        let mut share = Vec::with_capacity(recs.len());
        for r in recs {
            if r.t1 <= r.t0 {
                stack.push(EMPTY);
                share.push(0.0);
                continue;
            }
            let Some(cx) = tx.cell(r.t0, r.t1) else {
                stack.push(LOOSE);
                share.push(0.0);
                continue;
            };
            let key = (cx as u32, r.y0, r.y1);
            let next = keys.len() as u32;
            let id = *ids.entry(key).or_insert_with(|| {
                keys.push(key);
                next
            });
            stack.push(id);
            share.push(((r.t1 - r.t0) as f64 * wx) as f32);
        }
        drop(ids);
        // Sort the stacks by time cell, then address, and renumber.
        let mut order: Vec<u32> = (0..keys.len() as u32).collect();
        order.sort_unstable_by_key(|&i| keys[i as usize]);
        let mut renumber = vec![0u32; keys.len()];
        for (new, &old) in order.iter().enumerate() {
            renumber[old as usize] = new as u32;
        }
        for s in stack.iter_mut().filter(|s| **s < LOOSE) {
            *s = renumber[*s as usize];
        }
        drop(renumber);
        let mut stacks = Stacks {
            start: vec![0; tx.n as usize + 1],
            y0: Vec::with_capacity(keys.len()),
            y1: Vec::with_capacity(keys.len()),
            max_end: Vec::with_capacity(keys.len()),
            cell: Vec::with_capacity(keys.len()),
        };
        let mut last_cx = u32::MAX;
        let mut run_max = 0;
        for &i in &order {
            let (cx, y0, y1) = keys[i as usize];
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
        Some(Geometry {
            tx,
            ty,
            stack,
            share,
            stacks,
            loose,
            loose_pos,
        })
    }
}

/// The sums of one option set: per stack `Σ s`, `Σ s^α`, then 1 or 3 colour sums
/// `Σ s^α·c` (`s` the blocks' shares of their time cell), and the same per cell
/// with the blocks' shares `f_K` of their cell.
struct Sums {
    ncolor: usize,
    stacks: Vec<f32>,
    cells: Vec<f32>,
}

impl Sums {
    fn build(
        model: &AllocModel,
        geo: &Geometry,
        attrs: &Attributes,
        options: &RenderOptions,
    ) -> Sums {
        let filter = super::Filter::new(model, options);
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

    fn bytes(&self) -> usize {
        (self.stacks.len() + self.cells.len()) * 4
    }
}

/// One pass over the blocks in stacks that `keep` accepts (all when not `filtered`).
fn accumulate<'a, const NC: usize>(
    model: &AllocModel,
    geo: &Geometry,
    lut: &PowLut,
    keep: impl Fn(&IndexRec) -> bool,
    filtered: bool,
    color: impl Fn(usize) -> &'a [f32; NC],
) -> Vec<f32> {
    let nch = 2 + NC;
    let mut out = vec![0.0f32; geo.stacks.y0.len() * nch];
    let recs = model.index.records();
    for (pos, (&s, &f)) in geo.stack.iter().zip(&geo.share).enumerate() {
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
}

/// What identifies an option set's sums.
#[derive(Clone, Debug, PartialEq)]
struct SumsKey {
    alpha_bits: u64,
    color_by: ColorBy,
    bins: Vec<BinId>,
    size: SizeFilter,
}

impl SumsKey {
    fn of(options: &RenderOptions) -> SumsKey {
        SumsKey {
            alpha_bits: options.alpha.to_bits(),
            color_by: options.color_by,
            bins: options.bins.clone(),
            size: options.size,
        }
    }
}

type SumsSlot = Arc<OnceLock<Arc<Sums>>>;

/// A model's overview: the geometry (built once) and the sums of recent option sets.
#[derive(Default)]
pub(crate) struct OverviewCache {
    geometry: OnceLock<Option<Geometry>>,
    sums: Mutex<Vec<(SumsKey, SumsSlot)>>,
}

impl OverviewCache {
    /// The sums of `options` if they are ready.
    fn ready(&self, options: &RenderOptions) -> Option<(&Geometry, Arc<Sums>)> {
        let geo = self.geometry.get()?.as_ref()?;
        let key = SumsKey::of(options);
        let list = self.sums.lock().unwrap_or_else(PoisonError::into_inner);
        let sums = list.iter().find(|(k, _)| *k == key)?.1.get()?;
        Some((geo, Arc::clone(sums)))
    }

    /// Drops the least recently prepared sums beyond [`SUMS_BUDGET`] (keeping the newest).
    fn trim(&self) {
        let mut list = self.sums.lock().unwrap_or_else(PoisonError::into_inner);
        let mut total = 0;
        let mut keep_from = 0;
        for (i, (_, slot)) in list.iter().enumerate().rev() {
            total += slot.get().map_or(0, |s| s.bytes());
            if total > SUMS_BUDGET && i + 1 < list.len() {
                keep_from = i + 1;
                break;
            }
        }
        list.drain(..keep_from);
    }
}

/// Bytes of option sets' sums kept per model (the most recent set is always kept).
const SUMS_BUDGET: usize = 256 << 20;

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
        let Some(geo) = self.overview.geometry.get_or_init(|| Geometry::build(self)) else {
            return Ok(false);
        };
        let key = SumsKey::of(options);
        let slot = {
            let mut list = self
                .overview
                .sums
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let slot = match list.iter().position(|(k, _)| *k == key) {
                Some(i) => list.remove(i).1,
                None => SumsSlot::default(),
            };
            list.push((key, Arc::clone(&slot)));
            slot
        };
        slot.get_or_init(|| Arc::new(Sums::build(self, geo, attrs, options)));
        self.overview.trim();
        Ok(true)
    }

    /// True when [`render_tile`] draws coarse tiles with `options` from the overview
    /// (after [`AllocModel::prepare_overview`]).
    pub fn overview_ready(&self, options: &RenderOptions) -> bool {
        self.overview.ready(options).is_some()
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
    let Some((geo, sums)) = model.overview.ready(options) else {
        return Ok(None);
    };
    // Address grid tiles of the coarse levels from the cells, any other window from
    // the stacks.
    let y = geo.ty.tile(view.addr.0, view.addr.1, view.height);
    let mut r = super::rasterizer_for(view, options);
    let filter = super::Filter::new(model, options);
    let keep = |rec: &IndexRec| filter.keeps(model, rec);
    // With cells, every loose block is drawn; with stacks, those not in a stack.
    let all = y.is_some();
    match attrs {
        Attributes::Categorical { ids, palette } => {
            feed_loose(geo, &mut r, view, all, keep, |pos| {
                &palette[ids[pos] as usize]
            });
        }
        Attributes::Continuous(values) => {
            feed_loose(geo, &mut r, view, all, keep, |pos| {
                std::array::from_ref(&values[pos])
            });
        }
    }
    let mut cov = r.finish();
    debug_assert_eq!(cov.color_channels, sums.ncolor);
    match y {
        Some(y) => add_cells(&mut cov.sums, geo, &sums, view, options.alpha, x, y),
        None => add_stacks(&mut cov.sums, geo, &sums, view, options.alpha, x),
    }
    let img = resolve(&cov, options.background);
    recycle(cov);
    Ok(Some(img))
}

/// Adds the loose blocks of `view` that `keep` accepts (with `all` unset, only those
/// not in a stack), as the plain path feeds blocks.
fn feed_loose<'a, const NC: usize>(
    geo: &Geometry,
    r: &mut Rasterizer,
    view: &View,
    all: bool,
    keep: impl Fn(&IndexRec) -> bool,
    color: impl Fn(usize) -> &'a [f32; NC],
) {
    let (t0, t1) = (view.time.start_ns, view.time.end_ns);
    let (a0, a1) = view.addr;
    let sx = f64::from(view.width) / (t1 - t0) as f64;
    let sy = f64::from(view.height) / (a1 - a0) as f64;
    let (t0f, a0f) = (t0 as f64, a0 as f64);
    geo.loose.query(t0, t1, a0, a1, |rec| {
        let (pos, in_stack) = geo.loose_pos[rec.id as usize];
        if (in_stack && !all) || !keep(rec) {
            return;
        }
        let x0 = (rec.t0 as f64 - t0f) * sx;
        let x1 = (rec.t1 as f64 - t0f) * sx;
        let y0 = (rec.y0 as f64 - a0f) * sy;
        let y1 = (rec.y1 as f64 - a0f) * sy;
        r.add_n(x0, x1, y0, y1, color(pos as usize));
    });
}

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
fn add_cells(
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
fn add_stacks(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_bounds_split_exactly_and_share_edges() {
        assert_eq!(grid_bounds(100, 1000, 0, 0), (100, 1100));
        assert_eq!(grid_bounds(100, 1000, 1, 1), (600, 1100));
        assert_eq!(grid_bounds(0, 10, 2, 1), (2, 5));
        assert_eq!(grid_bounds(0, 10, 2, 2), (5, 7));
    }

    #[test]
    fn grid_tiles_are_recognised_by_their_bounds() {
        let axis = GridAxis::new(7, 100_003).unwrap();
        assert_eq!((axis.levels, axis.n), (2, 1024));
        for level in 0..=2 {
            for i in 0..1u64 << level {
                let (lo, hi) = grid_bounds(7, 100_003, level, i);
                assert_eq!(axis.tile(lo, hi, 256), Some((level, i)));
                assert_eq!(axis.tile(lo, hi, 255), None);
                assert_eq!(axis.tile(lo, hi + 1, 256), None);
            }
        }
        let (lo, hi) = grid_bounds(7, 100_003, 3, 5);
        assert_eq!(
            axis.tile(lo, hi, 256),
            None,
            "level 3 is finer than the grid"
        );
        // A short axis gets fewer levels, and one shorter than a tile none.
        assert_eq!(GridAxis::new(0, 600).unwrap().levels, 1);
        assert!(GridAxis::new(0, 255).is_none());
    }

    /// Brute force: the real pixel of `[a, b)` at `level` (exact rationals), if tiny.
    fn real_pixel(len: u64, level: u32, a: u64, b: u64) -> Option<u64> {
        let side = 256u128;
        for tile in 0..1u64 << level {
            let (t0, t1) = grid_bounds(0, len, level, tile);
            let (t0, t1) = (u128::from(t0), u128::from(t1));
            for i in 0..side {
                // Pixel i: [t0 + (t1 − t0)·i/256, t0 + (t1 − t0)·(i + 1)/256).
                let lo = side * t0 + (t1 - t0) * i;
                let hi = side * t0 + (t1 - t0) * (i + 1);
                let (a, b) = (side * u128::from(a), side * u128::from(b));
                if lo <= a && b <= hi {
                    return Some(tile * 256 + i as u64);
                }
            }
        }
        None
    }

    #[test]
    fn clustered_spans_are_tiny_in_the_nested_pixel_at_every_level() {
        let mut x = 12345u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in [1024u64, 1500, 3071, 4096, 5003, 20_011] {
            let axis = GridAxis::new(0, len).unwrap();
            let mut clustered = 0;
            for _ in 0..3000 {
                let a = next() % len;
                let b = (a + 1 + next() % 4).min(len);
                let Some(c) = axis.cell(a, b) else {
                    // Loose spans must really straddle a pixel at some level (or the cell).
                    let tiny_all = (0..=axis.levels).all(|l| real_pixel(len, l, a, b).is_some());
                    let ideal = (u128::from(a) * 1024 / u128::from(len)) as u64;
                    let in_cell = u128::from(b) * u128::from(axis.n)
                        <= (u128::from(ideal) + 1) * u128::from(len);
                    assert!(!(tiny_all && in_cell), "{len}: [{a}, {b}) loose");
                    continue;
                };
                clustered += 1;
                for level in 0..=axis.levels {
                    assert_eq!(
                        real_pixel(len, level, a, b),
                        Some(c >> (axis.levels - level)),
                        "{len}: [{a}, {b}) at level {level}"
                    );
                }
            }
            assert!(clustered > 200, "{len}: {clustered}");
        }
    }
}
