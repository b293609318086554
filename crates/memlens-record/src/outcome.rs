//! What a finished recording gives back: the program's exit code and the traces
//! the run wrote, for the caller to report.

use std::path::PathBuf;

/// A recording that ran the program to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOutcome {
    /// The program's file, as found on `PATH`.
    pub program: PathBuf,
    /// The program's exit code, or 128 + N when signal N killed it.
    pub exit_code: i32,
    /// The traces the run wrote, largest (most records) first; empty when no
    /// process of the run loaded the recorder.
    pub traces: Vec<PathBuf>,
}
