//! Builds the memlens Valgrind tool from its embedded C sources, once per version
//! of them. The build goes into a directory named by a hash of the sources, so an
//! updated memlens rebuilds; it is assembled under a temporary name and renamed
//! into place, so a half-built tool is never used and two memlens processes that
//! build at once both end with a working one. Besides the tool, the directory holds
//! a symbolic link to every file of Valgrind's own tool directory, so it can serve
//! as `VALGRIND_LIB`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tool::ToolError;

/// The tool's sources, embedded: (file name, contents).
const SOURCES: &[(&str, &str)] = &[
    ("Makefile", include_str!("../../../tools/valgrind/Makefile")),
    (
        "ml_tool.h",
        include_str!("../../../tools/valgrind/ml_tool.h"),
    ),
    (
        "ml_main.c",
        include_str!("../../../tools/valgrind/ml_main.c"),
    ),
    (
        "ml_instrument.c",
        include_str!("../../../tools/valgrind/ml_instrument.c"),
    ),
    (
        "ml_stream.c",
        include_str!("../../../tools/valgrind/ml_stream.c"),
    ),
    (
        "ml_sites.c",
        include_str!("../../../tools/valgrind/ml_sites.c"),
    ),
    (
        "ml_heap.c",
        include_str!("../../../tools/valgrind/ml_heap.c"),
    ),
];

/// The name of the tool binary Valgrind looks for with `--tool=memlens`.
pub(crate) const TOOL_FILE: &str = "memlens-amd64-linux";

/// The name of the build directory: `memlens-valgrind-` and a short hash of the
/// embedded sources (FNV-1a).
pub(crate) fn build_dir_name() -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, text) in SOURCES {
        for b in name.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("memlens-valgrind-{h:016x}")
}

/// Where built tools live, in order of preference: `MEMLENS_TOOL_CACHE` alone if
/// set; else next to the memlens executable (when writable), then the user's cache
/// directory (`$XDG_CACHE_HOME/memlens` or `~/.cache/memlens`).
pub(crate) fn cache_roots() -> Vec<PathBuf> {
    if let Some(dir) = std::env::var_os("MEMLENS_TOOL_CACHE") {
        return vec![PathBuf::from(dir)];
    }
    let next_to_executable = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    let user_cache = directories::ProjectDirs::from("", "", "memlens")
        .map(|dirs| dirs.cache_dir().to_path_buf());
    next_to_executable.into_iter().chain(user_cache).collect()
}

/// What a build needs from the system's Valgrind.
pub(crate) struct BuildInputs<'a> {
    /// Valgrind's tool headers.
    pub include: &'a Path,
    /// The directory of `libcoregrind-amd64-linux.a`.
    pub libs: &'a Path,
    /// Valgrind's own tool directory, linked into the result.
    pub tool_dir: &'a Path,
}

/// Builds the tool into `root/name` and returns that directory; `on_build` is told
/// the directory before `make` runs.
pub(crate) fn build(
    root: &Path,
    name: &str,
    inputs: &BuildInputs<'_>,
    on_build: &mut dyn FnMut(&Path),
) -> Result<PathBuf, ToolError> {
    let fail = |source| ToolError::Build {
        root: root.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(root).map_err(fail)?;
    let temp = root.join(format!("{name}.build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&temp);
    std::fs::create_dir_all(&temp).map_err(fail)?;
    let result = build_in(&temp, &root.join(name), inputs, on_build).map_err(|e| match e {
        Step::Io(source) => fail(source),
        Step::Tool(e) => e,
    });
    let _ = std::fs::remove_dir_all(&temp);
    result
}

/// Why a step of [`build_in`] failed.
enum Step {
    /// A file operation in the build directory.
    Io(std::io::Error),
    /// Anything else, already a sentence.
    Tool(ToolError),
}

impl From<std::io::Error> for Step {
    fn from(e: std::io::Error) -> Step {
        Step::Io(e)
    }
}

/// Writes the sources into `temp`, runs `make` there, links Valgrind's files beside
/// the tool and renames `temp` to `dir`.
fn build_in(
    temp: &Path,
    dir: &Path,
    inputs: &BuildInputs<'_>,
    on_build: &mut dyn FnMut(&Path),
) -> Result<PathBuf, Step> {
    for (file, text) in SOURCES {
        std::fs::write(temp.join(file), text)?;
    }
    on_build(dir);
    let mut include = OsString::from("VALGRIND_INC=");
    include.push(inputs.include);
    let mut libs = OsString::from("VALGRIND_LIBDIR=");
    libs.push(inputs.libs);
    let out = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(temp)
        .arg(include)
        .arg(libs)
        .output()
        .map_err(|error| Step::Tool(ToolError::MakeMissing { error }))?;
    if !out.status.success() {
        let log = String::from_utf8_lossy(&out.stderr);
        let first = log
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or(log.trim());
        return Err(Step::Tool(ToolError::MakeFailed {
            first_error: first.trim().to_owned(),
        }));
    }
    // Valgrind's own files beside ours, so the directory works as VALGRIND_LIB.
    if let Ok(entries) = std::fs::read_dir(inputs.tool_dir) {
        for entry in entries.flatten() {
            let file = entry.file_name();
            if file.to_string_lossy().starts_with("memlens-") {
                continue;
            }
            std::os::unix::fs::symlink(entry.path(), temp.join(&file))?;
        }
    }
    for (file, _) in SOURCES {
        let _ = std::fs::remove_file(temp.join(file));
    }
    match std::fs::rename(temp, dir) {
        Ok(()) => Ok(dir.to_path_buf()),
        // Another memlens finished the same build first: use theirs.
        Err(_) if dir.join(TOOL_FILE).is_file() => Ok(dir.to_path_buf()),
        Err(e) => Err(Step::Io(e)),
    }
}
