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
//! - [`LiveBlocks`] (encoder only): the chunk's live allocations by address,
//!   with their ordinal and size class: an open-addressing table with linear
//!   probing and backward-shift deletion (no tombstones), whose 16-byte
//!   entries hold everything a free needs, so encoding a free touches one
//!   cache line of it and nothing else.
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

    /// Adds `addr` as the most recent entry, dropping the oldest when full.
    #[inline]
    pub fn push(&mut self, addr: u64) {
        let head = (usize::from(self.pos.head) + Self::MASK) & Self::MASK;
        self.addrs[head] = addr;
        self.pos.head = head as u8;
        if usize::from(self.pos.len) < N {
            self.pos.len += 1;
        }
    }

    /// Position of `addr` counted from the most recent (0 = last pushed): the
    /// entries from `head` to the end of the slots, then those from the start.
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
            let pos = &mut self.pos[i];
            if pos.len == 0 {
                self.touched.push(i as u32);
            }
            Recent {
                addrs: &mut self.addrs[i],
                pos,
            }
        } else {
            self.get_rare(class)
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

/// One live block of [`LiveBlocks`]: 16 bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    /// The block's address; 0 marks an empty entry.
    addr: u64,
    /// Its allocation's ordinal in the chunk (1-based).
    ordinal: u32,
    /// Its size class / 16, or [`HUGE_CLASS`] when that does not fit (the
    /// class is then in [`LiveBlocks::huge`]).
    class: u32,
}

/// [`Entry::class`] of a block whose class / 16 does not fit 32 bits.
const HUGE_CLASS: u32 = u32::MAX;

/// The live blocks allocated in the current chunk, by address (encoder side).
#[derive(Debug, Default)]
pub struct LiveBlocks {
    entries: Vec<Entry>,
    len: usize,
    /// 64 − log2 of the capacity: the hash's shift.
    shift: u32,
    /// Size classes of live blocks with [`HUGE_CLASS`], by ordinal.
    huge: FxHashMap<u32, u64>,
}

impl LiveBlocks {
    const MIN_CAPACITY: usize = 1024;
    /// Entries (1 MiB) up to which the table stays at most a quarter full.
    const SPARSE_UP_TO: usize = 1 << 16;

    #[inline]
    fn home(&self, addr: u64) -> usize {
        // Fibonacci hashing of the 16-byte granule: consecutive blocks spread.
        ((addr >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Forgets every block, keeping the table's capacity.
    pub fn clear(&mut self) {
        if self.len > 0 {
            self.entries.fill(Entry::default());
            self.len = 0;
        }
        self.huge.clear();
    }

    /// Remembers that the block at `addr` of size class `class` was the
    /// chunk's allocation number `ordinal`, replacing an earlier block at the
    /// same address. Address 0 is never remembered (its free is a delta).
    #[inline]
    pub fn insert(&mut self, addr: u64, ordinal: u32, class: u64) {
        if addr == 0 {
            return;
        }
        // At most a quarter full while the table is small (short probes, and
        // still a fraction of the cache), at most half beyond.
        let load = if self.entries.len() < Self::SPARSE_UP_TO {
            4
        } else {
            2
        };
        if (self.len + 1) * load > self.entries.len() {
            self.grow();
        }
        let class16 = match u32::try_from(class / 16) {
            Ok(c) if c != HUGE_CLASS => c,
            _ => {
                self.huge.insert(ordinal, class);
                HUGE_CLASS
            }
        };
        let mask = self.entries.len() - 1;
        let mut i = self.home(addr);
        loop {
            let e = &mut self.entries[i];
            if e.addr == 0 {
                self.len += 1;
                *e = Entry {
                    addr,
                    ordinal,
                    class: class16,
                };
                return;
            }
            if e.addr == addr {
                if e.class == HUGE_CLASS {
                    self.huge.remove(&e.ordinal);
                }
                e.ordinal = ordinal;
                e.class = class16;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Forgets the block at `addr`; returns its ordinal and size class when
    /// it was live.
    #[inline]
    pub fn remove(&mut self, addr: u64) -> Option<(u32, u64)> {
        if self.len == 0 || addr == 0 {
            return None;
        }
        let mask = self.entries.len() - 1;
        let mut i = self.home(addr);
        loop {
            let e = self.entries[i];
            if e.addr == addr {
                self.delete_at(i);
                let class = if e.class == HUGE_CLASS {
                    self.huge.remove(&e.ordinal).unwrap_or(u64::MAX)
                } else {
                    u64::from(e.class) * 16
                };
                return Some((e.ordinal, class));
            }
            if e.addr == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Empties entry `i`, moving later entries of its probe run back so
    /// every lookup still finds them (no tombstones).
    #[inline]
    fn delete_at(&mut self, mut i: usize) {
        let mask = self.entries.len() - 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = self.entries[j];
            if e.addr == 0 {
                break;
            }
            // `e` may fill the hole at `i` only if its home is not in (i, j].
            let home = self.home(e.addr);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(i) & mask) {
                self.entries[i] = e;
                i = j;
            }
        }
        self.entries[i] = Entry::default();
        self.len -= 1;
    }

    #[cold]
    fn grow(&mut self) {
        let capacity = (self.entries.len() * 2).max(Self::MIN_CAPACITY);
        let old = core::mem::replace(&mut self.entries, vec![Entry::default(); capacity]);
        self.shift = 64 - capacity.trailing_zeros();
        let mask = capacity - 1;
        for e in old.into_iter().filter(|e| e.addr != 0) {
            let mut i = self.home(e.addr);
            while self.entries[i].addr != 0 {
                i = (i + 1) & mask;
            }
            self.entries[i] = e;
        }
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
        fn push(&mut self, a: u64) {
            self.0.insert(0, a);
            self.0.truncate(self.1);
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
                    0 | 1 => { r.push(v); m.push(v); }
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

        #[test]
        fn live_blocks_behave_as_a_map(ops in proptest::collection::vec((any::<bool>(), 0u64..3000), 0..3000)) {
            let mut t = LiveBlocks::default();
            let mut m = std::collections::HashMap::new();
            for (n, (insert, a)) in ops.into_iter().enumerate() {
                let addr = a * 16;
                if insert {
                    t.insert(addr, n as u32, size_class(a));
                    if addr != 0 {
                        m.insert(addr, (n as u32, size_class(a)));
                    }
                } else {
                    prop_assert_eq!(t.remove(addr), m.remove(&addr));
                }
            }
            for (addr, v) in m {
                prop_assert_eq!(t.remove(addr), Some(v));
            }
            prop_assert_eq!(t.len, 0);
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

    #[test]
    fn huge_classes_are_kept_exactly() {
        let mut t = LiveBlocks::default();
        let class = size_class(1 << 40);
        t.insert(0x1000, 1, class);
        t.insert(0x2000, 2, 48);
        assert_eq!(t.remove(0x1000), Some((1, class)));
        assert_eq!(t.remove(0x2000), Some((2, 48)));
        assert_eq!(t.remove(0), None);
        t.insert(0, 3, 48);
        assert_eq!(t.remove(0), None);
    }
}
