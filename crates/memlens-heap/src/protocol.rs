//! JSON wire forms of the heap engine's results. The model types stay plain; this module
//! alone knows serde.
//!
//! # AntTracks memory-tree JSON
//!
//! The shape AntTracks' `exportAsJSON` writes and its web viewer reads, one tree per
//! file (field names exactly as AntTracks writes them):
//!
//! ```json
//! { "classifiers": [{"name": "Allocation Site", "id": 0, "memlensName": "site"}],
//!   "time": 226582,
//!   "timeNs": 226582000000,
//!   "root": { "key": "Overall", "fullKey": ["Overall"], "fullKeyAsString": "Overall",
//!             "classifierId": -1, "bytes": 123456, "objects": 789,
//!             "transitiveClosureSize": -1, "retainedSize": -1,
//!             "children": [ … ] } }
//! ```
//!
//! `time` is in milliseconds as AntTracks has it; we also write `timeNs` and
//! `memlensName` so that our own round trip is exact, and read them when present. `fullKey` starts with the root's key.
//! `children` is left out for leaves. On import, full keys are rebuilt from the `key`
//! path (so they are consistent even if a producer's `fullKey` is not), a node keyed
//! `Other` is taken as a merged node, and sort positions follow the order of `children`.
//!
//! # memlens JSON (`memlens tree --json`, `memlens growth --json`)
//!
//! [`trees_to_json`] writes `{"classifiers":[names…],"times_ns":[…],"metric","sort",
//! "trees":[{"time_ns","root":{"key","full_key","bytes","objects","growth_bytes",
//! "growth_objects","sort_position","is_other","classifier","children":[…]}}]}` and
//! [`suspects_to_json`] writes `{"suspects":[{"key","full_key","growth_bytes",
//! "start_bytes","end_bytes","score",…}]}`, the shapes of DESIGN §7 plus extra fields.
//! Their wire structs ([`TreesWire`], [`SuspectsWire`]) are public so that the server
//! can name them: with the `ts` feature they derive their TypeScript declarations, from
//! which the web app's types are generated.

use serde::{Deserialize, Serialize};

use crate::metric::{Metric, SortStrategy};
use crate::output::{ClassifierInfo, Node, Suspect, Tree, Trees};
use crate::sampling::Sampling;

