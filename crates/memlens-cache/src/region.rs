//! Named address ranges ("regions") that colour the data in the cache lens.
//!
//! The paper colours every data glyph by its home memory region (an array, an
//! allocation). A [`RegionTable`] holds those ranges, hands out [`RegionId`]s and maps
//! an address back to its region. Sources that know their regions (the built-in
//! kernels) set the id on each reference directly; imported traces are attributed by
//! [`RegionTable::lookup`].

use crate::reference::RegionId;

/// One named address range `[start, start + len)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The name shown to the user, e.g. `A` or `merge tmp`.
    pub name: String,
    /// The first byte of the range.
    pub start: u64,
    /// The length of the range in bytes.
    pub len: u64,
}

impl Region {
    /// Returns one past the last byte, saturating at the top of the address space.
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }

    /// Returns true when `addr` lies in the range.
    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.start && addr < self.end()
    }
}

/// The regions of one trace.
///
/// Invariant: region `i` (1-based) has id `RegionId(i)`; id 0 is reserved for
/// addresses outside every region. Ids are handed out in insertion order and never
/// change, so they can be stored in references and in the simulator's tables.
#[derive(Clone, Debug, Default)]
pub struct RegionTable {
    regions: Vec<Region>,
    /// Ids sorted by start address, for lookups.
    by_start: Vec<RegionId>,
}

/// The name reported for [`RegionId::NONE`].
pub const UNNAMED_REGION: &str = "(other)";

impl RegionTable {
    /// Makes an empty table.
    pub fn new() -> RegionTable {
        RegionTable::default()
    }

    /// Adds a region and returns its id.
    ///
    /// Returns `None` when the table already holds the largest number of regions a
    /// [`RegionId`] can name (65,535).
    pub fn add(&mut self, name: impl Into<String>, start: u64, len: u64) -> Option<RegionId> {
        let id = RegionId(u16::try_from(self.regions.len() + 1).ok()?);
        self.regions.push(Region {
            name: name.into(),
            start,
            len,
        });
        let at = self
            .by_start
            .partition_point(|other| self.region_unchecked(*other).start <= start);
        self.by_start.insert(at, id);
        Some(id)
    }

    fn region_unchecked(&self, id: RegionId) -> &Region {
        &self.regions[id.index() - 1]
    }

    /// Returns the region with this id, or `None` for [`RegionId::NONE`] and unknown ids.
    pub fn get(&self, id: RegionId) -> Option<&Region> {
        id.index().checked_sub(1).and_then(|i| self.regions.get(i))
    }

    /// Returns the display name of a region; [`UNNAMED_REGION`] for ids without one.
    pub fn name(&self, id: RegionId) -> &str {
        self.get(id).map_or(UNNAMED_REGION, |r| r.name.as_str())
    }

    /// Returns the region containing `addr`, or [`RegionId::NONE`].
    ///
    /// When ranges overlap, the one with the greatest start address at or below
    /// `addr` that still contains it wins.
    pub fn lookup(&self, addr: u64) -> RegionId {
        let after = self
            .by_start
            .partition_point(|id| self.region_unchecked(*id).start <= addr);
        self.by_start[..after]
            .iter()
            .rev()
            .take(4)
            .find(|id| self.region_unchecked(**id).contains(addr))
            .copied()
            .unwrap_or(RegionId::NONE)
    }

    /// Returns the number of named regions.
    pub fn len(&self) -> usize {
        self.regions.len()
    }

    /// Returns true when the table holds no region.
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// Iterates over `(id, region)` pairs in id order.
    pub fn iter(&self) -> impl Iterator<Item = (RegionId, &Region)> {
        self.regions
            .iter()
            .enumerate()
            .map(|(i, r)| (RegionId((i + 1) as u16), r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_finds_the_containing_region_or_none() {
        let mut table = RegionTable::new();
        let b = table.add("B", 0x2000, 0x100).unwrap();
        let a = table.add("A", 0x1000, 0x100).unwrap();
        assert_eq!(table.lookup(0x1000), a);
        assert_eq!(table.lookup(0x10ff), a);
        assert_eq!(table.lookup(0x1100), RegionId::NONE);
        assert_eq!(table.lookup(0x2050), b);
        assert_eq!(table.lookup(0), RegionId::NONE);
        assert_eq!(table.name(a), "A");
        assert_eq!(table.name(RegionId::NONE), UNNAMED_REGION);
        assert_eq!(
            table.iter().map(|(id, _)| id).collect::<Vec<_>>(),
            vec![b, a]
        );
    }
}
