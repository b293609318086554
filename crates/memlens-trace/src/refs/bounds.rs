//! What every reference of a batch is known to keep, found by the block decoder
//! on its way (no check per reference): its largest region id, and whether every
//! reference is aligned to its size (so that none spans a cache line of at least
//! the largest size). The cache simulator then leaves out its own checks.

use crate::refs::block::Prediction;

/// Bounds that every reference of a batch keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefBounds {
    /// No reference's region id is above this.
    pub max_region: u16,
    /// When not 0: every reference's size is a power of two no larger than this
    /// (or 0, one byte), and its address a multiple of its size, so that no
    /// reference spans a line of this many bytes or more.
    pub aligned_size: u16,
}

impl RefBounds {
    /// The bounds of no references (what [`RefBounds::join`] starts from).
    pub const EMPTY: RefBounds = RefBounds {
        max_region: 0,
        aligned_size: 1,
    };

    /// Bounds that promise nothing.
    pub const UNKNOWN: RefBounds = RefBounds {
        max_region: u16::MAX,
        aligned_size: 0,
    };

    /// The bounds of two batches as one.
    pub fn join(self, other: RefBounds) -> RefBounds {
        let aligned = self.aligned_size != 0 && other.aligned_size != 0;
        RefBounds {
            max_region: self.max_region.max(other.max_region),
            aligned_size: match aligned {
                true => self.aligned_size.max(other.aligned_size),
                false => 0,
            },
        }
    }
}

/// What the block decoder's fast loop learns of a block's references on its way.
/// It looks only where a label's state changes (a new size or region, a delta
/// other than 0): a reference as predicted is its label's previous address plus
/// its stride, both multiples of its size if they were before.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tracked {
    max_region: u16,
    max_size: u16,
    /// Not 0 once a reference may not be aligned to its size (or its size is not a
    /// power of two).
    odd: u64,
}

impl Tracked {
    /// After a label's new size: its address and stride must be multiples of it.
    pub(super) fn sized(&mut self, p: &Prediction) {
        let size = p.size();
        self.max_size = self.max_size.max(size);
        self.odd |= u64::from(size > 1 && !size.is_power_of_two());
        self.moved(p);
    }

    /// After a label's new region.
    pub(super) fn region(&mut self, p: &Prediction) {
        self.max_region = self.max_region.max(p.region());
    }

    /// After a label's new address or stride.
    #[inline(always)]
    pub(super) fn moved(&mut self, p: &Prediction) {
        self.odd |= (p.addr | p.stride) & u64::from(p.size().max(1) - 1);
    }

    /// The bounds of the references decoded so far.
    pub(super) fn bounds(&self) -> RefBounds {
        RefBounds {
            max_region: self.max_region,
            aligned_size: if self.odd == 0 {
                self.max_size.max(1)
            } else {
                0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_bounds_keep_the_weaker_promise() {
        let a = RefBounds {
            max_region: 3,
            aligned_size: 8,
        };
        let b = RefBounds {
            max_region: 1,
            aligned_size: 4,
        };
        let joined = RefBounds {
            max_region: 3,
            aligned_size: 8,
        };
        assert_eq!(a.join(b), joined);
        assert_eq!(a.join(RefBounds::UNKNOWN), RefBounds::UNKNOWN);
        assert_eq!(RefBounds::EMPTY.join(b), b);
    }
}
