//! The import graph between the modules of one crate, and its cycles.
//!
//! A node is a file module: `crate` for `lib.rs`, `raster` for `raster/mod.rs`,
//! `raster::overview` for `raster/overview.rs`; an inline module belongs to its file.
//! Module `a` has an edge to module `b` when `a`'s non-test code names something that
//! `b`'s own file defines:
//!
//! - a qualified path in code (`crate::b::Thing`, `super::Thing`, `self::b::f`, or
//!   `b::f` where `b` is a child module), in types, expressions, patterns and macro
//!   arguments alike;
//! - a private `use` of such a path (the compiler already insists that it is used);
//! - a re-export (`pub use`, `pub(crate) use`) only when the file's own code also
//!   mentions the name: a parent that re-exports its children's items for the crate's
//!   users does not depend on them by doing so.
//!
//! A name is followed through `use` items to the module whose file defines it, so
//! `crate::Thing` (re-exported by `lib.rs` from `b`) is an edge to `b`, and a child's
//! `super::Thing` is an edge to its parent only when the parent's own file defines
//! `Thing`. A name no file defines (an enum variant, an associated item) stops at the
//! last module its path reaches. Paths that leave the crate (`std::…`, `::x`) are no
//! edges. Name lookup is deliberately simple (no macro expansion, no shadowing rules):
//! it sees what a reader of the code sees.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::path::Path;

use crate::module_tree::ModuleTree;
use crate::scc::strongly_connected_components;

/// How many `use` items one lookup may follow before giving up (a guard against
/// re-export loops, which the compiler rejects anyway).
const MAX_REEXPORT_DEPTH: u32 = 16;

/// The import graph between the file modules of one crate.
#[derive(Debug)]
pub struct ModuleGraph {
    /// The file modules' paths (`crate`, `raster::overview`).
    modules: Vec<String>,
    /// The file of each module, relative to `src/`.
    files: Vec<String>,
    /// Each edge with the first reason found for it.
    edges: BTreeMap<(usize, usize), String>,
}

/// One import cycle: a strongly connected component of more than one module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// The modules of the component, sorted.
    pub modules: Vec<String>,
    /// One shortest cycle through the first of them, e.g. `[a, b, a]`.
    pub example: Vec<String>,
    /// Every edge inside the component with the code that makes it,
    /// e.g. `a → b: a.rs: use crate::b::B`.
    pub edges: Vec<String>,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cycle {}", self.example.join(" → "))?;
        writeln!(f, "  between {}; its edges:", self.modules.join(", "))?;
        for edge in &self.edges {
            writeln!(f, "    {edge}")?;
        }
        Ok(())
    }
}

impl ModuleGraph {
    /// Reads the crate at `crate_dir` (its `src/` directory).
    pub fn read_crate(crate_dir: &Path) -> Result<ModuleGraph, String> {
        ModuleGraph::from_sources(&crate::files::read_sources(&crate_dir.join("src"))?)
    }

    /// Builds the graph of the crate whose sources are `files`: file paths relative to
    /// `src/` (`lib.rs`, `raster/mod.rs`) mapped to their text.
    pub fn from_sources(files: &BTreeMap<String, String>) -> Result<ModuleGraph, String> {
        let tree = ModuleTree::parse(files)?;
        let file_modules: Vec<usize> = (0..tree.modules.len())
            .filter(|&m| tree.modules[m].file_module == m)
            .collect();
        let node_of: BTreeMap<usize, usize> = file_modules
            .iter()
            .enumerate()
            .map(|(node, &module)| (module, node))
            .collect();
        let mut graph = ModuleGraph {
            modules: file_modules
                .iter()
                .map(|&m| tree.modules[m].path.clone())
                .collect(),
            files: file_modules
                .iter()
                .map(|&m| tree.modules[m].file.clone())
                .collect(),
            edges: BTreeMap::new(),
        };

        let lookup = Lookup { tree: &tree };
        for (index, module) in tree.modules.iter().enumerate() {
            let from = node_of[&module.file_module];
            let mut add = |target: Option<usize>, reason: String| {
                if let Some(target) = target {
                    let to = node_of[&tree.modules[target].file_module];
                    if to != from {
                        graph.edges.entry((from, to)).or_insert(reason);
                    }
                }
            };
            for import in &module.imports {
                let counts = match &import.name {
                    Some(name) => !import.reexport || module.mentioned.contains(name),
                    None => !import.reexport,
                };
                if counts {
                    let target = lookup.path(index, &import.path, 0);
                    let glob = if import.name.is_none() { "::*" } else { "" };
                    add(target, format!("use {}{glob}", import.path.join("::")));
                }
            }
            for path in &module.paths {
                add(lookup.path(index, path, 0), path.join("::"));
            }
        }
        Ok(graph)
    }

