//! `closest-user-frame`: the innermost frame of the program's own code, past the
//! allocator and its wrappers, the C/C++/Rust runtime, the loader, the recorder and
//! libraries too (the frame policy's *user* frames), with a known function name: the
//! analogue of AntTracks' "closest domain call site" that needs no `--domain`. Where
//! `site` stops at a library (`sqlite3VdbeExec`), this goes on to the program that
//! called it.
//!
//! A stack with no user frame at all falls into the group `<no user frame>`.

use memlens_vocab::FrameKind;

use super::{Classifier, ClassifierEntry, ClassifierOptions, ClosestFrame};
use crate::ids::FrameId;
use crate::model::HeapModel;

/// The registry entry of `closest-user-frame`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "closest-user-frame",
    title: "Closest User Frame",
    summary: "the innermost frame of the program's own code, past the allocator, runtime and libraries",
    build,
};

fn build<'m>(model: &'m HeapModel, _: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    let cx = &model.context;
    let is_user = |f: FrameId| cx.frames.kind(f) == FrameKind::User && !cx.function(f).is_empty();
    ClosestFrame::boxed(&ENTRY, model, is_user, "<no user frame>")
}

#[cfg(test)]
mod tests {
    use memlens_vocab::FrameKind;

    use crate::builder::HeapModelBuilder;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::context::FrameInfo;
    use crate::ids::StackId;
    use crate::model::AllocKind;

    /// A stack of `(function, kind)` frames, outermost first.
    fn stack(b: &mut HeapModelBuilder, frames: &[(&str, FrameKind)]) -> StackId {
        let mut node = StackId::ROOT;
        for &(function, kind) in frames {
            let frame = b.add_frame(FrameInfo {
                function,
                module: "/bin/app",
                kind,
                ..FrameInfo::default()
            });
            node = b.add_stack(node, frame);
        }
        node
    }

    #[test]
    fn skips_library_allocator_runtime_and_recorder_frames() {
        let mut b = HeapModelBuilder::new();
        let cpp = stack(
            &mut b,
            &[
                ("main", FrameKind::User),
                ("Cache::insert(Key const&)", FrameKind::User),
                (
                    "std::_Rb_tree<Key, Value>::_M_emplace_hint_unique",
                    FrameKind::Runtime,
                ),
                ("operator new(unsigned long)", FrameKind::Allocator),
            ],
        );
        let library = stack(
            &mut b,
            &[
                ("main", FrameKind::User),
                ("run_query", FrameKind::User),
                ("sqlite3_step", FrameKind::Library),
                ("sqlite3Malloc", FrameKind::Allocator),
            ],
        );
        let recorder = stack(
            &mut b,
            &[
                ("load_plugin", FrameKind::User),
                ("dlopen", FrameKind::Recorder),
            ],
        );
        let system = stack(
            &mut b,
            &[
                ("_dl_start", FrameKind::Loader),
                ("malloc", FrameKind::Allocator),
            ],
        );
        let unnamed = stack(&mut b, &[("main", FrameKind::User), ("", FrameKind::User)]);
        let ids: Vec<_> = [cpp, library, recorder, system, unnamed]
            .iter()
            .enumerate()
            .map(|(i, &s)| b.alloc(i as u64, 1, 0x10 * (i as u64 + 1), 8, s, AllocKind::Malloc))
            .collect();
        let model = b.end(10);
        let chain = parse_classifiers("closest-user-frame", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        let labels: Vec<String> = ids.iter().map(|&a| c.label(c.class_of(a, 8, 5))).collect();
        assert_eq!(
            labels,
            [
                "Cache::insert(Key const&)",
                "run_query",
                "load_plugin",
                "<no user frame>",
                "main"
            ]
        );
    }

    #[test]
    fn looks_inside_inline_chains() {
        let mut b = HeapModelBuilder::new();
        let outer = b.add_frame(FrameInfo {
            function: "app::run",
            module: "/bin/app",
            ..Default::default()
        });
        let inlined = b.add_frame(FrameInfo {
            function: "helpers::make_buffer",
            module: "/bin/app",
            inlined_into: Some(outer),
            ..Default::default()
        });
        let wrapped = b.add_frame(FrameInfo {
            function: "arena_alloc",
            module: "/bin/app",
            inlined_into: Some(outer),
            kind: FrameKind::Allocator,
            ..Default::default()
        });
        let s = b.add_stack(StackId::ROOT, inlined);
        let w = b.add_stack(StackId::ROOT, wrapped);
        let a = b.alloc(1, 1, 0x10, 8, s, AllocKind::Malloc);
        let z = b.alloc(2, 1, 0x20, 8, w, AllocKind::Malloc);
        let model = b.end(10);
        let chain = parse_classifiers("closest-user-frame", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        assert_eq!(c.label(c.class_of(a, 8, 5)), "helpers::make_buffer");
        assert_eq!(
            c.label(c.class_of(z, 8, 5)),
            "app::run",
            "an inlined wrapper gives way to the frame it was inlined into"
        );
    }
}
