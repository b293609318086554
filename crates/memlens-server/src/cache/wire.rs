//! The cache lens's JSON documents (the binary ones are in [`batch`](super::batch)).
//!
//! | route | document |
//! |---|---|
//! | `sources` | `{"default","sources":[{"id","title","kernel","default_n","max_n"}]}` |
//! | `session` | `{"source","title","n","references","every","inclusion","write","levels":[{"name","size","ways","line_size","sets","policy"}],"temperature":{"window","weights":[{"hit","miss"}]},"regions":[{"id","name","start","len"}],"labels":[…],"totals":[Counts],"timeline":{"bucket","levels":[{"name","accesses":[…],"misses":[…]}]}}` |
//! | `occupancy` | `{"at","levels":[{"name","lines"}]}` |
//! | `stats` | `{"at","references","temperature":[…],"levels":[Counts],"regions":[{"id","name","references","levels":[Counts]}]}` |

use serde::Serialize;
use ts_rs::TS;

/// One source the kernel picker offers.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct SourceWire {
    /// The id the page asks for (`source=`).
    pub id: String,
    /// The picker's text.
    pub title: String,
    /// Whether it is a built-in kernel (which takes `n`).
    pub kernel: bool,
    /// A kernel's problem size when the page names none.
    pub default_n: Option<u64>,
    /// The largest problem size a kernel accepts.
    pub max_n: Option<u64>,
}

/// `sources`.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct SourcesWire {
    /// The id of the source the page starts with.
    pub default: String,
    /// The sources, in the picker's order.
    pub sources: Vec<SourceWire>,
}

/// One level of the hierarchy in use.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct LevelWire {
    /// Its name (`L1`, `L2`, `LL`, …).
    pub name: String,
    /// Capacity in bytes: `sets × ways × line_size`.
    pub size: u64,
    /// The associativity (lines per set).
    pub ways: u32,
    /// Line size in bytes.
    pub line_size: u32,
    /// The number of sets.
    pub sets: u64,
    /// The replacement policy as the CLI spells it (`lru`, `fifo`, `plru`, `random=SEED`).
    pub policy: String,
}

/// A region: the colour of its glyphs.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct RegionWire {
    /// Its id, as the batches' region columns carry it.
    pub id: u16,
    /// Its name.
    pub name: String,
    /// Its first address.
    pub start: u64,
    /// Its length in bytes.
    pub len: u64,
}

/// One level's timeline.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct TimelineLevelWire {
    /// The level's name.
    pub name: String,
    /// Per bucket: references that probed the level.
    pub accesses: Vec<u32>,
    /// Per bucket: references that missed in the level.
    pub misses: Vec<u32>,
}

/// The miss-rate timeline.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct TimelineWire {
    /// References per bucket (the last may hold fewer).
    pub bucket: usize,
    /// One series per level, first level first.
    pub levels: Vec<TimelineLevelWire>,
}

/// `session`.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct SessionWire {
    /// The source's id.
    pub source: String,
    /// The source's title (with its problem size for a kernel).
    pub title: String,
    /// A kernel's problem size.
    pub n: Option<u64>,
    /// The number of references.
    pub references: usize,
    /// References between two checkpoints of the simulation.
    pub every: usize,
    /// `inclusive`, `non-inclusive` or `exclusive`.
    pub inclusion: &'static str,
    /// The first level's write policy: `back` or `through`.
    pub write: &'static str,
    /// The hierarchy, first level first.
    pub levels: Vec<LevelWire>,
    /// The named regions.
    pub regions: Vec<RegionWire>,
    /// Label texts by id (index 0 is "no label", the empty string).
    pub labels: Vec<String>,
    /// The miss-rate timeline.
    pub timeline: TimelineWire,
    /// How the cache temperature is computed (`twindow`, `tweights`).
    pub temperature: TemperatureWire,
    /// Statistics per level over the whole source.
    pub totals: Vec<CountsWire>,
}

/// The cache temperature's settings: a level's temperature is (hits × hit − misses ×
/// miss) / window over the last `window` references.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct TemperatureWire {
    /// References averaged over.
    pub window: usize,
    /// Per level, first level first.
    pub weights: Vec<TemperatureWeightsWire>,
}

/// One level's temperature scores.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct TemperatureWeightsWire {
    /// The score of a hit.
    pub hit: f64,
    /// The penalty of a miss (subtracted).
    pub miss: f64,
}

/// `occupancy` per level.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct OccupancyLevelWire {
    /// The level's name.
    pub name: String,
    /// Lines held.
    pub lines: u64,
}

/// `occupancy`.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct OccupancyWire {
    /// The reference index the occupancy is taken before.
    pub at: usize,
    /// Per level, first level first.
    pub levels: Vec<OccupancyLevelWire>,
}

/// Counters of one level.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct CountsWire {
    /// The level's name.
    pub name: String,
    /// Demand accesses (reads and writes).
    pub accesses: u64,
    /// Demand accesses that found their line.
    pub hits: u64,
    /// Demand accesses that did not.
    pub misses: u64,
    /// `misses / accesses` (0 without accesses).
    pub miss_rate: f64,
    /// Lines placed in the level.
    pub fills: u64,
    /// Valid lines it gave up to make room (replacement victims).
    pub evictions: u64,
    /// Evicted dirty lines written to the next level or memory.
    pub write_backs: u64,
}

/// One region's statistics.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct RegionStatsWire {
    /// The region's id.
    pub id: u16,
    /// The region's name.
    pub name: String,
    /// References into the region.
    pub references: u64,
    /// Its counters per level.
    pub levels: Vec<CountsWire>,
}

/// `stats`.
#[derive(Serialize, TS)]
#[ts(export_to = "cache.ts")]
pub(crate) struct StatsWire {
    /// The reference index the statistics are taken before.
    pub at: usize,
    /// References simulated so far.
    pub references: u64,
    /// The cache temperature per level, −1…1.
    pub temperature: Vec<f64>,
    /// Counters per level.
    pub levels: Vec<CountsWire>,
    /// Counters per region.
    pub regions: Vec<RegionStatsWire>,
}
