//! Per-thread stack interning on the allocating thread.
//!
//! Each thread keeps its own prefix tree of the stacks it has captured: a
//! *node* is a stack, named by a small thread-local id, made of the stack of
//! its parent node (the outer frames; 0 is the empty stack) and one more
//! return address, the innermost. The hook asks for the node of (parent,
//! address) only for the frames that changed since the thread's previous
//! stack (`stack.rs` keeps the ids of that stack's suffixes), and sends a
//! node to the writer the first time it is made; the writer maps (thread,
//! local id) to the id of the same stack in the trace's global prefix tree,
//! one lookup per node. Nothing here is shared between threads, so lookups
//! never contend, and no stack is ever hashed whole.

/// A thread's table of stack nodes: open addressing, linear probing,
/// power-of-two capacity, grown at half load.
pub struct LocalStacks {
    entries: Vec<Node>,
    len: usize,
    next_id: u32,
}

/// One node: 16 bytes.
#[derive(Clone, Copy)]
struct Node {
    ip: u64,
    parent: u32,
    /// The node's id; 0 marks an empty entry.
    id: u32,
}

const EMPTY: Node = Node {
    ip: 0,
    parent: 0,
    id: 0,
};

#[inline]
fn hash(parent: u32, ip: u64) -> usize {
    ((ip ^ u64::from(parent).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize
}

impl LocalStacks {
    /// An empty table.
    pub fn new() -> Self {
        LocalStacks {
            entries: vec![EMPTY; 256],
            len: 0,
            next_id: 1,
        }
    }

    /// Forgets every stack (a forked child, or a new attached session, starts
    /// a new trace).
    pub fn clear(&mut self) {
        self.entries.fill(EMPTY);
        self.len = 0;
        self.next_id = 1;
    }

    /// Returns the id of the stack `parent` extended by the innermost return
    /// address `ip`, and whether it is new.
    #[inline]
    pub fn node(&mut self, parent: u32, ip: u64) -> (u32, bool) {
        let mask = self.entries.len() - 1;
        let mut i = hash(parent, ip) & mask;
        loop {
            let e = self.entries[i];
            if e.id == 0 {
                break;
            }
            if e.ip == ip && e.parent == parent {
                return (e.id, false);
            }
            i = (i + 1) & mask;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.entries[i] = Node { ip, parent, id };
        self.len += 1;
        if self.len * 2 > self.entries.len() {
            self.grow();
        }
        (id, true)
    }

    /// Doubles the table (rare: kept out of line so the lookup stays small).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = self.entries.len() * 2;
        let old = std::mem::replace(&mut self.entries, vec![EMPTY; cap]);
        let mask = cap - 1;
        for e in old.into_iter().filter(|e| e.id != 0) {
            let mut i = hash(e.parent, e.ip) & mask;
            while self.entries[i].id != 0 {
                i = (i + 1) & mask;
            }
            self.entries[i] = e;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id of `frames` (innermost first), interned outermost first.
    fn intern(t: &mut LocalStacks, frames: &[u64]) -> (u32, bool) {
        let mut id = 0;
        let mut new = false;
        for &ip in frames.iter().rev() {
            let (n, fresh) = t.node(id, ip);
            id = n;
            new |= fresh;
        }
        (id, new)
    }

    #[test]
    fn ids_are_dense_and_stable() {
        let mut t = LocalStacks::new();
        assert_eq!(intern(&mut t, &[3, 2, 1]), (3, true));
        assert_eq!(intern(&mut t, &[4, 2, 1]), (4, true));
        assert_eq!(intern(&mut t, &[2, 1]), (2, false));
        assert_eq!(intern(&mut t, &[3, 2, 1]), (3, false));
        assert_eq!(t.node(0, 1), (1, false));
        assert_eq!(t.node(2, 3), (3, false));
    }

    #[test]
    fn the_same_address_under_different_parents_is_different_stacks() {
        let mut t = LocalStacks::new();
        let (a, _) = intern(&mut t, &[9, 1]);
        let (b, _) = intern(&mut t, &[9, 2]);
        assert_ne!(a, b);
    }

    #[test]
    fn growing_keeps_every_id() {
        let mut t = LocalStacks::new();
        let nodes: Vec<(u32, u64)> = (0..5_000u32).map(|i| (i, u64::from(i) * 7 + 1)).collect();
        let ids: Vec<u32> = nodes.iter().map(|&(p, ip)| t.node(p, ip).0).collect();
        assert_eq!(ids, (1..=5_000).collect::<Vec<u32>>());
        assert!(t.entries.len() >= 2 * nodes.len());
        for (&(p, ip), &id) in nodes.iter().zip(&ids) {
            assert_eq!(t.node(p, ip), (id, false));
        }
    }

    #[test]
    fn clear_starts_over() {
        let mut t = LocalStacks::new();
        t.node(0, 1);
        t.node(0, 2);
        t.clear();
        assert_eq!(t.node(0, 2), (1, true));
    }
}
