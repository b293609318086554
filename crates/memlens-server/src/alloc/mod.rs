//! The allocation-map lens's server side (paper 001): a [`LensApi`] under `api/alloc/`
//! that draws the map of a trace's blocks (time → x, compact address → y) as PNG tiles
//! at any zoom, answers brushing questions and serves the occupancy bars and metric
//! series. Every number and pixel comes from `memlens-alloc`; this module parses
//! queries, picks the model, encodes PNG and JSON, and keeps recent answers. Coarse
//! grid tiles (the whole model down to 4 × 4 tiles) come from the engine's overview.
//! A viewer's lens ([`AllocLens::interactive`]) is handed out with it prepared for the
//! default options; other lenses prepare it on one background thread as soon as they
//! exist (its geometry, once per model, then that option set's sums), drawing coarse
//! tiles the plain way until then. Once the geometry is built, another option set's
//! sums are prepared by its first coarse tile's request: a pass over the blocks on two
//! threads costs less than drawing that tile the plain way.
//!
//! Routes (all take the model parameters of [`query`]: `pool=…` selects a pool replay):
//!
//! | route | answer |
//! |---|---|
//! | `meta` | bins, run, axis, processes, threads, top sites, colouring attributes, the replay's report (JSON, [`wire::MetaWire`]) |
//! | `tile?zx&zy&x&y&size` or `tile?t0&t1&a0&a1&w&h` | the map of that window with `alpha`, `cushion`, `color`, `bins`, `smin`/`smax` (PNG) |
//! | `block?t&y[&dt&dy]` | the block at time `t`, axis position `y` (the nearest within `±dt`, `±dy`: a pixel) (JSON) |
//! | `bar?bin&t0&t1&w&h&style&profile&alpha` | the occupancy bar of a bin or of all (PNG, the paper's Figure 5) |
//! | `bars?bins&t0&t1&w&bar_h&gap&style&profile&alpha` | every bin's bar stacked (PNG, Figure 6) |
//! | `metrics?bin&samples&t0&t1` | occupancy, waste, fragmentation, event rate, latency over time (JSON) |
//! | `whole_run?w&h` | the whole run's occupancy at a glance, for the map of a window of it (PNG, [`memlens_alloc::whole_run`]) |
//!
//! A report embeds what the page asks for on opening, for the real run and one pool
//! replay, with the first levels of grid tiles ([`report`]).

pub mod images;
pub mod query;
pub mod report;
mod whole_run;
pub mod wire;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use memlens_alloc::{
    AllocModel, BarOptions, BinId, BinKind, BlockInfo, ColorBy, RenderOptions, ReplayReport,
    SiteId, categorical_color, metric_series, overview_serves, render_occupancy_bar,
    render_stacked_bars, render_tile, replay,
};

use crate::error::ApiError;
use crate::lens_api::{ApiBody, LensApi, ReportRequest};
use crate::protocol::{LensWire, to_json};

use images::{ImageCache, encode_png};
use query::PoolQuery;
use wire::*;

/// Bytes of recent answers kept.
const CACHE_BUDGET: usize = 96 << 20;

/// Replays kept (each is a whole model).
const KEPT_REPLAYS: usize = 3;

/// Sites listed in the meta document's legend.
const LEGEND_SITES: usize = 16;

/// Overflows listed in a replay's report.
const LISTED_OVERFLOWS: usize = 200;

/// A model the lens draws: the real run or a replay, with its legend counts.
struct Drawn {
    /// `real` or the pool's canonical spelling.
    key: String,
    model: Arc<AllocModel>,
    report: Option<ReplayReport>,
    pool_spec: Option<String>,
    thread_blocks: Vec<u64>,
    site_blocks: Vec<u64>,
}

impl Drawn {
    fn new(
        key: String,
        model: Arc<AllocModel>,
        report: Option<ReplayReport>,
        pool_spec: Option<String>,
    ) -> Drawn {
        let mut thread_blocks = vec![0u64; model.threads().len()];
        let mut site_blocks = vec![0u64; model.sites().len()];
        for b in model.blocks() {
            if let Some(n) = thread_blocks.get_mut(b.thread.index()) {
                *n += 1;
            }
            if let Some(n) = site_blocks.get_mut(b.site.index()) {
                *n += 1;
            }
        }
        Drawn {
            key,
            model,
            report,
            pool_spec,
            thread_blocks,
            site_blocks,
        }
    }
}

