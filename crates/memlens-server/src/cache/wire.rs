//! The cache lens's JSON documents (the binary ones are in [`batch`](super::batch)).
//!
//! | route | document |
//! |---|---|
//! | `sources` | `{"default","sources":[{"id","title","kernel","default_n","max_n"}]}` |
//! | `session` | `{"source","title","n","references","every","inclusion","write","levels":[{"name","size","ways","line_size","sets","policy"}],"regions":[{"id","name","start","len"}],"labels":[…],"totals":[Counts],"timeline":{"bucket","levels":[{"name","accesses":[…],"misses":[…]}]}}` |
//! | `occupancy` | `{"at","levels":[{"name","lines"}]}` |
//! | `stats` | `{"at","references","temperature":[…],"levels":[Counts],"regions":[{"id","name","references","levels":[Counts]}]}` |

use serde::Serialize;

/// One source the kernel picker offers.
#[derive(Serialize)]
pub(crate) struct SourceWire {
    pub id: String,
    pub title: String,
    /// Whether it is a built-in kernel (which takes `n`).
    pub kernel: bool,
    pub default_n: Option<u64>,
    pub max_n: Option<u64>,
}

/// `sources`.
#[derive(Serialize)]
pub(crate) struct SourcesWire {
    pub default: String,
    pub sources: Vec<SourceWire>,
}

/// One level of the hierarchy in use.
#[derive(Serialize)]
pub(crate) struct LevelWire {
    pub name: String,
    pub size: u64,
    pub ways: u32,
    pub line_size: u32,
    pub sets: u64,
    pub policy: String,
}

/// A region: the colour of its glyphs.
#[derive(Serialize)]
pub(crate) struct RegionWire {
    pub id: u16,
    pub name: String,
    pub start: u64,
    pub len: u64,
}

/// One level's timeline.
#[derive(Serialize)]
pub(crate) struct TimelineLevelWire {
    pub name: String,
    pub accesses: Vec<u32>,
    pub misses: Vec<u32>,
}

/// The miss-rate timeline.
#[derive(Serialize)]
pub(crate) struct TimelineWire {
    pub bucket: usize,
    pub levels: Vec<TimelineLevelWire>,
}

/// `session`.
#[derive(Serialize)]
pub(crate) struct SessionWire {
    pub source: String,
    pub title: String,
    pub n: Option<u64>,
    pub references: usize,
    pub every: usize,
    pub inclusion: &'static str,
    pub write: &'static str,
    pub levels: Vec<LevelWire>,
    pub regions: Vec<RegionWire>,
    /// Label texts by id (index 0 is "no label", the empty string).
    pub labels: Vec<String>,
    pub timeline: TimelineWire,
    /// Statistics per level over the whole source.
    pub totals: Vec<CountsWire>,
}

/// `occupancy` per level.
#[derive(Serialize)]
pub(crate) struct OccupancyLevelWire {
    pub name: String,
    pub lines: u64,
}

/// `occupancy`.
#[derive(Serialize)]
pub(crate) struct OccupancyWire {
    pub at: usize,
    pub levels: Vec<OccupancyLevelWire>,
}

/// Counters of one level.
#[derive(Serialize)]
pub(crate) struct CountsWire {
    pub name: String,
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    pub miss_rate: f64,
    pub fills: u64,
    pub evictions: u64,
    pub write_backs: u64,
}

/// One region's statistics.
#[derive(Serialize)]
pub(crate) struct RegionStatsWire {
    pub id: u16,
    pub name: String,
    pub references: u64,
    pub levels: Vec<CountsWire>,
}

/// `stats`.
#[derive(Serialize)]
pub(crate) struct StatsWire {
    pub at: usize,
    pub references: u64,
    pub temperature: Vec<f64>,
    pub levels: Vec<CountsWire>,
    pub regions: Vec<RegionStatsWire>,
}
