//! What a finished recording gives back: the program's exit code, the traces the
//! run wrote and how many of its processes were not recorded, with the sentences
//! the caller reports them in.

use std::path::{Path, PathBuf};

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
    /// How many other processes of the run (forked children, the programs they
    /// ran) loaded the recorder but were not recorded, without `--follow-fork`.
    pub unfollowed: usize,
}

impl RecordOutcome {
    /// The sentence for a run that wrote no trace of a native program.
    pub fn nothing_written(&self) -> String {
        format!(
            "no trace was written: {} never started the recorder (is it a setuid program, or does it clear LD_PRELOAD?)",
            self.program.display()
        )
    }

    /// The sentence for a Java recording that wrote no trace.
    pub fn no_jvm(&self) -> String {
        format!(
            "no trace was written: {} started no JVM with the agent (is it a Java program? the agent needs JDK 11 or later)",
            self.program.display()
        )
    }

    /// The sentence naming the traces after the first `shown`, when there are any.
    pub fn more_traces(&self, shown: usize) -> Option<String> {
        let rest = self.traces.get(shown..).filter(|rest| !rest.is_empty())?;
        let names: Vec<String> = rest
            .iter()
            .map(|p| {
                Path::new(p.file_name().unwrap_or_default())
                    .display()
                    .to_string()
            })
            .collect();
        Some(format!(
            "and {} smaller traces of other processes of the run: {}",
            rest.len(),
            names.join(" ")
        ))
    }

    /// The sentence saying how many processes were not recorded, when any were.
    pub fn unfollowed_note(&self) -> Option<String> {
        match self.unfollowed {
            0 => None,
            1 => Some("1 child process was not recorded (record it too with --follow-fork)".into()),
            n => Some(format!(
                "{n} child processes were not recorded (record them too with --follow-fork)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(traces: &[&str], unfollowed: usize) -> RecordOutcome {
        RecordOutcome {
            program: "/bin/app".into(),
            exit_code: 0,
            traces: traces.iter().map(PathBuf::from).collect(),
            unfollowed,
        }
    }

    #[test]
    fn the_sentences_name_what_the_run_left() {
        assert_eq!(outcome(&[], 0).unfollowed_note(), None);
        assert_eq!(
            outcome(&[], 1).unfollowed_note().unwrap(),
            "1 child process was not recorded (record it too with --follow-fork)"
        );
        assert_eq!(
            outcome(&[], 5).unfollowed_note().unwrap(),
            "5 child processes were not recorded (record them too with --follow-fork)"
        );
        let run = outcome(&["/d/f.mlens", "/d/f.12.mlens", "/d/f.13.mlens"], 0);
        assert_eq!(run.more_traces(3), None);
        assert_eq!(
            run.more_traces(1).unwrap(),
            "and 2 smaller traces of other processes of the run: f.12.mlens f.13.mlens"
        );
        assert_eq!(
            outcome(&[], 0).nothing_written(),
            "no trace was written: /bin/app never started the recorder (is it a setuid \
             program, or does it clear LD_PRELOAD?)"
        );
    }
}
