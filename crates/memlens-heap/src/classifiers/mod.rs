//! Classifiers: functions from an allocation to the keys of its path in a memory tree.
//!
//! A classifier is a small trait object bound to one model. For speed it works in two
//! steps: [`Classifier::class_of`] maps an allocation to a `u32` *class* (usually a
//! table lookup), and [`Classifier::key_path`] expands a class into one key per tree
//! level (one level for most classifiers, one level per frame for `call-path`). The tree
//! engine calls `key_path` only once per distinct (tree node, class) pair, so expensive
//! expansions cost nothing per allocation. Keys are `u32`s that only the classifier
//! interprets; [`Classifier::label`] turns one into text.
//!
//! Classifiers compose in any order: a list such as `site,thread` means "group by site,
//! then within each site by thread". A classifier whose key can change while an
//! allocation is live without its size changing (only `age` today) reports the change
//! times through [`Classifier::change_times`], so the one-pass tree engine stays exact.
//!
//! Adding a classifier touches one file here plus one line in [`registry`].

mod age;
mod call_path;
mod closest_domain_site;
mod closest_user_frame;
mod data_structure;
mod lifetime;
mod module;
mod options;
pub mod registry;
mod site;
mod site_line;
mod size_class;
mod thread;
mod type_name;

pub use data_structure::{MULTIPLE_DATA_STRUCTURES, NOT_CONTAINED, data_structure_key};
pub use options::{ClassifierOptions, DEFAULT_AGE_BOUNDS_NS, SizeClassMode};
pub use registry::{ClassifierChain, REGISTRY, parse_classifiers};
pub(crate) use size_class::size_key;
pub use size_class::{size_class_label, size_class_of};

use crate::context::Context;
use crate::ids::{AllocId, FrameId, StackId};
use crate::model::HeapModel;

/// Maps allocations to tree keys. See the module documentation for the two-step design.
pub trait Classifier {
    /// The command-line name, e.g. `site`.
    fn name(&self) -> &'static str;

    /// The human title, e.g. `Allocation Site` (used in AntTracks JSON).
    fn title(&self) -> &'static str;

    /// The class of `alloc` while it has `size` bytes, at time `at_ns` (inside its
    /// lifetime). Must be constant between the times reported by
    /// [`change_times`](Self::change_times) as long as `size` does not change.
    fn class_of(&self, alloc: AllocId, size: u64, at_ns: u64) -> u32;

    /// Appends the keys of `class`, one per tree level, outermost first; at least one.
    fn key_path(&self, class: u32, out: &mut Vec<u32>) {
        out.push(class);
    }

    /// The text of a key produced by [`key_path`](Self::key_path).
    fn label(&self, key: u32) -> String;

    /// Whether the class can change over an allocation's life with a constant size.
    fn is_time_dependent(&self) -> bool {
        false
    }

    /// Appends the times strictly inside `alloc`'s lifetime at which its class may
    /// change (in any order). Only called when [`is_time_dependent`](Self::is_time_dependent).
    fn change_times(&self, _alloc: AllocId, _out: &mut Vec<u64>) {}
}

/// Builds a classifier bound to a model.
pub type BuildClassifier =
    for<'m> fn(&'m HeapModel, &ClassifierOptions) -> Box<dyn Classifier + 'm>;

/// One registered classifier.
#[derive(Clone, Copy)]
pub struct ClassifierEntry {
    /// The command-line name.
    pub name: &'static str,
    /// The human title (AntTracks' classifier name).
    pub title: &'static str,
    /// One sentence saying what the classifier groups by.
    pub summary: &'static str,
    /// Binds the classifier to a model.
    pub build: BuildClassifier,
}

impl std::fmt::Debug for ClassifierEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClassifierEntry")
            .field("name", &self.name)
            .finish()
    }
}