/// An overview to prepare: the model and the option set.
type WarmJob = (Arc<Drawn>, RenderOptions);

/// The background preparation of overviews (see [`AllocLens::warm`]): at most one
/// thread, working on `current`, with the latest request waiting in `next`; `ahead`
/// when it goes on with the other colourings (see [`AllocLens::interactive`]).
#[derive(Default)]
struct Warming {
    ahead: bool,
    running: bool,
    current: Option<(String, RenderOptions)>,
    next: Option<WarmJob>,
}

/// The allocation-map lens over one model (one or more traces).
pub struct AllocLens {
    real: Arc<Drawn>,
    replays: Mutex<Vec<Arc<Drawn>>>,
    cache: ImageCache,
    warming: Arc<Mutex<Warming>>,
}

impl AllocLens {
    /// A lens over `model`. The overview of the viewer's default drawing options is
    /// prepared in the background at once, so the first whole-model tiles are fast.
    pub fn new(model: AllocModel) -> AllocLens {
        AllocLens::with_cache_budget(model, CACHE_BUDGET)
    }

    /// [`AllocLens::new`] for a viewer a user clicks through: the default drawing
    /// options' overview is prepared here, before the lens is handed out (half a
    /// second for 4.4 M blocks, on the thread that read the model, while the viewer
    /// shows its progress), so that every tile of the first picture comes from it
    /// (drawn the plain way, a coarse tile of such a model takes about 0.1 s); then a
    /// background thread goes on with the other colourings (within the memory kept
    /// for sums), so that switching the colouring is immediate too. (Not for a report, which draws one colouring, nor a live view,
    /// whose model is replaced at every update.)
    pub fn interactive(model: AllocModel) -> AllocLens {
        // Options are the defaults; an error only means no overview.
        let _ = model.prepare_overview(&RenderOptions::default());
        AllocLens::build(model, CACHE_BUDGET, true)
    }

    /// A lens keeping at most `bytes` of recent answers (0: none, for benchmarks).
    pub fn with_cache_budget(model: AllocModel, bytes: usize) -> AllocLens {
        AllocLens::build(model, bytes, false)
    }

    /// A lens keeping at most `bytes` of recent answers, preparing the colourings
    /// ahead when `ahead`.
    fn build(model: AllocModel, bytes: usize, ahead: bool) -> AllocLens {
        let lens = AllocLens {
            real: Arc::new(Drawn::new("real".to_owned(), Arc::new(model), None, None)),
            replays: Mutex::new(Vec::new()),
            cache: ImageCache::new(bytes),
            warming: Arc::new(Mutex::new(Warming {
                ahead,
                ..Warming::default()
            })),
        };
        match ahead {
            // Even when the default options' overview is ready (or not wanted: a
            // small model, where nothing is prepared ahead either).
            true => lens.start_warming(&lens.real, &RenderOptions::default()),
            false => lens.warm(&lens.real, &RenderOptions::default()),
        }
        lens
    }

    /// Prepares, on a background thread, the overview of `drawn` for `options`
    /// (coarse tiles then come from cell sums: see `memlens_alloc::render_tile`), then
    /// that of its other colourings while they fit the memory kept for sums
    /// (`AllocModel::prepare_overview_ahead`). One thread at most: while it works, the
    /// latest request waits and earlier waiting ones are dropped (a user dragging the
    /// α slider wants the last α); a waiting request stops the colourings ahead.
    fn warm(&self, drawn: &Arc<Drawn>, options: &RenderOptions) {
        if !drawn.model.overview_ready(options) {
            self.start_warming(drawn, options);
        }
    }

