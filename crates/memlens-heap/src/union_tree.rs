//! The union tree: every node that any snapshot's memory tree has, under one numbering.
//!
//! Memory trees at different times share most of their nodes, so the engine keeps one
//! tree of node ids and stores per-time values beside it (the "meta tree" of the paper is
//! this tree with sort values attached). A node is identified by its parent, the index
//! of the classifier that made its level, and that classifier's key.
//!
//! Invariants: node 0 is the root (the whole heap); every other node's parent has a
//! smaller id, so iterating ids downwards visits children before parents.

use rustc_hash::FxHashMap;

use crate::classifiers::Classifier;
use crate::ids::AllocId;

/// The root's node id.
pub(crate) const ROOT: u32 = 0;
/// The `level` of the root, which no classifier made.
pub(crate) const ROOT_LEVEL: u16 = u16::MAX;

/// One numbering of all tree nodes, plus caches from classes to nodes.
pub(crate) struct UnionTree {
    /// Parent per node (the root is its own parent).
    pub parent: Vec<u32>,
    /// Index of the classifier that made the node's level.
    pub level: Vec<u16>,
    /// The classifier's key of the node.
    pub key: Vec<u32>,
    /// (parent, level, key) → node.
    child: FxHashMap<(u32, u16, u32), u32>,
    /// Per classifier: (node the classifier starts from, class) → deepest node of the
    /// class's key path.
    by_class: Vec<FxHashMap<u64, u32>>,
    /// For chains of at most four classifiers: all classes packed → leaf, so the common
    /// case costs one lookup per allocation instead of one per level.
    by_classes: FxHashMap<u128, u32>,
    scratch: Vec<u32>,
}

impl UnionTree {
    pub(crate) fn new(levels: usize) -> Self {
        UnionTree {
            parent: vec![ROOT],
            level: vec![ROOT_LEVEL],
            key: vec![0],
            child: FxHashMap::default(),
            by_class: (0..levels).map(|_| FxHashMap::default()).collect(),
            by_classes: FxHashMap::default(),
            scratch: Vec::new(),
        }
    }

    /// The number of nodes, including the root.
    pub(crate) fn len(&self) -> usize {
        self.parent.len()
    }

    /// The leaf node of `alloc` while it has `size` bytes at time `at_ns`, creating nodes
    /// as needed.
    pub(crate) fn leaf(
        &mut self,
        classifiers: &[Box<dyn Classifier + '_>],
        alloc: AllocId,
        size: u64,
        at_ns: u64,
    ) -> u32 {
        if classifiers.len() <= 4 {
            let mut packed = 0u128;
            for classifier in classifiers {
                packed = (packed << 32) | u128::from(classifier.class_of(alloc, size, at_ns));
            }
            if let Some(&leaf) = self.by_classes.get(&packed) {
                return leaf;
            }
            let leaf = self.leaf_by_level(classifiers, alloc, size, at_ns);
            self.by_classes.insert(packed, leaf);
            return leaf;
        }
        self.leaf_by_level(classifiers, alloc, size, at_ns)
    }

    fn leaf_by_level(
        &mut self,
        classifiers: &[Box<dyn Classifier + '_>],
        alloc: AllocId,
        size: u64,
        at_ns: u64,
    ) -> u32 {
        let mut node = ROOT;
        for (level, classifier) in classifiers.iter().enumerate() {
            let class = classifier.class_of(alloc, size, at_ns);
            let cache_key = (u64::from(node) << 32) | u64::from(class);
            node = match self.by_class[level].get(&cache_key) {
                Some(&deepest) => deepest,
                None => {
                    let deepest = self.expand(classifier.as_ref(), level as u16, node, class);
                    self.by_class[level].insert(cache_key, deepest);
                    deepest
                }
            };
        }
        node
    }

    /// Walks (creating) the key path of `class` below `node`; returns the deepest node.
    fn expand(
        &mut self,
        classifier: &dyn Classifier,
        level: u16,
        mut node: u32,
        class: u32,
    ) -> u32 {
        let mut keys = std::mem::take(&mut self.scratch);
        keys.clear();
        classifier.key_path(class, &mut keys);
        for &key in &keys {
            node = match self.child.get(&(node, level, key)) {
                Some(&child) => child,
                None => {
                    let child = self.parent.len() as u32;
                    self.parent.push(node);
                    self.level.push(level);
                    self.key.push(key);
                    self.child.insert((node, level, key), child);
                    child
                }
            };
        }
        self.scratch = keys;
        node
    }

    /// Children lists, in id order, for every node.
    pub(crate) fn children(&self) -> Vec<Vec<u32>> {
        let mut children = vec![Vec::new(); self.len()];
        for node in 1..self.len() {
            children[self.parent[node] as usize].push(node as u32);
        }
        children
    }

    /// Adds every node's value into its parent's, turning self values into subtree
    /// totals. `values` holds `stride` values per node, node-major.
    pub(crate) fn roll_up(&self, values: &mut [u64], stride: usize) {
        for node in (1..self.len()).rev() {
            let parent = self.parent[node] as usize;
            let (head, tail) = values.split_at_mut(node * stride);
            let child = &tail[..stride];
            for (p, c) in head[parent * stride..(parent + 1) * stride]
                .iter_mut()
                .zip(child)
            {
                *p += *c;
            }
        }
    }
}
