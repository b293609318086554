//! The trace a recording is asked to write: never overwritten without `--force`,
//! and named absolutely before the program starts (the program may change its
//! working directory).

use std::path::{Path, PathBuf};

use crate::RecordError;

/// Refuses an `output` that exists unless `force`.
///
/// # Errors
///
/// [`RecordError::OutputExists`].
pub fn refuse_existing_output(output: Option<&Path>, force: bool) -> Result<(), RecordError> {
    match output {
        Some(out) if out.exists() && !force => Err(RecordError::OutputExists {
            path: out.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// `path` made absolute against the current directory, or as given when that
/// cannot be read.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_output_needs_force() {
        let dir = tempfile::tempdir().unwrap();
        let existing = dir.path().join("old.mlens");
        std::fs::write(&existing, b"x").unwrap();
        let refused = refuse_existing_output(Some(&existing), false).unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!(
                "{} already exists; pass --force to overwrite it",
                existing.display()
            )
        );
        assert!(refuse_existing_output(Some(&existing), true).is_ok());
        assert!(refuse_existing_output(Some(&dir.path().join("new.mlens")), false).is_ok());
        assert!(refuse_existing_output(None, false).is_ok());
    }
}
