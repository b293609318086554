//! [`MappedBytes`]: the bytes the program's own mappings (`memlens record --mmap`)
//! hold as they come and go, and their peak, without building blocks: what
//! `memlens summary` prints in one line. Ranges are whole pages; mapping over a live
//! range replaces it (`MAP_FIXED`) and unmapping part of a mapping keeps the rest, as
//! the kernel does, so the count is the same as the mapping blocks' of the model.

use std::collections::BTreeMap;

use crate::block::mapped_size;

/// The program's live mappings and their peak.
#[derive(Clone, Debug, Default)]
pub struct MappedBytes {
    /// Live ranges: start → end; they never overlap.
    ranges: BTreeMap<u64, u64>,
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
        if start >= end {
            return;
        }
        let hit: Vec<(u64, u64)> = self
            .ranges
            .range(..end)
            .rev()
            .take_while(|&(_, &e)| e > start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in hit {
            self.ranges.remove(&s);
            self.bytes -= e - s;
            for (a, b) in [(s, start), (end, e)] {
                if a < b {
                    self.ranges.insert(a, b);
                    self.bytes += b - a;
                }
            }
        }
    }

    /// `len` bytes mapped at `addr` at time `t`.
    pub fn map(&mut self, t: u64, addr: u64, len: u64) {
        let end = addr.saturating_add(mapped_size(len.max(1)));
        self.remove(addr, end);
        self.ranges.insert(addr, end);
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
