//! `call-path`: the whole call path, one tree level per logical frame, outermost first
//! (a top-down call tree). Inline chains are expanded, so an inlined function gets its
//! own level. The empty stack is one level, `<no stack>`.
//!
//! The class is the stack id; the expansion into levels happens once per distinct
//! (tree node, stack) pair, not per allocation.

use super::{Classifier, ClassifierEntry, ClassifierOptions, function_label};
use crate::ids::{AllocId, StackId};
use crate::model::HeapModel;

/// The registry entry of `call-path`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "call-path",
    title: "Call Path",
    summary: "the full call path, one level per frame, outermost first",
    build,
};

/// The key of the empty stack.
const NO_STACK: u32 = u32::MAX;

fn build<'m>(model: &'m HeapModel, _: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    Box::new(CallPath { model })
}

struct CallPath<'m> {
    model: &'m HeapModel,
}

impl Classifier for CallPath<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        self.model.stack[alloc.index()].0
    }

    fn key_path(&self, class: u32, out: &mut Vec<u32>) {
        let cx = &self.model.context;
        let from = out.len();
        cx.stacks.for_each_frame(&cx.frames, StackId(class), |f| {
            out.push(cx.frames.function[f.index()].0);
            true
        });
        if out.len() == from {
            out.push(NO_STACK);
        }
        out[from..].reverse();
    }

    fn label(&self, key: u32) -> String {
        if key == NO_STACK {
            "<no stack>".to_owned()
        } else {
            function_label(&self.model.context, key)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::test_model::stack;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::context::FrameInfo;
    use crate::model::AllocKind;

    #[test]
    fn expands_to_one_level_per_frame_outermost_first() {
        let mut b = HeapModelBuilder::new();
        let s = stack(&mut b, &["main", "run"]);
        let outer = b.add_frame(FrameInfo {
            function: "load",
            ..Default::default()
        });
        let inner = b.add_frame(FrameInfo {
            function: "read_all",
            inlined_into: Some(outer),
            ..Default::default()
        });
        let leaf = b.add_stack(s, inner);
        let a = b.alloc(1, 1, 0x10, 8, leaf, AllocKind::Malloc);
        let e = b.alloc(2, 1, 0x20, 8, crate::StackId::ROOT, AllocKind::Malloc);
        let model = b.end(10);
        let chain = parse_classifiers("call-path", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        let path = |id| {
            let mut keys = Vec::new();
            c.key_path(c.class_of(id, 8, 5), &mut keys);
            keys.iter().map(|&k| c.label(k)).collect::<Vec<_>>()
        };
        assert_eq!(path(a), vec!["main", "run", "load", "read_all"]);
        assert_eq!(path(e), vec!["<no stack>"]);
    }
}
