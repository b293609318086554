//! Which data structure contains each object: the pure half of a heap walk, with no
//! JVM in sight (the walk itself is in [`crate::heap_walk`]).
//!
//! A *data structure* is a head object — an instance of a `java.util` or
//! `java.util.concurrent` collection or map, an object array, or a class the user named
//! with `--java-data-structure` — together with its *internal* objects: the nested
//! classes of those packages (`HashMap$Node`, `TreeMap$Entry`, views) and of the named
//! classes, and the object arrays they reference (table arrays). An object is
//! *contained* in a structure when it is reachable from the head through the head and
//! its internals; the elements themselves are not followed further (a `String` key is
//! contained, its `byte[]` is not). A structure that is an element of another one is
//! *nested*, and it and everything it contains count for the outermost one. An object
//! reached from two outermost structures is contained in multiple data structures.
//!
//! [`Graph`] collects, during the walk, the kind of every data-structure object and the
//! references leaving them; [`Graph::attribute`] then finds the owner of every object.

use rustc_hash::{FxHashMap, FxHashSet};

/// What a class is to the containment analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ClassKind {
    /// Anything else: an element when a structure references it, never followed.
    Other = 0,
    /// The head class of a data structure.
    Head = 1,
    /// A class whose instances are internal objects of a structure.
    Internal = 2,
    /// An array of objects: a structure of its own, or the internal table of the
    /// structure that references it.
    ObjectArray = 3,
    /// Synchronization and atomics inside structures (`java.util.concurrent.locks`,
    /// `.atomic`): neither followed nor contained.
    Opaque = 4,
}

/// The packages whose collections and maps are data structures.
const PACKAGES: [&str; 2] = ["java.util.", "java.util.concurrent."];

/// The simple-name endings of collection and map classes.
const COLLECTION_ENDINGS: [&str; 10] = [
    "List",
    "Map",
    "Set",
    "Queue",
    "Deque",
    "Vector",
    "Stack",
    "Hashtable",
    "Properties",
    "Collection",
];

/// The kind of class `name` (a Java source name such as `java.util.HashMap$Node` or
/// `java.lang.Object[]`), given the user's head classes.
pub fn class_kind(name: &str, user_heads: &[String]) -> ClassKind {
    if let Some(element) = name.strip_suffix("[]") {
        let primitive = matches!(
            element,
            "boolean" | "byte" | "char" | "short" | "int" | "long" | "float" | "double"
        );
        return if primitive {
            ClassKind::Other
        } else {
            ClassKind::ObjectArray
        };
    }
    for head in user_heads {
        if name == head {
            return ClassKind::Head;
        }
        if name
            .strip_prefix(head.as_str())
            .is_some_and(|r| r.starts_with('$'))
        {
            return ClassKind::Internal;
        }
    }
    if name.starts_with("java.util.concurrent.locks.")
        || name.starts_with("java.util.concurrent.atomic.")
    {
        return ClassKind::Opaque;
    }
    let Some(simple) = PACKAGES
        .iter()
        .filter_map(|p| name.strip_prefix(p))
        .find(|rest| !rest.contains('.'))
    else {
        return ClassKind::Other;
    };
    let is_collection = |n: &str| {
        let n = n.trim_end_matches(|c: char| c.is_ascii_digit() || c == 'N');
        COLLECTION_ENDINGS.iter().any(|e| n.ends_with(e)) && n != "BitSet"
    };
    match simple.split_once('$') {
        None if is_collection(simple) && !simple.starts_with("Abstract") => ClassKind::Head,
        None => ClassKind::Other,
        // The wrappers and immutable collections of `Collections`, `ImmutableCollections`
        // and `Arrays` are structures; every other nested class is internal.
        Some((outer, inner))
            if matches!(outer, "Collections" | "ImmutableCollections" | "Arrays")
                && !inner.contains('$')
                && is_collection(inner) =>
        {
            ClassKind::Head
        }
        Some(_) => ClassKind::Internal,
    }
}

/// Who contains an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The outermost structure with this head tag.
    Structure(i64),
    /// More than one outermost structure.
    Multiple,
}