/// A JSON document that is not a valid memory tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed AntTracks memory-tree JSON: {message}")]
pub struct ProtocolError {
    /// What is wrong, with the line and column when the JSON itself is malformed.
    pub message: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AntTracksTree {
    classifiers: Vec<AntTracksClassifier>,
    time: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time_ns: Option<u64>,
    root: AntTracksNode,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AntTracksClassifier {
    name: String,
    id: i64,
    /// Our command-line name, so our own round trip is exact; other producers omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    memlens_name: Option<String>,
}

fn not_computed() -> i64 {
    -1
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AntTracksNode {
    key: String,
    #[serde(default)]
    full_key: Vec<String>,
    #[serde(default)]
    full_key_as_string: String,
    #[serde(default = "not_computed")]
    classifier_id: i64,
    bytes: u64,
    objects: u64,
    #[serde(default = "not_computed")]
    transitive_closure_size: i64,
    #[serde(default = "not_computed")]
    retained_size: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    children: Vec<AntTracksNode>,
}

/// Writes a series in AntTracks' JSON shape: one tree's document, or an array of them.
pub fn trees_to_anttracks_json(trees: &Trees) -> String {
    let documents: Vec<String> = trees
        .trees
        .iter()
        .map(|tree| tree_to_anttracks_json(&trees.classifiers, tree))
        .collect();
    match documents.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(",")),
    }
}

/// Writes one tree of a series in AntTracks' JSON shape.
pub fn tree_to_anttracks_json(classifiers: &[ClassifierInfo], tree: &Tree) -> String {
    let wire = AntTracksTree {
        classifiers: classifiers
            .iter()
            .enumerate()
            .map(|(id, c)| AntTracksClassifier {
                name: c.title.clone(),
                id: id as i64,
                memlens_name: Some(c.name.clone()),
            })
            .collect(),
        time: tree.time_ns / 1_000_000,
        time_ns: Some(tree.time_ns),
        root: to_wire(&tree.root, &tree.root.key),
    };
    serde_json::to_string(&wire).expect("memory trees always serialize")
}

fn to_wire(node: &Node, root_key: &str) -> AntTracksNode {
    let full_key: Vec<String> = std::iter::once(root_key.to_owned())
        .chain(node.full_key.iter().cloned())
        .collect();
    AntTracksNode {
        key: node.key.clone(),
        full_key_as_string: full_key.join(" -> "),
        full_key,
        classifier_id: node.classifier.map_or(-1, |c| c as i64),
        bytes: node.bytes,
        objects: node.objects,
        transitive_closure_size: -1,
        retained_size: -1,
        children: node.children.iter().map(|c| to_wire(c, root_key)).collect(),
    }
}

/// Reads one AntTracks memory tree, with its classifiers (the AntTracks name is the
/// title, and also the name unless the file carries our `memlensName`). Growth is zero:
/// a single tree has no baseline.
pub fn tree_from_anttracks_json(json: &str) -> Result<(Vec<ClassifierInfo>, Tree), ProtocolError> {
    let wire: AntTracksTree = serde_json::from_str(json).map_err(|e| ProtocolError {
        message: e.to_string(),
    })?;
    let ids: Vec<i64> = wire.classifiers.iter().map(|c| c.id).collect();
    let classifiers = wire
        .classifiers
        .into_iter()
        .map(|c| ClassifierInfo {
            name: c.memlens_name.unwrap_or_else(|| c.name.clone()),
            title: c.name,
        })
        .collect();
    let time_ns = wire.time_ns.unwrap_or(wire.time.saturating_mul(1_000_000));
    let root = from_wire(wire.root, None, 0, &ids)?;
    Ok((classifiers, Tree { time_ns, root }))
}

/// The AntTracks documents in one file's text: the document itself, or each element
/// of a top-level array (one tree per heap state).
pub fn anttracks_documents(text: &str) -> Result<Vec<String>, ProtocolError> {
    if !text.trim_start().starts_with('[') {
        return Ok(vec![text.to_owned()]);
    }
    let array: Vec<Box<serde_json::value::RawValue>> =
        serde_json::from_str(text).map_err(|e| ProtocolError {
            message: format!("malformed AntTracks memory-tree JSON array: {e}"),
        })?;
    Ok(array.into_iter().map(|d| d.get().to_owned()).collect())
}

/// Reads AntTracks files' texts (each one document or an array of them), named for the
/// error messages, into one series (see [`trees_from_anttracks_json`]).
pub fn trees_from_anttracks_files(files: &[(String, String)]) -> Result<Trees, ProtocolError> {
    let mut documents = Vec::new();
    for (name, text) in files {
        documents.extend(anttracks_documents(text).map_err(|e| ProtocolError {
            message: format!("{name}: {}", e.message),
        })?);
    }
    let names = || {
        files
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if documents.is_empty() {
        return Err(ProtocolError {
            message: format!("{}: holds no memory tree", names()),
        });
    }
    let refs: Vec<&str> = documents.iter().map(String::as_str).collect();
    trees_from_anttracks_json(&refs).map_err(|e| ProtocolError {
        message: format!("{}: {}", names(), e.message),
    })
}

/// Reads several AntTracks trees (one per heap state) into one series: sorted by time,
/// with growth relative to the earliest tree. Trees must share their classifiers.
pub fn trees_from_anttracks_json(documents: &[&str]) -> Result<Trees, ProtocolError> {
    let mut classifiers: Option<Vec<ClassifierInfo>> = None;
    let mut trees = Vec::new();
    for (i, json) in documents.iter().enumerate() {
        let (cls, tree) = tree_from_anttracks_json(json).map_err(|e| ProtocolError {
            message: format!("document {}: {}", i + 1, e.message),
        })?;
        match &classifiers {
            Some(first) if *first != cls => {
                return Err(ProtocolError {
                    message: format!("document {} uses other classifiers than document 1", i + 1),
                });
            }
            Some(_) => {}
            None => classifiers = Some(cls),
        }
        trees.push(tree);
    }
    trees.sort_by_key(|t| t.time_ns);
    if let Some(first) = trees.first().map(|t| t.root.clone()) {
        for tree in &mut trees {
            set_growth(&mut tree.root, &first);
        }
    }
    Ok(Trees {
        classifiers: classifiers.unwrap_or_default(),
        times_ns: trees.iter().map(|t| t.time_ns).collect(),
        metric: Metric::Bytes,
        sort: SortStrategy::AbsoluteGrowth,
        trees,
    })
}

fn set_growth(node: &mut Node, first_root: &Node) {
    let (bytes, objects) = first_root
        .find(&node.full_key)
        .map_or((0, 0), |n| (n.bytes, n.objects));
    node.growth_bytes = node.bytes as i64 - bytes as i64;
    node.growth_objects = node.objects as i64 - objects as i64;
    for child in &mut node.children {
        set_growth(child, first_root);
    }
}

/// `parent_key` is `None` for the root.
fn from_wire(
    node: AntTracksNode,
    parent_key: Option<&[String]>,
    position: usize,
    ids: &[i64],
) -> Result<Node, ProtocolError> {
    let full_key: Vec<String> = match parent_key {
        None => Vec::new(),
        Some(parent) => parent
            .iter()
            .cloned()
            .chain(std::iter::once(node.key.clone()))
            .collect(),
    };
    let classifier = match node.classifier_id {
        -1 => None,
        id => Some(
            ids.iter()
                .position(|&x| x == id)
                .ok_or_else(|| ProtocolError {
                    message: format!(
                        "node `{}` names classifier id {id}, which the `classifiers` list lacks",
                        node.key
                    ),
                })?,
        ),
    };
    let children = node
        .children
        .into_iter()
        .enumerate()
        .map(|(i, c)| from_wire(c, Some(&full_key), i, ids))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Node {
        is_other: parent_key.is_some() && node.key == Node::OTHER_KEY,
        key: node.key,
        full_key,
        classifier,
        bytes: node.bytes,
        objects: node.objects,
        growth_bytes: 0,
        growth_objects: 0,
        sort_position: position as u32,
        children,
    })
}

/// How a `--json` document (and the viewer's run) says that its figures are
/// estimates: `{"mean_interval_bytes": 524288, "estimates": true, "note": "sampled
/// recording: …"}`, or `null` for a full recording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export_to = "heap.ts"))]
pub struct SamplingWire {
    /// The mean number of bytes between two recorded allocations.
    pub mean_interval_bytes: u64,
    /// Always true: every count and byte figure is an unbiased estimate.
    pub estimates: bool,
    /// [`Sampling::note`].
    pub note: String,
}

impl From<Sampling> for SamplingWire {
    fn from(s: Sampling) -> SamplingWire {
        SamplingWire {
            mean_interval_bytes: s.mean_interval_bytes(),
            estimates: true,
            note: s.note(),
        }
    }
}

/// The `memlens tree --json` document: a series of memory trees.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export_to = "heap.ts"))]
pub struct TreesWire<'a> {
    /// The classifier names, outermost level first; a node's `classifier` indexes it.
    classifiers: Vec<&'a str>,
    /// The trees' times, ascending.
    times_ns: &'a [u64],
    /// What sizes nodes: [`Metric::name`].
    #[cfg_attr(feature = "ts", ts(type = r#""bytes" | "objects""#))]
    metric: &'static str,
    /// How children are ordered: [`SortStrategy::name`].
    #[cfg_attr(feature = "ts", ts(type = r#""growth" | "start" | "end""#))]
    sort: &'static str,
    /// One tree per time; all trees have the same nodes in the same order.
    trees: Vec<TreeWire<'a>>,
    /// Present for a sampled trace: bytes and objects are estimates.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    sampling: Option<SamplingWire>,
}

