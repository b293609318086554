//! `site-line`: the allocation site (the frame `site` names, see the frame policy) with
//! its source position, `function (file:line)`.
//!
//! Frames at different addresses that share function, file and line form one class, so
//! two return addresses on the same source line are one group.

use rustc_hash::FxHashMap;

use super::{Classifier, ClassifierEntry, ClassifierOptions, site_frame_per_stack};
use crate::ids::{AllocId, StringId};
use crate::model::HeapModel;

/// The registry entry of `site-line`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "site-line",
    title: "Allocation Site (Line)",
    summary: "the function, file and line of the allocation site",
    build,
};

fn build<'m>(model: &'m HeapModel, _: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    let frames = &model.context.frames;
    let mut positions: Vec<(StringId, StringId, u32)> = Vec::new();
    let mut index: FxHashMap<(StringId, StringId, u32), u32> = FxHashMap::default();
    let class_of_frame: Vec<u32> = (0..frames.len())
        .map(|f| {
            let position = (frames.function[f], frames.file[f], frames.line[f]);
            *index.entry(position).or_insert_with(|| {
                positions.push(position);
                positions.len() as u32 - 1
            })
        })
        .collect();
    let class_of_stack = site_frame_per_stack(&model.context)
        .into_iter()
        .map(|f| class_of_frame[f.index()])
        .collect();
    Box::new(SiteLine {
        model,
        class_of_stack,
        positions,
    })
}

struct SiteLine<'m> {
    model: &'m HeapModel,
    /// Class of the site frame, per stack node.
    class_of_stack: Vec<u32>,
    /// (function, file, line) per class.
    positions: Vec<(StringId, StringId, u32)>,
}

impl Classifier for SiteLine<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        self.class_of_stack[self.model.stack[alloc.index()].index()]
    }

    fn label(&self, key: u32) -> String {
        let strings = &self.model.context.strings;
        let (function, file, line) = self.positions[key as usize];
        let function = match strings.get(function) {
            "" => "<unknown>",
            name => name,
        };
        match (strings.get(file), line) {
            ("", _) => function.to_owned(),
            (file, 0) => format!("{function} ({file})"),
            (file, line) => format!("{function} ({file}:{line})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::context::FrameInfo;
    use crate::ids::StackId;
    use crate::model::AllocKind;

    #[test]
    fn same_line_merges_and_other_lines_split() {
        let mut b = HeapModelBuilder::new();
        let at = |b: &mut HeapModelBuilder, line| {
            let f = b.add_frame(FrameInfo {
                function: "parse",
                file: "src/parse.c",
                line,
                ..Default::default()
            });
            b.add_stack(StackId::ROOT, f)
        };
        let (s1, s2, s3) = (at(&mut b, 10), at(&mut b, 10), at(&mut b, 12));
        let no_file = b.add_frame(FrameInfo {
            function: "blob",
            ..Default::default()
        });
        let s4 = b.add_stack(StackId::ROOT, no_file);
        let ids: Vec<_> = [s1, s2, s3, s4]
            .iter()
            .enumerate()
            .map(|(i, &s)| b.alloc(i as u64, 1, 0x100 * (i as u64 + 1), 4, s, AllocKind::Malloc))
            .collect();
        let model = b.end(10);
        let chain = parse_classifiers("site-line", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        let class: Vec<u32> = ids.iter().map(|&a| c.class_of(a, 4, 5)).collect();
        assert_eq!(class[0], class[1]);
        assert_ne!(class[0], class[2]);
        assert_eq!(c.label(class[0]), "parse (src/parse.c:10)");
        assert_eq!(c.label(class[2]), "parse (src/parse.c:12)");
        assert_eq!(c.label(class[3]), "blob");
    }
}
