//! How long passes report how far they are: the caller (the CLI, with a progress bar on
//! a terminal) implements [`Progress`]; libraries never print.

/// Receives the progress of a long pass.
pub trait Progress {
    /// A pass named `what` over `total` units (chunks) starts.
    fn start(&self, what: &str, total: u64);
    /// `done` units of the pass are finished.
    fn advance(&self, done: u64);
    /// The pass is over.
    fn finish(&self);
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _what: &str, _total: u64) {}
    fn advance(&self, _done: u64) {}
    fn finish(&self) {}
}
