//! `data-structure`: the containing data structure of the heap-evolution paper (its
//! easyTravel case study), for Java traces recorded with heap walks. An object held by
//! one data structure is grouped as `TYPE (allocated in SITE)` — the structure's head
//! type and the allocation site of the head — and the others as `Contained in multiple
//! data structures` or `Not contained in a data structure`, exactly the paper's three
//! kinds of group.
//!
//! The recorder decides containment (see `docs/java.md`): a data structure is a
//! collection, a map, an object array or a class the user named, with its internal
//! objects; nested structures count as their outermost one. The model carries, per
//! row, the *data-structure key* of the latest heap walk before the row's time
//! ([`data_structure_key`]); a coalesced model cuts a block's row where its key
//! changes, so a tree at time `t` shows each object in the structure of the latest walk
//! at or before `t`. Objects allocated after the latest walk are not contained yet.

use rustc_hash::FxHashMap;

use super::{Classifier, ClassifierEntry, ClassifierOptions, function_label, site_frame_per_stack};
use crate::ids::{AllocId, FrameId, StackId, TypeId};
use crate::model::HeapModel;

/// The key of an object that no data structure holds.
pub const NOT_CONTAINED: u64 = 0;
/// The key of an object held by more than one data structure.
pub const MULTIPLE_DATA_STRUCTURES: u64 = u64::MAX;

/// The key of an object held by one data structure whose head has type `head_type`
/// and was allocated with stack `head_stack` (the root stack when the head was not
/// recorded). Never equal to the two special keys when `head_type` is known.
pub fn data_structure_key(head_type: TypeId, head_stack: StackId) -> u64 {
    u64::from(head_type.0) << 32 | u64::from(head_stack.0)
}

/// The registry entry of `data-structure`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "data-structure",
    title: "Containing Data Structure",
    summary: "the data structure holding the object at the latest heap walk (Java traces recorded with heap walks)",
    build,
};

/// Class 0 and 1 are the two special groups; class `2 + i` is `keys[i]`.
const CLASS_NOT_CONTAINED: u32 = 0;
const CLASS_MULTIPLE: u32 = 1;

fn build<'m>(model: &'m HeapModel, _: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    let mut keys: Vec<u64> = model
        .containers
        .iter()
        .copied()
        .filter(|&k| k != NOT_CONTAINED && k != MULTIPLE_DATA_STRUCTURES)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let class_of_key = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, 2 + i as u32))
        .collect();
    Box::new(DataStructure {
        model,
        keys,
        class_of_key,
        site_of_stack: site_frame_per_stack(&model.context),
    })
}

struct DataStructure<'m> {
    model: &'m HeapModel,
    /// The distinct structure keys of the model, ascending.
    keys: Vec<u64>,
    class_of_key: FxHashMap<u64, u32>,
    /// The allocation-site frame of every stack node.
    site_of_stack: Vec<FrameId>,
}

