//! Damage in one sentence: the one way every command says that part of a trace could
//! not be read.

use std::fmt;
use std::path::{Path, PathBuf};

use memlens_trace::Damage;

/// A damaged place of a trace file, with the file's path, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamageNote {
    /// The trace.
    pub path: PathBuf,
    /// Where and what.
    pub damage: Damage,
}

impl DamageNote {
    /// The notes of `damage` in the file at `path`.
    pub fn all(path: &Path, damage: &[Damage]) -> Vec<DamageNote> {
        damage
            .iter()
            .map(|d| DamageNote {
                path: path.to_path_buf(),
                damage: d.clone(),
            })
            .collect()
    }
}

impl fmt::Display for DamageNote {
    /// `FILE: damaged at byte offset N: REASON; the rest of the file was read`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: damaged at byte offset {}: {}; the rest of the file was read",
            self.path.display(),
            self.damage.offset,
            self.damage.reason
        )
    }
}
