//! A ready-to-run Valgrind with the memlens tool: finds Valgrind and returns it
//! with a `VALGRIND_LIB` directory that holds the tool, building the tool on first
//! use (`tool_build.rs`). The tool's C sources (`tools/valgrind`,
//! GPL-2.0-or-later like Valgrind's tool API) are embedded in the memlens binary,
//! so any memlens build can record.

use std::path::{Path, PathBuf};

use crate::tool_build::{self, BuildInputs, TOOL_FILE};
use crate::valgrind_install;

/// What to install when something is missing (the end of every sentence below).
const INSTALL: &str = "install the Debian package valgrind (apt-get install valgrind), \
which provides the valgrind command, its tool headers and static libraries, and a C \
compiler with make (apt-get install gcc make)";

/// Why Valgrind with the memlens tool cannot run. Each is one sentence that names
/// what to install.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// No `valgrind` launcher.
    #[error("memlens cache record needs Valgrind, but {} was not found: {INSTALL}", .valgrind.display())]
    NoValgrind {
        /// What was looked for: `MEMLENS_VALGRIND`, or `valgrind` on the PATH.
        valgrind: PathBuf,
    },
    /// The launcher is there, its tool directory is not.
    #[error(
        "Valgrind's tool directory (with none-amd64-linux) was not found next to {}: {INSTALL}",
        .valgrind.display()
    )]
    NoToolDirectory {
        /// The launcher.
        valgrind: PathBuf,
    },
    /// The tool headers are missing (another package on some systems).
    #[error("Valgrind's tool headers (valgrind/pub_tool_basics.h) are missing: {INSTALL}")]
    NoHeaders,
    /// The static library a tool links against is missing.
    #[error("Valgrind's static library libcoregrind-amd64-linux.a is missing: {INSTALL}")]
    NoStaticLibrary,
    /// There is no directory to build the tool in.
    #[error("there is no directory to build the memlens Valgrind tool in; set MEMLENS_TOOL_CACHE")]
    NoCacheDirectory,
    /// A file operation of the build failed.
    #[error("cannot build the memlens Valgrind tool in {}", .root.display())]
    Build {
        /// The directory the build was tried in.
        root: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// `make` could not be started.
    #[error("cannot run make to build the memlens Valgrind tool ({error}): {INSTALL}")]
    MakeMissing {
        /// Why.
        error: std::io::Error,
    },
    /// `make` failed.
    #[error("building the memlens Valgrind tool failed ({first_error}): {INSTALL}")]
    MakeFailed {
        /// The first line of the compiler's output that mentions an error.
        first_error: String,
    },
}

/// A ready-to-run Valgrind with the memlens tool.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The `valgrind` launcher.
    pub valgrind: PathBuf,
    /// The directory to pass as `VALGRIND_LIB`.
    pub lib_dir: PathBuf,
}

impl Tool {
    /// Finds Valgrind (`MEMLENS_VALGRIND`, else `valgrind` on the PATH) and the
    /// memlens tool built for the embedded sources, building it if there is none;
    /// `on_build` is told the directory before a build starts.
    ///
    /// # Errors
    ///
    /// A [`ToolError`] naming what to install.
    pub fn prepare(on_build: &mut dyn FnMut(&Path)) -> Result<Tool, ToolError> {
        let valgrind = valgrind_install::find_valgrind()
            .map_err(|valgrind| ToolError::NoValgrind { valgrind })?;
        let tool_dir = valgrind_install::system_tool_dir(&valgrind).ok_or_else(|| {
            ToolError::NoToolDirectory {
                valgrind: valgrind.clone(),
            }
        })?;
        let name = tool_build::build_dir_name();
        let roots = tool_build::cache_roots();
        if let Some(lib_dir) = (roots.iter())
            .map(|root| root.join(&name))
            .find(|dir| dir.join(TOOL_FILE).is_file())
        {
            return Ok(Tool { valgrind, lib_dir });
        }
        let include = valgrind_install::include_dir(&valgrind).ok_or(ToolError::NoHeaders)?;
        let libs = valgrind_install::static_lib_dir(&tool_dir, &valgrind)
            .ok_or(ToolError::NoStaticLibrary)?;
        let inputs = BuildInputs {
            include: &include,
            libs: &libs,
            tool_dir: &tool_dir,
        };
        let mut last_error = ToolError::NoCacheDirectory;
        for root in &roots {
            match tool_build::build(root, &name, &inputs, on_build) {
                Ok(lib_dir) => return Ok(Tool { valgrind, lib_dir }),
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }
}