    /// [`AllocLens::warm`] whether or not the overview of `options` is ready (its
    /// other colourings may not be).
    fn start_warming(&self, drawn: &Arc<Drawn>, options: &RenderOptions) {
        let mut w = self.warming.lock().unwrap_or_else(PoisonError::into_inner);
        let same = |key: &str, o: &RenderOptions| key == drawn.key && o == options;
        if w.current.as_ref().is_some_and(|(k, o)| same(k, o))
            || w.next.as_ref().is_some_and(|(d, o)| same(&d.key, o))
        {
            return;
        }
        let job = (Arc::clone(drawn), options.clone());
        if w.running {
            w.next = Some(job);
            return;
        }
        w.running = true;
        drop(w);
        let warming = Arc::clone(&self.warming);
        let spawned = std::thread::Builder::new()
            .name("memlens-overview".to_owned())
            .spawn(move || {
                background_priority();
                let mut job = Some(job);
                while let Some((drawn, options)) = job.take() {
                    warming
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .current = Some((drawn.key.clone(), options.clone()));
                    // Options were checked by the request; an error only means no overview.
                    let _ = drawn.model.prepare_overview(&options);
                    // Then the other colourings of these options, one at a time while
                    // no request waits, so that switching the colouring is immediate.
                    let go_on = || {
                        let w = warming.lock().unwrap_or_else(PoisonError::into_inner);
                        w.ahead && w.next.is_none()
                    };
                    while go_on() && drawn.model.prepare_overview_ahead(&options).is_some() {}
                    let mut w = warming.lock().unwrap_or_else(PoisonError::into_inner);
                    w.current = None;
                    job = w.next.take();
                    if job.is_none() {
                        w.running = false;
                    }
                }
            });
        if spawned.is_err() {
            // No thread: tiles are drawn the plain way.
            self.warming
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .running = false;
        }
    }

    /// The real run's model.
    pub fn model(&self) -> &AllocModel {
        &self.real.model
    }

    /// Answers cached now (for tests of the cache).
    pub fn cached_answers(&self) -> usize {
        self.cache.len()
    }

    /// The model a query names: the real run, or a (cached) replay of `pool=…`.
    fn drawn(&self, q: &HashMap<String, String>) -> Result<Arc<Drawn>, ApiError> {
        let Some(PoolQuery { config, key }) = query::pool(q)? else {
            return Ok(Arc::clone(&self.real));
        };
        let mut replays = self.replays.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = replays.iter().position(|d| d.key == key) {
            let found = replays.remove(i);
            replays.push(Arc::clone(&found));
            return Ok(found);
        }
        let (model, report) = replay(&self.real.model, &config)
            .map_err(|e| ApiError::bad_request(format!("pool: {e}")))?;
        let spec = query::text(q, "pool").unwrap_or_default().to_owned();
        let made = Arc::new(Drawn::new(key, Arc::new(model), Some(report), Some(spec)));
        if replays.len() >= KEPT_REPLAYS {
            replays.remove(0);
        }
        replays.push(Arc::clone(&made));
        Ok(made)
    }

    /// A cached image answer, or `draw`'s, encoded and kept.
    fn cached_png(
        &self,
        route: &str,
        drawn: &Drawn,
        q: &HashMap<String, String>,
        draw: impl FnOnce() -> Result<memlens_alloc::RgbaImage, ApiError>,
    ) -> Result<ApiBody, ApiError> {
        let key = cache_key(route, drawn, q);
        if let Some(bytes) = self.cache.get(&key) {
            return Ok(ApiBody::png(bytes.as_ref().clone()));
        }
        let bytes = Arc::new(encode_png(&draw()?));
        self.cache.put(key, Arc::clone(&bytes));
        Ok(ApiBody::png(Arc::unwrap_or_clone(bytes)))
    }

