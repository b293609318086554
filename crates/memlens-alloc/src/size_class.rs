//! Size classes as filters: restrict a view or a metric to blocks whose requested
//! size lies in a range (for example one glibc small-bin class, or "large blocks").

/// Requested sizes `min..=max` (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeFilter {
    /// Smallest requested size kept.
    pub min: u64,
    /// Largest requested size kept.
    pub max: u64,
}

impl SizeFilter {
    /// Keeps every block.
    pub const ALL: SizeFilter = SizeFilter {
        min: 0,
        max: u64::MAX,
    };

    /// True when a block of `requested` bytes passes.
    pub fn keeps(&self, requested: u64) -> bool {
        self.min <= requested && requested <= self.max
    }

    /// The glibc size class of a request, as the filter of every request glibc rounds to
    /// the same chunk size (16-byte classes; requests of 0..=24 bytes share the 32-byte chunk).
    pub fn glibc_class_of(requested: u64) -> SizeFilter {
        let chunk = crate::block::glibc_chunk_size(requested);
        let max = chunk - 8;
        let min = if chunk == 32 { 0 } else { chunk - 16 - 8 + 1 };
        SizeFilter { min, max }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_classes_partition_requests() {
        assert_eq!(
            SizeFilter::glibc_class_of(1),
            SizeFilter { min: 0, max: 24 }
        );
        assert_eq!(
            SizeFilter::glibc_class_of(24),
            SizeFilter { min: 0, max: 24 }
        );
        assert_eq!(
            SizeFilter::glibc_class_of(25),
            SizeFilter { min: 25, max: 40 }
        );
        assert_eq!(
            SizeFilter::glibc_class_of(40),
            SizeFilter { min: 25, max: 40 }
        );
        assert_eq!(
            SizeFilter::glibc_class_of(41),
            SizeFilter { min: 41, max: 56 }
        );
        assert!(SizeFilter::ALL.keeps(u64::MAX));
    }
}
