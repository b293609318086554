//! The allocation-map engine (paper 001, Moreta & Telea, "Visualizing Dynamic Memory
//! Allocations"): every heap block as a rectangle `[t_alloc, t_free) × [addr, addr+size)`,
//! grouped into bins, measured over time and drawn with the paper's importance-biased
//! antialiasing (formula (1)) and shaded cushions.
//!
//! Pure: no file or network IO, and serde only behind the `serde` feature (the wire
//! forms of `protocol`). The CLI (`memlens render alloc`, `memlens alloc …`) and the
//! viewer's server feed it events and encode its images.
//!
//! # The public API
//!
//! **Model.** An [`AllocModelBuilder`] takes processes, threads, sites and the events
//! of one or more traces (allocations, frees, reallocations; each per process in time
//! order, optionally with the allocator call's latency) and [`finish`]es into an
//! [`AllocModel`]: the [`Block`]s, the [`Bin`]s of the real run (main heap, each thread
//! arena, each mmap'd chunk, the program's own mappings, per process; see [`regions`]),
//! an [`AddressAxis`] that stacks the bins' extents into one compact vertical axis, and
//! a time × address index.
//!
//! **Queries.** [`AllocModel::block_at`] answers "which block is under the mouse"
//! ([`BlockInfo`]); [`AllocModel::bins`] lists bins with their axis ranges;
//! [`SizeFilter`] restricts a view to size classes.
//!
//! **Storage.** [`AllocModel::encode`] and [`AllocModel::decode`] keep a finished model
//! as compact bytes (a trace's on-disk index holds them) and read it back, validated;
//! [`AllocModelBuilder::checkpoint`] and [`AllocModelBuilder::resume_at`] do the same
//! for a builder's state before its window starts, so that the reading of a later
//! window goes on from there.
//!
//! **Replay.** [`replay`] runs the model's requests through the paper's pool allocator
//! ([`PoolConfig`]: B bins of fixed block sizes × N blocks, best-fit class, overflow to
//! an unstructured heap allocating from high addresses, first-fit or best-fit) and
//! returns a new [`AllocModel`] with simulated addresses plus a [`ReplayReport`]
//! (overflows, per-bin high-water marks, waste).
//!
//! **Metrics.** [`metric_series`] samples a bin (or the whole model) over time:
//! occupancy, waste, fragmentation (1 − largest free run / total free, with a free-run
//! histogram), event rate and, for traces recorded with `--latency`, allocator latency.
//!
//! **Images.** [`render`] draws any viewport ([`View`]: time range, axis range, width,
//! height) with [`RenderOptions`] (α, cushion profile, colour-by, filters) into an
//! [`RgbaImage`]; the same call serves whole pictures and 256×256 tiles at any zoom.
//! [`coverage`] exposes the per-pixel sums behind it. For the viewer's coarse grid tiles
//! ([`grid_bounds`], levels up to [`OVERVIEW_LEVELS`]), [`AllocModel::prepare_overview`]
//! adds up the tiny blocks' sums per cell once per option set, and [`render_tile`] then
//! draws such a tile from them plus the few blocks that are not tiny (equal to `render`
//! up to rounding), in milliseconds instead of a pass over every block. [`render_occupancy_bar`] draws the
//! paper's Figure 5 bar (cushioned no-activity zones, antialiased activity) and
//! [`render_stacked_bars`] its Figure 6 (all bins' bars stacked).
//!
//! **Whole run.** A run too large for the map's memory is drawn as a window of it;
//! [`AllocModelBuilder::track_whole_run`] also adds up, while the events stream past,
//! the whole run's occupancy on a coarse grid of time × address rows
//! ([`WholeRunMap`], [`whole_run`]), which the model then carries
//! ([`AllocModel::whole_run`]) for the viewer's whole-run strip.
//!
//! [`finish`]: AllocModelBuilder::finish

#![deny(missing_docs)]

pub mod axis;
pub mod bars;
mod before_window;
pub mod bin;
pub mod block;
pub mod builder;
mod checkpoint;
pub mod colormap;
mod derived;
pub mod error;
mod halves;
pub mod ids;
pub mod image;
pub mod index;
pub mod mapped;
pub mod metrics;
pub mod model;
mod model_codec;
pub mod pool;
#[cfg(feature = "toml")]
pub mod pool_toml;
pub mod process;
#[cfg(feature = "serde")]
pub mod protocol;
pub mod raster;
pub mod regions;
pub mod size_class;
pub mod text;
pub mod time_range;
pub mod whole_run;
mod whole_run_feed;

pub use axis::{AddressAxis, AxisSegment};
pub use bars::{BarOptions, BarStyle, render_occupancy_bar, render_stacked_bars};
pub use bin::{Bin, BinKind};
pub use block::{
    Block, BlockInfo, Latency, PAGE_SIZE, glibc_chunk_size, glibc_usable_size, mapped_size,
};
pub use builder::{AllocEvent, AllocModelBuilder, FreeEvent, MapEvent, ReallocEvent, UnmapEvent};
pub use colormap::{Rgb, categorical_color, continuous_color};
pub use error::AllocError;
pub use ids::{BinId, BlockId, ProcessId, SiteId, ThreadId};
pub use image::RgbaImage;
pub use mapped::MappedBytes;
pub use metrics::{MetricPoint, MetricSeries, metric_series};
pub use model::{AllocModel, Diagnostics, SiteInfo};
pub use model_codec::ALLOC_CODEC_VERSION;
pub use pool::{
    BinReport, Overflow, OverflowPolicy, PoolBin, PoolConfig, ReplayReport, parse_bytes, replay,
};
pub use process::{ProcessInfo, ThreadInfo};
pub use raster::{
    ColorBy, Coverage, CushionProfile, MIN_BLOCKS, NO_LATENCY, OVERVIEW_LEVELS, PixelSums,
    Rasterizer, RenderOptions, TILE_SIDE, View, coverage, grid_bounds, overview_serves, render,
    render_from_overview, render_tile, resolve,
};
pub use size_class::{SizeClass, SizeFilter, glibc_size_classes};
pub use text::{render_bins, render_metrics, render_replay};
pub use time_range::TimeRange;
pub use whole_run::{WholeRunBuilder, WholeRunMap};
