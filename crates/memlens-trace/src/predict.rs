//! The address-prediction state of event chunks (`columns.rs`), kept alike by
//! the encoder and the decoder and rebuilt from empty in every chunk.
//!
//! - [`Recent`]: a short most-recent-first list of addresses in a ring of `N`
//!   slots: a push overwrites the oldest entry, a removal shifts only the
//!   entries more recent than the removed one (allocators hand back recently
//!   freed blocks, so those are few), and a search scans at most two runs of
//!   slots, from the most recent.
//! - [`FreedByClass`]: the freed list of every glibc size class, indexed
//!   directly for the classes up to 64 KiB, its lists' positions apart from
//!   their slots (a small table that stays in cache).
//!
//! The encoder also keeps the chunk's blocks by address (`live_blocks.rs`).
//!
//! The list semantics are the format's (`docs/trace-format.md`): the last
//! [`CLASS_DEPTH`] addresses freed through a back-reference per size class,
//! the last [`ENDS_DEPTH`] block ends.

use rustc_hash::FxHashMap;

/// Entries of each size class's freed list.
pub const CLASS_DEPTH: usize = 32;
/// Entries of the list of recent block ends.
pub const ENDS_DEPTH: usize = 8;

/// glibc's chunk size for a request of `size` bytes: header plus payload,
/// rounded to 16, at least 32.
#[inline]
pub fn size_class(size: u64) -> u64 {
    (size.saturating_add(8 + 15) & !15).max(32)
}

/// Where a list's entries are: the slot of the most recent one, and how many.
#[derive(Debug, Clone, Copy, Default)]
struct Pos {
    head: u8,
    len: u8,
}

/// A most-recent-first list of at most `N` addresses (`N` a power of two up
/// to 64) in a ring: logical entry `k` (0 = the most recent) is in slot
/// `(head + k) mod N`. A view of storage kept elsewhere ([`Owned`], or
/// [`FreedByClass`]'s tables, which keep the positions apart from the slots
/// so that finding a class's list touches a small, hot table).
#[derive(Debug)]
pub struct Recent<'a, const N: usize> {
    addrs: &'a mut [u64; N],
    pos: &'a mut Pos,
}

impl<const N: usize> Recent<'_, N> {
    const MASK: usize = N - 1;

    /// Entries held.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.pos.len)
    }

    /// Adds `addr` as the most recent entry, dropping the oldest when full;
    /// returns the entry dropped.
    #[inline]
    pub fn push(&mut self, addr: u64) -> Option<u64> {
        let head = (usize::from(self.pos.head) + Self::MASK) & Self::MASK;
        let dropped = self.addrs[head];
        self.addrs[head] = addr;
        self.pos.head = head as u8;
        if usize::from(self.pos.len) < N {
            self.pos.len += 1;
            None
        } else {
            Some(dropped)
        }
    }

    /// Position of `addr` counted from the most recent (0 = last pushed): the
    /// entries from `head` to the end of the slots, then those from the start.
    /// (Comparing every slot without a branch is slower: most hits are among
    /// the first entries, and a full scan reads all the list's cache lines.)
    #[inline]
    pub fn find(&self, addr: u64) -> Option<usize> {
        let (head, len) = (usize::from(self.pos.head), self.len());
        let first = (N - head).min(len);
        match self.addrs[head..head + first]
            .iter()
            .position(|&a| a == addr)
        {
            Some(k) => Some(k),
            None => self.addrs[..len - first]
                .iter()
                .position(|&a| a == addr)
                .map(|k| k + first),
        }
    }

    /// The entry `k` places from the most recent.
    #[inline]
    pub fn get(&self, k: usize) -> Option<u64> {
        (k < self.len()).then(|| self.addrs[(usize::from(self.pos.head) + k) & Self::MASK])
    }

    /// Removes the entry `k` places from the most recent and returns it.
    #[inline]
    pub fn remove(&mut self, k: usize) -> Option<u64> {
        if k >= self.len() {
            return None;
        }
        let head = usize::from(self.pos.head);
        let at = |j: usize| (head + j) & Self::MASK;
        let a = self.addrs[at(k)];
        // The entries more recent than `k` move one place older.
        for j in (0..k).rev() {
            self.addrs[at(j + 1)] = self.addrs[at(j)];
        }
        self.pos.head = at(1) as u8;
        self.pos.len -= 1;
        Some(a)
    }
}

/// A [`Recent`] list with its own storage.
#[derive(Debug, Clone, Copy)]
pub struct Owned<const N: usize> {
    addrs: [u64; N],
    pos: Pos,
}

impl<const N: usize> Default for Owned<N> {
    fn default() -> Self {
        Owned {
            addrs: [0; N],
            pos: Pos::default(),
        }
    }
}

