//! [`MappedBytes`]: the bytes the program's own mappings (`memlens record --mmap`)
//! hold as they come and go, and their peak, without building blocks: what
//! `memlens summary` prints in one line. Ranges are whole pages; mapping over a live
//! range replaces it (`MAP_FIXED`) and unmapping part of a mapping keeps the rest, as
//! the kernel does. [`LiveRanges`] is that bookkeeping, shared with the model's
//! mapping blocks (`builder.rs`), so both count the same bytes.

use std::collections::BTreeMap;

use crate::block::mapped_size;

/// Live address ranges that never overlap, each with a value (the model's block).
#[derive(Clone, Debug)]
pub(crate) struct LiveRanges<V> {
    /// start → (end, value).
    ranges: BTreeMap<u64, (u64, V)>,
}

impl<V> Default for LiveRanges<V> {
    fn default() -> Self {
        LiveRanges {
            ranges: BTreeMap::new(),
        }
    }
}

impl<V: Copy> LiveRanges<V> {
    /// Adds `[start, end)`, which must not overlap a live range.
    pub(crate) fn insert(&mut self, start: u64, end: u64, value: V) {
        self.ranges.insert(start, (end, value));
    }

    /// Every range as `(start, end, value)`, by start.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64, V)> + '_ {
        self.ranges.iter().map(|(&s, &(e, v))| (s, e, v))
    }

    /// Every range's value, to change in place.
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.ranges.values_mut().map(|(_, v)| v)
    }

    /// Removes every range that overlaps `[start, end)` and returns them as
    /// `(start, end, value)`; the caller puts back what lies outside `[start, end)`.
    pub(crate) fn take_overlapping(&mut self, start: u64, end: u64) -> Vec<(u64, u64, V)> {
        if start >= end {
            return Vec::new();
        }
        let hit: Vec<(u64, u64, V)> = self
            .ranges
            .range(..end)
            .rev()
            .take_while(|&(_, &(e, _))| e > start)
            .map(|(&s, &(e, v))| (s, e, v))
            .collect();
        for &(s, _, _) in &hit {
            self.ranges.remove(&s);
        }
        hit
    }
}

/// The program's live mappings and their peak.
#[derive(Clone, Debug, Default)]
pub struct MappedBytes {
    ranges: LiveRanges<()>,
    bytes: u64,
    peak: u64,
    peak_t: u64,
    mappings: u64,
}

impl MappedBytes {
    /// Nothing mapped.
    pub fn new() -> MappedBytes {
        MappedBytes::default()
    }

    /// Removes `[start, end)` from the live ranges, keeping what lies outside it.
    fn remove(&mut self, start: u64, end: u64) {
        for (s, e, ()) in self.ranges.take_overlapping(start, end) {
            self.bytes -= e - s;
            for (a, b) in [(s, start), (end, e)] {
                if a < b {
                    self.ranges.insert(a, b, ());
                    self.bytes += b - a;
                }
            }
        }
    }

    /// `len` bytes mapped at `addr` at time `t`.
    pub fn map(&mut self, t: u64, addr: u64, len: u64) {
        let end = addr.saturating_add(mapped_size(len.max(1)));
        self.remove(addr, end);
        self.ranges.insert(addr, end, ());
        self.bytes += end - addr;
        self.mappings += 1;
        if self.bytes > self.peak {
            self.peak = self.bytes;
            self.peak_t = t;
        }
    }

    /// `len` bytes unmapped at `addr`.
    pub fn unmap(&mut self, addr: u64, len: u64) {
        self.remove(addr, addr.saturating_add(mapped_size(len)));
    }

    /// Bytes mapped now.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The most bytes mapped at once, and when that was first reached.
    pub fn peak(&self) -> (u64, u64) {
        (self.peak, self.peak_t)
    }

    /// Mappings made so far.
    pub fn mappings(&self) -> u64 {
        self.mappings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_unmaps_keep_the_rest_and_the_peak_stays() {
        let mut m = MappedBytes::new();
        m.map(10, 0x10000, 64 * 4096);
        assert_eq!(m.bytes(), 64 * 4096);
        // The upper half, then a page in the middle of the lower half.
        m.unmap(0x10000 + 32 * 4096, 32 * 4096);
        assert_eq!(m.bytes(), 32 * 4096);
        m.unmap(0x10000 + 4096, 100);
        assert_eq!(m.bytes(), 31 * 4096);
        // Unmapping what is not mapped changes nothing.
        m.unmap(0x900000, 4096);
        assert_eq!(m.bytes(), 31 * 4096);
        assert_eq!(m.peak(), (64 * 4096, 10));
        // Lengths count in whole pages; mapping over a live range replaces it.
        m.map(20, 0x10000, 1);
        assert_eq!(m.bytes(), 31 * 4096);
        m.map(30, 0x200000, 40 * 4096);
        assert_eq!(m.bytes(), 71 * 4096);
        assert_eq!(m.peak(), (71 * 4096, 30));
        assert_eq!(m.mappings(), 3);
    }
}