/// For every stack node, the first logical frame, innermost first, that satisfies
/// `accept` (recorder frames never do), or `None` when no frame on the stack does.
///
/// Runs in O(stack nodes + frames) thanks to the "parents come before children"
/// invariant: a node with no accepted frame of its own inherits its parent's answer.
pub(crate) fn first_accepted_frame_per_stack(
    cx: &Context,
    accept: impl Fn(FrameId) -> bool,
) -> Vec<Option<FrameId>> {
    let accepted: Vec<bool> = (0..cx.frames.len())
        .map(|f| {
            let f = FrameId(f as u32);
            cx.frames.kind(f).is_shown() && accept(f)
        })
        .collect();
    let mut first = vec![None; cx.stacks.len()];
    for s in 1..cx.stacks.len() {
        let mut frame = Some(cx.stacks.frame[s]);
        let mut found = None;
        while let Some(f) = frame {
            if accepted[f.index()] {
                found = Some(f);
                break;
            }
            frame = cx.frames.inlined_into[f.index()];
        }
        let parent: StackId = cx.stacks.parent[s];
        first[s] = found.or(first[parent.index()]);
    }
    first
}

/// For every stack node, the function (as a class) of the first logical frame, innermost
/// first, that satisfies `accept`, or `none` when no frame on the stack does.
pub(crate) fn first_frame_per_stack(
    cx: &Context,
    accept: impl Fn(FrameId) -> bool,
    none: u32,
) -> Vec<u32> {
    first_accepted_frame_per_stack(cx, accept)
        .into_iter()
        .map(|f| f.map_or(none, |f| cx.frames.function[f.index()].0))
        .collect()
}

/// For every stack node, its allocation site as the frame policy defines it: the
/// innermost frame that can be a site (user code or a library). A stack with no such
/// frame (a program made of system code only) falls back to its innermost shown frame,
/// and the empty stack to the unknown frame. `site`, `site-line` and `module` group by
/// this frame, and `memlens summary` names the same one.
pub(crate) fn site_frame_per_stack(cx: &Context) -> Vec<FrameId> {
    let sites = first_accepted_frame_per_stack(cx, |f| cx.frames.kind(f).can_be_site());
    let innermost = first_accepted_frame_per_stack(cx, |_| true);
    sites
        .into_iter()
        .zip(innermost)
        .map(|(site, shown)| site.or(shown).unwrap_or(FrameId::UNKNOWN))
        .collect()
}

/// A classifier keyed by the function of the closest frame that passes a
/// filter (`closest-user-frame`, `closest-domain-site`): the key of every
/// stack node is computed once by [`first_frame_per_stack`].
pub(crate) struct ClosestFrame<'m> {
    entry: &'static ClassifierEntry,
    model: &'m HeapModel,
    /// Function string id of the closest accepted frame, per stack node.
    class_of_stack: Vec<u32>,
    /// The label of stacks where no frame is accepted.
    none_label: &'static str,
}

impl<'m> ClosestFrame<'m> {
    /// The key of stacks where no frame is accepted.
    const NONE: u32 = u32::MAX;

    /// Builds the classifier `entry` from the frames `accept` takes.
    pub(crate) fn boxed(
        entry: &'static ClassifierEntry,
        model: &'m HeapModel,
        accept: impl Fn(FrameId) -> bool,
        none_label: &'static str,
    ) -> Box<dyn Classifier + 'm> {
        Box::new(ClosestFrame {
            entry,
            model,
            class_of_stack: first_frame_per_stack(&model.context, accept, Self::NONE),
            none_label,
        })
    }
}

impl Classifier for ClosestFrame<'_> {
    fn name(&self) -> &'static str {
        self.entry.name
    }

    fn title(&self) -> &'static str {
        self.entry.title
    }

    fn class_of(&self, alloc: AllocId, _size: u64, _at_ns: u64) -> u32 {
        self.class_of_stack[self.model.stack[alloc.index()].index()]
    }

    fn label(&self, key: u32) -> String {
        if key == Self::NONE {
            self.none_label.to_owned()
        } else {
            function_label(&self.model.context, key)
        }
    }
}

/// The label of a function-name key: the name, or `<unknown>` when it is empty.
pub(crate) fn function_label(cx: &Context, key: u32) -> String {
    let name = cx.strings.get(crate::ids::StringId(key));
    if name.is_empty() {
        "<unknown>".to_owned()
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
pub(crate) mod test_model;
