//! The wire form of a simulation: the document `memlens cache simulate --json`
//! prints. The engine's results ([`SimulationSummary`]) stay plain; this module alone
//! knows serde, and only with the crate's `serde` feature.
//!
//! # The document
//!
//! [`SimulationWire::new`] fills it from a summary; serialize it with any serde
//! format. Fields appear in this order (the interface contract is the subset
//! `{"levels":[{"name","accesses","hits","misses","evictions"}],"references"}`):
//!
//! ```json
//! { "trace": "k.mlens", "format": "mlens", "references": 67584,
//!   "inclusion": "non-inclusive",
//!   "levels": [ { "name": "L1", "accesses": …, "hits": …, "misses": …,
//!                 "miss_rate": …, "evictions": …, "write_backs": …,
//!                 "read_hits": …, "read_misses": …, "write_hits": …,
//!                 "write_misses": …, "writeback_hits": …, "writeback_misses": …,
//!                 "fills": …, "invalidations": …, "windowed_miss_rate": … | null,
//!                 "size": 32768, "ways": 8, "line_size": 64, "sets": 64,
//!                 "policy": "lru", "write_policy": "write-back",
//!                 "write_allocate": true, "reference_misses": …,
//!                 "temperature": … } ],
//!   "memory": { "references": 384 },
//!   "regions": [ { "id": 1, "name": "A", "references": …,
//!                  "levels": [ { "name": "L1", "accesses": …, … } ] } ],
//!   "labels": 0,
//!   "import": { "lines": …, "ignored": …, "malformed": … } }
//! ```
//!
//! A region's levels carry the same counters as the top-level `levels` (from `name`
//! to `windowed_miss_rate`) without the level's shape. `import` is present only when
//! a text importer (Lackey, Dinero) read the trace.

use serde::Serialize;

use crate::config::WritePolicy;
use crate::import::ImportCounts;
use crate::summary::{LevelActivity, LevelSummary, RegionSummary, SimulationSummary};

/// The `memlens cache simulate --json` document: a simulation's summary, named after
/// the trace it read.
#[derive(Serialize)]
pub struct SimulationWire<'a> {
    /// The trace as the user named it.
    trace: &'a str,
    /// The trace format: `mlens`, `lackey` or `din`.
    format: &'a str,
    /// The references simulated.
    references: u64,
    /// How the levels' contents relate: [`Inclusion::name`](crate::Inclusion::name).
    inclusion: &'static str,
    /// One entry per level, first level first.
    levels: Vec<LevelWire<'a>>,
    /// What memory served.
    memory: MemoryWire,
    /// The regions that saw at least one reference, in id order.
    regions: Vec<RegionWire<'a>>,
    /// The statement labels the source declared.
    labels: usize,
    /// The text importer's line counts; absent for memlens traces.
    #[serde(skip_serializing_if = "Option::is_none")]
    import: Option<ImportWire>,
}

/// One level over the whole trace: its counters, then its shape.
#[derive(Serialize)]
pub struct LevelWire<'a> {
    /// The counters, written inline (`name` first).
    #[serde(flatten)]
    counts: CountsWire<'a>,
    /// The capacity in bytes.
    size: u64,
    /// The associativity.
    ways: u32,
    /// The line size in bytes.
    line_size: u32,
    /// The number of sets.
    sets: u64,
    /// The replacement policy: [`Replacement::name`](crate::Replacement::name).
    policy: &'static str,
    /// `write-back` or `write-through`.
    write_policy: &'static str,
    /// Whether a store that misses fills the line.
    write_allocate: bool,
    /// Whole references that needed a deeper level (a straddle counts once).
    reference_misses: u64,
    /// The cache temperature over the last window of references.
    temperature: f64,
}

