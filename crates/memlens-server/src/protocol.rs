//! The viewer's JSON wire forms: the viewer's own (`api/meta`, the report's data) and
//! the heap lens's (`api/heap/…`; the other lenses keep theirs in their `wire.rs`). The
//! engine's results stay plain types; this module alone decides how they look on the
//! wire (memory trees and suspects reuse the heap engine's own documents,
//! [`memlens_heap::protocol`], embedded as they are).
//!
//! | endpoint | document |
//! |---|---|
//! | `api/meta` | `{"version","program","pid","trace","lenses":[{"id","title","question"}],"notes":[…]}` |
//! | `api/heap/meta` | `{"run":{"start_ns","end_ns"},"stats":{…},"marks":[{"time_ns","name"}],"threads":[{"tid","name"}],"classifiers":[{"name","title","summary"}],"default_classifiers":[…],"snapshots":[{"time_ns","kind","label"}],"notes":[…]}` |
//! | `api/heap/timeline` | `{"window":{"start_ns","end_ns"},"peak":{"time_ns","bytes","objects"},"buckets":{"start_ns":[…],"end_ns":[…],"min_bytes":[…],"max_bytes":[…],"last_bytes":[…],"min_objects":[…],"max_objects":[…],"last_objects":[…]}}` (columns) |
//! | `api/heap/tree` | `{"doc":<memlens tree JSON of the requested times>,"totals":[{"time_ns","bytes","objects"}],"drill":{"requested":[…],"path":[…],"found"}}`; `totals` covers every time of the series, `drill` is present when a path was asked for |
//! | `api/heap/growth` | `{"by":"site,thread","doc":<the memlens growth --json document>}` |
//! | report data | `{"meta":<api/meta>,"answers":{"<lens>/<route>?<query>":{"type","json"\|"base64"}}}` ([`ReportWire`]) |
//!
//! Times are nanoseconds since the process started; sizes are bytes.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::value::RawValue;
use ts_rs::TS;

/// The version of these documents; a report records it so that a newer viewer can
/// read older reports. Version 2 moved the heap lens under `api/heap/` and made the
/// report's data the answers of every lens.
pub const VERSION: u32 = 2;

/// `api/meta`: the run and the lenses; each lens's own data comes from its routes.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct MetaWire<'a> {
    /// [`VERSION`].
    pub version: u32,
    /// The recorded command line.
    pub program: &'a str,
    /// The recorded process id.
    pub pid: Option<u32>,
    /// The trace's file name (never a directory: the page learns nothing about the
    /// file system).
    pub trace: &'a str,
    /// The lenses this viewer has data for, in tab order; the page shows only these.
    pub lenses: Vec<LensWire>,
    /// Things the user should know about the viewer as a whole, one sentence each
    /// (a report names the answers it could not embed).
    pub notes: Vec<String>,
    /// Set when the trace was sampled: every count and byte figure of every lens is an
    /// estimate, and the page says so with its `note`.
    pub sampling: Option<memlens_heap::protocol::SamplingWire>,
    /// Set when the trace starts mid-run (`memlens attach`): one sentence saying so
    /// (blocks allocated before the attach are unknown, their frees not matched).
    pub mid_run: Option<&'a str>,
    /// Whether the viewer follows a trace still being written: the page then asks
    /// `api/live` what changed.
    pub live: bool,
}

/// `api/heap/meta`: the heap lens's run, totals, marks, threads, classifiers and
/// snapshot times.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct HeapMetaWire<'a> {
    /// The recorded run.
    pub run: WindowWire,
    /// Totals over the run.
    pub stats: StatsWire,
    /// The program's marks.
    pub marks: Vec<MarkWire<'a>>,
    /// The recorded threads.
    pub threads: Vec<ThreadWire<'a>>,
    /// Every classifier the engine offers.
    pub classifiers: Vec<ClassifierWire>,
    /// The classifier list the viewer starts with.
    pub default_classifiers: Vec<&'a str>,
    /// The snapshot times, sorted.
    pub snapshots: Vec<SnapshotWire<'a>>,
    /// Things the user should know about the data (repaired events), one sentence each.
    pub notes: Vec<String>,
    /// The base run trees are compared with, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub base: Option<BaseInfoWire>,
}

/// A time window.
#[derive(Serialize, TS, Clone, Copy)]
#[ts(export_to = "viewer.ts")]
pub struct WindowWire {
    /// First instant.
    pub start_ns: u64,
    /// Last instant.
    pub end_ns: u64,
}

