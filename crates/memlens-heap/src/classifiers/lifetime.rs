//! `lifetime`: how long the block lives in total, in three classes:
//!
//! - `temporary`: freed less than the threshold after allocation;
//! - `long-lived`: freed, but only after the threshold or more;
//! - `live at exit`: never freed during the run (leaked, or freed only at exit).
//!
//! The threshold is [`ClassifierOptions::temporary_below_ns`], by default 1 % of the
//! run's duration (at least 1 ns), so it scales from a test run to a day-long server.
//! The class uses the block's whole life, including the part after the snapshot: it says
//! what becomes of the block, which is what separates churn from accumulation.

use super::{Classifier, ClassifierEntry, ClassifierOptions};
use crate::ids::AllocId;
use crate::model::{HeapModel, NEVER_FREED};
use crate::units::format_duration;

/// The registry entry of `lifetime`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "lifetime",
    title: "Lifetime",
    summary: "temporary, long-lived or still live at exit",
    build,
};

const TEMPORARY: u32 = 0;
const LONG_LIVED: u32 = 1;
const LIVE_AT_EXIT: u32 = 2;

fn build<'m>(model: &'m HeapModel, options: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    let threshold = options
        .temporary_below_ns
        .unwrap_or(model.run().duration_ns() / 100)
        .max(1);
    Box::new(Lifetime { model, threshold })
}

struct Lifetime<'m> {
    model: &'m HeapModel,
    threshold: u64,
}

impl Classifier for Lifetime<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        match self.model.t_free(alloc) {
            NEVER_FREED => LIVE_AT_EXIT,
            t_free if t_free - self.model.t_alloc(alloc) < self.threshold => TEMPORARY,
            _ => LONG_LIVED,
        }
    }

    fn label(&self, key: u32) -> String {
        match key {
            TEMPORARY => format!("temporary (< {})", format_duration(self.threshold)),
            LONG_LIVED => format!("long-lived (≥ {})", format_duration(self.threshold)),
            _ => "live at exit".to_owned(),
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
    fn threshold_is_one_percent_of_the_run_by_default() {
        let mut b = HeapModelBuilder::new();
        let short = b.alloc(0, 1, 0x10, 8, StackId::ROOT, AllocKind::Malloc);
        let long = b.alloc(0, 1, 0x20, 8, StackId::ROOT, AllocKind::Malloc);
        let leak = b.alloc(0, 1, 0x30, 8, StackId::ROOT, AllocKind::Malloc);
        b.free(9_999, 1, 0x10);
        b.free(10_000, 1, 0x20);
        let model = b.end(1_000_000);
        let chain = parse_classifiers("lifetime", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        let label = |id| c.label(c.class_of(id, 8, 0));
        assert_eq!(label(short), "temporary (< 10 µs)");
        assert_eq!(label(long), "long-lived (≥ 10 µs)");
        assert_eq!(label(leak), "live at exit");
        let options = ClassifierOptions {
            temporary_below_ns: Some(20_000),
            ..Default::default()
        };
        let chain = parse_classifiers("lifetime", options).unwrap();
        let c = &chain.bind(&model)[0];
        assert_eq!(c.label(c.class_of(long, 8, 0)), "temporary (< 20 µs)");
    }
}
