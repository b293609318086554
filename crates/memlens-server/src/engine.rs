//! The API's answers, computed by the heap engine: the server holds one [`Engine`] per
//! opened trace and asks it for JSON documents.
//!
//! The engine owns the caches that make interaction cheap: the meta document (built
//! once), timelines by resolution, memory-tree series by classifier list (see
//! [`series_cache`](crate::series_cache)) and suspects by classifier list. It holds no
//! analysis of its own: every number comes from `memlens-heap`.

use memlens_heap::protocol::{suspects_to_json, trees_to_json};
use memlens_heap::{
    ClassifierOptions, GrowthQuery, HeapModel, Metric, Node, Resolution, SortStrategy, Suspect,
    Tree, Trees, classifiers::REGISTRY, growth_suspects, parse_classifiers,
};

use crate::drill;
use crate::error::ApiError;
use crate::protocol::{self, BucketColumns, DrillWire, PointWire, WindowWire};
use crate::request::{ClassifierList, GrowthRequest, MAX_SUSPECTS, TimelineRequest, TreeRequest};
use crate::run_info::RunInfo;
use crate::series_cache::{SeriesCache, TreeChoice, TreesAnswer};
use crate::snapshots::{Snapshot, snapshot_plan};

/// Sampling intervals of the growth ranking.
const GROWTH_SAMPLES: usize = 64;
/// Suspect lists and timelines kept at once.
const SMALL_CACHE: usize = 4;

/// How the engine picks its defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOptions {
    /// Evenly spaced snapshot points (besides the start, marks, peaks and dips).
    pub points: usize,
    /// The classifier list the page starts with, e.g. `site,thread`.
    pub default_classifiers: String,
    /// The other lenses this viewer serves (see [`LensApi`](crate::LensApi)), after
    /// heap evolution in tab order. [`Viewer::bind`](crate::Viewer::bind) fills it.
    pub other_lenses: Vec<protocol::LensWire>,
}

impl Default for EngineOptions {
    /// 20 points, grouped by `site,thread`.
    fn default() -> Self {
        EngineOptions {
            points: 20,
            default_classifiers: "site,thread".to_owned(),
            other_lenses: Vec::new(),
        }
    }
}

/// The heap-evolution lens, first in tab order.
const HEAP_LENS: protocol::LensWire = protocol::LensWire {
    id: "heap",
    title: "Heap evolution",
    question: "What accumulates, where was it allocated, and how does it grow over time?",
};

/// The lenses the page shows, in tab order: heap evolution when the trace has
/// allocations (or when no other lens has data, so the page says what is missing),
/// then the others.
fn lenses(model: &HeapModel, options: &EngineOptions) -> Vec<protocol::LensWire> {
    let mut lenses = Vec::with_capacity(1 + options.other_lenses.len());
    if model.stats().allocations > 0 || options.other_lenses.is_empty() {
        lenses.push(HEAP_LENS);
    }
    lenses.extend(options.other_lenses.iter().cloned());
    lenses
}

/// Answers API requests for one model.
pub struct Engine<'m> {
    model: &'m HeapModel,
    options: EngineOptions,
    snapshots: Vec<Snapshot>,
    meta: String,
    series: SeriesCache<'m>,
    suspects: Vec<(ClassifierList, Vec<Suspect>)>,
    timelines: Vec<(usize, String)>,
}

impl<'m> Engine<'m> {
    /// An engine for `model`; finds the snapshot times (one O(N) timeline pass).
    /// Fails when the default classifier list is not valid.
    pub fn new(
        model: &'m HeapModel,
        info: &RunInfo,
        options: EngineOptions,
    ) -> Result<Self, ApiError> {
        parse_classifiers(&options.default_classifiers, ClassifierOptions::default())?;
        let snapshots = snapshot_plan(model, options.points);
        let meta = meta_json(model, info, &options, &snapshots);
        let base_times = snapshots.iter().map(|s| s.time_ns).collect();
        Ok(Engine {
            model,
            options,
            snapshots,
            meta,
            series: SeriesCache::new(model, base_times),
            suspects: Vec::new(),
            timelines: Vec::new(),
        })
    }

    /// The default classifier list.
    pub fn default_classifiers(&self) -> &str {
        &self.options.default_classifiers
    }

    /// The snapshot times.
    pub fn snapshots(&self) -> &[Snapshot] {
        &self.snapshots
    }