/// Run totals.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct StatsWire {
    /// Allocations recorded.
    pub allocations: u64,
    /// Blocks freed.
    pub frees: u64,
    /// `realloc` calls that kept a block.
    pub reallocations: u64,
    /// The largest live heap.
    pub peak_bytes: u64,
    /// When it was first reached.
    pub peak_time_ns: u64,
    /// Live blocks then.
    pub peak_objects: u64,
    /// Bytes never freed.
    pub live_at_exit_bytes: u64,
    /// Blocks never freed.
    pub live_at_exit_objects: u64,
}

/// A mark.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct MarkWire<'a> {
    /// When.
    pub time_ns: u64,
    /// Its name.
    pub name: &'a str,
}

/// A thread.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct ThreadWire<'a> {
    /// The operating-system thread id.
    pub tid: u64,
    /// Its name, empty when never named.
    pub name: &'a str,
}

/// A classifier the user can add to the list.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct ClassifierWire {
    /// The name used in `by`.
    pub name: &'static str,
    /// The human title.
    pub title: &'static str,
    /// What it groups by, one phrase.
    pub summary: &'static str,
}

/// A snapshot time.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct SnapshotWire<'a> {
    /// When.
    pub time_ns: u64,
    /// `start`, `point`, `mark`, `peak` or `dip`.
    #[ts(type = r#""start" | "point" | "mark" | "peak" | "dip""#)]
    pub kind: &'static str,
    /// The mark's name, `peak`, … or empty.
    pub label: &'a str,
}

/// A lens the page may show.
#[derive(Serialize, TS, Debug, Clone, PartialEq, Eq)]
#[ts(export_to = "viewer.ts")]
pub struct LensWire {
    /// The id the page's lens registry knows it by.
    pub id: &'static str,
    /// The tab title.
    pub title: &'static str,
    /// The question it answers.
    pub question: &'static str,
}

/// `api/timeline`, in columns.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct TimelineWire {
    /// The window the buckets cover.
    pub window: WindowWire,
    /// The highest heap in the window.
    pub peak: PointWire,
    /// The buckets, one array per field.
    pub buckets: BucketColumns,
}

/// A point of the heap curve.
#[derive(Serialize, TS, Clone, Copy)]
#[ts(export_to = "viewer.ts")]
pub struct PointWire {
    /// When.
    pub time_ns: u64,
    /// Live bytes.
    pub bytes: u64,
    /// Live blocks.
    pub objects: u64,
}

/// Timeline buckets as columns.
#[derive(Serialize, TS, Default)]
#[ts(export_to = "viewer.ts")]
pub struct BucketColumns {
    /// First nanosecond of each bucket.
    pub start_ns: Vec<u64>,
    /// Last nanosecond of each bucket.
    pub end_ns: Vec<u64>,
    /// Smallest live bytes in each bucket.
    pub min_bytes: Vec<u64>,
    /// Largest live bytes in each bucket.
    pub max_bytes: Vec<u64>,
    /// Live bytes at each bucket's end.
    pub last_bytes: Vec<u64>,
    /// Smallest live objects in each bucket.
    pub min_objects: Vec<u64>,
    /// Largest live objects in each bucket.
    pub max_objects: Vec<u64>,
    /// Live objects at each bucket's end.
    pub last_objects: Vec<u64>,
}

/// How a drill-down path was resolved.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct DrillWire<'a> {
    /// The path asked for.
    pub requested: &'a [String],
    /// The path of the node returned as each tree's root: the requested one, or its
    /// closest ancestor that exists and is not empty in every requested tree.
    pub path: &'a [String],
    /// Whether the requested node itself was returned.
    pub found: bool,
}

/// `api/heap/tree`.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct TreeAnswerWire<'a> {
    /// The memory trees of the requested times: the heap engine's `memlens tree
    /// --json` document, as it wrote it.
    #[ts(as = "memlens_heap::protocol::TreesWire<'static>")]
    pub doc: Box<RawValue>,
    /// The heap at every time of the series.
    pub totals: Vec<PointWire>,
    /// The first-level groups of the trees at every time of the series (`totals`'
    /// times), for the stacked "memory over time by group" chart.
    pub layers: Vec<LayerWire>,
    /// How the drill-down path was resolved, when one was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub drill: Option<DrillWire<'a>>,
    /// With a base run (`memlens view NEW --base OLD`): the base's values of every node
    /// of each tree in `doc`, in its order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub base: Option<Vec<BaseTreeWire>>,
}