    /// The edges as `(from, to)` module paths, sorted.
    pub fn edges(&self) -> Vec<(&str, &str)> {
        let mut edges: Vec<(&str, &str)> = self
            .edges
            .keys()
            .map(|&(a, b)| (self.modules[a].as_str(), self.modules[b].as_str()))
            .collect();
        edges.sort_unstable();
        edges
    }

    /// The import cycles, sorted by their modules; empty when the graph is acyclic.
    pub fn cycles(&self) -> Vec<Cycle> {
        let mut successors = vec![Vec::new(); self.modules.len()];
        for &(from, to) in self.edges.keys() {
            successors[from].push(to);
        }
        let mut cycles: Vec<Cycle> = strongly_connected_components(&successors)
            .into_iter()
            .filter(|component| component.len() > 1)
            .map(|mut component| {
                component.sort_by(|&a, &b| self.modules[a].cmp(&self.modules[b]));
                self.describe(&component, &successors)
            })
            .collect();
        cycles.sort_by(|a, b| a.modules.cmp(&b.modules));
        cycles
    }

    fn describe(&self, component: &[usize], successors: &[Vec<usize>]) -> Cycle {
        let members: BTreeSet<usize> = component.iter().copied().collect();
        let edges = self
            .edges
            .iter()
            .filter(|((a, b), _)| members.contains(a) && members.contains(b))
            .map(|(&(a, b), reason)| {
                format!(
                    "{} → {}: {}: {reason}",
                    self.modules[a], self.modules[b], self.files[a]
                )
            })
            .collect();
        let example = shortest_cycle(component[0], &members, successors)
            .into_iter()
            .map(|m| self.modules[m].clone())
            .collect();
        Cycle {
            modules: component.iter().map(|&m| self.modules[m].clone()).collect(),
            example,
            edges,
        }
    }
}

/// A shortest path from `start` back to itself inside `members` (breadth-first), as
/// the nodes it passes, `start` first and last.
fn shortest_cycle(
    start: usize,
    members: &BTreeSet<usize>,
    successors: &[Vec<usize>],
) -> Vec<usize> {
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &next in &successors[node] {
            if !members.contains(&next) || came_from.contains_key(&next) {
                continue;
            }
            came_from.insert(next, node);
            if next == start {
                let mut path = vec![start];
                let mut at = node;
                while at != start {
                    path.push(at);
                    at = came_from[&at];
                }
                path.push(start);
                path.reverse();
                return path;
            }
            queue.push_back(next);
        }
    }
    vec![start]
}

/// Name lookup in a [`ModuleTree`] (see the module documentation).
struct Lookup<'t> {
    tree: &'t ModuleTree,
}

