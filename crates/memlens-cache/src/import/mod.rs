//! Importers for reference traces that people already have: Valgrind Lackey's
//! `--trace-mem=yes` output and Dinero's `din` text.
//!
//! Both are streaming iterators over any [`BufRead`](std::io::BufRead), holding one
//! line at a time, so traces of any size import in constant memory. They yield
//! `Result<Reference, ImportError>`: a malformed line becomes an error carrying its
//! line number (the caller prefixes the file name) and, with [`OnError::Skip`], the
//! import continues with the next line; with [`OnError::Stop`] it ends there. An IO
//! error always ends the import. The parsers never panic, whatever the bytes.

pub mod din;
pub mod fields;
pub mod lackey;
mod lines;

use std::fmt;

pub use din::{DinOptions, DinReader};
pub use lackey::{LackeyOptions, LackeyReader};

/// What to do after a malformed line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnError {
    /// Report it and continue with the next line.
    #[default]
    Skip,
    /// Report it and end the import.
    Stop,
}

/// What went wrong on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportErrorKind {
    /// The line does not follow the format.
    Malformed {
        /// What is wrong, as a phrase ("expected a hexadecimal address").
        reason: &'static str,
        /// The start of the offending line, lossily decoded.
        excerpt: String,
    },
    /// Reading failed.
    Io(String),
}

/// An error at a line of an imported trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    /// The 1-based line number.
    pub line: u64,
    /// What went wrong.
    pub kind: ImportErrorKind,
}

impl fmt::Display for ImportError {
    /// Formats as `LINE: reason: `excerpt``, ready to follow `file:`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ImportErrorKind::Malformed { reason, excerpt } => {
                write!(f, "{}: {reason}: `{excerpt}`", self.line)
            }
            ImportErrorKind::Io(message) => write!(f, "{}: read error: {message}", self.line),
        }
    }
}

impl std::error::Error for ImportError {}

/// Counts kept by an importer while it runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportCounts {
    /// Lines read.
    pub lines: u64,
    /// References produced.
    pub references: u64,
    /// Well-formed lines that produce no reference (headers, dropped instruction
    /// fetches, escape records).
    pub ignored: u64,
    /// Malformed lines.
    pub malformed: u64,
}

fn malformed(line: u64, reason: &'static str, text: &[u8]) -> ImportError {
    const MAX_EXCERPT: usize = 60;
    let cut = &text[..text.len().min(MAX_EXCERPT)];
    let mut excerpt = String::from_utf8_lossy(cut).into_owned();
    if text.len() > MAX_EXCERPT {
        excerpt.push('…');
    }
    ImportError {
        line,
        kind: ImportErrorKind::Malformed { reason, excerpt },
    }
}

/// What every line-based importer does around its own line parser: read
/// lines (capped in length), count them, report IO errors and malformed
/// lines with their line number, and stop or go on as the user chose.
#[derive(Debug)]
pub(crate) struct ImportLoop<R> {
    lines: lines::LineReader<R>,
    counts: ImportCounts,
    on_error: OnError,
    finished: bool,
}

impl<R: std::io::BufRead> ImportLoop<R> {
    pub(crate) fn new(reader: R, on_error: OnError) -> Self {
        ImportLoop {
            lines: lines::LineReader::new(reader),
            counts: ImportCounts::default(),
            on_error,
            finished: false,
        }
    }

    pub(crate) fn counts(&self) -> ImportCounts {
        self.counts
    }

    /// The next reference, parsing each line with `parse` (which returns
    /// `Ok(None)` for lines that carry no reference).
    pub(crate) fn next_with(
        &mut self,
        mut parse: impl FnMut(&[u8]) -> Result<Option<crate::Reference>, &'static str>,
    ) -> Option<Result<crate::Reference, ImportError>> {
        while !self.finished {
            let number = self.lines.number + 1;
            let parsed = match self.lines.next_line()? {
                Err(e) => {
                    self.finished = true;
                    return Some(Err(ImportError {
                        line: number,
                        kind: ImportErrorKind::Io(e.to_string()),
                    }));
                }
                Ok(lines::Line::Text(text)) => {
                    parse(text).map_err(|reason| malformed(number, reason, text))
                }
                Ok(lines::Line::TooLong(start)) => Err(malformed(
                    number,
                    "the line is longer than 4096 bytes",
                    start,
                )),
            };
            self.counts.lines += 1;
            match parsed {
                Ok(Some(reference)) => {
                    self.counts.references += 1;
                    return Some(Ok(reference));
                }
                Ok(None) => self.counts.ignored += 1,
                Err(error) => {
                    self.counts.malformed += 1;
                    self.finished = self.on_error == OnError::Stop;
                    return Some(Err(error));
                }
            }
        }
        None
    }
}
