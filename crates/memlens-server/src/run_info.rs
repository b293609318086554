//! What the viewer shows about the recorded run besides the model: which program ran,
//! which trace holds it, whether it was sampled (then every figure the lenses
//! show is an estimate) and whether it starts mid-run (`memlens attach`: blocks
//! allocated before are unknown). The CLI fills it from the trace's metadata.

use std::path::Path;

use memlens_heap::Sampling;

/// The recorded program and trace, as the page's header names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunInfo {
    /// The command line, joined by spaces (or the executable when it is unknown).
    pub program: String,
    /// The recorded process id.
    pub pid: Option<u32>,
    /// The trace's file name, without directories.
    pub trace_name: String,
    /// How the trace was sampled (`memlens record --sample`), if it was.
    pub sampling: Option<Sampling>,
    /// Set when the trace starts mid-run (`memlens attach`): the sentence saying so,
    /// since blocks allocated before the attach are unknown.
    pub mid_run: Option<String>,
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
            sampling: None,
            mid_run: None,
        }
    }

    /// The same run, recorded with `sampling`.
    pub fn sampled(self, sampling: Option<Sampling>) -> RunInfo {
        RunInfo { sampling, ..self }
    }

    /// The same run, starting mid-run as `note` says (`memlens attach`), if it does.
    pub fn mid_run(self, note: Option<String>) -> RunInfo {
        RunInfo {
            mid_run: note,
            ..self
        }
    }
}
