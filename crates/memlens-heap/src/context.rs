//! The context tables that give allocations their meaning: strings, frames, stacks,
//! threads and types.
//!
//! The caller (the CLI, from a decoded trace) fills these through the
//! [`HeapModelBuilder`](crate::HeapModelBuilder). All of them are columnar and
//! append-only, and every id refers to an earlier entry, so walking "up" a stack or an
//! inline chain always terminates.
//!
//! # Inlined frames
//!
//! One return address may stand for several source-level frames when the compiler
//! inlined calls. We keep the stack prefix tree at one node per address and let the
//! *frame table* carry the inline chain: a stack node names its innermost frame, and a
//! frame that was inlined names, in `inlined_into`, the frame of the function it was
//! inlined into (same address, one level further out). So the logical frames of a stack,
//! innermost first, are: the node's frame, its `inlined_into` chain, then the same for
//! the parent node, up to the root. The caller adds the outer frame of a chain first.

use rustc_hash::FxHashMap;

use memlens_vocab::FrameKind;

use crate::ids::{FrameId, StackId, StringId, ThreadIndex, TypeId};

/// Interned strings. Id 0 is the empty string.
#[derive(Debug, Clone)]
pub struct StringTable {
    strings: Vec<Box<str>>,
    index: FxHashMap<Box<str>, StringId>,
}

impl Default for StringTable {
    fn default() -> Self {
        let mut table = StringTable {
            strings: Vec::new(),
            index: FxHashMap::default(),
        };
        table.intern("");
        table
    }
}

impl StringTable {
    /// Returns the id of `s`, adding it if it is new.
    pub fn intern(&mut self, s: &str) -> StringId {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = StringId(self.strings.len() as u32);
        self.strings.push(s.into());
        self.index.insert(s.into(), id);
        id
    }

    /// The string behind `id`, or the empty string for an id that was never given out.
    pub fn get(&self, id: StringId) -> &str {
        self.strings.get(id.index()).map_or("", |s| s)
    }

    /// The number of strings, including the empty string.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Always false: the empty string is always present.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

/// One symbolized frame as the caller describes it.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameInfo<'a> {
    /// The function name, demangled; empty when unknown.
    pub function: &'a str,
    /// The source file; empty when unknown.
    pub file: &'a str,
    /// The source line; 0 when unknown.
    pub line: u32,
    /// The module (shared object or executable) path or name; empty when unknown.
    pub module: &'a str,
    /// The frame this one was inlined into, if it was inlined.
    pub inlined_into: Option<FrameId>,
    /// What the frame policy says of it: only user code and libraries can be sites,
    /// and recorder frames are never shown.
    pub kind: FrameKind,
}

/// Frames, columnar. Id 0 is the unknown frame.
#[derive(Debug, Clone)]
pub struct FrameTable {
    /// Function name per frame.
    pub function: Vec<StringId>,
    /// Source file per frame.
    pub file: Vec<StringId>,
    /// Source line per frame (0 = unknown).
    pub line: Vec<u32>,
    /// Module per frame.
    pub module: Vec<StringId>,
    /// The frame this one was inlined into; always a smaller id when present.
    pub inlined_into: Vec<Option<FrameId>>,
    /// The frame policy's kind per frame.
    pub kind: Vec<FrameKind>,
}

impl Default for FrameTable {
    fn default() -> Self {
        FrameTable {
            function: vec![StringId::EMPTY],
            file: vec![StringId::EMPTY],
            line: vec![0],
            module: vec![StringId::EMPTY],
            inlined_into: vec![None],
            kind: vec![FrameKind::User],
        }
    }
}

impl FrameTable {
    /// The number of frames, including the unknown frame.
    pub fn len(&self) -> usize {
        self.function.len()
    }

    /// Always false: the unknown frame is always present.
    pub fn is_empty(&self) -> bool {
        self.function.is_empty()
    }

    /// Whether `frame` was inlined into another frame.
    pub fn is_inlined(&self, frame: FrameId) -> bool {
        self.inlined_into[frame.index()].is_some()
    }

