//! Errors of the engine's entry points: invalid views, options and pool
//! configurations. Each message is one sentence naming the value at fault.

use std::fmt;

/// Why a request to the engine cannot be served.
#[derive(Clone, Debug, PartialEq)]
pub enum AllocError {
    /// The bias α of formula (1) must be a finite number above 0.
    BadAlpha(f64),
    /// The view has no time span (its end is not after its start).
    EmptyTimeWindow {
        /// Start of the window, ns.
        start_ns: u64,
        /// End of the window, ns.
        end_ns: u64,
    },
    /// The view has no address span.
    EmptyAddressWindow {
        /// Start of the window on the address axis.
        start: u64,
        /// End of the window on the address axis.
        end: u64,
    },
    /// The image has no pixels or is larger than the engine draws (16384 per side).
    BadImageSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// A pool configuration whose block sizes do not strictly increase.
    BinSizesNotIncreasing {
        /// Position of the offending bin (0-based).
        index: usize,
        /// Its block size.
        size: u64,
        /// The previous bin's block size.
        previous: u64,
    },
    /// A pool configuration that is empty or has a zero size or count.
    BadPoolBin(String),
    /// A bin id that the model does not have.
    NoSuchBin(u32),
    /// An option value the engine cannot use (a message naming it).
    BadOption(String),
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocError::BadAlpha(a) => write!(
                f,
                "the bias α must be a number above 0 (got {a}); 1 is plain area averaging, \
                 smaller values make thin isolated blocks stand out"
            ),
            AllocError::EmptyTimeWindow { start_ns, end_ns } => write!(
                f,
                "the time window {start_ns}..{end_ns} ns is empty: its end must be after its start"
            ),
            AllocError::EmptyAddressWindow { start, end } => write!(
                f,
                "the address window {start:#x}..{end:#x} is empty: its end must be above its start"
            ),
            AllocError::BadImageSize { width, height } => write!(
                f,
                "an image of {width}×{height} pixels cannot be drawn: each side must be 1 to 16384"
            ),
            AllocError::BinSizesNotIncreasing {
                index,
                size,
                previous,
            } => write!(
                f,
                "pool bin {} has block size {size}, not larger than the previous bin's {previous}: \
                 bin sizes must strictly increase",
                index + 1
            ),
            AllocError::BadPoolBin(m) | AllocError::BadOption(m) => f.write_str(m),
            AllocError::NoSuchBin(b) => write!(f, "there is no bin {b} in this model"),
        }
    }
}

impl std::error::Error for AllocError {}
