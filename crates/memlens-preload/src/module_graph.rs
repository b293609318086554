//! Keeps the recorder's modules free of import cycles.
//!
//! Reads every source file of the crate, collects its `crate::…` paths
//! (plain and in `use crate::{…}` groups) as edges to other modules, and
//! fails when a module reaches the crate root's own items or when the edges
//! form a cycle, naming the cycle. Why: the hooks run inside every program
//! we record, so their dependencies must stay few and pointing one way;
//! a cycle is how the hot path starts to depend on the writer's machinery.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name → the modules it refers to.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The first path segment after each `crate::` in `source`.
fn crate_paths(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a, b::{c, d}, e}`: the first segment of each
            // top-level entry.
            let mut depth = 0;
            let mut entry_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        rest = &group[i..];
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => entry_start = true,
                    c if entry_start && (c.is_alphanumeric() || c == '_') => {
                        out.push(identifier(&group[i..]));
                        entry_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(identifier(rest));
        }
    }
    out
}

fn identifier(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The graph of the crate's modules, from the files in `src`; `lib` is the
/// crate root.
fn module_graph(src: &Path) -> Graph {
    let mut sources = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("read src") {
        let path = entry.expect("directory entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            // This file's examples are not references.
            if name != "module_graph" {
                sources.insert(name, std::fs::read_to_string(&path).expect("read source"));
            }
        }
    }
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let mut graph = Graph::new();
    for (name, source) in &sources {
        let edges = graph.entry(name.clone()).or_default();
        for target in crate_paths(source) {
            // Anything that is not a module is an item of the crate root.
            let target = if modules.contains(&target) {
                target
            } else {
                "lib".to_string()
            };
            if target != "self" && &target != name {
                edges.insert(target);
            }
        }
    }
    graph
}

/// A cycle of `graph`, as the list of its modules, if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Unseen,
        OnPath,
        Done,
    }
    fn visit(
        graph: &Graph,
        node: &str,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_string(), Mark::OnPath);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next).copied().unwrap_or(Mark::Unseen) {
                Mark::OnPath => {
                    let start = path.iter().position(|p| p == next).unwrap();
                    let mut cycle = path[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::Unseen => {
                    if let Some(cycle) = visit(graph, next, marks, path) {
                        return Some(cycle);
                    }
                }
                Mark::Done => {}
            }
        }
        path.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if marks.get(node).copied().unwrap_or(Mark::Unseen) == Mark::Unseen
            && let Some(cycle) = visit(graph, node, &mut marks, &mut Vec::new())
        {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn paths_in_use_groups_and_expressions() {
    let source = "use crate::thread::{self, BUSY};\n\
                  use crate::{clock, dwarf::{Cache, step}, wakeup};\n\
                  fn f() { crate::ring::CAPACITY; crate::unwind_mode(); }";
    assert_eq!(
        crate_paths(source),
        ["thread", "clock", "dwarf", "wakeup", "ring", "unwind_mode"]
    );
}

#[test]
fn cycles_are_found() {
    let graph: Graph = [("a", &["b"][..]), ("b", &["c"]), ("c", &["a"]), ("d", &[])]
        .into_iter()
        .map(|(n, e)| (n.to_string(), e.iter().map(|s| s.to_string()).collect()))
        .collect();
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
}

#[test]
fn the_modules_import_each_other_without_cycles() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10, "too few modules found: {graph:?}");
    for (module, edges) in &graph {
        assert!(
            module == "lib" || !edges.contains("lib"),
            "{module} uses an item of the crate root; move it into a module"
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "the modules import each other in a cycle: {}",
            cycle.join(" → ")
        );
    }
}
