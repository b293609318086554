//! Size classes as filters: restrict a view or a metric to blocks whose requested
//! size lies in a range (for example one glibc small-bin class, or "large blocks"),
//! and glibc's allocation paths as classes of the real run ([`glibc_size_classes`]):
//! the bins of the map by size, beside its bins by address region.

use crate::block::glibc_chunk_size;
use crate::model::AllocModel;

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

/// One of glibc's allocation paths (64-bit defaults), as the requested sizes that take
/// it, with the run's blocks of that class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeClass {
    /// `tcache+fast`, `tcache+small`, `tcache+large`, `large` or `mmap`.
    pub name: &'static str,
    /// What glibc does with such a request, in a few words.
    pub description: &'static str,
    /// The requested sizes of the class.
    pub filter: SizeFilter,
    /// The run's blocks of the class.
    pub blocks: u64,
    /// Their reserved bytes.
    pub reserved_bytes: u64,
}

/// glibc's 64-bit defaults: fast bins hold chunks up to 128 bytes (`M_MXFAST` 128), small
/// bins chunks below 1024 bytes (`MIN_LARGE_SIZE`), the tcache chunks up to 1040 bytes
/// (requests up to 1032, `tcache_max_bytes`), and requests whose chunk reaches 128 KiB
/// (`M_MMAP_THRESHOLD`'s default; glibc raises it as the program frees such blocks) get
/// their own mapping.
const CLASSES: [(&str, &str, u64); 5] = [
    (
        "tcache+fast",
        "tcache, then fast bins (chunks ≤ 128 B)",
        128,
    ),
    (
        "tcache+small",
        "tcache, then small bins (chunks < 1 KiB)",
        1024 - 16,
    ),
    (
        "tcache+large",
        "tcache, then large bins (chunks ≤ 1040 B)",
        1040,
    ),
    (
        "large",
        "large bins from the arena's top (chunks < 128 KiB)",
        128 * 1024 - 16,
    ),
    (
        "mmap",
        "its own mapping (chunks ≥ 128 KiB, the default threshold)",
        u64::MAX,
    ),
];

/// The largest request whose glibc chunk is at most `chunk` bytes.
fn largest_request(chunk: u64) -> u64 {
    if chunk == u64::MAX {
        return u64::MAX;
    }
    // glibc_chunk_size(r) = (r + 23) & !15 (at least 32): r + 23 < chunk + 16.
    chunk + 16 - 23 - 1
}

/// The run's blocks by glibc's allocation path for their requested size, classes in
/// size order (the empty ones too, so that the list is the same for every run).
pub fn glibc_size_classes(model: &AllocModel) -> Vec<SizeClass> {
    let mut classes: Vec<SizeClass> = Vec::with_capacity(CLASSES.len());
    let mut min = 0;
    for (name, description, chunk) in CLASSES {
        let max = largest_request(chunk);
        classes.push(SizeClass {
            name,
            description,
            filter: SizeFilter { min, max },
            blocks: 0,
            reserved_bytes: 0,
        });
        min = max.saturating_add(1);
    }
    // The program's own mappings are not malloc's.
    for b in model.blocks().iter().filter(|b| !b.mapping) {
        if let Some(c) = classes.iter_mut().find(|c| c.filter.keeps(b.requested)) {
            c.blocks += 1;
            c.reserved_bytes += b.reserved;
        }
    }
    debug_assert!(classes.iter().all(|c| c.filter.min <= c.filter.max));
    debug_assert_eq!(glibc_chunk_size(classes[0].filter.max), 128);
    classes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_paths_partition_requests_at_their_chunk_limits() {
        let limits: Vec<(u64, u64)> = CLASSES
            .iter()
            .map(|&(_, _, chunk)| largest_request(chunk))
            .scan(0, |min, max| {
                let range = (*min, max);
                *min = max.saturating_add(1);
                Some(range)
            })
            .collect();
        assert_eq!(limits[0], (0, 120));
        assert_eq!(glibc_chunk_size(120), 128);
        assert_eq!(glibc_chunk_size(121), 144);
        assert_eq!(limits[1], (121, 1000));
        assert_eq!(glibc_chunk_size(1000), 1008);
        assert_eq!(limits[2], (1001, 1032));
        assert_eq!(glibc_chunk_size(1032), 1040);
        assert_eq!(limits[3].1 + 1, 128 * 1024 - 16 - 7);
        assert_eq!(glibc_chunk_size(limits[3].1 + 1), 128 * 1024);
        assert_eq!(limits[4].1, u64::MAX);
    }

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
