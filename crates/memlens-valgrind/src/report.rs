//! What `memlens cache record` tells the user about a finished recording, as
//! sentences (the CLI prints them, one per line): what the trace holds, and
//! what may be missing from it.

use std::path::Path;

use crate::{Observer, RecordOutcome};

/// The recording's notices as text for `print` (which adds no newline): the
/// tool build unless `quiet`, and with `progress` a line of references so far,
/// rewritten in place (for a terminal) and erased when the stream ends.
pub struct Notices<F> {
    /// No notice of the tool build.
    pub quiet: bool,
    /// Show the progress line.
    pub progress: bool,
    /// Where the text goes.
    pub print: F,
}

impl<F: FnMut(&str) + Send> Observer for Notices<F> {
    fn building_tool(&mut self, dir: &Path) {
        if !self.quiet {
            let text = format!(
                "memlens: building the Valgrind tool (once) in {}\n",
                dir.display()
            );
            (self.print)(&text);
        }
    }

    fn references_so_far(&mut self, references: u64) {
        if self.progress {
            (self.print)(&format!("\rmemlens: {} references…", millions(references)));
        }
    }

    fn stream_ended(&mut self) {
        if self.progress {
            (self.print)("\r\x1b[K");
        }
    }
}

/// `n` as a short count: `12345`, `1.2 M`, `35 M`.
pub fn millions(n: u64) -> String {
    if n >= 10_000_000 {
        format!("{:.0} M", n as f64 / 1e6)
    } else if n >= 1_000_000 {
        format!("{:.1} M", n as f64 / 1e6)
    } else {
        n.to_string()
    }
}

impl RecordOutcome {
    /// The sentence for a recording that holds nothing (Valgrind ended with
    /// status `code` before the tool recorded a reference), or `None`.
    pub fn nothing_recorded(&self, code: i32) -> Option<String> {
        self.summary.is_empty().then(|| {
            format!(
                "valgrind ended (status {code}) before the memlens tool recorded anything; \
                 {} holds no references",
                self.output.display()
            )
        })
    }

    /// The sentences after a recording of `program`: what was written, then
    /// what may be missing (`instructions` and `roi` are the options it ran with).
    pub fn sentences(&self, program: &Path, instructions: bool, roi: bool) -> Vec<String> {
        let summary = &self.summary;
        let bytes = self.trace_bytes;
        let refs = summary.references();
        let fetches = if instructions {
            format!(", {} instruction fetches", summary.fetches)
        } else {
            String::new()
        };
        let mut lines = vec![format!(
            "wrote {} references ({} data{fetches}) of {} to {} ({} bytes, {:.2} bytes/reference; {} regions, {} sites)",
            refs,
            summary.data,
            program.display(),
            self.output.display(),
            bytes,
            bytes as f64 / refs.max(1) as f64,
            summary.regions,
            summary.sites,
        )];
        if summary.ended.is_none() {
            lines.push("the program stopped without the tool's end record (exec or a kill); the trace holds everything up to there".into());
        }
        if roi && summary.roi_marks == 0 {
            lines.push("--roi was given but the program never called MEMLENS_START(): nothing was recorded".into());
        }
        if summary.unlabelled_sites > 0 {
            lines.push(format!(
                "{} instruction operands past the 65,535th have no label",
                summary.unlabelled_sites
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::millions;

    #[test]
    fn counts_are_short() {
        assert_eq!(millions(12_345), "12345");
        assert_eq!(millions(1_234_567), "1.2 M");
        assert_eq!(millions(35_000_000), "35 M");
    }
}
