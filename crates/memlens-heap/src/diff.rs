//! The change between two runs of a program, per group: heaptrack's `-d` and pprof's
//! `-base`, on memory trees.
//!
//! Each run is grouped by the same classifier chain; a group is a full key (one key per
//! level, the chain's last level included), so the same site in two runs — whose
//! addresses differ — is one group. For each group the diff gives its live bytes and
//! blocks in both runs at two instants of each run: its **peak** (the first instant the
//! most bytes were live) and its **end** (the blocks never freed, as the summary's
//! `leaked_bytes`). Groups are ranked by |Δ bytes at the end| — what leaks more or less
//! — then by |Δ bytes at the peak|, then by key, so a ranking is the same on every
//! machine.

use rustc_hash::FxHashMap;

use crate::classifiers::ClassifierChain;
use crate::error::HeapError;
use crate::model::HeapModel;
use crate::trees::TreeSeries;

/// A group's live memory at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Live {
    /// Live bytes.
    pub bytes: u64,
    /// Live blocks.
    pub objects: u64,
}

/// One group of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDiff {
    /// The keys from below the root down to the group.
    pub full_key: Vec<String>,
    /// In the base run at its peak.
    pub base_peak: Live,
    /// In the new run at its peak.
    pub new_peak: Live,
    /// In the base run at its end (never freed).
    pub base_end: Live,
    /// In the new run at its end (never freed).
    pub new_end: Live,
}

impl GroupDiff {
    /// New minus base bytes at the end.
    pub fn delta_end_bytes(&self) -> i64 {
        delta(self.new_end.bytes, self.base_end.bytes)
    }

    /// New minus base blocks at the end.
    pub fn delta_end_objects(&self) -> i64 {
        delta(self.new_end.objects, self.base_end.objects)
    }

    /// New minus base bytes at the peak.
    pub fn delta_peak_bytes(&self) -> i64 {
        delta(self.new_peak.bytes, self.base_peak.bytes)
    }

    /// New minus base blocks at the peak.
    pub fn delta_peak_objects(&self) -> i64 {
        delta(self.new_peak.objects, self.base_peak.objects)
    }
}

/// The instants a diff compares, per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffInstants {
    /// The run's peak, ns since its start.
    pub peak_ns: u64,
    /// The run's end, ns since its start.
    pub end_ns: u64,
}

/// Two runs compared group by group.
#[derive(Debug, Clone, PartialEq)]
pub struct HeapDiff {
    /// The classifier names of the chain, outermost first.
    pub classifiers: Vec<String>,
    /// The base run's instants.
    pub base: DiffInstants,
    /// The new run's instants.
    pub new: DiffInstants,
    /// The whole heap: in each run at its peak and its end.
    pub total: GroupDiff,
    /// Every group live at an instant of either run, ranked (see the module docs).
    pub groups: Vec<GroupDiff>,
}

/// Compares `new` with `base`, grouped by `chain`.
pub fn diff_runs(
    base: &HeapModel,
    new: &HeapModel,
    chain: &ClassifierChain,
) -> Result<HeapDiff, HeapError> {
    let mut groups: FxHashMap<Vec<String>, GroupDiff> = FxHashMap::default();
    let mut total = GroupDiff {
        full_key: Vec::new(),
        base_peak: Live::default(),
        new_peak: Live::default(),
        base_end: Live::default(),
        new_end: Live::default(),
    };
    let mut instants = Vec::new();
    for (model, is_base) in [(base, true), (new, false)] {
        let run = run_groups(model, chain)?;
        instants.push(run.instants);
        let (peak_total, end_total) = if is_base {
            (&mut total.base_peak, &mut total.base_end)
        } else {
            (&mut total.new_peak, &mut total.new_end)
        };
        *peak_total = run.total.0;
        *end_total = run.total.1;
        for (full_key, (peak, end)) in run.groups {
            let group = groups.entry(full_key).or_insert_with_key(|key| GroupDiff {
                full_key: key.clone(),
                base_peak: Live::default(),
                new_peak: Live::default(),
                base_end: Live::default(),
                new_end: Live::default(),
            });
            if is_base {
                (group.base_peak, group.base_end) = (peak, end);
            } else {
                (group.new_peak, group.new_end) = (peak, end);
            }
        }
    }
    let mut groups: Vec<GroupDiff> = groups.into_values().collect();
    groups.sort_by(|a, b| {
        b.delta_end_bytes()
            .unsigned_abs()
            .cmp(&a.delta_end_bytes().unsigned_abs())
            .then(
                b.delta_peak_bytes()
                    .unsigned_abs()
                    .cmp(&a.delta_peak_bytes().unsigned_abs()),
            )
            .then_with(|| a.full_key.cmp(&b.full_key))
    });
    Ok(HeapDiff {
        classifiers: chain.names().iter().map(|n| n.to_string()).collect(),
        base: instants[0],
        new: instants[1],
        total,
        groups,
    })
}

