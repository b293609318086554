//! `type`: the allocated type, for traces that record one per allocation (Java traces);
//! allocations without a type form the group `<unknown type>`.

use super::{Classifier, ClassifierEntry, ClassifierOptions};
use crate::ids::{AllocId, TypeId};
use crate::model::HeapModel;

/// The registry entry of `type`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "type",
    title: "Type",
    summary: "the allocated type, where the trace records it",
    build,
};

fn build<'m>(model: &'m HeapModel, _: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    Box::new(TypeName { model })
}

struct TypeName<'m> {
    model: &'m HeapModel,
}

impl Classifier for TypeName<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        self.model.type_of(alloc).0
    }

    fn label(&self, key: u32) -> String {
        match self.model.context.type_name(TypeId(key)) {
            "" => "<unknown type>".to_owned(),
            name => name.to_owned(),
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
    fn groups_by_type_and_defaults_to_unknown() {
        let mut b = HeapModelBuilder::new();
        let a = b.alloc(1, 1, 0x10, 16, StackId::ROOT, AllocKind::New);
        let string = b.add_type("java.lang.String");
        let c = b.alloc(2, 1, 0x20, 16, StackId::ROOT, AllocKind::New);
        b.set_type(c, string);
        let d = b.alloc(3, 1, 0x30, 16, StackId::ROOT, AllocKind::New);
        let model = b.end(10);
        let chain = parse_classifiers("type", ClassifierOptions::default()).unwrap();
        let t = &chain.bind(&model)[0];
        let label = |id| t.label(t.class_of(id, 16, 5));
        assert_eq!(label(a), "<unknown type>");
        assert_eq!(label(c), "java.lang.String");
        assert_eq!(label(d), "<unknown type>");
    }
}
