//! Errors of the engine's entry points: invalid views, options and pool
//! configurations. Each message is one sentence naming the value at fault.

/// Why a request to the engine cannot be served.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AllocError {
    /// The bias α of formula (1) must be a finite number above 0.
    #[error(
        "the bias α must be a number above 0 (got {0}); 1 is plain area averaging, \
         smaller values make thin isolated blocks stand out"
    )]
    BadAlpha(f64),
    /// The view has no time span (its end is not after its start).
    #[error("the time window {start_ns}..{end_ns} ns is empty: its end must be after its start")]
    EmptyTimeWindow {
        /// Start of the window, ns.
        start_ns: u64,
        /// End of the window, ns.
        end_ns: u64,
    },
    /// The view has no address span.
    #[error("the address window {start:#x}..{end:#x} is empty: its end must be above its start")]
    EmptyAddressWindow {
        /// Start of the window on the address axis.
        start: u64,
        /// End of the window on the address axis.
        end: u64,
    },
    /// The image has no pixels or is larger than the engine draws (16384 per side).
    #[error("an image of {width}×{height} pixels cannot be drawn: each side must be 1 to 16384")]
    BadImageSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// A pool configuration whose block sizes do not strictly increase.
    #[error(
        "pool bin {} has block size {size}, not larger than the previous bin's {previous}: \
         bin sizes must strictly increase",
        .index + 1
    )]
    BinSizesNotIncreasing {
        /// Position of the offending bin (0-based).
        index: usize,
        /// Its block size.
        size: u64,
        /// The previous bin's block size.
        previous: u64,
    },
    /// A pool configuration that is empty or has a zero size or count.
    #[error("{0}")]
    BadPoolBin(String),
    /// A pool configuration file that cannot be used (one sentence saying why).
    #[error("{0}")]
    BadPoolFile(String),
    /// A bin id that the model does not have.
    #[error("there is no bin {0} in this model")]
    NoSuchBin(u32),
    /// An option value the engine cannot use (a message naming it).
    #[error("{0}")]
    BadOption(String),
}