/// One memory tree of a series.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export_to = "heap.ts"))]
pub struct TreeWire<'a> {
    /// The heap state's time.
    time_ns: u64,
    /// The whole heap.
    root: NodeWire<'a>,
}

/// One node of a memory tree.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export_to = "heap.ts"))]
pub struct NodeWire<'a> {
    /// The key of this level (`Overall` for the root, `Other` for merged siblings).
    key: &'a str,
    /// The keys from below the root down to this node; empty for the root.
    full_key: &'a [String],
    /// Live bytes in the group (its whole subtree).
    bytes: u64,
    /// Live blocks in the group.
    objects: u64,
    /// `bytes` minus the same node's bytes in the series' first tree.
    growth_bytes: i64,
    /// `objects` minus the same node's objects in the series' first tree.
    growth_objects: i64,
    /// The position among its siblings, fixed across all times (`Other` last).
    sort_position: u32,
    /// Whether this is the `Other` node holding pruned siblings.
    is_other: bool,
    /// Index into `classifiers` of the level's classifier; none for the root.
    classifier: Option<usize>,
    /// Its children, in sort-position order.
    children: Vec<NodeWire<'a>>,
}

fn node_wire(node: &Node) -> NodeWire<'_> {
    NodeWire {
        key: &node.key,
        full_key: &node.full_key,
        bytes: node.bytes,
        objects: node.objects,
        growth_bytes: node.growth_bytes,
        growth_objects: node.growth_objects,
        sort_position: node.sort_position,
        is_other: node.is_other,
        classifier: node.classifier,
        children: node.children.iter().map(node_wire).collect(),
    }
}

