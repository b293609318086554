//! The options some classifiers read, with their defaults: a leaf of the classifiers,
//! so that parsing a classifier list and building each classifier share one type
//! without depending on each other.

/// Options that some classifiers read; the defaults suit native programs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifierOptions {
    /// Function-name prefixes of the application's own code, for `closest-domain-site`.
    pub domain_prefixes: Vec<String>,
    /// Power-of-two buckets or glibc-style 16-byte classes, for `size-class`.
    pub size_classes: SizeClassMode,
    /// Upper bounds of the `age` buckets, ascending; the last bucket is open.
    pub age_bounds_ns: Vec<u64>,
    /// Lifetimes below this are `temporary` for `lifetime`; `None` means 1 % of the run.
    pub temporary_below_ns: Option<u64>,
}

impl Default for ClassifierOptions {
    fn default() -> Self {
        ClassifierOptions {
            domain_prefixes: Vec::new(),
            size_classes: SizeClassMode::PowerOfTwo,
            age_bounds_ns: DEFAULT_AGE_BOUNDS_NS.to_vec(),
            temporary_below_ns: None,
        }
    }
}

/// How `size-class` buckets sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SizeClassMode {
    /// Power-of-two buckets of the requested size.
    #[default]
    PowerOfTwo,
    /// glibc malloc's 16-byte chunk classes (64-bit), powers of two above 1 KiB.
    Glibc,
}

/// The default upper bounds of the age buckets: 1 ms, 10 ms, 100 ms, 1 s, 10 s, 100 s.
pub const DEFAULT_AGE_BOUNDS_NS: [u64; 6] = [
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
];
