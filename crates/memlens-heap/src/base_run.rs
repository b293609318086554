//! A base run beside the run being viewed: what trees coloured by change compare with
//! (heaptrack's `-d` and pprof's `-base`, at every instant of the viewer).
//!
//! An instant of the new run is matched with the instant at the **same fraction** of
//! the base run (its start with the base's start, its end with the base's end, halfway
//! with halfway): two runs of one program doing different amounts of work rarely share
//! wall-clock times, but they share phases in order. A coalesced base answers at its
//! exact instant at or before that time.
//!
//! The base is grouped by the same classifier chain, so a group is a full key (the same
//! site in two runs, whose addresses differ, is one group). Each node of a pruned tree
//! of the new run gets the base's live bytes and blocks of the same group; an `Other`
//! (whose full key ends in `Other`, and whose opened members' keys pass through it)
//! gets its parent's base value minus that of its named siblings, which is exact because
//! `Other` holds every sibling that is not named.

use rustc_hash::FxHashMap;

use crate::classifiers::ClassifierChain;
use crate::diff::Live;
use crate::error::HeapError;
use crate::model::HeapModel;
use crate::output::Node;
use crate::trees::TreeSeries;

/// The base run's groups at instants matched with the new run's times.
pub struct BaseRun<'m> {
    new_run: crate::model::TimeWindow,
    series: TreeSeries<'m>,
}

/// A node's base values, by the node's full key as the new run's tree spells it.
pub type BaseValues = FxHashMap<Vec<String>, Live>;

impl<'m> BaseRun<'m> {
    /// The base run `base` grouped by `chain`, to compare with `new`'s trees.
    pub fn new(
        base: &'m HeapModel,
        new: &HeapModel,
        chain: &ClassifierChain,
    ) -> Result<Self, HeapError> {
        let run = base.run();
        Ok(BaseRun {
            new_run: new.run(),
            series: TreeSeries::compute(base, chain, &[run.start_ns, run.end_ns])?,
        })
    }

    /// The base instant matched with `t` of the new run (see the module docs).
    pub fn matching_instant(&self, t: u64) -> u64 {
        let (new, base) = (self.new_run, self.series.model().run());
        let fraction = if new.duration_ns() == 0 {
            1.0
        } else {
            t.saturating_sub(new.start_ns) as f64 / new.duration_ns() as f64
        };
        let offset = (fraction.clamp(0.0, 1.0) * base.duration_ns() as f64).round() as u64;
        let at = base.start_ns + offset.min(base.duration_ns());
        self.series.model().exact_in(base, at)
    }

    /// The base values of every node of `root` (a tree of the new run at `t`, pruned
    /// or drilled into: the keys are full keys from the whole tree's root).
    pub fn values(&mut self, root: &Node, t: u64) -> Result<(u64, BaseValues), HeapError> {
        let at = self.matching_instant(t);
        let k = self.series.add_time(at)?;
        let mut groups: FxHashMap<Vec<String>, Live> = FxHashMap::default();
        for node in 0..self.series.node_count() {
            let live = Live {
                bytes: self.series.bytes[k][node],
                objects: self.series.objects[k][node],
            };
            if live.bytes + live.objects > 0 {
                groups.insert(self.series.full_key(node as u32), live);
            }
        }
        let mut out = BaseValues::default();
        let real: Vec<String> = root
            .full_key
            .iter()
            .filter(|k| *k != Node::OTHER_KEY)
            .cloned()
            .collect();
        let own = groups.get(&real).copied().unwrap_or_default();
        visit(root, &real, own, &groups, &mut out);
        Ok((at, out))
    }
}

