//! What the viewer shows about the recorded run besides the model: which program ran
//! and which trace holds it. The CLI fills it from the trace's metadata.

use std::path::Path;

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

impl RunInfo {
    /// The run of the process with command line `cmdline` (its executable `exe` when
    /// the command line is unknown) and id `pid`, recorded in the trace at `path`.
    pub fn of_process(cmdline: &[String], exe: &str, pid: Option<u32>, path: &Path) -> RunInfo {
        RunInfo {
            program: match cmdline {
                [] => exe.to_owned(),
                words => words.join(" "),
            },
            pid,
            trace_name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}
