//! `thread`: the allocating thread, labelled `name (tid N)`, or `thread N` when the trace
//! never named it.

use super::{Classifier, ClassifierEntry, ClassifierOptions};
use crate::ids::AllocId;
use crate::model::HeapModel;

/// The registry entry of `thread`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "thread",
    title: "Allocating Thread",
    summary: "the allocating thread (name and id)",
    build,
};

fn build<'m>(model: &'m HeapModel, _: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    Box::new(Thread { model })
}

struct Thread<'m> {
    model: &'m HeapModel,
}

impl Classifier for Thread<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        self.model.thread[alloc.index()].0
    }

    fn label(&self, key: u32) -> String {
        let cx = &self.model.context;
        let tid = cx.threads.tid[key as usize];
        match cx.strings.get(cx.threads.name[key as usize]) {
            "" => format!("thread {tid}"),
            name => format!("{name} (tid {tid})"),
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
    fn labels_named_and_unnamed_threads() {
        let mut b = HeapModelBuilder::new();
        b.name_thread(100, "main");
        let a = b.alloc(1, 100, 0x10, 8, StackId::ROOT, AllocKind::Malloc);
        let c = b.alloc(2, 101, 0x20, 8, StackId::ROOT, AllocKind::Malloc);
        let d = b.alloc(3, 100, 0x30, 8, StackId::ROOT, AllocKind::Malloc);
        b.name_thread(101, "worker-1");
        let model = b.end(10);
        let chain = parse_classifiers("thread", ClassifierOptions::default()).unwrap();
        let t = &chain.bind(&model)[0];
        assert_eq!(t.class_of(a, 8, 5), t.class_of(d, 8, 5));
        assert_eq!(t.label(t.class_of(a, 8, 5)), "main (tid 100)");
        assert_eq!(t.label(t.class_of(c, 8, 5)), "worker-1 (tid 101)");
        let mut b = HeapModelBuilder::new();
        let x = b.alloc(1, 7, 0x10, 8, StackId::ROOT, AllocKind::Malloc);
        let model = b.end(2);
        let t = &chain.bind(&model)[0];
        assert_eq!(t.label(t.class_of(x, 8, 1)), "thread 7");
    }
}
