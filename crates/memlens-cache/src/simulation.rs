//! One simulation run, whole: a [`Hierarchy`] with the windowed miss rates and the
//! cache temperature kept beside it, plus what the reference source declared (region
//! names, statement labels), summed up on demand into a [`SimulationSummary`].
//!
//! This is the loop behind `memlens cache simulate`. The caller owns the source and
//! feeds references as they come: in batches ([`Simulation::access_all`]), one at a
//! time through a [`Feed`] that batches them, or singly ([`Simulation::access`]);
//! the simulation never sees a file. A batch takes the hierarchy's statistics-only
//! loop (`batch`), which hands the outcomes, as codes, to the rings of the last
//! outcomes overall and per region that the windowed miss rates and the temperature
//! are folded from when a summary is asked for (see `recent`).

use crate::config::HierarchyConfig;
use crate::events::NoEvents;
use crate::geometry::ConfigError;
use crate::hierarchy::Hierarchy;
use crate::outcome::CodeSink;
use crate::recent::RecentOutcomes;
use crate::reference::{Reference, ReferenceBounds, RegionId};
use crate::region::UNNAMED_REGION;
use crate::summary::{LevelActivity, LevelSummary, RegionSummary, SimulationSummary};

/// References a [`Feed`] gathers before simulating them.
const BATCH: usize = 16 * 1024;

/// A cache hierarchy being fed a trace, with everything its summary needs.
#[derive(Clone, Debug)]
pub struct Simulation {
    cache: Hierarchy,
    /// The last outcomes, overall and per region.
    recent: RecentOutcomes,
    /// References a [`Feed`] gathered and has not simulated yet.
    gathered: Vec<Reference>,
    /// Region names by id; an empty name means the source named none.
    region_names: Vec<String>,
    /// Statement labels the source declared.
    labels: usize,
}

/// Gathers references one at a time and simulates them in batches; whatever is
/// gathered when it is dropped is simulated then.
pub struct Feed<'a> {
    simulation: &'a mut Simulation,
}

impl Feed<'_> {
    /// Adds a reference (simulated with the next full batch, or on drop).
    #[inline]
    pub fn push(&mut self, reference: Reference) {
        let gathered = &mut self.simulation.gathered;
        gathered.push(reference);
        if gathered.len() == BATCH {
            self.simulation.flush();
        }
    }

    /// Names a region for the summary (see [`Simulation::name_region`]).
    pub fn name_region(&mut self, id: RegionId, name: impl Into<String>) {
        self.simulation.name_region(id, name);
    }

    /// Counts one statement label declared by the source.
    pub fn count_label(&mut self) {
        self.simulation.count_label();
    }
}

impl Drop for Feed<'_> {
    fn drop(&mut self) {
        self.simulation.flush();
    }
}

impl Simulation {
    /// Builds an empty hierarchy whose windowed miss rates and temperature cover the
    /// last `window` references (at least one), or says which level cannot be built.
    pub fn new(config: &HierarchyConfig, window: usize) -> Result<Simulation, ConfigError> {
        let cache = Hierarchy::new(config)?;
        let levels = cache.level_count();
        Ok(Simulation {
            cache,
            recent: RecentOutcomes::new(levels, window),
            gathered: Vec::new(),
            region_names: Vec::new(),
            labels: 0,
        })
    }

    /// Simulates one reference.
    pub fn access(&mut self, reference: &Reference) {
        let outcome = self.cache.access(reference, &mut NoEvents);
        self.recent.record(reference.region, outcome.code());
    }

    /// Simulates references in order: the same as [`Simulation::access`] on each,
    /// in one tight loop.
    pub fn access_all(&mut self, references: &[Reference]) {
        self.access_all_within(references, ReferenceBounds::UNKNOWN);
    }

    /// [`Simulation::access_all`] of references known to keep `bounds` (as the
    /// trace decoder finds them): the loop then leaves out its own check of each
    /// reference's region and of whether it spans lines. Bounds that do not hold
    /// give wrong results, never unsafety.
    pub fn access_all_within(&mut self, references: &[Reference], bounds: ReferenceBounds) {
        self.cache.run_into(references, bounds, &mut self.recent);
    }