/// One run's groups: (at the peak, at the end) per full key, and the totals.
struct RunGroups {
    instants: DiffInstants,
    total: (Live, Live),
    groups: Vec<(Vec<String>, (Live, Live))>,
}

/// The groups of `model` at its peak and its end.
fn run_groups(model: &HeapModel, chain: &ClassifierChain) -> Result<RunGroups, HeapError> {
    let run = model.run();
    let peak_ns = model.exact_in(run, model.stats().peak_time_ns);
    let mut series = TreeSeries::compute(model, chain, &[peak_ns])?;
    let (end_bytes, end_objects) = series.column(run.end_ns, true);
    let last_level = (chain.entries().len().max(1) - 1) as u16;
    let at = |values: &[u64], node: usize| values.get(node).copied().unwrap_or(0);
    let live = |node: usize| Live {
        bytes: at(&series.bytes[0], node),
        objects: at(&series.objects[0], node),
    };
    let ended = |node: usize| Live {
        bytes: at(&end_bytes, node),
        objects: at(&end_objects, node),
    };
    let groups = (1..series.node_count())
        .filter(|&node| series.tree.level[node] == last_level)
        .map(|node| (live(node), ended(node), node))
        .filter(|(peak, end, _)| peak.bytes + peak.objects + end.bytes + end.objects > 0)
        .map(|(peak, end, node)| (series.full_key(node as u32), (peak, end)))
        .collect();
    Ok(RunGroups {
        instants: DiffInstants {
            peak_ns,
            end_ns: run.end_ns,
        },
        total: (live(0), ended(0)),
        groups,
    })
}

fn delta(new: u64, base: u64) -> i64 {
    new as i64 - base as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::test_model::stack;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::model::AllocKind;

    /// `leak_a` leaks `a` blocks of 100 bytes, `leak_b` `b` blocks of 50, and `churn`
    /// allocates 1,000 bytes it frees before the end.
    fn run(a: u64, b: u64) -> HeapModel {
        let mut builder = HeapModelBuilder::new();
        let (sa, sb, sc) = (
            stack(&mut builder, &["main", "leak_a"]),
            stack(&mut builder, &["main", "leak_b"]),
            stack(&mut builder, &["main", "churn"]),
        );
        let mut t = 1;
        for i in 0..a {
            builder.alloc(t, 1, 0x1000 + i * 0x100, 100, sa, AllocKind::Malloc);
            t += 1;
        }
        for i in 0..b {
            builder.alloc(t, 1, 0x9000 + i * 0x100, 50, sb, AllocKind::Malloc);
            t += 1;
        }
        builder.alloc(t, 1, 0x20000, 1000, sc, AllocKind::Malloc);
        builder.free(t + 1, 1, 0x20000);
        builder.end(t + 2)
    }

    #[test]
    fn ranks_the_group_that_leaks_more_first() {
        // Base: site A leaks 1 block of 100, B churns. New: A leaks 3, B leaks 1 of 50.
        let base = run(1, 0);
        let new = run(3, 1);
        let chain = parse_classifiers("site", ClassifierOptions::default()).unwrap();
        let diff = diff_runs(&base, &new, &chain).unwrap();
        let keys: Vec<&str> = diff.groups.iter().map(|g| g.full_key[0].as_str()).collect();
        assert_eq!(keys[0], "leak_a");
        assert_eq!(diff.groups[0].delta_end_bytes(), 200);
        assert_eq!(diff.groups[0].delta_end_objects(), 2);
        assert_eq!(diff.groups[1].full_key[0], "leak_b");
        assert_eq!(diff.groups[1].delta_end_bytes(), 50);
        assert_eq!(
            diff.total.new_end.bytes - diff.total.base_end.bytes,
            250,
            "the totals are the runs' leaks"
        );
        // The churn is the same at both peaks, and gone at both ends.
        let churn = diff
            .groups
            .iter()
            .find(|g| g.full_key[0] == "churn")
            .unwrap();
        assert_eq!((churn.base_peak.bytes, churn.new_peak.bytes), (1000, 1000));
        assert_eq!(
            (churn.base_end, churn.new_end),
            (Live::default(), Live::default())
        );
        assert_eq!(diff.groups.last().unwrap().full_key[0], "churn");
    }
}
