//! The heap-evolution engine of memlens: what accumulates, where it was allocated, and
//! how it grows over time (Weninger et al., memory-tree visualization in AntTracks).
//!
//! The crate is pure: it takes a model filled by the caller and returns plain results
//! plus diagnostics. It does no file or network IO and does not depend on other memlens
//! crates. Data flows:
//!
//! 1. [`HeapModelBuilder`] receives time-ordered events (`alloc`, `free`, `realloc`,
//!    `mark`, `end`) and context (frames, stacks, threads, types) and produces a columnar
//!    [`HeapModel`] of allocation lifetimes.
//! 2. [`HeapModel::timeline`] gives heap bytes and objects over time at any resolution;
//!    [`peaks_and_dips`] finds its extrema.
//! 3. [`parse_classifiers`] turns `site,thread` into a [`ClassifierChain`];
//!    [`SnapshotTimes`] picks snapshot times; [`TreeSeries::compute`] builds the memory
//!    trees at all times in one pass; [`TreeSeries::trees`] orders them by the meta tree
//!    and prunes them into [`Trees`]. [`memory_trees`] does all of it in one call;
//!    [`TreeSeries::add_time`] adds one more time to a built series (a viewer step).
//! 4. [`growth_suspects`] ranks growing groups ("leak suspects");
//!    [`dominant_call_paths`] follows each suspect's growing call path; [`rank_sites`]
//!    ranks the summary's stacks by the site each names.
//! 5. [`render_tree`] prints a tree; [`protocol`] converts to and from JSON, including
//!    the AntTracks memory-tree format.
//!
//! A sampled trace's allocations stand for several each ([`Sampling`]); the builders
//! weigh them once, as they arrive, so every figure above is an unbiased estimate.
//!
//! Architecture invariant: nothing here panics on odd input data; odd input is repaired
//! and counted in [`Diagnostics`], and bad query arguments are [`HeapError`] values.
#![deny(missing_docs)]

mod base_run;
mod builder;
mod call_paths;
pub mod classifiers;
mod coalesce;
mod context;
mod diagnostics;
mod diff;
pub mod diff_wire;
mod error;
mod extrema;
mod group_stacks;
mod growth;
mod ids;
pub mod latency;
mod meta_tree;
mod metric;
mod model;
mod model_codec;
mod output;
pub mod protocol;
mod pruning;
mod query;
mod ranking;
mod sampling;
mod skeleton;
mod snapshots;
pub mod summary;
mod summary_codec;
pub mod summary_wire;
mod text;
mod time_args;
mod time_step;
mod timeline;
mod trees;
mod union_tree;
mod units;

pub use base_run::{BaseRun, BaseValues};
pub use builder::HeapModelBuilder;
pub use call_paths::dominant_call_paths;
pub use classifiers::{
    Classifier, ClassifierChain, ClassifierOptions, MULTIPLE_DATA_STRUCTURES, NOT_CONTAINED,
    data_structure_key, parse_classifiers, size_class_label, size_class_of,
};
pub use context::{Context, FrameInfo, FrameTable, StackTable, StringTable, ThreadTable};
pub use diagnostics::Diagnostics;
pub use diff::{DiffInstants, GroupDiff, HeapDiff, Live, diff_runs};
pub use error::{HeapError, MAX_TIMELINE_BUCKETS};
pub use extrema::{Extremum, ExtremumKind, peaks_and_dips};
pub use group_stacks::{GroupStack, GroupStacks, StackFrame, group_stacks};
pub use growth::{GrowthQuery, growth_suspects};
pub use ids::{AllocId, FrameId, StackId, StringId, ThreadIndex, TypeId};
pub use metric::{Metric, SortStrategy};
pub use model::{AllocKind, HeapModel, Mark, NEVER_FREED, RunStats, TimeWindow};
pub use model_codec::{MODEL_CODEC_VERSION, ModelDecodeError};
pub use output::{ClassifierInfo, Node, Suspect, Tree, Trees};
pub use pruning::PruneRule;
pub use query::{TreeQuery, memory_trees};
pub use ranking::{RankedSite, rank_sites};
pub use sampling::{Sampling, event_key};
pub use skeleton::TreeOptions;
pub use snapshots::SnapshotTimes;
pub use summary_codec::{SUMMARY_CODEC_VERSION, decode_summary, encode_summary};
pub use text::{TextOptions, render_latency, render_tree, render_trees};
pub use time_args::{named_times, time_in_run, window_in_run};
pub use timeline::{HeapPoint, Resolution, Timeline, TimelineBucket};
pub use trees::TreeSeries;
pub use units::{format_bytes, format_duration, format_latency, format_signed_bytes, format_time};
