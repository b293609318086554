//! The one error type of the exporters: each is one sentence naming the file at fault.

use std::path::{Path, PathBuf};

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// No trace was given.
    #[error("no trace to export")]
    NoTrace,
    /// Several traces for a format that holds one process.
    #[error("this format holds one process; export each trace on its own (Parquet takes several)")]
    OneProcess,
    /// Writing the output failed.
    #[error("cannot write {}", path.display())]
    Io {
        /// The output file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A format's library refused the data.
    #[error("cannot write {}: {message}", path.display())]
    Format {
        /// The output file.
        path: PathBuf,
        /// The library's reason.
        message: String,
    },
}

impl ExportError {
    /// An IO error while writing `path`.
    pub fn io(path: &Path, source: std::io::Error) -> ExportError {
        ExportError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A format library's error while writing `path`.
    pub fn format(path: &Path, message: impl std::fmt::Display) -> ExportError {
        ExportError::Format {
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }
}
