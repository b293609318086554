//! The heap lens's answers, computed by the heap engine: the lens's engine thread
//! holds one [`Engine`] over its model and asks it for wire documents.
//!
//! The engine owns the caches that make interaction cheap: timelines by resolution,
//! memory-tree series by classifier list (see [`series_cache`](super::series_cache)) and
//! suspects by classifier list. It holds no analysis of its own: every number comes
//! from `memlens-heap`.

use memlens_heap::protocol::{suspects_to_json, trees_to_json};
use memlens_heap::{
    BaseRun, ClassifierOptions, GrowthQuery, HeapModel, Node, Resolution, Suspect, Tree, Trees,
    classifiers::REGISTRY, group_stacks, growth_suspects, parse_classifiers,
};
use serde_json::value::RawValue;

use super::drill;
use super::request::{
    ClassifierList, GrowthRequest, MAX_SUSPECTS, STACK_FRAMES, SnapshotsRequest, StacksRequest,
    TimelineRequest, TreeRequest, Window,
};
use super::series_cache::{SeriesCache, SeriesKey, TreeChoice, TreesAnswer};
use super::snapshots::{Snapshot, snapshot_plan};
use crate::error::ApiError;
use crate::protocol::{
    BaseInfoWire, BaseNodeWire, BaseTreeWire, BucketColumns, ClassifierWire, DrillWire, FrameWire,
    GrowthAnswerWire, HeapMetaWire, LayerWire, MarkWire, PointWire, SnapshotWire, StackWire,
    StacksWire, StatsWire, ThreadWire, TimelineWire, TreeAnswerWire, WindowWire,
};

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
}

impl Default for EngineOptions {
    /// 20 points, grouped by `site,thread`.
    fn default() -> Self {
        EngineOptions {
            points: 20,
            default_classifiers: "site,thread".to_owned(),
        }
    }
}

impl EngineOptions {
    /// The default classifier names, outermost first, as the meta document lists them.
    pub fn default_names(&self) -> Vec<&str> {
        self.default_classifiers
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect()
    }
}

/// A base run the trees are compared with (`memlens view NEW --base OLD`).
pub struct Base<'m> {
    /// The base run's model.
    pub model: &'m HeapModel,
    /// Its trace's file name.
    pub name: String,
}

/// Base runs grouped by the classifier lists asked for lately.
struct BaseRuns<'m> {
    base: Base<'m>,
    runs: Vec<(ClassifierList, BaseRun<'m>)>,
}

/// Answers the heap lens's requests for one model.
pub struct Engine<'m> {
    model: &'m HeapModel,
    base: Option<BaseRuns<'m>>,
    options: EngineOptions,
    snapshots: Vec<Snapshot>,
    /// The snapshot times of the windows asked for lately.
    window_plans: Vec<(Window, Vec<Snapshot>)>,
    series: SeriesCache<'m>,
    suspects: Vec<(SeriesKey, Vec<Suspect>)>,
    timelines: Vec<(usize, TimelineWire)>,
}

