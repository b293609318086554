//! Human-readable text: an indented memory tree for the terminal, in the units of
//! [`units`](crate::units).

use std::fmt::Write;

use crate::latency::LatencyRow;
use crate::model::TimeWindow;
use crate::output::{Node, Tree, Trees};
use crate::units::{format_bytes, format_latency, format_signed_bytes};

/// Allocator latency per function as a table (`memlens summary` of a trace recorded
/// with `--latency`): calls, p50, p90, p99 and the slowest call.
pub fn render_latency(rows: &[LatencyRow]) -> String {
    let mut out = format!(
        "  {:<15} {:>11} {:>10} {:>10} {:>10} {:>10}\n",
        "function", "calls", "p50", "p90", "p99", "max"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "  {:<15} {:>11} {:>10} {:>10} {:>10} {:>10}",
            r.function,
            r.calls,
            format_latency(r.p50_ns),
            format_latency(r.p90_ns),
            format_latency(r.p99_ns),
            format_latency(r.max_ns)
        );
    }
    out
}

/// Options for [`render_tree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOptions {
    /// Levels below the root to print; `None` prints all.
    pub max_depth: Option<usize>,
    /// Keys longer than this many characters are cut with `…`.
    pub max_key_chars: usize,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            max_depth: None,
            max_key_chars: 60,
        }
    }
}

/// Renders `tree` as an indented table: key, bytes, objects, percentage of the parent's
/// bytes, and growth since the series' first tree.
///
/// ```text
/// Overall                 1.50 MiB    1200 objects  100.0 %   +1.20 MiB
///   Cache::insert         1.20 MiB     800 objects   80.0 %   +1.10 MiB
/// ```
///
/// [`render_trees`] prints a whole series.
pub fn render_tree(tree: &Tree, options: &TextOptions) -> String {
    let mut rows = Vec::new();
    collect_rows(&tree.root, None, 0, options, &mut rows);
    let key_width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (key, node, percent) in rows {
        let pad = key_width - key.chars().count();
        let _ = writeln!(
            out,
            "{key}{:pad$}  {:>10}  {:>10} objects  {:>7}  {:>11}",
            "",
            format_bytes(node.bytes),
            node.objects,
            percent,
            format_signed_bytes(node.growth_bytes),
        );
    }
    out
}

fn collect_rows<'t>(
    node: &'t Node,
    parent_bytes: Option<u64>,
    depth: usize,
    options: &TextOptions,
    rows: &mut Vec<(String, &'t Node, String)>,
) {
    let mut key: String = node.key.chars().take(options.max_key_chars).collect();
    if node.key.chars().count() > options.max_key_chars {
        key.push('…');
    }
    let percent = match parent_bytes {
        None => "100.0 %".to_owned(),
        Some(0) => "-".to_owned(),
        Some(p) => format!("{:.1} %", node.bytes as f64 * 100.0 / p as f64),
    };
    rows.push((format!("{}{key}", "  ".repeat(depth)), node, percent));
    if options.max_depth.is_some_and(|max| depth >= max) {
        return;
    }
    for child in &node.children {
        collect_rows(child, Some(node.bytes), depth + 1, options, rows);
    }
}

/// Every tree of `trees`, each under a line naming its time (and, with `run`, its
/// share of the run): `memlens tree`'s text output.
pub fn render_trees(trees: &Trees, run: Option<TimeWindow>, options: &TextOptions) -> String {
    let mut out = String::new();
    for tree in &trees.trees {
        let share = run
            .filter(|r| r.duration_ns() > 0)
            .map(|r| {
                let percent = (tree.time_ns - r.start_ns) as f64 * 100.0 / r.duration_ns() as f64;
                format!(" ({percent:.0} % of the run)")
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\nat {}{share}:",
            crate::units::format_duration(tree.time_ns)
        );
        out.push_str(&render_tree(tree, options));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_an_indented_tree() {
        let leaf = |key: &str, bytes, growth| Node {
            key: key.into(),
            full_key: vec![key.into()],
            classifier: Some(0),
            is_other: false,
            bytes,
            objects: 2,
            growth_bytes: growth,
            growth_objects: 0,
            sort_position: 0,
            children: Vec::new(),
        };
        let root = Node {
            key: "Overall".into(),
            full_key: Vec::new(),
            classifier: None,
            bytes: 4096,
            objects: 4,
            growth_bytes: 1024,
            children: vec![leaf("Cache::insert", 3072, 1024), leaf("Other", 1024, 0)],
            ..leaf("", 0, 0)
        };
        let text = render_tree(&Tree { time_ns: 1, root }, &TextOptions::default());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("Overall        "), "{text}");
        assert!(lines[1].starts_with("  Cache::insert"), "{text}");
        assert!(
            lines[1].contains("3.00 KiB")
                && lines[1].contains("75.0 %")
                && lines[1].contains("+1.00 KiB"),
            "{text}"
        );
        assert!(
            lines[2].contains("25.0 %") && lines[2].ends_with("0 B"),
            "{text}"
        );
    }
}
