//! The heap-evolution lens's server side (paper 000): a [`LensApi`] under `api/heap/`
//! over one heap model, answered by the heap engine on its own thread.
//!
//! Routes (wire forms in [`protocol`](crate::protocol)):
//!
//! | route | answer |
//! |---|---|
//! | `meta` | run, totals, marks, threads, classifiers, default classifiers, snapshot times, notes |
//! | `timeline?points` | the heap over the run in `points` buckets (default 600) |
//! | `snapshots?from&to` | the snapshot times within a window |
//! | `tree?by&times&metric&sort&prune&path&depth&from&to` | memory trees at some times ([`request::TreeRequest`]) |
//! | `growth?by&top&from&to` | the leak suspects of a grouping |
//!
//! With a base run (`memlens view NEW --base OLD`), `meta` names it and every `tree`
//! answer carries the base's values of each node (`base`), matched by group at the
//! same fraction of each run (`memlens_heap::BaseRun`).
//!
//! `from`/`to` (ns) is a window the user brushed on the timeline: its snapshot times
//! are its own, and growth, the growth ranking and the stable order are measured
//! between its ends; without them, the whole run.
//! | `stacks?by&path&time&top` | the heaviest call stacks of one node at one instant ([`request::StacksRequest`]) |
//!
//! Fast steps: memory-tree series are built once per classifier list (one pass over
//! the allocations); a step to a snapshot time is a cache hit, and a step to any other
//! time adds that time to a small series with `add_time`, so it costs milliseconds even
//! for 10 M allocations (`cargo bench -p memlens-server --bench time_step` measures
//! it). After each tree answer the engine prepares for the next step while idle.

mod drill;
mod engine;
pub mod request;
mod series_cache;
mod snapshots;
mod worker;

use std::collections::HashMap;

use memlens_heap::{HeapModel, Metric, SortStrategy};

use crate::error::ApiError;
use crate::lens_api::{ApiBody, LensApi, ReportRequest};
use crate::protocol::{LensWire, to_json};

pub use engine::{Base, Engine, EngineOptions};
pub use snapshots::{Snapshot, SnapshotKind, check_points, snapshot_plan};

use request::{
    ClassifierList, GrowthRequest, SnapshotsRequest, StacksRequest, TimelineRequest, TreeRequest,
};
use worker::EngineHandle;

/// Timeline buckets the page asks for (`web/src/heap/lens.ts`).
const PAGE_TIMELINE_POINTS: usize = 600;
/// Suspects the page asks for (`web/src/heap/lens.ts`).
const PAGE_SUSPECTS: usize = 20;

/// The heap-evolution lens over one model.
pub struct HeapLens {
    engine: EngineHandle,
    /// The default classifier list as the page spells it (`site,thread`).
    default_by: String,
}

impl HeapLens {
    /// A lens over `model`: starts its engine thread, which owns the model, and waits
    /// until the snapshot times are found (one pass over the model); then warms the
    /// page's first answers (timeline, default trees, suspects) in the background.
    /// Fails when the default classifier list is not valid.
    pub fn new(model: HeapModel, options: EngineOptions) -> Result<HeapLens, ApiError> {
        HeapLens::compared(model, None, options)
    }

    /// A lens over `model` whose trees carry the values of `base` (a base run and its
    /// trace's name: `memlens view NEW --base OLD`), matched by group at the same
    /// fraction of each run.
    pub fn compared(
        model: HeapModel,
        base: Option<(HeapModel, String)>,
        options: EngineOptions,
    ) -> Result<HeapLens, ApiError> {
        let default_by = options.default_names().join(",");
        let engine = EngineHandle::spawn(model, base, options)?;
        let warm_by = ClassifierList::parse(&default_by, Vec::new())?;
        engine.submit(move |e| {
            // Build what the page asks for first, while the browser starts.
            let _ = e.timeline(TimelineRequest {
                points: PAGE_TIMELINE_POINTS,
            });
            let _ = e.tree(&TreeRequest {
                by: warm_by.clone(),
                times: Vec::new(),
                metric: Metric::Bytes,
                sort: SortStrategy::AbsoluteGrowth,
                prune: true,
                path: None,
                depth: None,
                window: None,
            });
            let _ = e.growth(&GrowthRequest {
                by: warm_by,
                top: PAGE_SUSPECTS,
                window: None,
            });
        });
        Ok(HeapLens { engine, default_by })
    }

    /// Runs `job` on the engine thread and flattens its errors.
    fn call(
        &self,
        job: impl for<'m> FnOnce(&mut Engine<'m>) -> Result<ApiBody, ApiError> + Send + 'static,
    ) -> Result<ApiBody, ApiError> {
        self.engine.call(job)?
    }
}

impl LensApi for HeapLens {
    fn descriptor(&self) -> LensWire {
        LensWire {
            id: "heap",
            title: "Heap evolution",
            question: "What accumulates, where was it allocated, and how does it grow over time?",
        }
    }

    fn answer(&self, route: &str, query: &HashMap<String, String>) -> Result<ApiBody, ApiError> {
        match route {
            "meta" => self.call(|e| Ok(ApiBody::json(to_json(&e.meta())))),
            "timeline" => {
                let request = TimelineRequest::from_query(query)?;
                self.call(move |e| Ok(ApiBody::json(to_json(e.timeline(request)?))))
            }
            "tree" => {
                let request = TreeRequest::from_query(query, &self.default_by)?;
                let answer = self.call(move |e| Ok(ApiBody::json(to_json(&e.tree(&request)?))));
                // After the answer: get ready for the next step.
                self.engine.submit(|e| {
                    let _ = e.maintain();
                });
                answer
            }
            "snapshots" => {
                let request = SnapshotsRequest::from_query(query)?;
                self.call(move |e| Ok(ApiBody::json(to_json(&e.window_snapshots(request)?))))
            }
            "growth" => {
                let request = GrowthRequest::from_query(query, &self.default_by)?;
                self.call(move |e| Ok(ApiBody::json(to_json(&e.growth(&request)?))))
            }
            "stacks" => {
                let request = StacksRequest::from_query(query, &self.default_by)?;
                self.call(move |e| Ok(ApiBody::json(to_json(&e.stacks(&request)?))))
            }
            other => Err(ApiError {
                status: 404,
                message: format!(
                    "the heap lens has no route `{other}`: use meta, timeline, snapshots, tree, growth or stacks"
                ),
            }),
        }
    }

    /// Meta, the timeline, the suspects and the trees of the default classifier list at
    /// every snapshot time, for both metrics and every sort strategy: everything the
    /// page asks for but other groupings and times between snapshots.
    fn report_requests(&self) -> Vec<ReportRequest> {
        let by = self.default_by.as_str();
        let mut requests = vec![
            ReportRequest::new::<&str, &str>("meta", []),
            ReportRequest::new("timeline", [("points", PAGE_TIMELINE_POINTS.to_string())]),
            ReportRequest::new(
                "growth",
                [("by", by.to_owned()), ("top", PAGE_SUSPECTS.to_string())],
            ),
        ];
        for metric in [Metric::Bytes, Metric::Objects] {
            for sort in [
                SortStrategy::AbsoluteGrowth,
                SortStrategy::StartSize,
                SortStrategy::EndSize,
            ] {
                // `times=` (none): every snapshot time; the page picks its times out.
                requests.push(ReportRequest::new(
                    "tree",
                    [
                        ("by", by),
                        ("metric", metric.name()),
                        ("sort", sort.name()),
                        ("times", ""),
                    ],
                ));
            }
        }
        requests
    }
}
