//! The event-chunk encoder's table of the blocks allocated in the current
//! chunk, by address: an open-addressing table with linear probing and
//! backward-shift deletion (no tombstones), whose 16-byte entries hold
//! everything a free or an allocation needs, so encoding either touches one
//! cache line of it.
//!
//! An entry is a **live** block (its allocation's ordinal and size class) or
//! a **freed** one: a block of this chunk freed since, whose address is then in
//! its size class's freed list (`predict.rs`). Keeping freed blocks lets an
//! allocation learn from one probe — the one that registers it anyway — whether
//! the chunk has seen its address at all: one it has not seen is in no freed
//! list, so the encoder skips scanning its class's 32 entries (most new
//! addresses are such), and a free marks its entry instead of deleting it. A
//! freed entry is deleted when its address falls off the end of its class's
//! list, so the table holds the live blocks plus at most
//! [`crate::predict::CLASS_DEPTH`] addresses per class touched.
//!
//! The answers only steer the encoder's choice of address mode: an address the
//! table does not know is encoded as a delta, which is always valid, so the
//! decoder never needs this table.

use rustc_hash::FxHashMap;

/// One block: 16 bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    /// The block's address; 0 marks an empty entry.
    addr: u64,
    /// Its allocation's ordinal in the chunk (1-based); [`FREED`] once freed.
    ordinal: u32,
    /// Its size class / 16, or [`HUGE_CLASS`] when that does not fit (the
    /// class of a live one is then in [`LiveBlocks::huge`]).
    class: u32,
}

/// [`Entry::ordinal`] of a freed block.
const FREED: u32 = 0;

/// [`Entry::class`] of a block whose class / 16 does not fit 32 bits.
const HUGE_CLASS: u32 = u32::MAX;

/// The blocks allocated in the current chunk, live or freed, by address.
#[derive(Debug, Default)]
pub struct LiveBlocks {
    entries: Vec<Entry>,
    len: usize,
    /// 64 − log2 of the capacity: the hash's shift.
    shift: u32,
    /// The number of entries at which the table grows before taking one
    /// more (see [`LiveBlocks::place`]), worked out when it grows.
    grow_at: usize,
    /// Size classes of live blocks with [`HUGE_CLASS`], by ordinal.
    huge: FxHashMap<u32, u64>,
}

/// Where an address is, or would go, in the table: valid until the table
/// next changes other than through [`LiveBlocks::set_live`] at it.
#[derive(Debug, Clone, Copy)]
pub struct Place(usize);