    fn meta(drawn: &Drawn) -> MetaWire {
        let model = &drawn.model;
        let run = model.run();
        let bins = model
            .bins()
            .iter()
            .map(|b| {
                let (axis_start, axis_end) = b.axis_range();
                let (block_size, slots) = match b.kind {
                    BinKind::PoolBin { block_size, slots } => (Some(block_size), Some(slots)),
                    _ => (None, None),
                };
                BinWire {
                    id: b.id.0,
                    kind: b.kind.name(),
                    name: b.name.clone(),
                    pid: b.process.map(|p| model.processes()[p.index()].pid),
                    start_hex: format!("{:#x}", b.start),
                    end_hex: format!("{:#x}", b.end),
                    axis_start,
                    axis_end,
                    capacity: b.capacity(),
                    blocks: b.blocks,
                    block_size,
                    slots,
                }
            })
            .collect();
        let processes = model
            .processes()
            .iter()
            .enumerate()
            .map(|(i, p)| ProcessWire {
                pid: p.pid,
                ppid: p.ppid,
                name: p.name.clone(),
                color: hex_color(categorical_color(i as u32)),
            })
            .collect();
        let threads = model
            .threads()
            .iter()
            .enumerate()
            .map(|(i, t)| ThreadWire {
                tid: t.tid,
                name: t.name.clone(),
                pid: model.processes()[t.process.index()].pid,
                color: hex_color(categorical_color(i as u32)),
                blocks: drawn.thread_blocks[i],
            })
            .collect();
        let mut by_count: Vec<usize> = (0..drawn.site_blocks.len())
            .filter(|&i| drawn.site_blocks[i] > 0)
            .collect();
        by_count.sort_by_key(|&i| (std::cmp::Reverse(drawn.site_blocks[i]), i));
        let sites = by_count
            .into_iter()
            .take(LEGEND_SITES)
            .map(|i| SiteWire {
                label: model.site_label(SiteId(i as u32)).to_owned(),
                color: hex_color(categorical_color(i as u32)),
                blocks: drawn.site_blocks[i],
            })
            .collect();
        let color_by = ColorBy::ALL
            .iter()
            .map(|&c| ColorByWire {
                id: c.name(),
                categorical: c.is_categorical(),
                available: c != ColorBy::Latency || model.has_latency(),
            })
            .collect();
        MetaWire {
            pool: drawn.pool_spec.clone(),
            blocks: model.blocks().len() as u64,
            run: RangeWire {
                start_ns: run.start_ns,
                end_ns: run.end_ns.max(run.start_ns + 1),
            },
            time_origin_ns: model.time_origin(),
            window: model.is_window(),
            axis_len: model.axis().len().max(1),
            max_level: query::MAX_LEVEL,
            has_latency: model.has_latency(),
            bins,
            processes,
            threads,
            sites,
            // Sites that only freed blocks (free stacks) colour none.
            site_count: drawn.site_blocks.iter().filter(|&&n| n > 0).count() as u64,
            color_by,
            notes: model.diagnostics().messages(),
            replay: drawn.report.as_ref().map(replay_wire),
            size_classes: if drawn.pool_spec.is_some() {
                Vec::new()
            } else {
                memlens_alloc::glibc_size_classes(model)
                    .into_iter()
                    .map(|c| SizeClassWire {
                        name: c.name.to_owned(),
                        description: c.description.to_owned(),
                        min: c.filter.min,
                        max: (c.filter.max != u64::MAX).then_some(c.filter.max),
                        blocks: c.blocks,
                        reserved_bytes: c.reserved_bytes,
                    })
                    .collect()
            },
            whole_run: whole_run::wire(model),
        }
    }

    fn block(drawn: &Drawn, q: &HashMap<String, String>) -> Result<BlockAnswerWire, ApiError> {
        let model = &drawn.model;
        let t = query::required(q, "t")?;
        let y = query::required(q, "y")?;
        let dt = query::number(q, "dt")?.unwrap_or(0);
        let dy = query::number(q, "dy")?.unwrap_or(0);
        let options = query::render_options(q, model)?;
        let keep = |info: &BlockInfo| {
            options.size.keeps(info.requested)
                && (options.bins.is_empty() || options.bins.contains(&info.bin))
        };
        let found = block_near(model, t, y, dt, dy, keep);
        Ok(BlockAnswerWire {
            block: found.map(|info| block_wire(model, &info)),
        })
    }

