//! The shape shared by every tree of a series, and its instantiation at each time.
//!
//! From the union tree, the meta tree's order and the pruning rule we build the
//! *skeleton* once: which nodes survive, which are merged into each `Other`, their keys,
//! full keys and sort positions. Each output tree then only sums values along it, so
//! every tree of a series has the same nodes in the same order (a viewer can tween
//! between them by full key).

use crate::meta_tree::MetaTree;
use crate::metric::{Metric, SortStrategy};
use crate::output::{ClassifierInfo, Node, Tree, Trees};
use crate::pruning::PruneRule;
use crate::trees::TreeSeries;
use crate::union_tree::ROOT;

/// How to turn a series into output trees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeOptions {
    /// The size used for sorting and pruning.
    pub metric: Metric,
    /// The stable order.
    pub sort: SortStrategy,
    /// The pruning rule; `None` keeps every node.
    pub prune: Option<PruneRule>,
}

impl Default for TreeOptions {
    /// Bytes, absolute growth, the paper's pruning.
    fn default() -> Self {
        TreeOptions {
            metric: Metric::Bytes,
            sort: SortStrategy::AbsoluteGrowth,
            prune: Some(PruneRule::default()),
        }
    }
}

/// The union-tree nodes a skeleton node stands for.
enum Members {
    One(u32),
    Other(Vec<u32>),
}

struct Shape {
    members: Members,
    key: String,
    full_key: Vec<String>,
    classifier: Option<usize>,
    sort_position: u32,
    children: Vec<Shape>,
}

impl TreeSeries<'_> {
    /// The memory trees at every time of the series, ordered by the meta tree and pruned.
    pub fn trees(&self, options: &TreeOptions) -> Trees {
        let meta = MetaTree::new(self, options.metric, options.sort);
        let children = self.tree.children();
        let root = Shape {
            members: Members::One(ROOT),
            key: Node::ROOT_KEY.to_owned(),
            full_key: Vec::new(),
            classifier: None,
            sort_position: 0,
            children: shape_children(&meta, &children, options.prune, ROOT, &[]),
        };
        let classifiers = self
            .classifiers
            .iter()
            .map(|c| ClassifierInfo {
                name: c.name().to_owned(),
                title: c.title().to_owned(),
            })
            .collect();
        let trees = (0..self.times.len())
            .map(|k| Tree {
                time_ns: self.times[k],
                root: instantiate(self, &root, k),
            })
            .collect();
        Trees {
            classifiers,
            times_ns: self.times.clone(),
            metric: options.metric,
            sort: options.sort,
            trees,
        }
    }
}

fn shape_children(
    meta: &MetaTree<'_, '_>,
    children: &[Vec<u32>],
    prune: Option<PruneRule>,
    node: u32,
    full_key: &[String],
) -> Vec<Shape> {
    let ordered = meta.order(&children[node as usize]);
    let parent: Vec<u64> = meta.values(&[node]);
    shape_members(meta, children, prune, &ordered, &parent, full_key, true)
}

/// The shapes of `ordered` (siblings in stable order, whose parent — a node, or an
/// `Other` — holds `parent[k]` at time `k`): the kept ones, each with its subtree, then
/// an `Other` of the rest. With `open_other`, that `Other` opens into its members the
/// same way (once: the `Other` inside it is a leaf).
fn shape_members(
    meta: &MetaTree<'_, '_>,
    children: &[Vec<u32>],
    prune: Option<PruneRule>,
    ordered: &[u32],
    parent: &[u64],
    full_key: &[String],
    open_other: bool,
) -> Vec<Shape> {
    let kept = match prune {
        Some(rule) => {
            let sizes: Vec<Vec<u64>> = (0..parent.len())
                .map(|k| ordered.iter().map(|&c| meta.value(c, k)).collect())
                .collect();
            rule.kept_in_series(&sizes, parent, meta.reference)
        }
        None => vec![true; ordered.len()],
    };
    let (mut shown, mut rest) = (Vec::new(), Vec::new());
    for (&child, &keep) in ordered.iter().zip(&kept) {
        if keep { &mut shown } else { &mut rest }.push(child);
    }
    let mut shapes: Vec<Shape> = shown
        .iter()
        .enumerate()
        .map(|(position, &child)| {
            let key = meta.label(child);
            let mut child_key = full_key.to_vec();
            child_key.push(key.clone());
            Shape {
                members: Members::One(child),
                children: shape_children(meta, children, prune, child, &child_key),
                key,
                full_key: child_key,
                classifier: Some(meta.series.tree.level[child as usize] as usize),
                sort_position: position as u32,
            }
        })
        .collect();
    if !rest.is_empty() {
        let mut other_key = full_key.to_vec();
        other_key.push(Node::OTHER_KEY.to_owned());
        let members = if open_other {
            let other_values = meta.values(&rest);
            shape_members(
                meta,
                children,
                prune,
                &rest,
                &other_values,
                &other_key,
                false,
            )
        } else {
            Vec::new()
        };
        shapes.push(Shape {
            classifier: Some(meta.series.tree.level[rest[0] as usize] as usize),
            members: Members::Other(rest),
            key: Node::OTHER_KEY.to_owned(),
            full_key: other_key,
            sort_position: shown.len() as u32,
            children: members,
        });
    }
    shapes
}

fn instantiate(series: &TreeSeries<'_>, shape: &Shape, k: usize) -> Node {
    let sum = |values: &[Vec<u64>], k: usize| -> u64 {
        match &shape.members {
            Members::One(n) => values[k][*n as usize],
            Members::Other(ns) => ns.iter().map(|&n| values[k][n as usize]).sum(),
        }
    };
    let (bytes, objects) = (sum(&series.bytes, k), sum(&series.objects, k));
    Node {
        key: shape.key.clone(),
        full_key: shape.full_key.clone(),
        classifier: shape.classifier,
        is_other: matches!(shape.members, Members::Other(_)),
        bytes,
        objects,
        growth_bytes: bytes as i64 - sum(&series.bytes, 0) as i64,
        growth_objects: objects as i64 - sum(&series.objects, 0) as i64,
        sort_position: shape.sort_position,
        children: shape
            .children
            .iter()
            .map(|c| instantiate(series, c, k))
            .collect(),
    }
}