/// `class / 16` as stored, or [`HUGE_CLASS`].
#[inline]
fn class16(class: u64) -> u32 {
    match u32::try_from(class / 16) {
        Ok(c) if c != HUGE_CLASS => c,
        _ => HUGE_CLASS,
    }
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

    /// Entry `i`, without a bounds check: every index this table uses is
    /// below its capacity (a home, which has log2(capacity) bits, a probe step
    /// masked by capacity − 1, or a [`Place`] found so) and the capacity never
    /// shrinks; a table is probed only once it has grown (`place` grows it
    /// first, `free` and `forget_freed` need an entry).
    #[inline(always)]
    fn entry(&self, i: usize) -> &Entry {
        debug_assert!(i < self.entries.len());
        // SAFETY: `i` is below the capacity (see above).
        unsafe { self.entries.get_unchecked(i) }
    }

    /// [`LiveBlocks::entry`], to change it.
    #[inline(always)]
    fn entry_mut(&mut self, i: usize) -> &mut Entry {
        debug_assert!(i < self.entries.len());
        // SAFETY: `i` is below the capacity (see `entry`).
        unsafe { self.entries.get_unchecked_mut(i) }
    }

    /// Forgets every block, keeping the table's capacity.
    pub fn clear(&mut self) {
        if self.len > 0 {
            self.entries.fill(Entry::default());
            self.len = 0;
        }
        self.huge.clear();
    }

    /// Asks the CPU to start loading `addr`'s home entry, which a coming
    /// [`LiveBlocks::place`] or [`LiveBlocks::free`] of it reads first (a hint:
    /// it changes nothing, and an address never looked up costs only the load).
    #[inline(always)]
    pub fn prefetch(&self, addr: u64) {
        if !self.entries.is_empty() {
            crate::prefetch::line(self.entry(self.home(addr)));
        }
    }

    /// The index of `addr`'s entry, or of the empty one where it would go.
    #[inline(always)]
    fn probe(&self, addr: u64) -> usize {
        let mask = self.entries.len() - 1;
        let mut i = self.home(addr);
        loop {
            let a = self.entry(i).addr;
            if a == addr || a == 0 {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Where the block at `addr`, about to be allocated, goes (making room
    /// for it first); `None` for address 0, which is never remembered (its
    /// free is a delta).
    #[inline(always)]
    pub fn place(&mut self, addr: u64) -> Option<Place> {
        if addr == 0 {
            return None;
        }
        if self.len >= self.grow_at {
            self.grow();
        }
        Some(Place(self.probe(addr)))
    }

    /// True when the table knows the address at `place` (a block of this
    /// chunk, live or freed): only such an address can be in a freed list,
    /// unless its entry was forgotten.
    #[inline(always)]
    pub fn known(&self, place: Place) -> bool {
        self.entry(place.0).addr != 0
    }

    /// Makes the entry at `place` (from [`LiveBlocks::place`] for `addr`) the
    /// live block allocated as the chunk's allocation number `ordinal`.
    #[inline(always)]
    pub fn set_live(&mut self, place: Place, addr: u64, ordinal: u32, class: u64) {
        let e = *self.entry(place.0);
        if e.addr == 0 {
            self.len += 1;
        } else if e.ordinal != FREED && e.class == HUGE_CLASS {
            self.huge.remove(&e.ordinal);
        }
        let class16 = class16(class);
        if class16 == HUGE_CLASS {
            self.huge.insert(ordinal, class);
        }
        *self.entry_mut(place.0) = Entry {
            addr,
            ordinal,
            class: class16,
        };
    }

    /// Remembers that the block at `addr` of size class `class` was the
    /// chunk's allocation number `ordinal` ([`LiveBlocks::place`] then
    /// [`LiveBlocks::set_live`]).
    #[cfg(test)]
    pub fn insert(&mut self, addr: u64, ordinal: u32, class: u64) {
        if let Some(place) = self.place(addr) {
            self.set_live(place, addr, ordinal, class);
        }
    }

    /// Marks the block at `addr` freed; returns its ordinal and size class
    /// when it was live.
    #[inline(always)]
    pub fn free(&mut self, addr: u64) -> Option<(u32, u64)> {
        if self.len == 0 || addr == 0 {
            return None;
        }
        let i = self.probe(addr);
        let e = *self.entry(i);
        if e.addr == 0 || e.ordinal == FREED {
            return None;
        }
        let class = if e.class == HUGE_CLASS {
            self.huge.remove(&e.ordinal).unwrap_or(u64::MAX)
        } else {
            u64::from(e.class) * 16
        };
        self.entry_mut(i).ordinal = FREED;
        Some((e.ordinal, class))
    }

    /// `addr` fell off the end of class `class`'s freed list: forgets its
    /// entry if that is a freed block of that class.
    #[inline]
    pub fn forget_freed(&mut self, addr: u64, class: u64) {
        if self.len == 0 || addr == 0 {
            return;
        }
        let i = self.probe(addr);
        let e = self.entries[i];
        if e.addr != 0 && e.ordinal == FREED && (e.class == class16(class) || e.class == HUGE_CLASS)
        {
            self.delete_at(i);
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
        // At most a quarter full while the table is small (short probes, and
        // still a fraction of the cache), at most half beyond.
        let load = if capacity < Self::SPARSE_UP_TO { 4 } else { 2 };
        self.grow_at = capacity / load;
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
    use crate::predict::size_class;
    use proptest::prelude::*;

    /// What an entry holds, as a plain map: live (ordinal, class) or freed (class).
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum State {
        Live(u32, u64),
        Freed(u64),
    }

    proptest! {
        #[test]
        fn live_blocks_behave_as_a_map(ops in proptest::collection::vec((0u8..4, 0u64..3000, 0u64..3), 0..3000)) {
            let mut t = LiveBlocks::default();
            let mut m = std::collections::HashMap::new();
            for (n, (op, a, c)) in ops.into_iter().enumerate() {
                let addr = a * 16;
                let class = size_class(c * 16);
                match op {
                    0 | 1 => {
                        let place = t.place(addr);
                        prop_assert_eq!(place.is_some(), addr != 0);
                        if let Some(place) = place {
                            prop_assert_eq!(t.known(place), m.contains_key(&addr));
                            t.set_live(place, addr, n as u32 + 1, class);
                            m.insert(addr, State::Live(n as u32 + 1, class));
                        }
                    }
                    2 => {
                        let want = match m.get(&addr) {
                            Some(&State::Live(o, c)) => Some((o, c)),
                            _ => None,
                        };
                        prop_assert_eq!(t.free(addr), want);
                        if let Some((_, c)) = want {
                            m.insert(addr, State::Freed(c));
                        }
                    }
                    _ => {
                        t.forget_freed(addr, class);
                        if m.get(&addr) == Some(&State::Freed(class)) {
                            m.remove(&addr);
                        }
                    }
                }
                prop_assert_eq!(t.len, m.len());
            }
            for (addr, state) in m {
                let want = match state {
                    State::Live(o, c) => Some((o, c)),
                    State::Freed(_) => None,
                };
                prop_assert_eq!(t.free(addr), want);
            }
        }
    }

    #[test]
    fn huge_classes_are_kept_exactly() {
        let mut t = LiveBlocks::default();
        let class = size_class(1 << 40);
        t.insert(0x1000, 1, class);
        t.insert(0x2000, 2, 48);
        assert_eq!(t.free(0x1000), Some((1, class)));
        assert_eq!(t.free(0x2000), Some((2, 48)));
        assert_eq!(t.free(0x1000), None);
        assert_eq!(t.free(0), None);
        t.insert(0, 3, 48);
        assert_eq!(t.free(0), None);
        let place = t.place(0x1000).unwrap();
        assert!(t.known(place));
        t.set_live(place, 0x1000, 4, class);
        assert_eq!(t.free(0x1000), Some((4, class)));
        assert!(t.huge.is_empty());
    }
}
