//! `site`: the allocation site, i.e. the function of the innermost frame of the stack.
//!
//! With inlining, the innermost frame is the innermost *inlined* function at the
//! allocating address. For C++ programs this is often `operator new`; use
//! `closest-user-frame` to skip library frames.

use super::{Classifier, ClassifierEntry, ClassifierOptions, function_label};
use crate::ids::AllocId;
use crate::model::HeapModel;

/// The registry entry of `site`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "site",
    title: "Allocation Site",
    summary: "the function of the innermost frame",
    build,
};

fn build<'m>(model: &'m HeapModel, _: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    Box::new(Site { model })
}

struct Site<'m> {
    model: &'m HeapModel,
}

impl Classifier for Site<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        let cx = &self.model.context;
        let frame = cx.stacks.frame[self.model.stack[alloc.index()].index()];
        cx.frames.function[frame.index()].0
    }

    fn label(&self, key: u32) -> String {
        function_label(&self.model.context, key)
    }
}

#[cfg(test)]
mod tests {
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::test_model::stack;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::model::AllocKind;

    #[test]
    fn groups_by_innermost_function() {
        let mut b = HeapModelBuilder::new();
        let s1 = stack(&mut b, &["main", "load", "malloc_wrapper"]);
        let s2 = stack(&mut b, &["main", "save", "malloc_wrapper"]);
        let s3 = stack(&mut b, &["main", "save"]);
        let a = b.alloc(1, 1, 0x10, 8, s1, AllocKind::Malloc);
        let c = b.alloc(2, 1, 0x20, 8, s2, AllocKind::Malloc);
        let d = b.alloc(3, 1, 0x30, 8, s3, AllocKind::Malloc);
        let e = b.alloc(4, 1, 0x40, 8, crate::StackId::ROOT, AllocKind::Malloc);
        let model = b.end(10);
        let chain = parse_classifiers("site", ClassifierOptions::default()).unwrap();
        let site = &chain.bind(&model)[0];
        let label = |id| site.label(site.class_of(id, 8, 5));
        assert_eq!(label(a), "malloc_wrapper");
        assert_eq!(site.class_of(a, 8, 5), site.class_of(c, 8, 5));
        assert_eq!(label(d), "save");
        assert_eq!(label(e), "<unknown>");
    }
}