/// The base run's values of the nodes of one tree (`memlens view --base`).
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct BaseTreeWire {
    /// The tree's time in the viewed run.
    pub time_ns: u64,
    /// The base instant it is compared with: the same fraction of the base run.
    pub base_time_ns: u64,
    /// One entry per node of the tree.
    pub nodes: Vec<BaseNodeWire>,
}

/// A node's live memory in the base run (zero when the base has no such group).
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct BaseNodeWire {
    /// The node's full key, as in the viewed run's tree.
    pub full_key: Vec<String>,
    /// Live bytes in the base.
    pub bytes: u64,
    /// Live blocks in the base.
    pub objects: u64,
}

/// The base run trees are compared with (`memlens view NEW --base OLD`).
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct BaseInfoWire {
    /// The base trace's file name.
    pub name: String,
    /// The base's recorded run.
    pub run: WindowWire,
    /// Peak live bytes of the base.
    pub peak_bytes: u64,
    /// Bytes the base never freed.
    pub live_at_exit_bytes: u64,
}

/// `api/heap/stacks`: the call stacks behind one node of a memory tree.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct StacksWire {
    /// The classifier list, e.g. `site,thread`.
    pub by: String,
    /// The node's full key.
    pub path: Vec<String>,
    /// The instant, ns since the process started.
    pub time_ns: u64,
    /// The group's live bytes at the instant.
    pub bytes: u64,
    /// Its live blocks.
    pub objects: u64,
    /// How many distinct stacks hold them.
    pub stack_count: usize,
    /// The heaviest stacks, heaviest first.
    pub stacks: Vec<StackWire>,
}

/// One stack of a group.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct StackWire {
    /// Live bytes allocated from it in the group.
    pub bytes: u64,
    /// Live blocks.
    pub objects: u64,
    /// Its frames, the allocation site first (allocator frames folded, as the frame
    /// policy says).
    pub frames: Vec<FrameWire>,
}

/// One symbolized frame.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct FrameWire {
    /// The function; empty when no symbol covers the address.
    pub function: String,
    /// The source file; empty when unknown.
    pub file: String,
    /// The 1-based line; 0 when unknown.
    pub line: u32,
    /// The module (executable or shared object).
    pub module: String,
    /// Inlined into the next frame outwards.
    pub inlined: bool,
    /// What the frame policy says of it.
    pub kind: memlens_vocab::FrameKind,
}

/// One first-level group over the times of a tree series.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct LayerWire {
    /// The group's key.
    pub key: String,
    /// Whether it is `Other`.
    pub is_other: bool,
    /// Its live bytes at each time.
    pub bytes: Vec<u64>,
    /// Its live blocks at each time.
    pub objects: Vec<u64>,
}

/// `api/heap/growth`.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct GrowthAnswerWire {
    /// The classifier list, e.g. `site,thread`.
    pub by: String,
    /// The heap engine's `memlens growth --json` document, as it wrote it.
    #[ts(as = "memlens_heap::protocol::SuspectsWire<'static>")]
    pub doc: Box<RawValue>,
}

/// The data a report embeds: the viewer's meta and the answers of every lens, keyed
/// by `<lens>/<route>`, then `?` and the query when there is one, its pairs sorted by
/// name and written as `application/x-www-form-urlencoded` (the page's `URLSearchParams`
/// writes the same text).
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct ReportWire<'a> {
    /// What `api/meta` answers.
    pub meta: MetaWire<'a>,
    /// The answers, by key.
    pub answers: BTreeMap<String, EmbeddedAnswerWire>,
}

/// One embedded answer: a JSON document as it is, anything else (PNG images, binary
/// columns) in base64.
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct EmbeddedAnswerWire {
    /// The answer's media type, as the server's `Content-Type`.
    #[serde(rename = "type")]
    pub content_type: &'static str,
    /// The JSON document, for JSON answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub json: Option<Box<RawValue>>,
    /// The bytes in standard base64 with padding, for the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub base64: Option<String>,
}

/// An API error: the one sentence the page shows (any lens, any route).
#[derive(Serialize, TS)]
#[ts(export_to = "viewer.ts")]
pub struct ErrorWire {
    /// What went wrong, naming the argument at fault.
    pub error: String,
}

/// Serializes a wire value; these types always serialize.
pub fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("wire types always serialize")
}
