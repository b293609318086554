//! Interning of Java stacks into the trace's prefix tree: (method, line) pairs become
//! synthetic frame addresses named by `FrameName` records, frame sequences become
//! `StackNode`s, and (stack, class) pairs become `TypedStack`s, each new one queued as
//! a process-stream record for the writer.
//!
//! Pure Rust, no JVM calls: the agent resolves method names before it takes the
//! interner's lock, so the lock is never held across a call into the JVM.

use std::sync::Arc;

use memlens_trace::{Meta, SYNTHETIC_FRAME_BASE, StackId};
use rustc_hash::FxHashMap;

use crate::names::line_of;

/// What the agent knows about one method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodInfo {
    /// `package.Class.method`.
    pub function: String,
    /// The source file name (empty when the class has none).
    pub file: String,
    /// The line number table: (first bytecode index, line).
    pub lines: Vec<(i64, u32)>,
}

/// One frame of a stack to intern: the method's identity, its names and the bytecode
/// index executing in it.
#[derive(Debug, Clone)]
pub struct JavaFrame {
    /// The `jmethodID` as an integer (the method's identity).
    pub method: usize,
    /// Its names.
    pub info: Arc<MethodInfo>,
    /// The bytecode index.
    pub location: i64,
}

/// The agent-wide interning tables.
#[derive(Debug)]
pub struct Interner {
    frames: FxHashMap<(usize, u32), u64>,
    nodes: FxHashMap<(StackId, u64), StackId>,
    typed: FxHashMap<(StackId, u32), StackId>,
    types: FxHashMap<String, u32>,
    next_stack: StackId,
    next_ip: u64,
    pending: Vec<Meta>,
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            frames: FxHashMap::default(),
            nodes: FxHashMap::default(),
            typed: FxHashMap::default(),
            types: FxHashMap::default(),
            next_stack: 1,
            next_ip: SYNTHETIC_FRAME_BASE,
            pending: Vec::new(),
        }
    }
}

impl Interner {
    /// The id of the type called `name` (from 1), queuing a `TypeName` when new.
    pub fn type_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.types.get(name) {
            return id;
        }
        let id = self.types.len() as u32 + 1;
        self.types.insert(name.to_owned(), id);
        self.pending.push(Meta::TypeName {
            id,
            name: name.to_owned(),
        });
        id
    }

    fn frame_ip(&mut self, frame: &JavaFrame) -> u64 {
        let line = line_of(&frame.info.lines, frame.location);
        if let Some(&ip) = self.frames.get(&(frame.method, line)) {
            return ip;
        }
        let ip = self.next_ip;
        self.next_ip += 1;
        self.frames.insert((frame.method, line), ip);
        self.pending.push(Meta::FrameName {
            ip,
            function: frame.info.function.clone(),
            file: frame.info.file.clone(),
            line,
        });
        ip
    }

    fn new_stack_id(&mut self) -> StackId {
        let id = self.next_stack;
        self.next_stack += 1;
        id
    }

    /// The typed stack of `frames` (innermost first, as `GetStackTrace` gives them)
    /// for an object of type `type_id` (0: untyped, the plain stack).
    pub fn stack(&mut self, frames: &[JavaFrame], type_id: u32) -> StackId {
        let mut node: StackId = 0;
        for frame in frames.iter().rev() {
            let ip = self.frame_ip(frame);
            node = match self.nodes.get(&(node, ip)) {
                Some(&id) => id,
                None => {
                    let id = self.new_stack_id();
                    self.nodes.insert((node, ip), id);
                    self.pending.push(Meta::StackNode {
                        id,
                        parent: node,
                        ip,
                    });
                    id
                }
            };
        }
        if type_id == 0 {
            return node;
        }
        if let Some(&id) = self.typed.get(&(node, type_id)) {
            return id;
        }
        let id = self.new_stack_id();
        self.typed.insert((node, type_id), id);
        self.pending.push(Meta::TypedStack {
            id,
            stack: node,
            type_id,
        });
        id
    }

    /// Takes the records queued since the last call.
    pub fn take_pending(&mut self) -> Vec<Meta> {
        std::mem::take(&mut self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(method: usize, function: &str, location: i64) -> JavaFrame {
        JavaFrame {
            method,
            info: Arc::new(MethodInfo {
                function: function.into(),
                file: "A.java".into(),
                lines: vec![(0, 10), (5, 11)],
            }),
            location,
        }
    }

    #[test]
    fn shares_prefixes_lines_and_types() {
        let mut i = Interner::default();
        let string = i.type_id("java.lang.String");
        assert_eq!(i.type_id("java.lang.String"), string);
        let main = frame(1, "A.main", 0);
        let put = frame(2, "A.put", 6);
        let a = i.stack(&[put.clone(), main.clone()], string);
        let b = i.stack(&[put.clone(), main.clone()], string);
        assert_eq!(a, b);
        // Another bytecode index on the same line is the same frame.
        let put_same_line = frame(2, "A.put", 7);
        assert_eq!(i.stack(&[put_same_line, main.clone()], string), a);
        let untyped = i.stack(&[put, main], 0);
        assert_ne!(untyped, a);
        let pending = i.take_pending();
        let count = |f: fn(&Meta) -> bool| pending.iter().filter(|m| f(m)).count();
        assert_eq!(count(|m| matches!(m, Meta::TypeName { .. })), 1);
        assert_eq!(count(|m| matches!(m, Meta::FrameName { .. })), 2);
        assert_eq!(count(|m| matches!(m, Meta::StackNode { .. })), 2);
        assert_eq!(count(|m| matches!(m, Meta::TypedStack { .. })), 1);
        assert!(pending.iter().any(|m| matches!(
            m,
            Meta::FrameName { function, line: 11, .. } if function == "A.put"
        )));
        // Parents and bases always come before the nodes that name them.
        for m in &pending {
            match *m {
                Meta::StackNode { id, parent, .. } => assert!(parent < id),
                Meta::TypedStack { id, stack, .. } => assert!(stack < id),
                _ => {}
            }
        }
        assert!(i.take_pending().is_empty());
    }
}
