//! Placing a kernel's arrays in a synthetic address space and naming its statements.
//!
//! Every kernel lays its arrays out one after another from [`BASE_ADDRESS`], each
//! aligned to 64 bytes like globals in a data segment, registers each as a region and
//! interns the labels of its statements. The resulting [`TraceInfo`] is the same every
//! time for the same parameters, so region and label ids are stable.

use crate::label::TraceInfo;
use crate::reference::{AccessKind, LabelId, Reference, RegionId};

/// Where the first array of every kernel starts.
pub const BASE_ADDRESS: u64 = 0x1000_0000;

/// The alignment of every array.
pub const ARRAY_ALIGN: u64 = 64;

/// One array of a kernel: a region with a base address and an element size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Array {
    region: RegionId,
    base: u64,
    elem: u16,
}

impl Array {
    /// Returns the address of element `index`.
    #[inline]
    pub fn addr(&self, index: u64) -> u64 {
        self.base + index * u64::from(self.elem)
    }

    /// Returns a load of element `index`.
    #[inline]
    pub fn read(&self, index: u64, label: LabelId) -> Reference {
        self.reference(AccessKind::Read, index, label)
    }

    /// Returns a store to element `index`.
    #[inline]
    pub fn write(&self, index: u64, label: LabelId) -> Reference {
        self.reference(AccessKind::Write, index, label)
    }

    #[inline]
    fn reference(&self, kind: AccessKind, index: u64, label: LabelId) -> Reference {
        Reference {
            addr: self.addr(index),
            region: self.region,
            label,
            size: self.elem,
            kind,
        }
    }
}

/// Builds a kernel's [`TraceInfo`] while handing out arrays and labels.
#[derive(Debug)]
pub(crate) struct LayoutBuilder {
    info: TraceInfo,
    next: u64,
}

impl LayoutBuilder {
    /// Starts an empty layout at [`BASE_ADDRESS`].
    pub fn new() -> LayoutBuilder {
        LayoutBuilder {
            info: TraceInfo::default(),
            next: BASE_ADDRESS,
        }
    }

    /// Places an array of `len` elements of `elem` bytes and registers it as a region.
    pub fn array(&mut self, name: &str, len: u64, elem: u16) -> Array {
        let bytes = len.saturating_mul(u64::from(elem));
        let base = self.next;
        // Kernels have a handful of arrays, far below the region table's limit.
        let region = self
            .info
            .regions
            .add(name, base, bytes)
            .unwrap_or(RegionId::NONE);
        self.next = base.saturating_add(bytes).saturating_add(ARRAY_ALIGN - 1) & !(ARRAY_ALIGN - 1);
        Array { region, base, elem }
    }

    /// Interns a statement label.
    pub fn label(&mut self, text: &str) -> LabelId {
        self.info.labels.intern(text).unwrap_or(LabelId::NONE)
    }

    /// Returns the finished description.
    pub fn finish(self) -> TraceInfo {
        self.info
    }
}

/// A small deterministic generator for kernel input data (splitmix64).
#[derive(Clone, Debug)]
pub(crate) struct InputData {
    state: u64,
}

impl InputData {
    /// Seeds the generator.
    pub fn new(seed: u64) -> InputData {
        InputData { state: seed }
    }

    /// Returns the next pseudo-random value.
    pub fn next_value(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Returns `len` pseudo-random values.
    pub fn values(&mut self, len: u64) -> Vec<u64> {
        (0..len).map(|_| self.next_value()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_consecutive_aligned_regions() {
        let mut layout = LayoutBuilder::new();
        let a = layout.array("A", 3, 8);
        let b = layout.array("B", 10, 4);
        let info = layout.finish();
        assert_eq!(a.addr(0), BASE_ADDRESS);
        assert_eq!(b.addr(0), BASE_ADDRESS + 64);
        assert_eq!(b.addr(2), BASE_ADDRESS + 72);
        assert_eq!(info.regions.lookup(a.addr(2)), a.region);
        assert_eq!(info.regions.lookup(b.addr(9)), b.region);
        assert_eq!(info.regions.name(b.region), "B");
    }
}
