//! `module`: the module (shared object or executable) of the allocation site, the same
//! frame `site` names: past the allocator and its wrappers, so a C++ `new` counts for
//! the module that called it, and a library's own allocations (`libsqlite3`) for that
//! library.

use super::{Classifier, ClassifierEntry, ClassifierOptions, site_frame_per_stack};
use crate::ids::{AllocId, StringId};
use crate::model::HeapModel;

/// The registry entry of `module`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "module",
    title: "Module",
    summary: "the shared object or executable of the allocation site",
    build,
};

fn build<'m>(model: &'m HeapModel, _: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    let cx = &model.context;
    let module_of_stack = site_frame_per_stack(cx)
        .into_iter()
        .map(|f| cx.frames.module[f.index()].0)
        .collect();
    Box::new(Module {
        model,
        module_of_stack,
    })
}

struct Module<'m> {
    model: &'m HeapModel,
    /// The module (string id) of the site frame, per stack node.
    module_of_stack: Vec<u32>,
}

impl Classifier for Module<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        self.module_of_stack[self.model.stack[alloc.index()].index()]
    }

    fn label(&self, key: u32) -> String {
        match self.model.context.strings.get(StringId(key)) {
            "" => "<unknown module>".to_owned(),
            module => module.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::test_model::stack_in;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::model::AllocKind;

    #[test]
    fn groups_by_module_of_innermost_frame() {
        let mut b = HeapModelBuilder::new();
        let s1 = stack_in(
            &mut b,
            &[("main", "/bin/app"), ("png_read", "/lib/libpng.so")],
        );
        let s2 = stack_in(&mut b, &[("main", "/bin/app"), ("load", "/bin/app")]);
        let a = b.alloc(1, 1, 0x10, 8, s1, AllocKind::Malloc);
        let c = b.alloc(2, 1, 0x20, 8, s2, AllocKind::Malloc);
        let e = b.alloc(3, 1, 0x30, 8, crate::StackId::ROOT, AllocKind::Malloc);
        let model = b.end(10);
        let chain = parse_classifiers("module", ClassifierOptions::default()).unwrap();
        let m = &chain.bind(&model)[0];
        let label = |id| m.label(m.class_of(id, 8, 5));
        assert_eq!(label(a), "/lib/libpng.so");
        assert_eq!(label(c), "/bin/app");
        assert_eq!(label(e), "<unknown module>");
    }
}
