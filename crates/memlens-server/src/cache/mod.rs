//! The cache lens's server side (paper 002): a [`LensApi`] under `api/cache/` that
//! simulates a reference source through a configurable hierarchy and hands the page
//! the simulator's event stream in compact binary batches.
//!
//! Routes (every one but `sources` takes the session parameters of [`query`]):
//!
//! | route | answer |
//! |---|---|
//! | `sources` | the sources the kernel picker offers (JSON) |
//! | `session` | hierarchy, regions, labels, length and miss-rate timeline (JSON) |
//! | `batch?start=A&count=N` | the events of references `[A, A+N)` (binary, [`batch`]) |
//! | `state?at=I` | every set's contents before reference `I` (binary) |
//! | `occupancy?at=I` | lines held per level before reference `I` (JSON) |
//! | `stats?at=I` | statistics per level and region and the temperatures (JSON) |
//!
//! Sessions (a source under a hierarchy) are built on first use — one simulation pass
//! that records the timeline and checkpoints ([`session`]) — and the most recent few
//! are kept, so scrubbing and re-asking are cheap. No analysis happens here: every
//! number comes from `memlens-cache`. A report embeds the default session's answers
//! for a bounded prefix of its references ([`report`]).

mod batch;
pub mod columns;
mod query;
pub mod report;
mod session;
mod source;
pub(crate) mod wire;

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use lru::LruCache;
use memlens_cache::{HierarchyConfig, LevelCounters, RegionId, Replacement, WritePolicy};

use crate::error::ApiError;
use crate::lens_api::{ApiBody, LensApi, ReportRequest};
use crate::protocol::{LensWire, to_json};

pub use query::{MAX_LEVELS, MAX_LINES, MAX_WAYS};
pub use source::{MAX_REFERENCES, ReferenceSource, SourceError};

use query::SessionQuery;
use session::Session;
use wire::*;

/// The largest batch the page may ask for, in references.
pub const MAX_BATCH: usize = 1 << 16;

/// How many sessions (source × hierarchy) are kept, the most recently used.
const KEPT_SESSIONS: NonZeroUsize = NonZeroUsize::new(4).expect("not zero");

/// How many generated kernels are kept.
const KEPT_KERNELS: usize = 8;

/// The id of the trace's own references among the sources.
pub const TRACE_SOURCE: &str = "trace";

struct Built {
    source: Arc<ReferenceSource>,
    source_id: String,
    n: Option<u64>,
    session: Arc<Mutex<Session>>,
}

/// The cache lens: a trace's references (if any) and the built-in kernels.
pub struct CacheLens {
    trace: Option<Arc<ReferenceSource>>,
    default_source: String,
    default_n: Option<u64>,
    default_config: Option<HierarchyConfig>,
    kernels: Mutex<Vec<(String, Arc<ReferenceSource>)>>,
    /// By session key.
    sessions: Mutex<LruCache<String, Arc<Built>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl CacheLens {
    /// A lens over a trace's references (first in the picker and the default), or
    /// over the built-in kernels only.
    pub fn new(trace: Option<ReferenceSource>) -> CacheLens {
        let default_source = if trace.is_some() {
            TRACE_SOURCE
        } else {
            source::KERNELS[0].0
        };
        CacheLens {
            trace: trace.map(Arc::new),
            default_source: default_source.to_owned(),
            default_n: None,
            default_config: None,
            kernels: Mutex::new(Vec::new()),
            sessions: Mutex::new(LruCache::new(KEPT_SESSIONS)),
        }
    }

    /// The ids of the built-in kernel sources (`matmul-standard`, …).
    pub fn kernel_ids() -> Vec<&'static str> {
        source::KERNELS.iter().map(|k| k.0).collect()
    }