/// The data-structure objects of one heap walk and the references leaving them.
#[derive(Debug, Default)]
pub struct Graph {
    /// Kind and class id of every data-structure object (head, internal or array).
    nodes: FxHashMap<i64, (ClassKind, u32)>,
    /// References (from, to) whose referrer is a data-structure object.
    edges: Vec<(i64, i64)>,
    /// References followed, in total.
    pub references: u64,
}

impl Graph {
    /// The data-structure objects (heads, internal objects, arrays) noted so far.
    pub fn objects(&self) -> usize {
        self.nodes.len()
    }

    /// Notes object `tag` of class `class` and `kind`, reached by the walk.
    pub fn object(&mut self, tag: i64, kind: ClassKind, class: u32) {
        if matches!(
            kind,
            ClassKind::Head | ClassKind::Internal | ClassKind::ObjectArray
        ) {
            self.nodes.entry(tag).or_insert((kind, class));
        }
    }

    /// Notes a reference from `from` (of kind `from_kind`) to `to`.
    pub fn reference(&mut self, from: i64, from_kind: ClassKind, to: i64) {
        self.references += 1;
        if from != to
            && matches!(
                from_kind,
                ClassKind::Head | ClassKind::Internal | ClassKind::ObjectArray
            )
        {
            self.edges.push((from, to));
        }
    }