    fn metrics(drawn: &Drawn, q: &HashMap<String, String>) -> Result<MetricsWire, ApiError> {
        let model = &drawn.model;
        let bin = query::one_bin(q, model)?;
        let samples = query::number(q, "samples")?.unwrap_or(400) as usize;
        if samples == 0 || samples > query::MAX_SAMPLES {
            return Err(ApiError::bad_request(format!(
                "`samples={samples}` is out of range: ask for 1 to {} samples",
                query::MAX_SAMPLES
            )));
        }
        let window = query::time_window(q, model)?;
        let series = metric_series(model, bin, samples, Some(window))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let p = &series.points;
        let col =
            |f: &dyn Fn(&memlens_alloc::MetricPoint) -> u64| p.iter().map(f).collect::<Vec<u64>>();
        let colf =
            |f: &dyn Fn(&memlens_alloc::MetricPoint) -> f64| p.iter().map(f).collect::<Vec<f64>>();
        Ok(MetricsWire {
            bin: series.bin.map(|b| b.0),
            window: RangeWire {
                start_ns: series.window.start_ns,
                end_ns: series.window.end_ns,
            },
            interval_ns: series.interval_ns,
            t_ns: col(&|m| m.t_ns),
            occupancy: colf(&|m| m.occupancy),
            live_blocks: col(&|m| m.live_blocks),
            reserved_bytes: col(&|m| m.reserved_bytes),
            capacity_bytes: col(&|m| m.capacity_bytes),
            waste_bytes: col(&|m| m.waste_bytes),
            waste_ratio: colf(&|m| m.waste_ratio),
            fragmentation: colf(&|m| m.fragmentation),
            free_bytes: col(&|m| m.free_bytes),
            largest_free_bytes: col(&|m| m.largest_free_bytes),
            free_runs: col(&|m| m.free_runs),
            free_run_histogram: p.iter().map(|m| m.free_run_histogram.clone()).collect(),
            event_rate: colf(&|m| m.event_rate_per_s),
            alloc_latency_ns: model
                .has_latency()
                .then(|| p.iter().map(|m| m.alloc_latency_mean_ns).collect()),
            free_latency_ns: model
                .has_latency()
                .then(|| p.iter().map(|m| m.free_latency_mean_ns).collect()),
        })
    }

    fn bar_options(q: &HashMap<String, String>) -> Result<BarOptions, ApiError> {
        Ok(BarOptions {
            style: query::bar_style(q)?,
            profile: query::cushion(q, "profile")?,
            alpha: query::alpha(q)?,
            ..BarOptions::default()
        })
    }
}

/// The canonical spelling of a request: its route, model and sorted parameters.
fn cache_key(route: &str, drawn: &Drawn, q: &HashMap<String, String>) -> String {
    let mut pairs: Vec<(&String, &String)> = q
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "pool" | "overflow" | "heap"))
        .collect();
    pairs.sort();
    let mut key = format!("{route}|{}", drawn.key);
    for (k, v) in pairs {
        key.push('|');
        key.push_str(k);
        key.push('=');
        key.push_str(v.trim());
    }
    key
}

/// The block at (`t`, `y`), else the one nearest to it among points of the box
/// `t ± dt`, `y ± dy` (a pixel at the view's zoom: a block thinner than a pixel still
/// colours it, so brushing must find it), kept only if `keep` says so.
pub fn block_near(
    model: &AllocModel,
    t: u64,
    y: u64,
    dt: u64,
    dy: u64,
    keep: impl Fn(&BlockInfo) -> bool,
) -> Option<BlockInfo> {
    const STEPS: i64 = 4;
    let mut probes: Vec<(i64, i64)> = Vec::new();
    for i in -STEPS..=STEPS {
        for j in -STEPS..=STEPS {
            probes.push((i, j));
        }
    }
    probes.sort_by_key(|&(i, j)| (i * i + j * j, i, j));
    let offset = |v: u64, d: u64, k: i64| -> u64 {
        let step = (d as f64 * k as f64 / STEPS as f64).round() as i64;
        if step < 0 {
            v.saturating_sub(step.unsigned_abs())
        } else {
            v.saturating_add(step as u64)
        }
    };
    let mut seen = Vec::new();
    for (i, j) in probes {
        if (i != 0 && dt == 0) || (j != 0 && dy == 0) {
            continue;
        }
        let (pt, py) = (offset(t, dt, i), offset(y, dy, j));
        if seen.contains(&(pt, py)) {
            continue;
        }
        seen.push((pt, py));
        if let Some(info) = model.block_at(pt, py)
            && keep(&info)
        {
            return Some(info);
        }
    }
    None
}