    /// `api/meta`.
    pub fn meta(&self) -> &str {
        &self.meta
    }

    /// `api/timeline`.
    pub fn timeline(&mut self, request: TimelineRequest) -> Result<String, ApiError> {
        if let Some((_, json)) = self.timelines.iter().find(|(p, _)| *p == request.points) {
            return Ok(json.clone());
        }
        let timeline = self
            .model
            .timeline(Resolution::Points(request.points), None)?;
        let mut columns = BucketColumns::default();
        for b in &timeline.buckets {
            columns.start_ns.push(b.start_ns);
            columns.end_ns.push(b.end_ns);
            columns.min_bytes.push(b.min_bytes);
            columns.max_bytes.push(b.max_bytes);
            columns.last_bytes.push(b.last_bytes);
            columns.min_objects.push(b.min_objects);
            columns.max_objects.push(b.max_objects);
            columns.last_objects.push(b.last_objects);
        }
        let json = protocol::to_json(&protocol::TimelineWire {
            window: WindowWire {
                start_ns: timeline.window.start_ns,
                end_ns: timeline.window.end_ns,
            },
            peak: PointWire {
                time_ns: timeline.peak.time_ns,
                bytes: timeline.peak.bytes,
                objects: timeline.peak.objects,
            },
            buckets: columns,
        });
        if self.timelines.len() == SMALL_CACHE {
            self.timelines.remove(0);
        }
        self.timelines.push((request.points, json.clone()));
        Ok(json)
    }

    /// `api/tree`.
    pub fn tree(&mut self, request: &TreeRequest) -> Result<String, ApiError> {
        let choice = TreeChoice {
            metric: request.metric,
            sort: request.sort,
            prune: request.prune,
        };
        let answer = self.series.trees(&request.by, &request.times, choice)?;
        Ok(tree_response(&answer, request))
    }

    /// Prepares the caches for the next requests (see [`SeriesCache::maintain`]); call it
    /// when no request is waiting. Returns whether it did any work.
    pub fn maintain(&mut self) -> Result<bool, ApiError> {
        self.series.maintain()
    }

    /// `api/growth`.
    pub fn growth(&mut self, request: &GrowthRequest) -> Result<String, ApiError> {
        let index = match self.suspects.iter().position(|(by, _)| by == &request.by) {
            Some(i) => i,
            None => {
                let options = ClassifierOptions {
                    domain_prefixes: request.by.domains.clone(),
                    ..ClassifierOptions::default()
                };
                let chain = parse_classifiers(&request.by.text(), options)?;
                let query = GrowthQuery {
                    samples: GROWTH_SAMPLES,
                    limit: Some(MAX_SUSPECTS),
                    ..GrowthQuery::new(chain)
                };
                let suspects = growth_suspects(self.model, &query)?;
                if self.suspects.len() == SMALL_CACHE {
                    self.suspects.remove(0);
                }
                self.suspects.push((request.by.clone(), suspects));
                self.suspects.len() - 1
            }
        };
        let suspects = &self.suspects[index].1;
        let shown = &suspects[..request.top.min(suspects.len())];
        Ok(format!(
            "{{\"by\":{},\"doc\":{}}}",
            protocol::to_json(&request.by.text()),
            suspects_to_json(shown)
        ))
    }

    /// The data a report embeds: meta, timeline, suspects and the trees of the default
    /// classifier list at every snapshot time, for every metric and sort strategy.
    pub fn report_document(&mut self) -> Result<String, ApiError> {
        let by = ClassifierList::parse(&self.options.default_classifiers, Vec::new())?;
        let timeline = self.timeline(TimelineRequest { points: 600 })?;
        let growth = self.growth(&GrowthRequest {
            by: by.clone(),
            top: 20,
        })?;
        let mut trees = Vec::new();
        for metric in [Metric::Bytes, Metric::Objects] {
            for sort in [
                SortStrategy::AbsoluteGrowth,
                SortStrategy::StartSize,
                SortStrategy::EndSize,
            ] {
                let response = self.tree(&TreeRequest {
                    by: by.clone(),
                    times: Vec::new(),
                    metric,
                    sort,
                    prune: true,
                    path: None,
                    depth: None,
                })?;
                trees.push(format!(
                    "{{\"by\":{},\"metric\":\"{}\",\"sort\":\"{}\",\"response\":{response}}}",
                    protocol::to_json(&by.text()),
                    metric.name(),
                    sort.name()
                ));
            }
        }
        Ok(format!(
            "{{\"version\":{},\"meta\":{},\"timeline\":{timeline},\"growth\":[{growth}],\"trees\":[{}]}}",
            protocol::VERSION,
            self.meta,
            trees.join(",")
        ))
    }
}