    /// The kernel source id of a kernel name and variant, as `memlens cache kernel`
    /// spells them (`matmul` + `blocked` → `matmul-blocked`).
    pub fn kernel_id(name: &str, variant: Option<&str>) -> Result<&'static str, SourceError> {
        let name = match name {
            "bubblesort" => "bubble-sort",
            "mergesort" => "merge-sort",
            "init" => "array-init",
            "mpm" => "particles",
            other => other,
        };
        let wanted = match (name, variant) {
            ("matmul", None) => "matmul-standard".to_owned(),
            ("matmul", Some(v)) => format!("matmul-{v}"),
            (other, None) => other.to_owned(),
            (other, Some(v)) => {
                return Err(SourceError::NoVariant {
                    kernel: other.to_owned(),
                    variant: v.to_owned(),
                });
            }
        };
        source::KERNELS
            .iter()
            .find(|k| k.0 == wanted)
            .map(|k| k.0)
            .ok_or_else(|| SourceError::Unknown {
                what: "kernel",
                id: wanted,
                choices: format!("one of {}", Self::kernel_ids().join(", ")),
            })
    }

    /// Opens the page on this source (a kernel id or [`TRACE_SOURCE`]) with problem
    /// size `n` (kernels only), checking that it can be generated.
    pub fn with_default_source(
        mut self,
        id: &str,
        n: Option<u64>,
    ) -> Result<CacheLens, SourceError> {
        if id == TRACE_SOURCE {
            if self.trace.is_none() {
                return Err(SourceError::NoTrace);
            }
        } else {
            let made = Arc::new(source::kernel_source(id, n)?);
            lock(&self.kernels).push((format!("{id}|{n:?}"), made));
        }
        self.default_source = id.to_owned();
        self.default_n = n;
        Ok(self)
    }

    /// Opens the page with this hierarchy instead of the source's default, checking
    /// that the simulator and the lens can both handle it.
    pub fn with_default_hierarchy(
        mut self,
        config: HierarchyConfig,
    ) -> Result<CacheLens, SourceError> {
        memlens_cache::Hierarchy::new(&config).map_err(|e| SourceError::Engine(e.to_string()))?;
        query::check_size(&config).map_err(|e| SourceError::Engine(e.message))?;
        self.default_config = Some(config);
        Ok(self)
    }

    fn source(&self, id: &str, n: Option<u64>) -> Result<Arc<ReferenceSource>, ApiError> {
        if id == TRACE_SOURCE {
            return self.trace.clone().ok_or_else(|| {
                ApiError::bad_request("this viewer has no trace references; pick a kernel")
            });
        }
        let key = format!("{id}|{n:?}");
        if let Some((_, found)) = lock(&self.kernels).iter().find(|(k, _)| *k == key) {
            return Ok(Arc::clone(found));
        }
        let made = Arc::new(
            source::kernel_source(id, n).map_err(|e| ApiError::bad_request(e.to_string()))?,
        );
        let mut kernels = lock(&self.kernels);
        if kernels.len() >= KEPT_KERNELS {
            kernels.remove(0);
        }
        kernels.push((key, Arc::clone(&made)));
        Ok(made)
    }

    fn default_config_for(&self, source_id: &str) -> HierarchyConfig {
        if let Some(config) = &self.default_config {
            return config.clone();
        }
        if source_id == TRACE_SOURCE {
            source::trace_hierarchy()
        } else {
            source::kernel_hierarchy()
        }
    }

    fn session(&self, query: &HashMap<String, String>) -> Result<Arc<Built>, ApiError> {
        let q = SessionQuery::parse(query, &self.default_source)?;
        let n = if q.n.is_none() && q.source == self.default_source {
            self.default_n
        } else {
            q.n
        };
        let config = q
            .config
            .unwrap_or_else(|| self.default_config_for(&q.source));
        let temperature = query::parse_temperature(query, config.levels.len())?;
        let key = format!(
            "{}|{}",
            query::session_key(&q.source, n, &config),
            query::temperature_key(&temperature)
        );
        let mut sessions = lock(&self.sessions);
        if let Some(built) = sessions.get(&key) {
            return Ok(Arc::clone(built));
        }
        let source = self.source(&q.source, n)?;
        let session = Session::build(Arc::clone(&source.references), &config, &temperature)
            .map_err(|e| ApiError::bad_request(format!("levels: {e}")))?;
        let built = Arc::new(Built {
            source,
            source_id: q.source,
            n,
            session: Arc::new(Mutex::new(session)),
        });
        sessions.put(key, Arc::clone(&built));
        Ok(built)
    }

    fn sources(&self) -> SourcesWire {
        let mut sources = Vec::new();
        if let Some(trace) = &self.trace {
            sources.push(SourceWire {
                id: TRACE_SOURCE.to_owned(),
                title: trace.title.clone(),
                kernel: false,
                default_n: None,
                max_n: None,
            });
        }
        for (id, name, _, title) in source::KERNELS {
            let default_n = if id == self.default_source {
                self.default_n.unwrap_or(source::default_size(name))
            } else {
                source::default_size(name)
            };
            sources.push(SourceWire {
                id: id.to_owned(),
                title: title.to_owned(),
                kernel: true,
                default_n: Some(default_n),
                max_n: Some(source::max_size(name)),
            });
        }
        SourcesWire {
            default: self.default_source.clone(),
            sources,
        }
    }

    fn session_doc(built: &Built) -> SessionWire {
        let session = lock(&built.session);
        let cache = &session.head.cache;
        let config = &session.config;
        let levels = config
            .levels
            .iter()
            .enumerate()
            .map(|(i, level)| LevelWire {
                name: level.name.clone(),
                size: level.size,
                ways: level.ways,
                line_size: level.line_size,
                sets: cache.geometry(i).sets,
                policy: match level.replacement {
                    Replacement::Random { seed } => format!("random={seed}"),
                    other => other.name().to_owned(),
                },
            })
            .collect();
        let info = &built.source.info;
        let regions = info
            .regions
            .iter()
            .map(|(id, r)| RegionWire {
                id: id.0,
                name: r.name.clone(),
                start: r.start,
                len: r.len,
            })
            .collect();
        let mut labels = vec![String::new()];
        for (id, text) in info.labels.iter() {
            let i = usize::from(id.0);
            if labels.len() <= i {
                labels.resize(i + 1, String::new());
            }
            labels[i] = text.to_owned();
        }
        let timeline = TimelineWire {
            bucket: session.timeline.bucket,
            levels: config
                .levels
                .iter()
                .enumerate()
                .map(|(i, l)| TimelineLevelWire {
                    name: l.name.clone(),
                    accesses: session.timeline.accesses[i].clone(),
                    misses: session.timeline.misses[i].clone(),
                })
                .collect(),
        };
        SessionWire {
            source: built.source_id.clone(),
            title: built.source.title.clone(),
            n: built.n,
            references: session.len(),
            every: session.every,
            inclusion: config.inclusion.name(),
            write: match config.levels.first().map(|l| l.write_policy) {
                Some(WritePolicy::WriteThrough) => "through",
                _ => "back",
            },
            levels,
            regions,
            labels,
            timeline,
            temperature: TemperatureWire {
                window: session.temperature.window,
                weights: session
                    .temperature
                    .weights
                    .iter()
                    .map(|w| TemperatureWeightsWire {
                        hit: w.hit,
                        miss: w.miss,
                    })
                    .collect(),
            },
            totals: config
                .levels
                .iter()
                .enumerate()
                .map(|(i, l)| counts(&l.name, &session.totals.level(i)))
                .collect(),
        }
    }

    fn stats_doc(built: &Built, at: usize) -> StatsWire {
        let mut session = lock(&built.session);
        let names: Vec<String> = session
            .config
            .levels
            .iter()
            .map(|l| l.name.clone())
            .collect();
        let temperature = batch::temperatures_at(&mut session, at);
        let cursor = session.seek(at);
        let stats = cursor.cache.statistics();
        let levels = names
            .iter()
            .enumerate()
            .map(|(i, name)| counts(name, &stats.level(i)))
            .collect();
        let info = &built.source.info;
        let regions = stats
            .active_regions()
            .into_iter()
            .map(|r: RegionId| RegionStatsWire {
                id: r.0,
                name: info.regions.name(r).to_owned(),
                references: stats.region_references(r),
                levels: names
                    .iter()
                    .enumerate()
                    .map(|(i, name)| counts(name, &stats.region_level(r, i)))
                    .collect(),
            })
            .collect();
        StatsWire {
            at: cursor.at,
            references: stats.references(),
            temperature,
            levels,
            regions,
        }
    }
}

