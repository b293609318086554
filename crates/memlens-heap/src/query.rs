//! One-call entry points for the CLI: memory trees for a query.
//!
//! `memlens tree FILE --by C1,C2 --points K --metric M --sort S` maps onto a
//! [`TreeQuery`] and [`memory_trees`]; a viewer that steps through time keeps the
//! [`TreeSeries`] instead and calls [`TreeSeries::add_time`].

use crate::classifiers::ClassifierChain;
use crate::error::HeapError;
use crate::model::{HeapModel, TimeWindow};
use crate::output::Trees;
use crate::skeleton::TreeOptions;
use crate::snapshots::SnapshotTimes;
use crate::trees::TreeSeries;

/// Everything `memlens tree` asks for.
#[derive(Debug, Clone)]
pub struct TreeQuery {
    /// The grouping, outermost level first.
    pub classifiers: ClassifierChain,
    /// Where the snapshot times come from.
    pub times: SnapshotTimes,
    /// The time window; `None` is the whole run.
    pub window: Option<TimeWindow>,
    /// Metric, sort strategy and pruning.
    pub options: TreeOptions,
}

/// Resolves the snapshot times, computes all trees in one pass, orders and prunes them.
pub fn memory_trees(model: &HeapModel, query: &TreeQuery) -> Result<Trees, HeapError> {
    let times = query.times.resolve(model, query.window)?;
    let series = TreeSeries::compute(model, &query.classifiers, &times)?;
    Ok(series.trees(&query.options))
}
