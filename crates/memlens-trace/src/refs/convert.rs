//! How the reference readers hand each decoded reference to its consumer: as a
//! [`RefRecord`], or converted to the consumer's own type ([`ConvertRef`]), which the
//! block decoder's fast loop builds from the address and one packed word.

use crate::refs::{RefKind, RefRecord};

/// Where [`RefRecord::pack`] puts the label, the size and the kind (the region is
/// in the low 16 bits): the one statement of the packed word's layout, which the
/// block decoder's prediction states keep too.
pub(super) const LABEL_SHIFT: u32 = 16;
pub(super) const SIZE_SHIFT: u32 = 32;
pub(super) const KIND_SHIFT: u32 = 48;

impl RefRecord {
    /// The fields beside the address packed in one word, as the block decoder's
    /// fast loop hands them to [`ConvertRef::convert_packed`]: the region in bits
    /// 0–15, the label in bits 16–31, the size in bits 32–47 and the kind in bits
    /// 48–49 (the byte order of a 16-byte reference laid out address, region,
    /// label, size, kind, on a little-endian machine).
    pub fn pack(&self) -> u64 {
        u64::from(self.region)
            | u64::from(self.label) << LABEL_SHIFT
            | u64::from(self.size) << SIZE_SHIFT
            | (self.kind as u64) << KIND_SHIFT
    }

    /// The record of `addr` and the fields [`RefRecord::pack`] packed.
    #[inline(always)]
    pub fn unpack(addr: u64, packed: u64) -> RefRecord {
        RefRecord {
            addr,
            size: (packed >> SIZE_SHIFT) as u16,
            kind: RefKind::from_bits((packed >> KIND_SHIFT) as u8),
            region: packed as u16,
            label: (packed >> LABEL_SHIFT) as u16,
        }
    }
}

/// How the readers turn each decoded reference into the consumer's type: any
/// `Fn(RefRecord) -> T` does. The block decoder's fast loop hands over the address
/// and the other fields packed in one word ([`RefRecord::pack`]), so that a type
/// laid out alike can be built with two stores instead of five.
pub trait ConvertRef<T> {
    /// The consumer's form of `r`.
    fn convert(&self, r: RefRecord) -> T;

    /// The consumer's form of the reference at `addr` whose other fields are
    /// `packed` (see [`RefRecord::pack`]).
    ///
    /// # Safety
    ///
    /// `packed` is as [`RefRecord::pack`] makes it: bits 50–63 are 0. (A type laid
    /// out alike may then take the word as its bytes.)
    #[inline(always)]
    unsafe fn convert_packed(&self, addr: u64, packed: u64) -> T {
        self.convert(RefRecord::unpack(addr, packed))
    }
}

impl<T, F: Fn(RefRecord) -> T> ConvertRef<T> for F {
    #[inline(always)]
    fn convert(&self, r: RefRecord) -> T {
        self(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_record_unpacks_to_itself() {
        for (i, kind) in [
            RefKind::Read,
            RefKind::Write,
            RefKind::Modify,
            RefKind::Instruction,
        ]
        .into_iter()
        .enumerate()
        {
            let r = RefRecord {
                addr: 0xFFFF_0000_1234 + i as u64,
                size: 0xFEDC,
                kind,
                region: 0xBA98,
                label: 0x7654,
            };
            assert_eq!(RefRecord::unpack(r.addr, r.pack()), r);
            assert_eq!(r.pack() >> 48, i as u64);
        }
    }
}
