//! Drill-down on the server side: the node at a full key in a set of trees (or its
//! closest ancestor that exists and is not empty), and trees cut to a depth.
//!
//! The page does the same on its own (it must, in a report with no server); the API
//! offers it so that a client can ask for just the local view of a deep tree.

use memlens_heap::{Metric, Node};

/// The size of `node` under `metric`.
pub fn value(node: &Node, metric: Metric) -> u64 {
    match metric {
        Metric::Bytes => node.bytes,
        Metric::Objects => node.objects,
    }
}

/// The longest prefix of `path` whose node exists and is non-empty in every one of
/// `roots` (the empty prefix, the root, always qualifies).
pub fn resolve<'a>(roots: &[&Node], path: &'a [String], metric: Metric) -> &'a [String] {
    let mut nodes: Vec<&Node> = roots.to_vec();
    for (depth, key) in path.iter().enumerate() {
        let mut next = Vec::with_capacity(nodes.len());
        for node in &nodes {
            match node.children.iter().find(|c| &c.key == key) {
                Some(child) if value(child, metric) > 0 => next.push(child),
                _ => return &path[..depth],
            }
        }
        nodes = next;
    }
    path
}

/// A copy of the node at `path` under `root` (which must exist), with at most `depth`
/// levels below it (all when `None`).
pub fn subtree(root: &Node, path: &[String], depth: Option<usize>) -> Node {
    let node = root.find(path).unwrap_or(root);
    cut(node, depth)
}

fn cut(node: &Node, depth: Option<usize>) -> Node {
    let children = match depth {
        Some(0) => Vec::new(),
        _ => node
            .children
            .iter()
            .map(|c| cut(c, depth.map(|d| d - 1)))
            .collect(),
    };
    Node {
        key: node.key.clone(),
        full_key: node.full_key.clone(),
        classifier: node.classifier,
        is_other: node.is_other,
        bytes: node.bytes,
        objects: node.objects,
        growth_bytes: node.growth_bytes,
        growth_objects: node.growth_objects,
        sort_position: node.sort_position,
        children,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(full_key: &[&str], bytes: u64, children: Vec<Node>) -> Node {
        Node {
            key: full_key.last().copied().unwrap_or("Overall").to_owned(),
            full_key: full_key.iter().map(|k| k.to_string()).collect(),
            classifier: None,
            is_other: false,
            bytes,
            objects: bytes / 10,
            growth_bytes: 0,
            growth_objects: 0,
            sort_position: 0,
            children,
        }
    }

    fn tree(b_bytes: u64) -> Node {
        node(
            &[],
            100 + b_bytes,
            vec![
                node(&["a"], 100, vec![node(&["a", "x"], 100, vec![])]),
                node(&["b"], b_bytes, vec![node(&["b", "y"], b_bytes, vec![])]),
            ],
        )
    }

    #[test]
    fn resolves_to_the_closest_non_empty_ancestor() {
        let path: Vec<String> = vec!["b".into(), "y".into()];
        let (full, empty) = (tree(50), tree(0));
        assert_eq!(resolve(&[&full], &path, Metric::Bytes), &path[..]);
        assert!(resolve(&[&full, &empty], &path, Metric::Bytes).is_empty());
        let missing: Vec<String> = vec!["a".into(), "nope".into()];
        assert_eq!(resolve(&[&full], &missing, Metric::Bytes), &missing[..1]);
    }

    #[test]
    fn subtree_is_cut_to_depth() {
        let t = tree(50);
        let s = subtree(&t, &[], Some(1));
        assert_eq!(s.children.len(), 2);
        assert!(s.children.iter().all(|c| c.children.is_empty()));
        let b = subtree(&t, &["b".to_owned()], None);
        assert_eq!((b.key.as_str(), b.children.len()), ("b", 1));
    }
}
