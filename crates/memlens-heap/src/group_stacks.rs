//! The call stacks behind one node of a memory tree: which stacks hold the group's
//! memory at an instant, heaviest first, each with its symbolized frames — what the
//! viewer's tooltips and details panel show (heaptrack's and memray's "the call stack
//! with file:line").
//!
//! The blocks live at the instant are classified by the tree's classifier chain and
//! kept when their key path starts with the node's full key (an `Other` in that key
//! stands for the level it merged, so a member of `Other` is found by its own key; an
//! `Other` itself has no one key and gets no stacks). Their bytes are summed per stack.
//! Cost: one pass over the blocks allocated by the instant, labels compared once per
//! distinct key — no tree is built.
//!
//! Frames follow the frame policy, as every view names them: from the allocation site
//! (the first frame that can be one, so the allocator and its wrappers are folded away)
//! out to the stack's end — the thread's start (`start_thread`, `__libc_start_main`)
//! stays, as heaptrack and memray show it; recorder frames are never shown; inlined
//! frames are frames of their own, flagged.

use rustc_hash::FxHashMap;

use crate::classifiers::ClassifierChain;
use crate::context::Context;
use crate::error::HeapError;
use crate::ids::{AllocId, FrameId, StackId};
use crate::model::HeapModel;
use crate::output::Node;
use memlens_vocab::FrameKind;

/// One symbolized frame of a stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackFrame {
    /// The demangled function; empty when no symbol covers the address.
    pub function: String,
    /// The source file; empty when unknown.
    pub file: String,
    /// The 1-based source line; 0 when unknown.
    pub line: u32,
    /// The module (executable or shared object).
    pub module: String,
    /// Inlined into the next frame outwards.
    pub inlined: bool,
    /// What the frame policy says of it.
    pub kind: FrameKind,
}

/// A stack holding part of a group's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupStack {
    /// Live bytes allocated from this stack in the group.
    pub bytes: u64,
    /// Live blocks.
    pub objects: u64,
    /// Its frames, the allocation site first.
    pub frames: Vec<StackFrame>,
}

/// The stacks of one group at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupStacks {
    /// The group's live bytes (all its stacks).
    pub bytes: u64,
    /// Its live blocks.
    pub objects: u64,
    /// How many distinct stacks hold them.
    pub stack_count: usize,
    /// The heaviest stacks, at most the number asked for.
    pub stacks: Vec<GroupStack>,
}

/// The `limit` heaviest stacks of the group at `full_key` (as a tree of `chain` names
/// it) among the blocks live at `at_ns`, each with at most `max_frames` frames.
pub fn group_stacks(
    model: &HeapModel,
    chain: &ClassifierChain,
    full_key: &[String],
    at_ns: u64,
    limit: usize,
    max_frames: usize,
) -> Result<GroupStacks, HeapError> {
    let mut answer = GroupStacks::default();
    if full_key.last().is_some_and(|k| k == Node::OTHER_KEY) {
        return Ok(answer);
    }
    // `Other` in the middle of a key stands for its level: its member follows it.
    let wanted: Vec<&str> = full_key
        .iter()
        .filter(|k| *k != Node::OTHER_KEY)
        .map(String::as_str)
        .collect();
    let classifiers = chain.bind(model);
    let mut matches: FxHashMap<(usize, usize, u32), bool> = FxHashMap::default();
    let mut per_stack: FxHashMap<StackId, (u64, u64)> = FxHashMap::default();
    let mut keys = Vec::new();
    for a in 0..model.allocated_by(at_ns) {
        let alloc = AllocId(a as u32);
        if model.t_free(alloc) <= at_ns {
            continue;
        }
        let size = model.size_at(alloc, at_ns);
        // Walk the key path level by level until it leaves the wanted key.
        let mut level = 0;
        let mut inside = true;
        'chain: for (c, classifier) in classifiers.iter().enumerate() {
            keys.clear();
            classifier.key_path(classifier.class_of(alloc, size, at_ns), &mut keys);
            for &key in &keys {
                if level == wanted.len() {
                    break 'chain;
                }
                let same = *matches
                    .entry((c, level, key))
                    .or_insert_with(|| classifier.label(key) == wanted[level]);
                if !same {
                    inside = false;
                    break 'chain;
                }
                level += 1;
            }
        }
        if !inside || level < wanted.len() {
            continue;
        }
        let entry = per_stack.entry(model.stack(alloc)).or_default();
        entry.0 += size;
        entry.1 += model.objects_of(alloc);
    }
    let mut ranked: Vec<(StackId, (u64, u64))> = per_stack.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
    answer.stack_count = ranked.len();
    for &(_, (bytes, objects)) in &ranked {
        answer.bytes += bytes;
        answer.objects += objects;
    }
    let cx = model.context();
    answer.stacks = ranked
        .into_iter()
        .take(limit)
        .map(|(stack, (bytes, objects))| GroupStack {
            bytes,
            objects,
            frames: frames_of(cx, stack, max_frames),
        })
        .collect();
    Ok(answer)
}

