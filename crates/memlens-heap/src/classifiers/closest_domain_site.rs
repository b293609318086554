//! `closest-domain-site`: the innermost frame whose function name starts with one of the
//! user's domain prefixes (`--domain PREFIX`), like AntTracks' "closest domain call
//! site" for Java (`com.example.` as a package prefix). It works on any function names,
//! so native programs can use namespaces such as `myapp::`.
//!
//! Stacks with no matching frame fall into `<no domain frame>`.

use super::{Classifier, ClassifierEntry, ClassifierOptions, ClosestFrame};
use crate::ids::FrameId;
use crate::model::HeapModel;

/// The registry entry of `closest-domain-site`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "closest-domain-site",
    title: "Closest Domain Call Site",
    summary: "the innermost frame whose function starts with a --domain prefix",
    build,
};

fn build<'m>(model: &'m HeapModel, options: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    let cx = &model.context;
    let prefixes = &options.domain_prefixes;
    let is_domain = |f: FrameId| {
        let function = cx.function(f);
        prefixes.iter().any(|p| function.starts_with(p.as_str()))
    };
    ClosestFrame::boxed(&ENTRY, model, is_domain, "<no domain frame>")
}

#[cfg(test)]
mod tests {
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::test_model::stack;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::model::AllocKind;

    #[test]
    fn finds_the_innermost_domain_frame() {
        let mut b = HeapModelBuilder::new();
        let s = stack(
            &mut b,
            &[
                "java.lang.Thread.run",
                "com.dynatrace.JourneyService.findLocations",
                "java.util.HashMap.put",
                "java.util.HashMap.newNode",
            ],
        );
        let none = stack(
            &mut b,
            &["java.lang.Thread.run", "java.util.HashMap.newNode"],
        );
        let a = b.alloc(1, 1, 0x10, 32, s, AllocKind::New);
        let n = b.alloc(2, 1, 0x20, 32, none, AllocKind::New);
        let model = b.end(10);
        let options = ClassifierOptions {
            domain_prefixes: vec!["com.dynatrace.".into()],
            ..Default::default()
        };
        let chain = parse_classifiers("closest-domain-site", options).unwrap();
        let c = &chain.bind(&model)[0];
        assert_eq!(
            c.label(c.class_of(a, 32, 5)),
            "com.dynatrace.JourneyService.findLocations"
        );
        assert_eq!(c.label(c.class_of(n, 32, 5)), "<no domain frame>");
    }
}