/// The counters of one level, for the whole trace or for one region.
#[derive(Serialize)]
pub struct CountsWire<'a> {
    /// The level's name.
    name: &'a str,
    /// Line accesses: hits + misses.
    accesses: u64,
    /// Line accesses that hit.
    hits: u64,
    /// Line accesses that missed.
    misses: u64,
    /// misses / accesses (0 when the level saw none).
    miss_rate: f64,
    /// Valid lines the level gave up.
    evictions: u64,
    /// Dirty lines written to the next level.
    write_backs: u64,
    /// Loads that hit.
    read_hits: u64,
    /// Loads that missed.
    read_misses: u64,
    /// Stores that hit.
    write_hits: u64,
    /// Stores that missed.
    write_misses: u64,
    /// Write-backs from the level above that hit.
    writeback_hits: u64,
    /// Write-backs from the level above that missed.
    writeback_misses: u64,
    /// Lines filled.
    fills: u64,
    /// Lines invalidated by an inclusive level below.
    invalidations: u64,
    /// The miss rate over the last window of references; null when the level was idle
    /// for the whole window.
    windowed_miss_rate: Option<f64>,
}

/// What memory served.
#[derive(Serialize)]
pub struct MemoryWire {
    /// The references that missed at the last level.
    references: u64,
}

/// One region's share of the traffic.
#[derive(Serialize)]
pub struct RegionWire<'a> {
    /// The region's id.
    id: u16,
    /// Its name.
    name: &'a str,
    /// The references attributed to it.
    references: u64,
    /// Its counters per level, first level first.
    levels: Vec<CountsWire<'a>>,
}

/// What a text importer read.
#[derive(Serialize)]
pub struct ImportWire {
    /// Lines read.
    lines: u64,
    /// Well-formed lines that produced no reference.
    ignored: u64,
    /// Malformed lines.
    malformed: u64,
}

impl<'a> SimulationWire<'a> {
    /// The document of `summary`, a simulation of `trace` read as `format`, with the
    /// line counts of the text importer that read it, if one did.
    pub fn new(
        trace: &'a str,
        format: &'a str,
        summary: &'a SimulationSummary,
        import: Option<&ImportCounts>,
    ) -> SimulationWire<'a> {
        SimulationWire {
            trace,
            format,
            references: summary.references,
            inclusion: summary.inclusion.name(),
            levels: summary.levels.iter().map(LevelWire::new).collect(),
            memory: MemoryWire {
                references: summary.memory_references,
            },
            regions: (summary.regions.iter())
                .map(|region| RegionWire::new(region, &summary.levels))
                .collect(),
            labels: summary.labels,
            import: import.map(|counts| ImportWire {
                lines: counts.lines,
                ignored: counts.ignored,
                malformed: counts.malformed,
            }),
        }
    }
}

impl<'a> LevelWire<'a> {
    fn new(level: &'a LevelSummary) -> LevelWire<'a> {
        LevelWire {
            counts: CountsWire::new(&level.name, &level.activity),
            size: level.size,
            ways: level.ways,
            line_size: level.line_size,
            sets: level.sets,
            policy: level.replacement.name(),
            write_policy: match level.write_policy {
                WritePolicy::WriteBack => "write-back",
                WritePolicy::WriteThrough => "write-through",
            },
            write_allocate: level.write_allocate,
            reference_misses: level.reference_misses,
            temperature: level.temperature,
        }
    }
}

impl<'a> CountsWire<'a> {
    fn new(name: &'a str, activity: &LevelActivity) -> CountsWire<'a> {
        let c = &activity.counters;
        CountsWire {
            name,
            accesses: c.accesses(),
            hits: c.hits(),
            misses: c.misses(),
            miss_rate: c.miss_rate(),
            evictions: c.evictions,
            write_backs: c.write_backs,
            read_hits: c.read_hits,
            read_misses: c.read_misses,
            write_hits: c.write_hits,
            write_misses: c.write_misses,
            writeback_hits: c.writeback_hits,
            writeback_misses: c.writeback_misses,
            fills: c.fills,
            invalidations: c.invalidations,
            windowed_miss_rate: activity.windowed_miss_rate,
        }
    }
}

impl<'a> RegionWire<'a> {
    fn new(region: &'a RegionSummary, levels: &'a [LevelSummary]) -> RegionWire<'a> {
        RegionWire {
            id: region.id.0,
            name: &region.name,
            references: region.references,
            levels: (levels.iter().zip(&region.levels))
                .map(|(level, activity)| CountsWire::new(&level.name, activity))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::{HierarchyConfig, LabelId, LevelConfig, Reference, RegionId, Simulation};

    /// A one-level simulation of three loads, two of them in region 1.
    fn tiny_summary() -> SimulationSummary {
        let config = HierarchyConfig::new(vec![LevelConfig::new("L1", 1024, 2, 64)]);
        let mut simulation = Simulation::new(&config, 4).expect("a realisable level");
        simulation.name_region(RegionId(1), "A");
        let in_a = |r: Reference| r.with(RegionId(1), LabelId(0));
        simulation.access(&in_a(Reference::read(0x1000, 8)));
        simulation.access(&in_a(Reference::read(0x1008, 8)));
        simulation.access(&Reference::read(0x2000, 8));
        simulation.summary()
    }

    /// The keys of the first object that starts at `from` in the compact `json`, in
    /// the order they were written (serde_json's `Value` would sort them).
    fn written_keys<'j>(json: &'j str, from: &str) -> Vec<&'j str> {
        let text = &json[json.find(from).expect("the object is in the document")..];
        let bytes = text.as_bytes();
        let (mut keys, mut depth, mut i) = (Vec::new(), 0, 0);
        while i < bytes.len() {
            match bytes[i] {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b'"' => {
                    // The test documents' strings hold no escaped quotes.
                    let end = i + 1 + text[i + 1..].find('"').expect("a closed string");
                    if depth == 1 && bytes.get(end + 1) == Some(&b':') {
                        keys.push(&text[i + 1..end]);
                    }
                    i = end;
                }
                _ => {}
            }
            i += 1;
        }
        keys
    }

