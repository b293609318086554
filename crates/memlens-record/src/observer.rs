//! What a recording tells its caller while it prepares: warnings found before
//! the program starts, handed over at once so they come out before anything the
//! program prints.

use std::fmt;
use std::path::PathBuf;

/// Told how a recording goes. Every method does nothing unless overridden.
pub trait Observer {
    /// Something the user should know about the run, found before the program
    /// starts (the recording goes on).
    fn warning(&mut self, warning: &Warning) {
        let _ = warning;
    }
}

/// A reason the trace may not show everything; its `Display` is the sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// The program links its own allocator, which allocates past the interposed
    /// `malloc`.
    OwnAllocator {
        /// The program's file.
        program: PathBuf,
        /// The allocator's entry point found in it (`je_malloc`, `mi_malloc`, …).
        allocator: String,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::OwnAllocator { program, allocator } => write!(
                f,
                "{} defines its own allocator ({allocator}); allocations through it are invisible to LD_PRELOAD and will not be recorded",
                program.display()
            ),
        }
    }
}