/// Records `node`'s base value `own`, then its children's.
fn visit(
    node: &Node,
    real_key: &[String],
    own: Live,
    groups: &FxHashMap<Vec<String>, Live>,
    out: &mut BaseValues,
) {
    out.insert(node.full_key.clone(), own);
    let named: Vec<(Vec<String>, Live)> = node
        .children
        .iter()
        .filter(|c| !c.is_other)
        .map(|c| {
            let mut key = real_key.to_vec();
            key.push(c.key.clone());
            let live = groups.get(&key).copied().unwrap_or_default();
            (key, live)
        })
        .collect();
    let (named_bytes, named_objects) = named
        .iter()
        .fold((0, 0), |(b, o), (_, l)| (b + l.bytes, o + l.objects));
    let mut named = named.into_iter();
    for child in &node.children {
        if child.is_other {
            // `Other` is the parent minus its named siblings; its members' keys name
            // the parent's real children.
            let rest = Live {
                bytes: own.bytes.saturating_sub(named_bytes),
                objects: own.objects.saturating_sub(named_objects),
            };
            visit(child, real_key, rest, groups, out);
        } else if let Some((key, live)) = named.next() {
            visit(child, &key, live, groups, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::test_model::stack;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::model::AllocKind;
    use crate::skeleton::TreeOptions;
    use crate::{Metric, PruneRule, SortStrategy};

    /// Twelve sites `f0`…`f11`: site `fi` leaks `(i + 1) * scale` blocks of 10 bytes,
    /// one block per ns, over a run of 1,000 ns.
    fn run(scale: u64) -> HeapModel {
        let mut b = HeapModelBuilder::new();
        b.start(0);
        let names: Vec<String> = (0..12).map(|i| format!("f{i}")).collect();
        let stacks: Vec<_> = names
            .iter()
            .map(|n| stack(&mut b, &["main", n.as_str()]))
            .collect();
        let mut t = 1;
        let mut addr = 0x1000;
        for (i, s) in stacks.iter().enumerate() {
            for _ in 0..(i as u64 + 1) * scale {
                b.alloc(t, 1, addr, 10, *s, AllocKind::Malloc);
                t += 1;
                addr += 0x10;
            }
        }
        b.end(1000)
    }

    #[test]
    fn nodes_get_the_base_groups_at_the_same_fraction_of_its_run_and_other_the_rest() {
        let (base, new) = (run(1), run(2));
        let chain = parse_classifiers("site", ClassifierOptions::default()).unwrap();
        let series = TreeSeries::compute(&new, &chain, &[0, 1000]).unwrap();
        let trees = series.trees(&TreeOptions {
            metric: Metric::Bytes,
            sort: SortStrategy::AbsoluteGrowth,
            prune: Some(PruneRule::default()),
        });
        let root = &trees.trees[1].root;
        assert!(
            root.children.iter().any(|c| c.is_other),
            "some sites are pruned"
        );
        let mut base_run = BaseRun::new(&base, &new, &chain).unwrap();
        assert_eq!(base_run.matching_instant(1000), 1000);
        assert_eq!(base_run.matching_instant(0), 0);
        let (at, values) = base_run.values(root, 1000).unwrap();
        assert_eq!(at, 1000);
        assert_eq!(
            values[&Vec::<String>::new()].bytes,
            78 * 10,
            "1 + … + 12 blocks"
        );
        let f11 = values[&vec!["f11".to_owned()]];
        assert_eq!((f11.bytes, f11.objects), (120, 12));
        let other = values[&vec![Node::OTHER_KEY.to_owned()]];
        let named: u64 = root
            .children
            .iter()
            .filter(|c| !c.is_other)
            .map(|c| values[&c.full_key].bytes)
            .sum();
        assert_eq!(other.bytes + named, 780, "Other is the rest of the base");
        // Opened members of Other are found through it.
        let opened = root.children.iter().find(|c| c.is_other).unwrap();
        assert!(opened.children.len() >= 2, "Other opens into its members");
        for member in opened.children.iter().filter(|m| !m.is_other) {
            let i: u64 = member.key[1..].parse().unwrap();
            assert_eq!(
                values[&member.full_key].bytes,
                (i + 1) * 10,
                "{}",
                member.key
            );
        }
        // Halfway through the new run is halfway through the base.
        let (at, _) = base_run.values(root, 500).unwrap();
        assert_eq!(at, 500);
    }
}
