//! `age`: how long the block has been live at the snapshot, in buckets.
//!
//! This is the one classifier whose key depends on the snapshot time. It reports the
//! times at which a block crosses a bucket bound ([`Classifier::change_times`]), and the
//! tree engine splits the block's life there, so `age` costs one extra segment per bound
//! crossed while the block lives (at most one per bucket) instead of a pass per snapshot.
//! The default bounds are decades from 1 ms to 100 s.

use super::{Classifier, ClassifierEntry, ClassifierOptions};
use crate::ids::AllocId;
use crate::model::HeapModel;
use crate::units::format_duration;

/// The registry entry of `age`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "age",
    title: "Age",
    summary: "time since allocation at the snapshot, in buckets",
    build,
};

fn build<'m>(model: &'m HeapModel, options: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    let mut bounds = options.age_bounds_ns.clone();
    bounds.sort_unstable();
    bounds.dedup();
    bounds.retain(|&b| b > 0);
    Box::new(Age { model, bounds })
}

struct Age<'m> {
    model: &'m HeapModel,
    /// Ascending, distinct, positive. Bucket `i` holds ages in `[bounds[i-1], bounds[i])`.
    bounds: Vec<u64>,
}

impl Classifier for Age<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, at_ns: u64) -> u32 {
        let age = at_ns.saturating_sub(self.model.t_alloc(alloc));
        self.bounds.partition_point(|&b| b <= age) as u32
    }

    fn label(&self, key: u32) -> String {
        let i = key as usize;
        match (i.checked_sub(1).map(|j| self.bounds[j]), self.bounds.get(i)) {
            (None, Some(&high)) => format!("age < {}", format_duration(high)),
            (Some(low), Some(&high)) => {
                format!("age {}–{}", format_duration(low), format_duration(high))
            }
            (Some(low), None) => format!("age ≥ {}", format_duration(low)),
            (None, None) => "any age".to_owned(),
        }
    }

    fn is_time_dependent(&self) -> bool {
        true
    }

    fn change_times(&self, alloc: AllocId, out: &mut Vec<u64>) {
        let (born, died) = (self.model.t_alloc(alloc), self.model.t_free(alloc));
        for &b in &self.bounds {
            match born.checked_add(b) {
                Some(t) if t < died => out.push(t),
                _ => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::ids::StackId;
    use crate::model::AllocKind;

    #[test]
    fn buckets_age_at_the_snapshot_and_reports_crossings() {
        let mut b = HeapModelBuilder::new();
        let a = b.alloc(1_000, 1, 0x10, 8, StackId::ROOT, AllocKind::Malloc);
        b.free(1_000 + 25_000_000, 1, 0x10);
        let model = b.end(2_000_000_000);
        let chain = parse_classifiers("age", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        let at = |ms: u64| c.label(c.class_of(a, 8, 1_000 + ms * 1_000_000));
        assert_eq!(at(0), "age < 1 ms");
        assert_eq!(at(5), "age 1 ms–10 ms");
        assert_eq!(at(10), "age 10 ms–100 ms");
        assert!(c.is_time_dependent());
        let mut times = Vec::new();
        c.change_times(a, &mut times);
        assert_eq!(
            times,
            vec![1_000 + 1_000_000, 1_000 + 10_000_000],
            "only crossings before the free"
        );
        assert_eq!(c.label(6), "age ≥ 100 s");
    }
}