impl<'m> Engine<'m> {
    /// An engine for `model`; finds the snapshot times (one O(N) timeline pass).
    /// Fails when the default classifier list is not valid.
    /// With `base`, every tree answer also carries the base run's values of its nodes.
    pub fn new(
        model: &'m HeapModel,
        base: Option<Base<'m>>,
        options: EngineOptions,
    ) -> Result<Self, ApiError> {
        parse_classifiers(&options.default_classifiers, ClassifierOptions::default())?;
        let snapshots = snapshot_plan(model, options.points, None);
        Ok(Engine {
            model,
            base: base.map(|base| BaseRuns {
                base,
                runs: Vec::new(),
            }),
            options,
            snapshots,
            window_plans: Vec::new(),
            series: SeriesCache::new(model),
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

    /// The snapshot times within `window` (the whole run's when `None`); fails when the
    /// window is not inside the run.
    fn plan(&mut self, window: Option<Window>) -> Result<&[Snapshot], ApiError> {
        let Some(window) = window else {
            return Ok(&self.snapshots);
        };
        let run = self.model.run();
        if window.from_ns < run.start_ns || window.to_ns > run.end_ns {
            return Err(ApiError::bad_request(format!(
                "the window {} to {} ns is not inside the recorded run ({} to {} ns)",
                window.from_ns, window.to_ns, run.start_ns, run.end_ns
            )));
        }
        let index = match self.window_plans.iter().position(|(w, _)| *w == window) {
            Some(i) => i,
            None => {
                let plan =
                    snapshot_plan(self.model, self.options.points, Some(window.time_window()));
                if self.window_plans.len() == SMALL_CACHE {
                    self.window_plans.remove(0);
                }
                self.window_plans.push((window, plan));
                self.window_plans.len() - 1
            }
        };
        Ok(&self.window_plans[index].1)
    }

    /// `snapshots`: the snapshot times within a window.
    pub fn window_snapshots(
        &mut self,
        request: SnapshotsRequest,
    ) -> Result<Vec<SnapshotWire<'_>>, ApiError> {
        Ok(self
            .plan(request.window)?
            .iter()
            .map(snapshot_wire)
            .collect())
    }

    /// `meta`.
    pub fn meta(&self) -> HeapMetaWire<'_> {
        let model = self.model;
        let cx = model.context();
        let stats = model.stats();
        let run = model.run();
        let threads = &cx.threads;
        HeapMetaWire {
            run: WindowWire {
                start_ns: run.start_ns,
                end_ns: run.end_ns,
            },
            stats: StatsWire {
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
                .map(|m| MarkWire {
                    time_ns: m.t_ns,
                    name: cx.strings.get(m.name),
                })
                .collect(),
            threads: (0..threads.len())
                .map(|i| ThreadWire {
                    tid: threads.tid[i],
                    name: cx.strings.get(threads.name[i]),
                })
                .collect(),
            // `closest-domain-site` needs prefixes: the page asks for them beside it.
            classifiers: REGISTRY
                .iter()
                .map(|e| ClassifierWire {
                    name: e.name,
                    title: e.title,
                    summary: e.summary,
                })
                .collect(),
            default_classifiers: self.options.default_names(),
            snapshots: self.snapshots.iter().map(snapshot_wire).collect(),
            notes: model.diagnostics().messages(),
            base: self.base.as_ref().map(|b| {
                let run = b.base.model.run();
                BaseInfoWire {
                    name: b.base.name.clone(),
                    run: WindowWire {
                        start_ns: run.start_ns,
                        end_ns: run.end_ns,
                    },
                    peak_bytes: b.base.model.stats().peak_bytes,
                    live_at_exit_bytes: b.base.model.stats().live_at_exit_bytes,
                }
            }),
        }
    }

    /// `timeline`.
    pub fn timeline(&mut self, request: TimelineRequest) -> Result<&TimelineWire, ApiError> {
        let index = match self
            .timelines
            .iter()
            .position(|(p, _)| *p == request.points)
        {
            Some(i) => i,
            None => {
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
                let wire = TimelineWire {
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
                };
                if self.timelines.len() == SMALL_CACHE {
                    self.timelines.remove(0);
                }
                self.timelines.push((request.points, wire));
                self.timelines.len() - 1
            }
        };
        Ok(&self.timelines[index].1)
    }

    /// `tree`.
    pub fn tree<'r>(&mut self, request: &'r TreeRequest) -> Result<TreeAnswerWire<'r>, ApiError> {
        let choice = TreeChoice {
            metric: request.metric,
            sort: request.sort,
            prune: request.prune,
        };
        let base: Vec<u64> = self
            .plan(request.window)?
            .iter()
            .map(|s| s.time_ns)
            .collect();
        let key = (request.by.clone(), request.window);
        let answer = self.series.trees(&key, &base, &request.times, choice)?;
        let mut wire = tree_answer(&answer, request);
        if let Some(base) = self.base.as_mut() {
            let run = base.run(self.model, &request.by)?;
            let trees = wire.selected.iter().map(|tree| base_tree(run, tree));
            wire.answer.base = Some(trees.collect::<Result<_, ApiError>>()?);
        }
        Ok(wire.answer)
    }

    /// Prepares the caches for the next requests (see [`SeriesCache::maintain`]); call it
    /// when no request is waiting. Returns whether it did any work.
    pub fn maintain(&mut self) -> Result<bool, ApiError> {
        self.series.maintain()
    }

    /// `growth`.
    pub fn growth(&mut self, request: &GrowthRequest) -> Result<GrowthAnswerWire, ApiError> {
        let key = (request.by.clone(), request.window);
        self.plan(request.window)?;
        let index = match self.suspects.iter().position(|(k, _)| k == &key) {
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
                    window: request.window.map(Window::time_window),
                    ..GrowthQuery::new(chain)
                };
                let suspects = growth_suspects(self.model, &query)?;
                if self.suspects.len() == SMALL_CACHE {
                    self.suspects.remove(0);
                }
                self.suspects.push((key, suspects));
                self.suspects.len() - 1
            }
        };
        let suspects = &self.suspects[index].1;
        let shown = &suspects[..request.top.min(suspects.len())];
        Ok(GrowthAnswerWire {
            by: request.by.text(),
            doc: engine_document(suspects_to_json(shown)),
        })
    }
}