impl Lookup<'_> {
    /// The module whose file defines what `path`, written in module `from`, names (or the
    /// module it names); `None` when the path leaves the crate.
    fn path(&self, from: usize, path: &[String], depth: u32) -> Option<usize> {
        if depth > MAX_REEXPORT_DEPTH {
            return None;
        }
        let modules = &self.tree.modules;
        let (mut module, rest) = match path.first()?.as_str() {
            "crate" => (0, &path[1..]),
            "self" => (from, &path[1..]),
            "super" => {
                let supers = path.iter().take_while(|s| *s == "super").count();
                let mut module = from;
                for _ in 0..supers {
                    module = modules[module].parent?;
                }
                (module, &path[supers..])
            }
            first => match modules[from].children.get(first) {
                Some(&child) => (child, &path[1..]),
                None => {
                    // A name imported here, e.g. `raster::render` after `use crate::raster`.
                    let import = modules[from]
                        .imports
                        .iter()
                        .find(|i| i.name.as_deref() == Some(first))?;
                    (self.path(from, &import.path, depth + 1)?, &path[1..])
                }
            },
        };
        for segment in rest {
            match modules[module].children.get(segment) {
                Some(&child) => module = child,
                None => return self.name(module, segment, depth),
            }
        }
        Some(module)
    }

    /// The module whose file defines `name` as seen from `module`.
    fn name(&self, module: usize, name: &str, depth: u32) -> Option<usize> {
        let m = &self.tree.modules[module];
        if m.defines.contains(name) {
            return Some(module);
        }
        if let Some(import) = m.imports.iter().find(|i| i.name.as_deref() == Some(name)) {
            return self.path(module, &import.path, depth + 1);
        }
        for glob in m.imports.iter().filter(|i| i.name.is_none()) {
            let Some(source) = self.path(module, &glob.path, depth + 1) else {
                continue;
            };
            let s = &self.tree.modules[source];
            if s.defines.contains(name) || s.imports.iter().any(|i| i.name.as_deref() == Some(name))
            {
                return self.name(source, name, depth + 1);
            }
        }
        Some(module)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(files: &[(&str, &str)]) -> ModuleGraph {
        let files = files
            .iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect();
        ModuleGraph::from_sources(&files).unwrap()
    }

    #[test]
    fn a_child_depends_on_its_parent_only_for_what_the_parent_defines() {
        let g = graph(&[
            ("lib.rs", "mod shapes; mod units;"),
            (
                "shapes/mod.rs",
                "mod circle; pub use circle::Circle; pub use crate::units::Metres; pub trait Shape {}",
            ),
            (
                "shapes/circle.rs",
                "use super::Metres; pub struct Circle(Metres); impl super::Shape for Circle {}",
            ),
            ("units.rs", "pub struct Metres(pub f64);"),
        ]);
        assert_eq!(
            g.edges(),
            [("shapes::circle", "shapes"), ("shapes::circle", "units")]
        );
        assert!(g.cycles().is_empty());
    }

    #[test]
    fn names_reexported_by_the_root_lead_to_their_module() {
        let g = graph(&[
            ("lib.rs", "mod a; mod b; pub use b::Thing;"),
            ("a.rs", "pub fn make() -> crate::Thing { crate::Thing }"),
            ("b.rs", "pub struct Thing;"),
        ]);
        assert_eq!(g.edges(), [("a", "b")]);
    }

    #[test]
    fn test_only_code_and_macro_arguments() {
        let g = graph(&[
            ("lib.rs", "mod a; mod b; #[cfg(test)] mod fixtures;"),
            (
                "a.rs",
                "pub fn f() -> String { format!(\"{}\", crate::b::name()) }
                 #[cfg(test)] mod tests { use crate::b::name; }",
            ),
            (
                "b.rs",
                "pub fn name() -> &'static str { \"b\" } #[cfg(test)] fn t() { crate::a::f(); }",
            ),
            ("fixtures.rs", "use crate::a::f;"),
        ]);
        assert_eq!(g.edges(), [("a", "b")]);
    }

    #[test]
    fn a_cycle_of_three_is_reported_with_its_shortest_loop() {
        let g = graph(&[
            ("lib.rs", "mod a; mod b; mod c; mod d;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "pub struct B(crate::c::C);"),
            (
                "c.rs",
                "pub struct C; fn f() -> crate::a::A { crate::a::A } use crate::d::D;",
            ),
            ("d.rs", "pub struct D;"),
        ]);
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].modules, ["a", "b", "c"]);
        assert_eq!(cycles[0].example, ["a", "b", "c", "a"]);
        assert_eq!(cycles[0].edges.len(), 3, "{}", cycles[0]);
    }
}