    /// Returns a [`Feed`] that takes references one at a time and simulates them in
    /// batches.
    pub fn feed(&mut self) -> Feed<'_> {
        Feed { simulation: self }
    }

    fn flush(&mut self) {
        let gathered = std::mem::take(&mut self.gathered);
        self.access_all(&gathered);
        self.gathered = gathered;
        self.gathered.clear();
    }

    /// Names a region for the summary (a later name for the same id replaces it).
    pub fn name_region(&mut self, id: RegionId, name: impl Into<String>) {
        let i = id.index();
        if self.region_names.len() <= i {
            self.region_names.resize(i + 1, String::new());
        }
        self.region_names[i] = name.into();
    }

    /// Counts one statement label declared by the source.
    pub fn count_label(&mut self) {
        self.labels += 1;
    }

    /// Sums up the references simulated so far. This takes one pass over every
    /// level's lines (see [`Hierarchy::statistics`]); the simulation can go on after.
    pub fn summary(&self) -> SimulationSummary {
        let stats = self.cache.statistics();
        let config = self.cache.config();
        let (temperature, rates) = (self.recent.temperature(), &self.recent);
        let levels = (config.levels.iter().enumerate())
            .map(|(i, level)| LevelSummary {
                name: level.name.clone(),
                size: level.size,
                ways: level.ways,
                line_size: level.line_size,
                sets: self.cache.geometry(i).sets,
                replacement: level.replacement,
                write_policy: level.write_policy,
                write_allocate: level.write_allocate,
                activity: LevelActivity {
                    counters: stats.level(i),
                    windowed_miss_rate: rates.level(i),
                },
                reference_misses: stats.reference_misses(i),
                temperature: temperature.value(i),
            })
            .collect();
        let regions = (stats.active_regions().into_iter())
            .map(|region| RegionSummary {
                id: region,
                name: self.region_name(region),
                references: stats.region_references(region),
                levels: (0..config.levels.len())
                    .map(|i| LevelActivity {
                        counters: stats.region_level(region, i),
                        windowed_miss_rate: rates.region(region, i),
                    })
                    .collect(),
            })
            .collect();
        SimulationSummary {
            references: stats.references(),
            inclusion: config.inclusion,
            levels,
            memory_references: stats.served_by(config.levels.len()),
            regions,
            labels: self.labels,
        }
    }

    fn region_name(&self, id: RegionId) -> String {
        match self.region_names.get(id.index()) {
            Some(name) if !name.is_empty() => name.clone(),
            _ if id == RegionId::NONE => UNNAMED_REGION.to_owned(),
            _ => format!("region {}", id.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LevelConfig;
    use crate::kernels::{Kernel, KernelParams};
    use crate::stats::LevelCounters;

    /// L1: 256 bytes, 2 ways of 64-byte lines (2 sets); L2: 1 KiB, 4 ways (4 sets).
    fn two_levels() -> HierarchyConfig {
        HierarchyConfig::new(vec![
            LevelConfig::new("L1", 256, 2, 64),
            LevelConfig::new("L2", 1024, 4, 64),
        ])
    }

    const A: RegionId = RegionId(1);
    const B: RegionId = RegionId(3);

    /// Five references, every one in L1 set 0 (lines 0, 2 and 4):
    ///
    /// 1. read line 0 (A): misses L1 and L2, memory serves it.
    /// 2. read line 0 (A): hits L1.
    /// 3. write line 2 (B): misses L1, whose write-allocate fetch misses L2.
    /// 4. read line 4 (no region): misses both; L1 evicts line 0 (clean, LRU).
    /// 5. read line 0 (A): misses L1, hits L2; L1 evicts line 2, dirty, so it is
    ///    written back to L2, where it hits.
    fn tiny_trace() -> Vec<Reference> {
        vec![
            Reference::read(0x000, 8).with(A, Default::default()),
            Reference::read(0x008, 8).with(A, Default::default()),
            Reference::write(0x080, 8).with(B, Default::default()),
            Reference::read(0x100, 8),
            Reference::read(0x000, 8).with(A, Default::default()),
        ]
    }

    fn counters(read: (u64, u64), write: (u64, u64), fills: u64) -> LevelCounters {
        LevelCounters {
            read_hits: read.0,
            read_misses: read.1,
            write_hits: write.0,
            write_misses: write.1,
            fills,
            ..LevelCounters::default()
        }
    }

    #[test]
    fn a_tiny_trace_gives_the_counts_worked_out_by_hand() {
        let mut simulation = Simulation::new(&two_levels(), 4).unwrap();
        simulation.access_all(&tiny_trace());
        let summary = simulation.summary();
        assert_eq!(summary.references, 5);
        assert_eq!(summary.memory_references, 3, "references 1, 3 and 4");

        let [l1, l2] = &summary.levels[..] else {
            panic!("two levels: {summary:?}")
        };
        assert_eq!(
            (l1.name.as_str(), l1.size, l1.ways, l1.line_size, l1.sets),
            ("L1", 256, 2, 64, 2)
        );
        assert_eq!(l2.sets, 4);
        assert_eq!(
            l1.activity.counters,
            LevelCounters {
                evictions: 2,
                write_backs: 1,
                ..counters((1, 3), (0, 1), 4)
            }
        );
        assert_eq!(
            l2.activity.counters,
            LevelCounters {
                writeback_hits: 1,
                ..counters((1, 3), (0, 0), 3)
            }
        );
        assert_eq!(l1.activity.miss_rate(), 0.8);
        assert_eq!((l1.reference_misses, l2.reference_misses), (4, 3));

        // The window holds references 2 to 5. L1: hit, miss, miss, miss. L2: idle,
        // miss, miss, hit. Temperature: hits score 1, misses cost 2 in L1 and 1 below.
        assert_eq!(l1.activity.windowed_miss_rate, Some(0.75));
        assert_eq!(l2.activity.windowed_miss_rate, Some(2.0 / 3.0));
        assert_eq!(l1.temperature, (1.0 - 3.0 * 2.0) / 4.0);
        assert_eq!(l2.temperature, (1.0 - 2.0) / 4.0);
    }

    #[test]
    fn regions_get_their_own_references_counters_windows_and_names() {
        let mut simulation = Simulation::new(&two_levels(), 4).unwrap();
        simulation.name_region(A, "A");
        simulation.name_region(RegionId(2), "never referenced");
        simulation.count_label();
        simulation.count_label();
        for reference in tiny_trace() {
            simulation.access(&reference);
        }
        let summary = simulation.summary();
        assert_eq!(summary.labels, 2);
        let rows: Vec<(RegionId, &str, u64)> = (summary.regions.iter())
            .map(|r| (r.id, r.name.as_str(), r.references))
            .collect();
        assert_eq!(
            rows,
            [
                (RegionId::NONE, "(other)", 1),
                (A, "A", 3),
                (B, "region 3", 1)
            ]
        );
        let a = &summary.regions[1];
        // Line 0, filled by A, was evicted from L1 by reference 4.
        assert_eq!(
            a.levels[0].counters,
            LevelCounters {
                evictions: 1,
                ..counters((1, 2), (0, 0), 2)
            }
        );
        assert_eq!(a.levels[1].counters.hits(), 1);
        assert_eq!(a.levels[1].counters.misses(), 1);
        // A's own last references: L1 miss, hit, miss; L2 miss, idle, hit.
        assert_eq!(a.levels[0].windowed_miss_rate, Some(2.0 / 3.0));
        assert_eq!(a.levels[1].windowed_miss_rate, Some(0.5));
        // Line 2, filled by B's store, left L1 dirty.
        let b = &summary.regions[2];
        assert_eq!(
            (
                b.levels[0].counters.evictions,
                b.levels[0].counters.write_backs
            ),
            (1, 1)
        );
        assert_eq!(b.levels[0].windowed_miss_rate, Some(1.0));
        // The regions' rows add up to the levels' totals.
        for (level, total) in summary.levels.iter().enumerate() {
            let mut sum = LevelCounters::default();
            for region in &summary.regions {
                sum.add(&region.levels[level].counters);
            }
            assert_eq!(sum, total.activity.counters);
        }
    }

    #[test]
    fn the_window_covers_only_the_last_references() {
        let trace = tiny_trace();
        let mut last_only = Simulation::new(&two_levels(), 1).unwrap();
        last_only.access_all(&trace);
        let summary = last_only.summary();
        // Reference 5 missed L1 and hit L2.
        assert_eq!(summary.levels[0].activity.windowed_miss_rate, Some(1.0));
        assert_eq!(summary.levels[1].activity.windowed_miss_rate, Some(0.0));
        assert_eq!(summary.levels[0].temperature, -2.0);
        assert_eq!(summary.levels[1].temperature, 1.0);
        // A window of 0 means 1.
        let mut zero = Simulation::new(&two_levels(), 0).unwrap();
        zero.access_all(&trace);
        assert_eq!(zero.summary(), summary);
        // A window longer than the trace covers all of it: L2 missed 3 of 4 accesses.
        let mut whole = Simulation::new(&two_levels(), 100).unwrap();
        whole.access_all(&trace);
        let summary = whole.summary();
        assert_eq!(summary.levels[0].activity.windowed_miss_rate, Some(0.8));
        assert_eq!(summary.levels[1].activity.windowed_miss_rate, Some(0.75));
        // An idle window has no rate.
        let empty = Simulation::new(&two_levels(), 4).unwrap().summary();
        assert_eq!(empty.levels[0].activity.windowed_miss_rate, None);
        assert_eq!(empty.levels[0].temperature, 0.0);
        assert!(empty.regions.is_empty());
    }

    #[test]
    fn batches_and_single_references_give_the_same_summary() {
        let params = KernelParams {
            n: 12,
            ..KernelParams::default()
        };
        let kernel = Kernel::new("matmul", None, params).unwrap();
        let mut references = Vec::new();
        kernel.generate(|r| references.push(r));
        let mut one_by_one = Simulation::new(&two_levels(), 16).unwrap();
        references.iter().for_each(|r| one_by_one.access(r));
        let mut batched = Simulation::new(&two_levels(), 16).unwrap();
        for batch in references.chunks(100) {
            batched.access_all(batch);
        }
        assert_eq!(batched.summary(), one_by_one.summary());
        assert_eq!(batched.summary().references, references.len() as u64);
    }

    #[test]
    fn an_unrealisable_level_is_an_error() {
        let config = HierarchyConfig::new(vec![LevelConfig::new("L1", 256, 2, 48)]);
        let error = Simulation::new(&config, 4).unwrap_err();
        assert!(error.to_string().contains("L1"), "{error}");
    }
}