/// The frames of `stack` from its site outwards, as the frame policy shows them.
fn frames_of(cx: &Context, stack: StackId, max_frames: usize) -> Vec<StackFrame> {
    let mut ids: Vec<FrameId> = Vec::new();
    cx.stacks.for_each_frame(&cx.frames, stack, |f| {
        ids.push(f);
        true
    });
    let first = ids
        .iter()
        .position(|&f| cx.frames.kind(f).can_be_site())
        .unwrap_or(0);
    ids[first..]
        .iter()
        .take(max_frames)
        .map(|&f| {
            let at = f.index();
            StackFrame {
                function: cx.function(f).to_owned(),
                file: cx.strings.get(cx.frames.file[at]).to_owned(),
                line: cx.frames.line[at],
                module: cx.module(f).to_owned(),
                inlined: cx.frames.is_inlined(f),
                kind: cx.frames.kind(f),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::test_model::stack;
    use crate::classifiers::{ClassifierOptions, parse_classifiers};
    use crate::model::AllocKind;

    #[test]
    fn the_heaviest_stacks_of_a_group_with_their_frames() {
        let mut b = HeapModelBuilder::new();
        let via_a = stack(&mut b, &["main", "load", "parse", "xmalloc"]);
        let via_b = stack(&mut b, &["main", "reload", "parse", "xmalloc"]);
        let other = stack(&mut b, &["main", "log"]);
        b.alloc(1, 1, 0x10, 100, via_a, AllocKind::Malloc);
        b.alloc(2, 1, 0x20, 300, via_b, AllocKind::Malloc);
        b.alloc(3, 1, 0x30, 50, via_a, AllocKind::Malloc);
        b.alloc(4, 1, 0x40, 999, other, AllocKind::Malloc);
        b.free(5, 1, 0x30);
        let model = b.end(10);
        let chain = parse_classifiers("site", ClassifierOptions::default()).unwrap();
        let key = |k: &str| vec![k.to_owned()];
        let at_4 = group_stacks(&model, &chain, &key("xmalloc"), 4, 5, 10).unwrap();
        assert_eq!((at_4.bytes, at_4.objects, at_4.stack_count), (450, 3, 2));
        assert_eq!(at_4.stacks[0].bytes, 300);
        let names: Vec<&str> = at_4.stacks[0]
            .frames
            .iter()
            .map(|f| f.function.as_str())
            .collect();
        assert_eq!(names, ["xmalloc", "parse", "reload", "main"]);
        assert_eq!((at_4.stacks[1].bytes, at_4.stacks[1].objects), (150, 2));
        // After the free, and at most one stack of two frames.
        let at_6 = group_stacks(&model, &chain, &key("xmalloc"), 6, 1, 2).unwrap();
        assert_eq!((at_6.bytes, at_6.stacks.len()), (400, 1));
        assert_eq!(at_6.stacks[0].frames.len(), 2);
        // A member of Other is found by its own key; Other itself has no stacks.
        let member = vec!["Other".to_owned(), "log".to_owned()];
        assert_eq!(
            group_stacks(&model, &chain, &member, 6, 5, 10)
                .unwrap()
                .bytes,
            999
        );
        assert!(
            group_stacks(&model, &chain, &key("Other"), 6, 5, 10)
                .unwrap()
                .stacks
                .is_empty()
        );
    }
}