/// The `memlens tree --json` document.
pub fn trees_to_json(trees: &Trees) -> String {
    trees_document(trees, None)
}

/// The `memlens tree --json` document of a trace recorded with `sampling` (its
/// `sampling` field says that the figures are estimates).
pub fn trees_document(trees: &Trees, sampling: Option<Sampling>) -> String {
    let wire = TreesWire {
        sampling: sampling.map(SamplingWire::from),
        classifiers: trees.classifiers.iter().map(|c| c.name.as_str()).collect(),
        times_ns: &trees.times_ns,
        metric: trees.metric.name(),
        sort: trees.sort.name(),
        trees: trees
            .trees
            .iter()
            .map(|t| TreeWire {
                time_ns: t.time_ns,
                root: node_wire(&t.root),
            })
            .collect(),
    };
    serde_json::to_string(&wire).expect("memory trees always serialize")
}

/// The `memlens growth --json` document: leak suspects, most suspicious first.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export_to = "heap.ts"))]
pub struct SuspectsWire<'a> {
    /// The suspects.
    suspects: Vec<SuspectWire<'a>>,
    /// Present for a sampled trace: bytes and objects are estimates.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    sampling: Option<SamplingWire>,
}

/// One leak suspect: a tree node and how its size grew.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export_to = "heap.ts"))]
pub struct SuspectWire<'a> {
    /// The group's key (its last level).
    key: &'a str,
    /// The keys from below the root down to the group.
    full_key: &'a [String],
    /// Live bytes at the window's end minus at its start.
    growth_bytes: i64,
    /// Live blocks at the window's end minus at its start.
    growth_objects: i64,
    /// Live bytes at the window's start.
    start_bytes: u64,
    /// Live bytes at the window's end.
    end_bytes: u64,
    /// The largest sampled live bytes in the window.
    max_bytes: u64,
    /// Bytes of the group's blocks that were never freed.
    live_at_exit_bytes: u64,
    /// The group's blocks that were never freed.
    live_at_exit_objects: u64,
    /// Net rise over total movement of the sampled series, in `[0, 1]`.
    monotonicity: f64,
    /// Goodness of a least-squares line through the samples, in `[0, 1]`.
    r_squared: f64,
    /// Slope of that line, in bytes per second.
    slope_bytes_per_s: f64,
    /// Whether the group still grows in the window's second half, in `[0, 1]`.
    persistence: f64,
    /// The ranking score: `growth_bytes × monotonicity × r_squared × persistence`.
    score: f64,
}

/// The `memlens growth --json` document.
pub fn suspects_to_json(suspects: &[Suspect]) -> String {
    suspects_document(suspects, None)
}

/// The `memlens growth --json` document of a trace recorded with `sampling`.
pub fn suspects_document(suspects: &[Suspect], sampling: Option<Sampling>) -> String {
    let wire = SuspectsWire {
        sampling: sampling.map(SamplingWire::from),
        suspects: suspects
            .iter()
            .map(|s| SuspectWire {
                key: &s.key,
                full_key: &s.full_key,
                growth_bytes: s.growth_bytes,
                growth_objects: s.growth_objects,
                start_bytes: s.start_bytes,
                end_bytes: s.end_bytes,
                max_bytes: s.max_bytes,
                live_at_exit_bytes: s.live_at_exit_bytes,
                live_at_exit_objects: s.live_at_exit_objects,
                monotonicity: s.monotonicity,
                r_squared: s.r_squared,
                slope_bytes_per_s: s.slope_bytes_per_s,
                persistence: s.persistence,
                score: s.score,
            })
            .collect(),
    };
    serde_json::to_string(&wire).expect("suspects always serialize")
}
