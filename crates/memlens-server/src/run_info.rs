//! What the viewer shows about the recorded run besides the model: which program ran
//! and which trace holds it. The CLI fills it from the trace's metadata.

/// The recorded program and trace, as the page's header names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunInfo {
    /// The command line, joined by spaces (or the executable when it is unknown).
    pub program: String,
    /// The recorded process id.
    pub pid: Option<u32>,
    /// The trace's file name, without directories.
    pub trace_name: String,
}