    #[test]
    fn the_document_holds_the_summary() {
        let summary = tiny_summary();
        let wire = SimulationWire::new("t.din", "din", &summary, None);
        let json: Value = serde_json::to_value(&wire).unwrap();
        assert_eq!(json["trace"], "t.din");
        assert_eq!(json["references"], 3);
        assert_eq!(json["inclusion"], "non-inclusive");
        let l1 = &json["levels"][0];
        assert_eq!(l1["name"], "L1");
        assert_eq!(l1["accesses"], 3);
        assert_eq!(l1["hits"], 1);
        assert_eq!(l1["misses"], 2);
        assert_eq!(l1["evictions"], 0);
        assert_eq!(l1["sets"], 8);
        assert_eq!(l1["write_policy"], "write-back");
        assert_eq!(json["memory"]["references"], 2);
        let region = &json["regions"].as_array().unwrap()[1];
        assert_eq!(region["id"], 1);
        assert_eq!(region["name"], "A");
        assert_eq!(region["levels"][0]["hits"], 1);
        assert!(json.get("import").is_none(), "no importer, no `import`");
    }

    #[test]
    fn fields_keep_their_order() {
        let summary = tiny_summary();
        let counts = ImportCounts {
            lines: 4,
            references: 3,
            ignored: 0,
            malformed: 1,
        };
        let wire = SimulationWire::new("t.din", "din", &summary, Some(&counts));
        let json = serde_json::to_string(&wire).unwrap();
        let top = written_keys(&json, "{");
        let expected = [
            "trace",
            "format",
            "references",
            "inclusion",
            "levels",
            "memory",
            "regions",
            "labels",
            "import",
        ];
        assert_eq!(top, expected);
        let level = written_keys(&json, r#"{"name":"L1""#);
        let expected = [
            "name",
            "accesses",
            "hits",
            "misses",
            "miss_rate",
            "evictions",
            "write_backs",
            "read_hits",
            "read_misses",
            "write_hits",
            "write_misses",
            "writeback_hits",
            "writeback_misses",
            "fills",
            "invalidations",
            "windowed_miss_rate",
            "size",
            "ways",
            "line_size",
            "sets",
            "policy",
            "write_policy",
            "write_allocate",
            "reference_misses",
            "temperature",
        ];
        assert_eq!(level, expected);
        let region = written_keys(&json, r#"{"id":1"#);
        assert_eq!(region, ["id", "name", "references", "levels"]);
        let import = written_keys(&json, r#"{"lines""#);
        assert_eq!(import, ["lines", "ignored", "malformed"]);
    }
}
