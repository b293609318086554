//! The plain result types the CLI, the server and the text renderer consume.
//!
//! These are model types: no serde here. Their JSON forms live in
//! [`protocol`](crate::protocol).

use crate::metric::{Metric, SortStrategy};

/// A classifier as the output names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifierInfo {
    /// The command-line name (`site`), or the producer's name for imported trees.
    pub name: String,
    /// The human title (`Allocation Site`).
    pub title: String,
}

/// Memory trees at several times, pruned and in stable order.
#[derive(Debug, Clone, PartialEq)]
pub struct Trees {
    /// The classifiers, outermost level first; [`Node::classifier`] indexes this.
    pub classifiers: Vec<ClassifierInfo>,
    /// The snapshot times, ascending; `trees[k].time_ns == times_ns[k]`.
    pub times_ns: Vec<u64>,
    /// The metric that pruning and sorting used.
    pub metric: Metric,
    /// The sort strategy that fixed the order.
    pub sort: SortStrategy,
    /// One tree per time. All trees have the same nodes (same full keys) in the same
    /// order; a node absent at some time has zero bytes and objects there.
    pub trees: Vec<Tree>,
}

/// The memory tree at one time.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    /// The snapshot time.
    pub time_ns: u64,
    /// The whole heap.
    pub root: Node,
}

/// One group of live blocks.
///
/// `bytes` and `objects` include the whole subtree. They can exceed the sum of the
/// children when some blocks end their key path at this node (with `call-path`, a
/// shorter stack ends higher up).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The key of this level (`Overall` for the root, `Other` for merged siblings).
    pub key: String,
    /// The keys from below the root down to this node; empty for the root. Unique in a
    /// tree, and the same across all trees of a series: join on it.
    pub full_key: Vec<String>,
    /// Index into [`Trees::classifiers`] of the level's classifier; `None` for the root.
    pub classifier: Option<usize>,
    /// Whether this is the `Other` node holding pruned siblings.
    pub is_other: bool,
    /// Live bytes in the group.
    pub bytes: u64,
    /// Live blocks in the group.
    pub objects: u64,
    /// `bytes` minus the same node's bytes in the series' first tree.
    pub growth_bytes: i64,
    /// `objects` minus the same node's objects in the series' first tree.
    pub growth_objects: i64,
    /// The node's position among its siblings, fixed across all times (0 first; `Other`
    /// always last).
    pub sort_position: u32,
    /// The children in sort-position order.
    pub children: Vec<Node>,
}

impl Node {
    /// The key used for the root node.
    pub const ROOT_KEY: &'static str = "Overall";
    /// The key used for merged siblings.
    pub const OTHER_KEY: &'static str = "Other";

    /// Visits this node and its descendants, parents first.
    pub fn walk<'a>(&'a self, visit: &mut impl FnMut(&'a Node)) {
        visit(self);
        for child in &self.children {
            child.walk(visit);
        }
    }

    /// The descendant (or self) with this full key.
    pub fn find(&self, full_key: &[String]) -> Option<&Node> {
        let mut node = self;
        for key in full_key {
            node = node.children.iter().find(|c| &c.key == key)?;
        }
        Some(node)
    }
}

/// A group whose live memory grows: a leak suspect.
#[derive(Debug, Clone, PartialEq)]
pub struct Suspect {
    /// The group's key (its last level).
    pub key: String,
    /// The keys from below the root down to the group.
    pub full_key: Vec<String>,
    /// Live bytes at the window's end minus at its start.
    pub growth_bytes: i64,
    /// Live blocks at the window's end minus at its start.
    pub growth_objects: i64,
    /// Live bytes at the window's start.
    pub start_bytes: u64,
    /// Live bytes at the window's end.
    pub end_bytes: u64,
    /// The largest sampled live bytes in the window.
    pub max_bytes: u64,
    /// Bytes of the group's blocks that were never freed.
    pub live_at_exit_bytes: u64,
    /// The group's blocks that were never freed.
    pub live_at_exit_objects: u64,
    /// Net rise over total movement of the sampled series, in `[0, 1]`: 1 for a curve
    /// that never falls, near 0 for one that oscillates.
    pub monotonicity: f64,
    /// Goodness of a least-squares line through the samples, in `[0, 1]`.
    pub r_squared: f64,
    /// Slope of that line, in bytes per second.
    pub slope_bytes_per_s: f64,
    /// Whether the group still grows in the window's second half, in `[0, 1]`: 1 for
    /// steady growth, 0 for growth that stopped by the middle (a warmed-up pool).
    pub persistence: f64,
    /// The ranking score: `growth_bytes × monotonicity × r_squared × persistence` (bytes).
    pub score: f64,
}