fn counts(name: &str, c: &LevelCounters) -> CountsWire {
    CountsWire {
        name: name.to_owned(),
        accesses: c.accesses(),
        hits: c.hits(),
        misses: c.misses(),
        miss_rate: c.miss_rate(),
        fills: c.fills,
        evictions: c.evictions,
        write_backs: c.write_backs,
    }
}

impl LensApi for CacheLens {
    fn descriptor(&self) -> LensWire {
        LensWire {
            id: "cache",
            title: "Cache",
            question: "How does the data move through the cache levels, reference by reference?",
        }
    }

    fn answer(&self, route: &str, query: &HashMap<String, String>) -> Result<ApiBody, ApiError> {
        match route {
            "sources" => Ok(ApiBody::json(to_json(&self.sources()))),
            "session" => {
                let built = self.session(query)?;
                Ok(ApiBody::json(to_json(&Self::session_doc(&built))))
            }
            "batch" => {
                let built = self.session(query)?;
                let start = query::index(query, "start")?;
                let count = query::index(query, "count")?;
                if count > MAX_BATCH {
                    return Err(ApiError::bad_request(format!(
                        "`count={count}` is too large: ask for at most {MAX_BATCH} references"
                    )));
                }
                let mut session = lock(&built.session);
                Ok(ApiBody::binary(batch::batch(&mut session, start, count)))
            }
            "state" => {
                let built = self.session(query)?;
                let at = query::index(query, "at")?;
                let mut session = lock(&built.session);
                Ok(ApiBody::binary(batch::state(&mut session, at)))
            }
            "occupancy" => {
                let built = self.session(query)?;
                let at = query::index(query, "at")?;
                let mut session = lock(&built.session);
                let names: Vec<String> = session
                    .config
                    .levels
                    .iter()
                    .map(|l| l.name.clone())
                    .collect();
                let (at, lines) = batch::occupancy(&mut session, at);
                let levels = names
                    .into_iter()
                    .zip(lines)
                    .map(|(name, lines)| OccupancyLevelWire { name, lines })
                    .collect();
                Ok(ApiBody::json(to_json(&OccupancyWire { at, levels })))
            }
            "stats" => {
                let built = self.session(query)?;
                let at = query::index(query, "at")?;
                Ok(ApiBody::json(to_json(&Self::stats_doc(&built, at))))
            }
            _ => Err(ApiError {
                status: 404,
                message: format!(
                    "the cache lens has no route `{route}`; try sources, session, batch, state, occupancy or stats"
                ),
            }),
        }
    }

    fn report_requests(&self) -> Vec<ReportRequest> {
        report::requests(self)
    }
}
