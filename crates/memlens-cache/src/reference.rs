//! One memory reference: the unit every source produces and the simulator consumes.
//!
//! A reference is kept to 16 bytes so that long traces stream through the simulator
//! at memory speed: the address, the size, what kind of access it is, and two small
//! handles naming the region the data lives in and the source statement that made the
//! access. The handles index tables held in [`TraceInfo`](crate::TraceInfo).

/// What a reference does to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AccessKind {
    /// A data load.
    Read,
    /// A data store.
    Write,
    /// A load and a store of the same bytes by one instruction (Lackey's `M`).
    ///
    /// The cache sees it as one access: it is counted once, as a read, and then
    /// dirties the line (or is written through) like a store.
    Modify,
    /// An instruction fetch. The simulator treats it as a read.
    Instruction,
}

impl AccessKind {
    /// Returns true when the access changes the bytes it touches.
    pub fn writes(self) -> bool {
        matches!(self, AccessKind::Write | AccessKind::Modify)
    }

    /// Returns the one-letter code Lackey uses for this kind (`L`, `S`, `M`, `I`).
    pub fn lackey_letter(self) -> char {
        match self {
            AccessKind::Read => 'L',
            AccessKind::Write => 'S',
            AccessKind::Modify => 'M',
            AccessKind::Instruction => 'I',
        }
    }
}

/// A handle to a named address range in a [`RegionTable`](crate::RegionTable).
///
/// `RegionId::NONE` (0) means the reference falls in no named region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionId(pub u16);

impl RegionId {
    /// The region of references that fall in no named range.
    pub const NONE: RegionId = RegionId(0);

    /// Returns the handle as an index usable in per-region tables.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// A handle to a source-statement label in a [`LabelTable`](crate::LabelTable).
///
/// `LabelId::NONE` (0) means the reference carries no label.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LabelId(pub u16);

impl LabelId {
    /// The label of references that carry none.
    pub const NONE: LabelId = LabelId(0);
}

/// One memory reference.
///
/// Invariant kept by every source in this crate: `size >= 1`. The simulator also
/// accepts `size == 0` and treats it as a one-byte access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The first byte touched.
    pub addr: u64,
    /// The region holding the data, or [`RegionId::NONE`].
    pub region: RegionId,
    /// The source statement that made the access, or [`LabelId::NONE`].
    pub label: LabelId,
    /// The number of bytes touched.
    pub size: u16,
    /// What the access does.
    pub kind: AccessKind,
}

impl Reference {
    /// Makes a reference with no region and no label.
    pub fn new(kind: AccessKind, addr: u64, size: u16) -> Reference {
        Reference {
            addr,
            region: RegionId::NONE,
            label: LabelId::NONE,
            size,
            kind,
        }
    }

    /// Makes a data load of `size` bytes at `addr`.
    pub fn read(addr: u64, size: u16) -> Reference {
        Reference::new(AccessKind::Read, addr, size)
    }

    /// Makes a data store of `size` bytes at `addr`.
    pub fn write(addr: u64, size: u16) -> Reference {
        Reference::new(AccessKind::Write, addr, size)
    }

    /// Returns the same reference attributed to `region` and `label`.
    pub fn with(self, region: RegionId, label: LabelId) -> Reference {
        Reference {
            region,
            label,
            ..self
        }
    }

    /// Returns the last byte touched, saturating at the top of the address space.
    #[inline]
    pub fn last_byte(&self) -> u64 {
        self.addr.saturating_add(u64::from(self.size.max(1)) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_fits_in_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Reference>(), 16);
    }

    #[test]
    fn last_byte_saturates_and_treats_zero_size_as_one() {
        assert_eq!(Reference::read(10, 0).last_byte(), 10);
        assert_eq!(Reference::read(10, 4).last_byte(), 13);
        assert_eq!(Reference::read(u64::MAX - 1, 8).last_byte(), u64::MAX);
    }
}
