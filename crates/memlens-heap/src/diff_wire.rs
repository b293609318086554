//! The `memlens diff --json` document (interface contract: `{"groups":[{"key",
//! "delta_bytes","delta_objects"}]}` ranked by |Δ| at the end) and its text table, built
//! from a [`HeapDiff`].
//!
//! ```json
//! { "classifiers": ["site"],
//!   "base": {"peak_time_ns", "end_ns", "peak_bytes", "peak_objects", "end_bytes", "end_objects"},
//!   "new":  { … the same for the new run … },
//!   "groups": [{ "key", "full_key", "delta_bytes", "delta_objects",
//!                "delta_peak_bytes", "delta_peak_objects",
//!                "base_end_bytes", "new_end_bytes", "base_end_objects", "new_end_objects",
//!                "base_peak_bytes", "new_peak_bytes", "base_peak_objects", "new_peak_objects" }] }
//! ```
//!
//! `delta_bytes` and `delta_objects` are new minus base at the end (the blocks never
//! freed); the `_peak_` fields compare each run at its own peak.

use std::fmt::Write;

use serde::Serialize;

use crate::diff::{DiffInstants, GroupDiff, HeapDiff};
use crate::units::{format_bytes, format_duration, format_signed_bytes};

/// One run's instants and totals.
#[derive(Serialize)]
struct RunWire {
    peak_time_ns: u64,
    end_ns: u64,
    peak_bytes: u64,
    peak_objects: u64,
    end_bytes: u64,
    end_objects: u64,
}

/// One group.
#[derive(Serialize)]
struct GroupWire<'a> {
    key: &'a str,
    full_key: &'a [String],
    delta_bytes: i64,
    delta_objects: i64,
    delta_peak_bytes: i64,
    delta_peak_objects: i64,
    base_end_bytes: u64,
    new_end_bytes: u64,
    base_end_objects: u64,
    new_end_objects: u64,
    base_peak_bytes: u64,
    new_peak_bytes: u64,
    base_peak_objects: u64,
    new_peak_objects: u64,
}

#[derive(Serialize)]
struct DiffWire<'a> {
    classifiers: &'a [String],
    base: RunWire,
    new: RunWire,
    groups: Vec<GroupWire<'a>>,
}

/// The `memlens diff --json` document, with the first `top` groups (all when `None`).
pub fn diff_to_json(diff: &HeapDiff, top: Option<usize>) -> String {
    let run = |instants: &DiffInstants, base: bool| {
        let t = &diff.total;
        let (peak, end) = if base {
            (t.base_peak, t.base_end)
        } else {
            (t.new_peak, t.new_end)
        };
        RunWire {
            peak_time_ns: instants.peak_ns,
            end_ns: instants.end_ns,
            peak_bytes: peak.bytes,
            peak_objects: peak.objects,
            end_bytes: end.bytes,
            end_objects: end.objects,
        }
    };
    let wire = DiffWire {
        classifiers: &diff.classifiers,
        base: run(&diff.base, true),
        new: run(&diff.new, false),
        groups: shown(diff, top)
            .iter()
            .map(|g| GroupWire {
                key: g.full_key.last().map_or("", String::as_str),
                full_key: &g.full_key,
                delta_bytes: g.delta_end_bytes(),
                delta_objects: g.delta_end_objects(),
                delta_peak_bytes: g.delta_peak_bytes(),
                delta_peak_objects: g.delta_peak_objects(),
                base_end_bytes: g.base_end.bytes,
                new_end_bytes: g.new_end.bytes,
                base_end_objects: g.base_end.objects,
                new_end_objects: g.new_end.objects,
                base_peak_bytes: g.base_peak.bytes,
                new_peak_bytes: g.new_peak.bytes,
                base_peak_objects: g.base_peak.objects,
                new_peak_objects: g.new_peak.objects,
            })
            .collect(),
    };
    serde_json::to_string(&wire).expect("a diff always serializes")
}

/// The diff as a terminal table: the totals of both runs, then the first `top` groups
/// with their change at the end and at the peak.
pub fn render_diff(diff: &HeapDiff, top: Option<usize>) -> String {
    let t = &diff.total;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<6} {:>12} {:>12} {:>12}\n{:<6} {:>12} {:>12} {:>12}\n{:<6} {:>12} {:>12} {:>12}\n",
        "",
        "base",
        "new",
        "change",
        "peak",
        format_bytes(t.base_peak.bytes),
        format_bytes(t.new_peak.bytes),
        format_signed_bytes(t.delta_peak_bytes()),
        "end",
        format_bytes(t.base_end.bytes),
        format_bytes(t.new_end.bytes),
        format_signed_bytes(t.delta_end_bytes()),
    );
    let _ = writeln!(
        out,
        "(peaks at {} and {}; the end is what was never freed)\n",
        format_duration(diff.base.peak_ns),
        format_duration(diff.new.peak_ns)
    );
    let groups = shown(diff, top);
    if groups.is_empty() {
        out.push_str("no group holds memory at either run's peak or end\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{:>4}  {:>11}  {:>9}  {:>11}  {:>11}  group ({})",
        "rank",
        "Δ end",
        "Δ blocks",
        "Δ peak",
        "new end",
        diff.classifiers.join(" › ")
    );
    for (rank, g) in groups.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>4}  {:>11}  {:>+9}  {:>11}  {:>11}  {}",
            rank + 1,
            format_signed_bytes(g.delta_end_bytes()),
            g.delta_end_objects(),
            format_signed_bytes(g.delta_peak_bytes()),
            format_bytes(g.new_end.bytes),
            g.full_key.join(" › ")
        );
    }
    out
}

/// The groups shown: the first `top`, all when `None`.
fn shown(diff: &HeapDiff, top: Option<usize>) -> &[GroupDiff] {
    &diff.groups[..top.map_or(diff.groups.len(), |n| n.min(diff.groups.len()))]
}