/// The `api/tree` document for `request` from the trees that hold every requested time.
fn tree_response(answer: &TreesAnswer<'_>, request: &TreeRequest) -> String {
    let snapshots = answer.snapshots;
    let mut times: Vec<u64> = if request.times.is_empty() {
        snapshots.times_ns.clone()
    } else {
        request.times.clone()
    };
    times.sort_unstable();
    times.dedup();
    let chosen: Vec<&Tree> = times.iter().filter_map(|&t| answer.tree(t)).collect();
    let roots: Vec<&Node> = chosen.iter().map(|t| &t.root).collect();
    let requested = request.path.as_deref().unwrap_or(&[]);
    let path = drill::resolve(&roots, requested, request.metric);
    let selected = Trees {
        classifiers: snapshots.classifiers.clone(),
        times_ns: chosen.iter().map(|t| t.time_ns).collect(),
        metric: snapshots.metric,
        sort: snapshots.sort,
        trees: chosen
            .iter()
            .map(|t| Tree {
                time_ns: t.time_ns,
                root: drill::subtree(&t.root, path, request.depth),
            })
            .collect(),
    };
    let totals: Vec<PointWire> = snapshots
        .trees
        .iter()
        .map(|t| PointWire {
            time_ns: t.time_ns,
            bytes: t.root.bytes,
            objects: t.root.objects,
        })
        .collect();
    let drill = request.path.as_ref().map(|requested| {
        protocol::to_json(&DrillWire {
            requested,
            path,
            found: path.len() == requested.len(),
        })
    });
    let doc = trees_to_json(&selected);
    let totals = protocol::to_json(&totals);
    match drill {
        Some(drill) => format!("{{\"doc\":{doc},\"totals\":{totals},\"drill\":{drill}}}"),
        None => format!("{{\"doc\":{doc},\"totals\":{totals}}}"),
    }
}

fn meta_json(
    model: &HeapModel,
    info: &RunInfo,
    options: &EngineOptions,
    snapshots: &[Snapshot],
) -> String {
    let cx = model.context();
    let stats = model.stats();
    let run = model.run();
    let threads = &cx.threads;
    let wire = protocol::MetaWire {
        version: protocol::VERSION,
        program: &info.program,
        pid: info.pid,
        trace: &info.trace_name,
        run: WindowWire {
            start_ns: run.start_ns,
            end_ns: run.end_ns,
        },
        stats: protocol::StatsWire {
            allocations: stats.allocations,
            frees: stats.frees,
            reallocations: stats.reallocations,
            peak_bytes: stats.peak_bytes,
            peak_time_ns: stats.peak_time_ns,
            peak_objects: stats.peak_objects,
            live_at_exit_bytes: stats.live_at_exit_bytes,
            live_at_exit_objects: stats.live_at_exit_objects,
        },
        marks: model
            .marks()
            .iter()
            .map(|m| protocol::MarkWire {
                time_ns: m.t_ns,
                name: cx.strings.get(m.name),
            })
            .collect(),
        threads: (0..threads.len())
            .map(|i| protocol::ThreadWire {
                tid: threads.tid[i],
                name: cx.strings.get(threads.name[i]),
            })
            .collect(),
        classifiers: REGISTRY
            .iter()
            // `closest-domain-site` needs prefixes the page cannot guess.
            .filter(|e| e.name != "closest-domain-site")
            .map(|e| protocol::ClassifierWire {
                name: e.name,
                title: e.title,
                summary: e.summary,
            })
            .collect(),
        default_classifiers: options
            .default_classifiers
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect(),
        snapshots: snapshots
            .iter()
            .map(|s| protocol::SnapshotWire {
                time_ns: s.time_ns,
                kind: s.kind.name(),
                label: &s.label,
            })
            .collect(),
        lenses: lenses(model, options),
        notes: model.diagnostics().messages(),
    };
    protocol::to_json(&wire)
}
