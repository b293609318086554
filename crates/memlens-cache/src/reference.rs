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
    Read = 0,
    /// A data store.
    Write = 1,
    /// A load and a store of the same bytes by one instruction (Lackey's `M`).
    ///
    /// The cache sees it as one access: it is counted once, as a read, and then
    /// dirties the line (or is written through) like a store.
    Modify = 2,
    /// An instruction fetch. The simulator treats it as a read.
    Instruction = 3,
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
///
/// Laid out as its fields are listed (`repr(C)`): the address in the first eight
/// bytes, the rest in the last eight, which [`Reference::from_packed`] fills from
/// one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
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
    /// The reference at `addr` whose other fields are packed in one word as its
    /// last eight bytes are laid out: the region in bits 0–15, the label in bits
    /// 16–31, the size in bits 32–47 and the kind in bits 48–49 (`AccessKind as
    /// u8`); bits 50–63 are ignored.
    pub fn from_packed(addr: u64, packed: u64) -> Reference {
        /// The bits of the packed word that are fields (the kind's two, and below).
        const FIELDS: u64 = (1 << 50) - 1;
        // SAFETY: with the mask, bits 50–63 are 0.
        unsafe { Reference::from_packed_unchecked(addr, packed & FIELDS) }
    }

    /// [`Reference::from_packed`] without the mask: on a little-endian machine,
    /// two stores, which is how a trace decoder makes its references.
    ///
    /// # Safety
    ///
    /// Bits 50–63 of `packed` are 0 (so that the kind's byte is an `AccessKind`).
    #[inline(always)]
    pub unsafe fn from_packed_unchecked(addr: u64, packed: u64) -> Reference {
        debug_assert!(packed >> 50 == 0, "bits 50-63 of a packed reference are 0");
        #[cfg(target_endian = "little")]
        {
            use std::mem::{offset_of, size_of};
            const {
                assert!(size_of::<Reference>() == 16 && offset_of!(Reference, region) == 8);
                assert!(offset_of!(Reference, label) == 10 && offset_of!(Reference, size) == 12);
                assert!(offset_of!(Reference, kind) == 14);
            };
            // SAFETY: `Reference` is `repr(C)` with the offsets just asserted, so the
            // second word's bytes, low first, are the region, the label, the size,
            // the kind and one byte of padding; the kind's byte is 0 to 3 (the
            // caller's guarantee), each the discriminant of an `AccessKind`
            // (`repr(u8)`).
            unsafe { std::mem::transmute::<[u64; 2], Reference>([addr, packed]) }
        }
        #[cfg(not(target_endian = "little"))]
        {
            let kind = match packed >> 48 & 3 {
                0 => AccessKind::Read,
                1 => AccessKind::Write,
                2 => AccessKind::Modify,
                _ => AccessKind::Instruction,
            };
            Reference {
                addr,
                region: RegionId(packed as u16),
                label: LabelId((packed >> 16) as u16),
                size: (packed >> 32) as u16,
                kind,
            }
        }
    }

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

/// What every reference of a batch is known to keep, as a trace decoder finds it
/// ([`crate::Simulation::access_all_within`]): the simulator then leaves out its
/// own check of each reference's region and of whether it spans lines. Bounds that
/// do not hold give wrong results, never unsafety.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferenceBounds {
    /// No reference's region is above this one.
    pub max_region: RegionId,
    /// When not 0: every reference's size is a power of two no larger than this
    /// (or 0, one byte), and its address a multiple of its size, so that no
    /// reference spans a line of this many bytes or more.
    pub aligned_size: u16,
}

impl ReferenceBounds {
    /// Bounds that promise nothing.
    pub const UNKNOWN: ReferenceBounds = ReferenceBounds {
        max_region: RegionId(u16::MAX),
        aligned_size: 0,
    };

    /// Whether no reference spans a line of `line_size` bytes.
    pub fn within_lines_of(self, line_size: u64) -> bool {
        self.aligned_size != 0 && u64::from(self.aligned_size) <= line_size
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
    fn aligned_bounds_hold_for_lines_of_their_size_or_more() {
        let bounds = ReferenceBounds {
            max_region: RegionId(3),
            aligned_size: 8,
        };
        assert!(bounds.within_lines_of(64) && bounds.within_lines_of(8));
        assert!(!bounds.within_lines_of(4));
        assert!(!ReferenceBounds::UNKNOWN.within_lines_of(64));
    }

    #[test]
    fn a_packed_reference_has_the_fields_packed() {
        let kinds = [
            AccessKind::Read,
            AccessKind::Write,
            AccessKind::Modify,
            AccessKind::Instruction,
        ];
        for (k, kind) in kinds.into_iter().enumerate() {
            let packed = 0xFC00_0000_0000_0000 | (k as u64) << 48 | 0x0040_0007_0003;
            let expected = Reference::new(kind, 0x1234_5678_9ABC, 64).with(RegionId(3), LabelId(7));
            assert_eq!(Reference::from_packed(0x1234_5678_9ABC, packed), expected);
        }
    }

    #[test]
    fn last_byte_saturates_and_treats_zero_size_as_one() {
        assert_eq!(Reference::read(10, 0).last_byte(), 10);
        assert_eq!(Reference::read(10, 4).last_byte(), 13);
        assert_eq!(Reference::read(u64::MAX - 1, 8).last_byte(), u64::MAX);
    }
}