impl Engine<'_> {
    /// `stacks`: the heaviest call stacks of one node at one instant.
    pub fn stacks(&self, request: &StacksRequest) -> Result<StacksWire, ApiError> {
        let run = self.model.run();
        if !run.contains(request.time_ns) {
            return Err(ApiError::bad_request(format!(
                "`time={}` is outside the run (0 to {} ns)",
                request.time_ns, run.end_ns
            )));
        }
        let options = ClassifierOptions {
            domain_prefixes: request.by.domains.clone(),
            ..ClassifierOptions::default()
        };
        let chain = parse_classifiers(&request.by.text(), options)?;
        // A coalesced model answers at its instants: the one a tree at this time shows.
        let at = self.model.exact_at_or_before(request.time_ns);
        let found = group_stacks(
            self.model,
            &chain,
            &request.path,
            at,
            request.top,
            STACK_FRAMES,
        )?;
        Ok(StacksWire {
            by: request.by.text(),
            path: request.path.clone(),
            time_ns: at,
            bytes: found.bytes,
            objects: found.objects,
            stack_count: found.stack_count,
            stacks: found
                .stacks
                .into_iter()
                .map(|s| StackWire {
                    bytes: s.bytes,
                    objects: s.objects,
                    frames: s
                        .frames
                        .into_iter()
                        .map(|f| FrameWire {
                            function: f.function,
                            file: f.file,
                            line: f.line,
                            module: f.module,
                            inlined: f.inlined,
                            kind: f.kind,
                        })
                        .collect(),
                })
                .collect(),
        })
    }
}

fn snapshot_wire(s: &Snapshot) -> SnapshotWire<'_> {
    SnapshotWire {
        time_ns: s.time_ns,
        kind: s.kind.name(),
        label: &s.label,
    }
}

/// The first-level groups of `trees` over their times (every tree has the same nodes).
fn layers(trees: &Trees) -> Vec<LayerWire> {
    let Some(first) = trees.trees.first() else {
        return Vec::new();
    };
    first
        .root
        .children
        .iter()
        .enumerate()
        .map(|(i, group)| LayerWire {
            key: group.key.clone(),
            is_other: group.is_other,
            bytes: trees
                .trees
                .iter()
                .map(|t| t.root.children[i].bytes)
                .collect(),
            objects: trees
                .trees
                .iter()
                .map(|t| t.root.children[i].objects)
                .collect(),
        })
        .collect()
}

/// A document the heap engine wrote, embedded as it is.
fn engine_document(json: String) -> Box<RawValue> {
    RawValue::from_string(json).expect("the heap engine writes valid JSON")
}

/// A tree answer and the trees it holds (for the base run's values).
struct TreeAnswer<'r> {
    answer: TreeAnswerWire<'r>,
    selected: Vec<Tree>,
}

/// The base run's values of every node of `tree`.
fn base_tree(run: &mut BaseRun<'_>, tree: &Tree) -> Result<BaseTreeWire, ApiError> {
    let (base_time_ns, values) = run.values(&tree.root, tree.time_ns)?;
    let mut nodes = Vec::with_capacity(values.len());
    tree.root.walk(&mut |node: &Node| {
        let live = values.get(&node.full_key).copied().unwrap_or_default();
        nodes.push(BaseNodeWire {
            full_key: node.full_key.clone(),
            bytes: live.bytes,
            objects: live.objects,
        });
    });
    Ok(BaseTreeWire {
        time_ns: tree.time_ns,
        base_time_ns,
        nodes,
    })
}

impl<'m> BaseRuns<'m> {
    /// The base run grouped by `by` (built when not cached; the two latest are kept).
    fn run(&mut self, new: &HeapModel, by: &ClassifierList) -> Result<&mut BaseRun<'m>, ApiError> {
        let index = match self.runs.iter().position(|(b, _)| b == by) {
            Some(i) => i,
            None => {
                let options = ClassifierOptions {
                    domain_prefixes: by.domains.clone(),
                    ..ClassifierOptions::default()
                };
                let chain = parse_classifiers(&by.text(), options)?;
                let run = BaseRun::new(self.base.model, new, &chain)?;
                if self.runs.len() == 2 {
                    self.runs.remove(0);
                }
                self.runs.push((by.clone(), run));
                self.runs.len() - 1
            }
        };
        Ok(&mut self.runs[index].1)
    }
}

/// The `tree` document for `request` from the trees that hold every requested time.
fn tree_answer<'r>(answer: &TreesAnswer<'_>, request: &'r TreeRequest) -> TreeAnswer<'r> {
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
    let answer = TreeAnswerWire {
        doc: engine_document(trees_to_json(&selected)),
        totals: snapshots
            .trees
            .iter()
            .map(|t| PointWire {
                time_ns: t.time_ns,
                bytes: t.root.bytes,
                objects: t.root.objects,
            })
            .collect(),
        layers: layers(snapshots),
        drill: request.path.as_deref().map(|requested| DrillWire {
            requested,
            path,
            found: path.len() == requested.len(),
        }),
        base: None,
    };
    TreeAnswer {
        answer,
        selected: selected.trees,
    }
}