    /// The owner of every contained object (heads and internals included), and the
    /// class id of every outermost head.
    pub fn attribute(mut self) -> (FxHashMap<i64, Owner>, FxHashMap<i64, u32>) {
        self.edges.sort_unstable();
        self.edges.dedup();
        let edges = &self.edges;
        let targeted: FxHashSet<i64> = edges.iter().map(|&(_, to)| to).collect();
        let nodes = &self.nodes;
        let kind = |tag: i64| nodes.get(&tag).map_or(ClassKind::Other, |n| n.0);
        // An array referenced from a structure is that structure's table.
        let is_head = |tag: i64| match kind(tag) {
            ClassKind::Head => true,
            ClassKind::ObjectArray => !targeted.contains(&tag),
            _ => false,
        };
        let out = |tag: i64| {
            let start = edges.partition_point(|&(from, _)| from < tag);
            let end = edges.partition_point(|&(from, _)| from <= tag);
            edges[start..end].iter().map(|&(_, to)| to)
        };
        let mut heads: Vec<i64> = nodes.keys().copied().filter(|&t| is_head(t)).collect();
        heads.sort_unstable();
        // Heads that are elements of another structure's body are nested.
        let mut nested: FxHashSet<i64> = FxHashSet::default();
        // The head whose body last reached each node (no clearing between heads).
        let mut seen_from: FxHashMap<i64, i64> = FxHashMap::default();
        let mut stack = Vec::new();
        for &head in &heads {
            stack.push(head);
            seen_from.insert(head, head);
            while let Some(node) = stack.pop() {
                for to in out(node) {
                    if to == head || seen_from.insert(to, head) == Some(head) {
                        continue;
                    }
                    if is_head(to) {
                        nested.insert(to);
                    } else if matches!(kind(to), ClassKind::Internal | ClassKind::ObjectArray) {
                        stack.push(to);
                    }
                }
            }
        }
        // Outermost heads first; heads nested only in a cycle of structures after them.
        let (outer, inner): (Vec<i64>, Vec<i64>) = heads.iter().partition(|h| !nested.contains(h));
        let mut owners: FxHashMap<i64, (i64, Owner)> = FxHashMap::default();
        let mut classes = FxHashMap::default();
        for head in outer.into_iter().chain(inner) {
            if owners.contains_key(&head) {
                continue;
            }
            classes.insert(head, nodes.get(&head).map_or(0, |n| n.1));
            stack.push(head);
            owners.insert(head, (head, Owner::Structure(head)));
            while let Some(node) = stack.pop() {
                for to in out(node) {
                    let k = kind(to);
                    if k == ClassKind::Opaque {
                        continue;
                    }
                    match owners.get_mut(&to) {
                        Some((by, _)) if *by == head => continue,
                        Some((by, owner)) => (*by, *owner) = (head, Owner::Multiple),
                        None => {
                            owners.insert(to, (head, Owner::Structure(head)));
                        }
                    }
                    if k != ClassKind::Other {
                        stack.push(to);
                    }
                }
            }
        }
        let owners = owners.into_iter().map(|(t, (_, o))| (t, o)).collect();
        (owners, classes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collections_maps_and_their_internals_are_recognized() {
        let user = vec!["com.example.Ring".to_owned()];
        let kind = |n: &str| class_kind(n, &user);
        for head in [
            "java.util.HashMap",
            "java.util.ArrayList",
            "java.util.concurrent.ConcurrentHashMap",
            "java.util.concurrent.LinkedBlockingQueue",
            "java.util.Collections$SynchronizedMap",
            "java.util.ImmutableCollections$ListN",
            "java.util.ImmutableCollections$Map1",
            "java.util.Properties",
            "com.example.Ring",
        ] {
            assert_eq!(kind(head), ClassKind::Head, "{head}");
        }
        for internal in [
            "java.util.HashMap$Node",
            "java.util.HashMap$KeySet",
            "java.util.concurrent.ConcurrentHashMap$Node",
            "com.example.Ring$Slot",
        ] {
            assert_eq!(kind(internal), ClassKind::Internal, "{internal}");
        }
        for other in [
            "java.util.Date",
            "java.util.BitSet",
            "java.util.AbstractList",
            "java.util.zip.ZipFile",
            "java.lang.String",
            "int[]",
            "com.example.RingBuffer",
        ] {
            assert_eq!(kind(other), ClassKind::Other, "{other}");
        }
        assert_eq!(kind("java.lang.Object[]"), ClassKind::ObjectArray);
        assert_eq!(kind("int[][]"), ClassKind::ObjectArray);
        assert_eq!(
            kind("java.util.concurrent.locks.ReentrantLock"),
            ClassKind::Opaque
        );
    }

    /// A map (1) with a table (2), nodes (3, 4) holding keys and values (10–13), one
    /// value a list (5) with its array (6) holding 14; a second map (7) whose node (8)
    /// holds 13 too; a lone array (9) holding 15; 16 is referenced by a key only.
    fn graph() -> Graph {
        let mut g = Graph::default();
        let nodes = [
            (1, ClassKind::Head),
            (2, ClassKind::ObjectArray),
            (3, ClassKind::Internal),
            (4, ClassKind::Internal),
            (5, ClassKind::Head),
            (6, ClassKind::ObjectArray),
            (7, ClassKind::Head),
            (8, ClassKind::Internal),
            (9, ClassKind::ObjectArray),
        ];
        for (tag, kind) in nodes {
            g.object(tag, kind, tag as u32 * 10);
        }
        let kind_of = |t: i64| {
            nodes
                .iter()
                .find(|n| n.0 == t)
                .map_or(ClassKind::Other, |n| n.1)
        };
        for (from, to) in [
            (1, 2),
            (2, 3),
            (2, 4),
            (3, 10),
            (3, 11),
            (4, 12),
            (4, 5),
            (5, 6),
            (6, 14),
            (7, 8),
            (8, 13),
            (3, 13),
            (9, 15),
            (10, 16),
            (3, 3),
        ] {
            g.reference(from, kind_of(from), to);
        }
        g
    }

    #[test]
    fn owners_are_the_outermost_structures() {
        let (owners, classes) = graph().attribute();
        for tag in [1, 2, 3, 4, 10, 11, 12, 5, 6, 14] {
            assert_eq!(owners.get(&tag), Some(&Owner::Structure(1)), "{tag}");
        }
        assert_eq!(owners.get(&13), Some(&Owner::Multiple));
        assert_eq!(owners.get(&8), Some(&Owner::Structure(7)));
        assert_eq!(owners.get(&15), Some(&Owner::Structure(9)));
        assert_eq!(owners.get(&16), None, "elements are not followed");
        assert_eq!(classes.get(&1), Some(&10));
        assert_eq!(classes.get(&5), None, "nested heads are not outermost");
    }

    #[test]
    fn structures_holding_each_other_still_have_an_owner() {
        let mut g = Graph::default();
        g.object(1, ClassKind::Head, 1);
        g.object(2, ClassKind::Head, 2);
        g.reference(1, ClassKind::Head, 2);
        g.reference(2, ClassKind::Head, 1);
        g.reference(2, ClassKind::Head, 3);
        let (owners, _) = g.attribute();
        for tag in [1, 2, 3] {
            assert_eq!(owners.get(&tag), Some(&Owner::Structure(1)), "{tag}");
        }
    }
}
