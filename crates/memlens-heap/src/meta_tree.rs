//! The meta tree: one sort value per node over all times, and the stable sibling order
//! it defines (paper §5.1, "relative position animation").
//!
//! The sort strategy picks one number per node of the union tree: its size in the first
//! tree (*start size*), in the last tree (*end size*), or the difference (*absolute
//! growth*, the default, best for leak hunting). Siblings are ordered by that number,
//! largest first, once for the whole series, so a node keeps its position at every time.
//!
//! Ties are broken deterministically: by the node's size in the reference tree (larger
//! first), then by key text (ascending), then by creation order in the union tree.

use std::cmp::Ordering;

use crate::metric::{Metric, SortStrategy};
use crate::trees::TreeSeries;

/// Sort values and reference sizes for every node of a series' union tree.
pub(crate) struct MetaTree<'s, 'm> {
    pub series: &'s TreeSeries<'m>,
    pub metric: Metric,
    /// The time whose tree pruning measures coverage on: the first for start-size
    /// sorting, the last otherwise (as AntTracks does).
    pub reference: usize,
    sort_value: Vec<i64>,
}

impl<'s, 'm> MetaTree<'s, 'm> {
    pub(crate) fn new(series: &'s TreeSeries<'m>, metric: Metric, strategy: SortStrategy) -> Self {
        let last = series.times.len() - 1;
        let reference = if strategy == SortStrategy::StartSize {
            0
        } else {
            last
        };
        let mut meta = MetaTree {
            series,
            metric,
            reference,
            sort_value: Vec::new(),
        };
        meta.sort_value = (0..series.tree.len() as u32)
            .map(|node| match strategy {
                SortStrategy::StartSize => meta.value(node, 0) as i64,
                SortStrategy::EndSize => meta.value(node, last) as i64,
                SortStrategy::AbsoluteGrowth => {
                    meta.value(node, last) as i64 - meta.value(node, 0) as i64
                }
            })
            .collect();
        meta
    }

    /// The node's size under the metric at time index `k`.
    pub(crate) fn value(&self, node: u32, k: usize) -> u64 {
        let values = match self.metric {
            Metric::Bytes => &self.series.bytes,
            Metric::Objects => &self.series.objects,
        };
        values[k][node as usize]
    }

    /// The summed size of `nodes` at every time.
    pub(crate) fn values(&self, nodes: &[u32]) -> Vec<u64> {
        (0..self.series.times.len())
            .map(|k| nodes.iter().map(|&n| self.value(n, k)).sum())
            .collect()
    }

    /// The node's size in the reference tree.
    pub(crate) fn reference_value(&self, node: u32) -> u64 {
        self.value(node, self.reference)
    }

    /// The label of a (non-root) node's key.
    pub(crate) fn label(&self, node: u32) -> String {
        let tree = &self.series.tree;
        let level = tree.level[node as usize] as usize;
        self.series.classifiers[level].label(tree.key[node as usize])
    }

    /// `children` sorted into the stable order (see the module documentation).
    pub(crate) fn order(&self, children: &[u32]) -> Vec<u32> {
        let mut ordered = children.to_vec();
        ordered.sort_by(|&a, &b| {
            let by_value = self.sort_value[b as usize]
                .cmp(&self.sort_value[a as usize])
                .then_with(|| self.reference_value(b).cmp(&self.reference_value(a)));
            match by_value {
                Ordering::Equal => self.label(a).cmp(&self.label(b)).then(a.cmp(&b)),
                other => other,
            }
        });
        ordered
    }
}