impl<const N: usize> Owned<N> {
    /// The list.
    #[inline]
    pub fn list(&mut self) -> Recent<'_, N> {
        Recent {
            addrs: &mut self.addrs,
            pos: &mut self.pos,
        }
    }

    /// Forgets every entry.
    #[inline]
    pub fn clear(&mut self) {
        self.pos.len = 0;
    }
}

/// Size classes (`class / 16`) with a directly indexed freed list: up to 64 KiB.
const SMALL_CLASSES: usize = 4096;

/// Recently freed addresses per size class: a direct table for the classes
/// up to 64 KiB (one lookup, no hashing), a map beyond. Only the classes a
/// chunk touched are cleared when the next chunk starts.
#[derive(Default, Debug)]
pub struct FreedByClass {
    /// The small classes' positions (2 bytes each: the table stays in cache)…
    pos: Vec<Pos>,
    /// … and their slots.
    addrs: Vec<[u64; CLASS_DEPTH]>,
    touched: Vec<u32>,
    large: FxHashMap<u64, Owned<CLASS_DEPTH>>,
}

impl FreedByClass {
    /// The list of size class `class` (a [`size_class`] value).
    #[inline(always)]
    pub fn get_mut(&mut self, class: u64) -> Recent<'_, CLASS_DEPTH> {
        let i = (class / 16) as usize;
        if i < self.pos.len() {
            debug_assert_eq!(self.addrs.len(), self.pos.len());
            let pos = &mut self.pos[i];
            if pos.len == 0 {
                self.touched.push(i as u32);
            }
            // SAFETY: `i < pos.len()`, and `addrs` has as many lists as `pos`
            // has positions (both are made together in `get_rare`).
            let addrs = unsafe { self.addrs.get_unchecked_mut(i) };
            Recent { addrs, pos }
        } else {
            self.get_rare(class)
        }
    }

    /// Asks the CPU to start loading the most recent entry of size class
    /// `class`'s freed list, where an allocation's search starts (a hint: it
    /// changes nothing).
    #[inline(always)]
    pub fn prefetch(&self, class: u64) {
        let i = (class / 16) as usize;
        if let (Some(pos), Some(addrs)) = (self.pos.get(i), self.addrs.get(i)) {
            crate::prefetch::line(&addrs[usize::from(pos.head) & (CLASS_DEPTH - 1)]);
        }
    }

    /// [`FreedByClass::get_mut`] for a class above 64 KiB, or the first.
    #[cold]
    #[inline(never)]
    fn get_rare(&mut self, class: u64) -> Recent<'_, CLASS_DEPTH> {
        if self.pos.is_empty() {
            self.pos = vec![Pos::default(); SMALL_CLASSES];
            self.addrs = vec![[0; CLASS_DEPTH]; SMALL_CLASSES];
        }
        let i = (class / 16) as usize;
        if i < SMALL_CLASSES {
            return self.get_mut(class);
        }
        self.large.entry(class).or_default().list()
    }

    /// Forgets every list.
    pub fn clear(&mut self) {
        for &i in &self.touched {
            self.pos[i as usize].len = 0;
        }
        self.touched.clear();
        self.large.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The list semantics as the format states them: a plain vector, most
    /// recent first.
    #[derive(Default)]
    struct Model(Vec<u64>, usize);

    impl Model {
        fn push(&mut self, a: u64) -> Option<u64> {
            self.0.insert(0, a);
            (self.0.len() > self.1).then(|| self.0.pop()).flatten()
        }
    }

    proptest! {
        #[test]
        fn recent_lists_behave_as_bounded_vectors(ops in proptest::collection::vec((0u8..4, 0u64..12), 0..400)) {
            let mut owned = Owned::<8>::default();
            let mut r = owned.list();
            let mut m = Model(Vec::new(), 8);
            for (op, v) in ops {
                match op {
                    0 | 1 => prop_assert_eq!(r.push(v), m.push(v)),
                    2 => {
                        let k = v as usize;
                        let want = (k < m.0.len()).then(|| m.0.remove(k));
                        prop_assert_eq!(r.remove(k), want);
                    }
                    _ => prop_assert_eq!(r.find(v), m.0.iter().position(|&a| a == v)),
                }
                prop_assert_eq!(r.len(), m.0.len());
                for k in 0..10 {
                    prop_assert_eq!(r.get(k), m.0.get(k).copied());
                }
            }
        }
    }

    #[test]
    fn full_class_lists_find_the_most_recent_copy() {
        let mut owned = Owned::<32>::default();
        let mut r = owned.list();
        for a in 0..40u64 {
            r.push(a % 7);
        }
        assert_eq!(r.len(), 32);
        assert_eq!(r.find(39 % 7), Some(0));
        assert_eq!(r.find(38 % 7), Some(1));
        assert_eq!(r.find(99), None);
    }
}
