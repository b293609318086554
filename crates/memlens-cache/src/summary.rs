//! What a finished (or paused) [`Simulation`](crate::Simulation) reports: per level
//! its shape, counters, windowed miss rate and cache temperature; what memory served;
//! and per region the same counters. Plain values with nothing derived twice (miss
//! rates come from [`LevelCounters::miss_rate`]), ready for a front end to print or
//! serialize as it likes.

use crate::config::{Inclusion, Replacement, WritePolicy};
use crate::reference::RegionId;
use crate::stats::LevelCounters;

/// The results of a simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulationSummary {
    /// The references simulated.
    pub references: u64,
    /// How the levels' contents relate.
    pub inclusion: Inclusion,
    /// One entry per level, first level first.
    pub levels: Vec<LevelSummary>,
    /// The references that memory served: those that missed at the last level.
    pub memory_references: u64,
    /// The regions that saw at least one reference, in id order.
    pub regions: Vec<RegionSummary>,
    /// The statement labels the source declared.
    pub labels: usize,
}

/// One level: its shape and what it did.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelSummary {
    /// The level's name (`L1`, `LL`, …).
    pub name: String,
    /// The capacity in bytes.
    pub size: u64,
    /// The associativity.
    pub ways: u32,
    /// The line size in bytes.
    pub line_size: u32,
    /// The number of sets.
    pub sets: u64,
    /// The replacement policy.
    pub replacement: Replacement,
    /// What a store that hits does.
    pub write_policy: WritePolicy,
    /// Whether a store that misses fills the line.
    pub write_allocate: bool,
    /// The level's counters and windowed miss rate over the whole trace.
    pub activity: LevelActivity,
    /// Whole references that needed a deeper level (a straddling reference counts
    /// once, as in Cachegrind).
    pub reference_misses: u64,
    /// The cache temperature over the last window of references.
    pub temperature: f64,
}

/// What one level did, for the whole trace or for one region.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelActivity {
    /// The cumulative counters.
    pub counters: LevelCounters,
    /// The miss rate over the last window of references (of the region, for a
    /// region's row); `None` when the level was idle for the whole window.
    pub windowed_miss_rate: Option<f64>,
}

impl LevelActivity {
    /// Returns misses / accesses over the whole trace, or 0 when the level saw none.
    pub fn miss_rate(&self) -> f64 {
        self.counters.miss_rate()
    }
}

/// One region's share of the traffic.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionSummary {
    /// The region's id.
    pub id: RegionId,
    /// Its name: the one the source gave, `(other)` for [`RegionId::NONE`], else
    /// `region N`.
    pub name: String,
    /// The references attributed to it.
    pub references: u64,
    /// One entry per level, first level first. Evictions, write-backs and
    /// invalidations count against the region whose reference filled the line.
    pub levels: Vec<LevelActivity>,
}