/// A site's source position as the details panel shows it: `file:line`, the module
/// without line information, or nothing.
fn site_location(site: &memlens_vocab::Site) -> String {
    match (site.file_name(), site.line) {
        ("", _) => site.module.clone(),
        (file, 0) => file.to_owned(),
        (file, line) => format!("{file}:{line}"),
    }
}

/// A site of the model as the details panel names it: the structured site, its
/// function (or label when not symbolized) and its location.
fn site_names(model: &AllocModel, id: SiteId) -> (memlens_vocab::Site, String, String) {
    let site = model
        .sites()
        .get(id.index())
        .map(|s| s.site.clone())
        .unwrap_or_default();
    let (function, location) = if site.is_symbolized() {
        (site.function.clone(), site_location(&site))
    } else {
        (model.site_label(id).to_owned(), String::new())
    };
    (site, function, location)
}

/// The call path the model keeps for site `id` (empty for none).
fn site_stack(model: &AllocModel, id: SiteId) -> Vec<memlens_vocab::Site> {
    model
        .sites()
        .get(id.index())
        .map(|s| s.stack.clone())
        .unwrap_or_default()
}

fn block_wire(model: &AllocModel, info: &BlockInfo) -> BlockWire {
    let (site, function, location) = site_names(model, info.site);
    let (_, free_function, free_location) = site_names(model, info.free_site);
    let y0 = model.axis_position(info.id);
    let block = model.block(info.id);
    BlockWire {
        id: info.id.0,
        bin: info.bin.0,
        bin_name: model
            .bin(info.bin)
            .map(|b| b.name.clone())
            .unwrap_or_default(),
        t_alloc: info.t_alloc,
        t_free: info.t_free,
        t_end: block.t_free,
        addr_hex: format!("{:#x}", info.addr),
        y0,
        y1: y0 + info.reserved,
        requested: info.requested,
        reserved: info.reserved,
        waste: info.waste,
        lifetime_ns: info.lifetime,
        tid: info.tid,
        thread_name: info.thread_name.clone(),
        pid: info.pid,
        process_name: model.processes()[info.process.index()].name.clone(),
        function,
        location,
        stack: site_stack(model, info.site),
        free_stack: site_stack(model, info.free_site),
        site,
        free_function,
        free_location,
        from_realloc: info.from_realloc,
        mapping: info.mapping,
        alloc_latency_ns: info.latency.and_then(|l| l.alloc_ns),
        free_latency_ns: info.latency.and_then(|l| l.free_ns),
    }
}

fn replay_wire(r: &ReplayReport) -> ReplayWire {
    ReplayWire {
        requests: r.requests,
        heap_served: r.heap_served,
        too_large: r.too_large,
        failed: r.failed,
        heap_high_water_bytes: r.heap_high_water_bytes,
        heap_waste_bytes: r.heap_waste_bytes,
        bins: r
            .bins
            .iter()
            .map(|b| ReplayBinWire {
                block_size: b.block_size,
                slots: b.slots,
                served: b.served,
                overflowed: b.overflowed,
                high_water: b.high_water,
                waste_bytes: b.waste_bytes,
            })
            .collect(),
        overflow_count: r.overflows.len() as u64,
        overflows: r
            .overflows
            .iter()
            .take(LISTED_OVERFLOWS)
            .map(|o| OverflowWire {
                t_ns: o.t_ns,
                size: o.size,
                bin: o.bin,
                failed: o.failed,
            })
            .collect(),
    }
}

fn engine_error(e: memlens_alloc::AllocError) -> ApiError {
    ApiError::bad_request(e.to_string())
}

impl AllocLens {
    /// The allocation map's tab (also the tab of its [`crate::PendingLens`] while a
    /// trace is being read).
    pub const DESCRIPTOR: LensWire = LensWire {
        id: "alloc",
        title: "Allocation map",
        question: "How does the allocator lay blocks out in address space over time?",
    };
}

impl LensApi for AllocLens {
    fn descriptor(&self) -> LensWire {
        Self::DESCRIPTOR
    }

