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