impl Classifier for DataStructure<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        match self.model.container_of(alloc) {
            NOT_CONTAINED => CLASS_NOT_CONTAINED,
            MULTIPLE_DATA_STRUCTURES => CLASS_MULTIPLE,
            key => self
                .class_of_key
                .get(&key)
                .copied()
                .unwrap_or(CLASS_NOT_CONTAINED),
        }
    }

    fn label(&self, class: u32) -> String {
        let key = match class {
            CLASS_NOT_CONTAINED => return "Not contained in a data structure".to_owned(),
            CLASS_MULTIPLE => return "Contained in multiple data structures".to_owned(),
            c => match self.keys.get(c as usize - 2) {
                Some(&key) => key,
                None => return "Not contained in a data structure".to_owned(),
            },
        };
        let cx = &self.model.context;
        let head_type = match cx.type_name(TypeId((key >> 32) as u32)) {
            "" => "<unknown type>",
            name => name,
        };
        let site = match self.site_of_stack.get((key as u32) as usize) {
            Some(&frame) if (key as u32) != 0 => {
                function_label(cx, cx.frames.function[frame.index()].0)
            }
            _ => "<unknown>".to_owned(),
        };
        format!("{head_type} (allocated in {site})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::test_model::stack;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::model::AllocKind;

    /// A cache map and a list; one object in both, one in neither, one added after the
    /// last walk. Walks at 10 and 20; the shared object leaves both between them, and
    /// the cached one is no longer reached by the second.
    fn model(coalesced: bool) -> (HeapModel, [AllocId; 6]) {
        let mut b = if coalesced {
            HeapModelBuilder::coalescing(vec![5, 15, 25, 30])
        } else {
            HeapModelBuilder::new()
        };
        b.start(0);
        let find = stack(&mut b, &["main", "JourneyService.findLocations"]);
        let other = stack(&mut b, &["main", "Report.build"]);
        let map_type = b.add_type("java.util.concurrent.ConcurrentHashMap");
        let list_type = b.add_type("java.util.ArrayList");
        let map = b.alloc(1, 1, 0x100, 64, find, AllocKind::New);
        let list = b.alloc(1, 1, 0x200, 40, other, AllocKind::New);
        let cached = b.alloc(2, 1, 0x300, 24, other, AllocKind::New);
        let shared = b.alloc(2, 1, 0x400, 24, other, AllocKind::New);
        let loose = b.alloc(2, 1, 0x500, 24, other, AllocKind::New);
        let in_map = data_structure_key(map_type, find);
        let in_list = data_structure_key(list_type, other);
        let first = [
            (0x100, in_map),
            (0x300, in_map),
            (0x200, in_list),
            (0x400, MULTIPLE_DATA_STRUCTURES),
            (0x500, NOT_CONTAINED),
        ];
        b.heap_walk(10, &first.into_iter().collect());
        // `cached` is not reached (garbage not collected yet): it keeps its structure.
        let second = [
            (0x100, in_map),
            (0x200, in_list),
            (0x400, NOT_CONTAINED),
            (0x500, NOT_CONTAINED),
        ];
        b.heap_walk(20, &second.into_iter().collect());
        let late = b.alloc(22, 1, 0x600, 24, other, AllocKind::New);
        (b.end(30), [map, list, cached, shared, loose, late])
    }

    #[test]
    fn groups_are_the_papers_three_kinds() {
        let (model, [map, list, cached, shared, loose, late]) = model(false);
        let chain = parse_classifiers("data-structure", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        let label = |id| c.label(c.class_of(id, 24, 25));
        let in_map =
            "java.util.concurrent.ConcurrentHashMap (allocated in JourneyService.findLocations)";
        assert_eq!(label(map), in_map);
        assert_eq!(label(cached), in_map);
        assert_eq!(
            label(list),
            "java.util.ArrayList (allocated in Report.build)"
        );
        // The plain builder keeps the last walk that reached the object.
        assert_eq!(label(shared), "Not contained in a data structure");
        assert_eq!(label(loose), "Not contained in a data structure");
        assert_eq!(label(late), "Not contained in a data structure");
    }

    #[test]
    fn a_coalesced_model_shows_each_walk_from_its_time_on() {
        let (model, _) = model(true);
        let chain = parse_classifiers("data-structure", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        // Bytes per group live at `t`, over the coalesced rows.
        let at = |t: u64| {
            let mut groups: Vec<(String, u64)> = Vec::new();
            for a in (0..model.len() as u32).map(AllocId) {
                if model.is_live_at(a, t) {
                    let label = c.label(c.class_of(a, 0, t));
                    match groups.iter_mut().find(|(l, _)| *l == label) {
                        Some(g) => g.1 += model.size_at(a, t),
                        None => groups.push((label, model.size_at(a, t))),
                    }
                }
            }
            groups.sort();
            groups
        };
        let multiple = "Contained in multiple data structures".to_owned();
        let none = "Not contained in a data structure".to_owned();
        assert_eq!(at(5), vec![(none.clone(), 176)]);
        assert!(at(15).contains(&(multiple.clone(), 24)), "{:?}", at(15));
        assert!(at(15).contains(&(none.clone(), 24)), "{:?}", at(15));
        assert!(!at(25).iter().any(|(l, _)| *l == multiple), "{:?}", at(25));
        assert!(at(25).contains(&(none, 72)), "{:?}", at(25));
        // The model survives the codec with its keys.
        let decoded = HeapModel::decode(&model.encode()).unwrap();
        assert_eq!(decoded.containers, model.containers);
    }

    #[test]
    fn odd_keys_never_panic() {
        let mut b = HeapModelBuilder::new();
        let a = b.alloc(1, 1, 0x10, 8, StackId::ROOT, AllocKind::New);
        let odd = data_structure_key(TypeId(99), StackId(1234));
        b.heap_walk(2, &[(0x10, odd)].into_iter().collect());
        let model = b.end(3);
        let chain = parse_classifiers("data-structure", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        assert_eq!(
            c.label(c.class_of(a, 8, 2)),
            "<unknown type> (allocated in <unknown>)"
        );
        assert_eq!(c.label(77), "Not contained in a data structure");
    }
}
