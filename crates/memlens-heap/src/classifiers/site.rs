//! `site`: the allocation site as the frame policy defines it, by function: the
//! innermost frame of the stack that is user code or a library, past the allocator, its
//! wrappers (`operator new`, `g_malloc`, `xmalloc`…), the runtime and the loader. The
//! same frame `memlens summary` and the viewer name for the stack.
//!
//! With inlining, frames are logical: an inlined function is a frame of its own.

use super::{Classifier, ClassifierEntry, ClassifierOptions, function_label, site_frame_per_stack};
use crate::ids::AllocId;
use crate::model::HeapModel;

/// The registry entry of `site`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "site",
    title: "Allocation Site",
    summary: "the function of the allocation site (the innermost frame past the allocator and the runtime)",
    build,
};

fn build<'m>(model: &'m HeapModel, _: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    let cx = &model.context;
    let function_of_stack = site_frame_per_stack(cx)
        .into_iter()
        .map(|f| cx.frames.function[f.index()].0)
        .collect();
    Box::new(Site {
        model,
        function_of_stack,
    })
}

struct Site<'m> {
    model: &'m HeapModel,
    /// The function (string id) of the site frame, per stack node.
    function_of_stack: Vec<u32>,
}

impl Classifier for Site<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        self.function_of_stack[self.model.stack[alloc.index()].index()]
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