    fn answer(&self, route: &str, q: &HashMap<String, String>) -> Result<ApiBody, ApiError> {
        match route {
            "meta" => Ok(ApiBody::json(to_json(&Self::meta(&*self.drawn(q)?)))),
            "tile" => {
                let drawn = self.drawn(q)?;
                let model = &drawn.model;
                let view = query::view(q, model)?;
                let options = query::render_options(q, model)?;
                // Coarse grid tiles come from the overview. Once its geometry is
                // built, another option set (a new colouring, α or filter) is
                // prepared here, its sums costing less than drawing the tile the
                // plain way; before that, the overview is prepared in the background
                // and tiles are drawn the plain way meanwhile.
                let serves = overview_serves(model, &view);
                let prepare_here = serves && model.overview_geometry_ready();
                if serves && !prepare_here {
                    self.warm(&drawn, &options);
                }
                self.cached_png(route, &drawn, q, || {
                    if prepare_here {
                        model.prepare_overview(&options).map_err(engine_error)?;
                    }
                    render_tile(model, &view, &options).map_err(engine_error)
                })
            }
            "block" => {
                let drawn = self.drawn(q)?;
                Ok(ApiBody::json(to_json(&Self::block(&drawn, q)?)))
            }
            "bar" => {
                let drawn = self.drawn(q)?;
                let model = &drawn.model;
                let bin = query::one_bin(q, model)?;
                let time = query::time_window(q, model)?;
                let (w, h) = (query::side(q, "w", 512)?, query::side(q, "h", 24)?);
                let options = Self::bar_options(q)?;
                self.cached_png(route, &drawn, q, || {
                    render_occupancy_bar(model, bin, time, w, h, &options).map_err(engine_error)
                })
            }
            "bars" => {
                let drawn = self.drawn(q)?;
                let model = &drawn.model;
                let mut bins = query::bins(q, "bins", model)?;
                if bins.is_empty() {
                    bins = model.bins().iter().map(|b| b.id).collect::<Vec<BinId>>();
                }
                let time = query::time_window(q, model)?;
                let w = query::side(q, "w", 512)?;
                let bar_h = query::side(q, "bar_h", 16)?;
                let gap = query::number(q, "gap")?.unwrap_or(2).min(64) as u32;
                let options = Self::bar_options(q)?;
                self.cached_png(route, &drawn, q, || {
                    render_stacked_bars(model, &bins, time, w, bar_h, gap, &options)
                        .map_err(engine_error)
                })
            }
            "metrics" => {
                let drawn = self.drawn(q)?;
                let key = cache_key(route, &drawn, q);
                if let Some(bytes) = self.cache.get(&key) {
                    return Ok(ApiBody::json(String::from_utf8_lossy(&bytes).into_owned()));
                }
                let text = to_json(&Self::metrics(&drawn, q)?);
                self.cache.put(key, Arc::new(text.clone().into_bytes()));
                Ok(ApiBody::json(text))
            }
            "whole_run" => {
                let drawn = self.drawn(q)?;
                self.cached_png(route, &drawn, q, || whole_run::picture(&drawn.model, q))
            }
            other => Err(ApiError {
                status: 404,
                message: format!(
                    "the allocation map has no route `{other}`: use meta, tile, block, bar, bars, metrics or whole_run"
                ),
            }),
        }
    }

    fn report_requests(&self) -> Vec<ReportRequest> {
        report::requests(self)
    }
}

/// Lowers the calling thread's scheduling priority (nice 19) so that the overview
/// prepared in the background, and the helper threads it starts (they inherit it),
/// leave the cores to the requests a user waits for. Best effort: a refusal changes
/// nothing else (and elsewhere than on Linux, where the nice value is per process,
/// nothing is done).
fn background_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: `gettid` has no preconditions; `setpriority` on this thread's id only
    // changes its nice value (on Linux a per-thread attribute).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 19);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_give_their_function_and_location() {
        let mut site = memlens_vocab::Site::at("make_list", "/src/alloc.c", 42);
        assert_eq!(site_location(&site), "alloc.c:42");
        site.line = 0;
        assert_eq!(site_location(&site), "alloc.c");
        let library = memlens_vocab::Site {
            function: "sqlite3VdbeExec".into(),
            module: "libsqlite3.so.0".into(),
            ..memlens_vocab::Site::default()
        };
        assert_eq!(site_location(&library), "libsqlite3.so.0");
        assert_eq!(site_location(&memlens_vocab::Site::default()), "");
    }
}
