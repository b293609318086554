//! The recorders' shared libraries, which run inside the program: the LD_PRELOAD
//! library (`memlens-preload`) and the Java agent (`memlens-jvmti`). Each is found
//! through its environment variable if set, else next to the memlens executable
//! (a `cargo build` puts them side by side in `target/<profile>/`), one folder up,
//! or in `../lib/memlens/` (an installed layout).

use std::path::{Path, PathBuf};

use crate::RecordError;

/// A helper library memlens loads into the program, and how to say it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelperLibrary {
    /// The environment variable that names it, overriding the search.
    pub variable: &'static str,
    /// Its file name.
    pub file: &'static str,
    /// What it is, in a sentence ("the recorder library").
    pub what: &'static str,
    /// How to get it, in a sentence.
    pub build: &'static str,
}

impl HelperLibrary {
    /// The LD_PRELOAD recorder.
    pub const PRELOAD: HelperLibrary = HelperLibrary {
        variable: "MEMLENS_PRELOAD",
        file: "libmemlens_preload.so",
        what: "the recorder library",
        build: "build it with `cargo build --release` (it is part of the workspace)",
    };

    /// The JVMTI agent.
    pub const JAVA_AGENT: HelperLibrary = HelperLibrary {
        variable: "MEMLENS_JVMTI",
        file: "libmemlens_jvmti.so",
        what: "the Java agent",
        build: "build it with `cargo build --release -p memlens-jvmti`",
    };

    /// Finds the library: the file its variable names if set, else next to the
    /// running executable, one folder up, or in `../lib/memlens/` (canonical).
    ///
    /// # Errors
    ///
    /// [`RecordError::HelperVariable`] when the variable names no file,
    /// [`RecordError::HelperMissing`] when no place holds it,
    /// [`RecordError::CurrentExe`].
    pub fn find(self) -> Result<PathBuf, RecordError> {
        if let Some(named) = std::env::var_os(self.variable) {
            let named = PathBuf::from(named);
            if named.is_file() {
                return Ok(named);
            }
            return Err(RecordError::HelperVariable {
                library: self,
                path: named,
            });
        }
        let exe = std::env::current_exe().map_err(|source| RecordError::CurrentExe { source })?;
        let dir = exe.parent().unwrap_or(Path::new("."));
        for candidate in [
            dir.join(self.file),
            dir.join("..").join(self.file),
            dir.join("../lib/memlens").join(self.file),
        ] {
            if candidate.is_file() {
                return Ok(candidate.canonicalize().unwrap_or(candidate));
            }
        }
        Err(RecordError::HelperMissing { library: self, exe })
    }
}