    /// What the frame policy says of `frame`.
    pub fn kind(&self, frame: FrameId) -> FrameKind {
        self.kind[frame.index()]
    }
}

/// The stack prefix tree, columnar. Id 0 is the root (empty stack).
///
/// Invariant: `parent[s] < s` for every `s > 0`, and `frame[s]` is a valid frame id.
#[derive(Debug, Clone)]
pub struct StackTable {
    /// Parent node per stack node (the root is its own parent).
    pub parent: Vec<StackId>,
    /// Innermost frame per stack node (the unknown frame for the root).
    pub frame: Vec<FrameId>,
}

impl Default for StackTable {
    fn default() -> Self {
        StackTable {
            parent: vec![StackId::ROOT],
            frame: vec![FrameId::UNKNOWN],
        }
    }
}

impl StackTable {
    /// The number of stack nodes, including the root.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Always false: the root is always present.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Calls `visit` with every shown logical frame of `stack`, innermost first,
    /// expanding inline chains (see the module documentation) and leaving out the
    /// recorder's frames, which are never shown. Stops early when `visit` returns
    /// `false`.
    pub fn for_each_frame(
        &self,
        frames: &FrameTable,
        stack: StackId,
        mut visit: impl FnMut(FrameId) -> bool,
    ) {
        let mut node = stack;
        while node != StackId::ROOT {
            let mut frame = Some(self.frame[node.index()]);
            while let Some(f) = frame {
                if frames.kind(f).is_shown() && !visit(f) {
                    return;
                }
                frame = frames.inlined_into[f.index()];
            }
            node = self.parent[node.index()];
        }
    }
}

/// Recorded threads: operating-system id and name, by dense index.
#[derive(Debug, Clone, Default)]
pub struct ThreadTable {
    /// Operating-system thread id per thread.
    pub tid: Vec<u64>,
    /// Name per thread (empty when never named).
    pub name: Vec<StringId>,
    index: FxHashMap<u64, ThreadIndex>,
}

impl ThreadTable {
    /// Returns the index of `tid`, adding an unnamed thread if it is new.
    pub fn index_of(&mut self, tid: u64) -> ThreadIndex {
        if let Some(&i) = self.index.get(&tid) {
            return i;
        }
        let i = ThreadIndex(self.tid.len() as u32);
        self.tid.push(tid);
        self.name.push(StringId::EMPTY);
        self.index.insert(tid, i);
        i
    }

    /// The number of threads seen.
    pub fn len(&self) -> usize {
        self.tid.len()
    }

    /// Whether no thread was seen.
    pub fn is_empty(&self) -> bool {
        self.tid.is_empty()
    }
}

/// Everything the classifiers need besides the allocation columns.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Interned strings.
    pub strings: StringTable,
    /// Frames.
    pub frames: FrameTable,
    /// The stack prefix tree.
    pub stacks: StackTable,
    /// Threads.
    pub threads: ThreadTable,
    /// Type names by [`TypeId`]; entry 0 is the unknown type.
    pub types: Vec<StringId>,
}

impl Context {
    pub(crate) fn new() -> Self {
        Context {
            types: vec![StringId::EMPTY],
            ..Context::default()
        }
    }

    /// The function name of `frame`.
    pub fn function(&self, frame: FrameId) -> &str {
        self.strings.get(self.frames.function[frame.index()])
    }

    /// The module name of `frame`.
    pub fn module(&self, frame: FrameId) -> &str {
        self.strings.get(self.frames.module[frame.index()])
    }

    /// The innermost logical frame of `stack`, or the unknown frame for the root.
    pub fn innermost_frame(&self, stack: StackId) -> FrameId {
        self.stacks.frame[stack.index()]
    }

    /// The name of type `ty`, or the empty string.
    pub fn type_name(&self, ty: TypeId) -> &str {
        self.types
            .get(ty.index())
            .map_or("", |&s| self.strings.get(s))
    }
}
