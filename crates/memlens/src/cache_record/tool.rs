//! Finds Valgrind and builds the memlens Valgrind tool on first use.
//!
//! The tool's C sources (`tools/valgrind`, GPL-2.0-or-later like Valgrind's tool
//! API) are embedded in the memlens binary, so any memlens build can record. On
//! first use they are compiled with `make` against the system's Valgrind into a
//! directory next to the memlens executable (or the user's cache directory), named
//! by a hash of the sources so an updated memlens rebuilds. That directory also
//! holds a symbolic link to every file of Valgrind's own tool directory, so it can
//! serve as `VALGRIND_LIB`: Valgrind finds its core files and our tool there.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tool's sources, embedded: (file name, contents).
const SOURCES: &[(&str, &str)] = &[
    (
        "Makefile",
        include_str!("../../../../tools/valgrind/Makefile"),
    ),
    (
        "ml_tool.h",
        include_str!("../../../../tools/valgrind/ml_tool.h"),
    ),
    (
        "ml_main.c",
        include_str!("../../../../tools/valgrind/ml_main.c"),
    ),
    (
        "ml_instrument.c",
        include_str!("../../../../tools/valgrind/ml_instrument.c"),
    ),
    (
        "ml_stream.c",
        include_str!("../../../../tools/valgrind/ml_stream.c"),
    ),
    (
        "ml_sites.c",
        include_str!("../../../../tools/valgrind/ml_sites.c"),
    ),
    (
        "ml_heap.c",
        include_str!("../../../../tools/valgrind/ml_heap.c"),
    ),
];

/// The name of the tool binary Valgrind looks for with `--tool=memlens`.
const TOOL_FILE: &str = "memlens-amd64-linux";

/// What to install when something is missing (one sentence for the user).
const INSTALL: &str = "install the Debian package valgrind (apt-get install valgrind), \
which provides the valgrind command, its tool headers and static libraries, and a C \
compiler with make (apt-get install gcc make)";

/// A ready-to-run Valgrind with the memlens tool.
#[derive(Debug)]
pub struct Tool {
    /// The `valgrind` launcher.
    pub valgrind: PathBuf,
    /// The directory to pass as `VALGRIND_LIB`.
    pub lib_dir: PathBuf,
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Valgrind's own tool directory (holding `none-amd64-linux` and the core files).
fn system_tool_dir(valgrind: &Path) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("MEMLENS_VALGRIND_LIB") {
        candidates.push(dir.into());
    }
    let real = std::fs::canonicalize(valgrind).unwrap_or_else(|_| valgrind.to_path_buf());
    if let Some(prefix) = real.parent().and_then(Path::parent) {
        candidates.push(prefix.join("libexec/valgrind"));
        candidates.push(prefix.join("lib/x86_64-linux-gnu/valgrind"));
        candidates.push(prefix.join("lib64/valgrind"));
        candidates.push(prefix.join("lib/valgrind"));
    }
    candidates
        .into_iter()
        .find(|d| d.join("none-amd64-linux").is_file())
}

/// The directory holding `libcoregrind-amd64-linux.a`.
fn static_lib_dir(tool_dir: &Path, valgrind: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(valgrind).unwrap_or_else(|_| valgrind.to_path_buf());
    let prefix = real.parent().and_then(Path::parent)?;
    [
        tool_dir.to_path_buf(),
        prefix.join("lib/x86_64-linux-gnu/valgrind"),
        prefix.join("lib64/valgrind"),
        prefix.join("lib/valgrind"),
        prefix.join("libexec/valgrind"),
    ]
    .into_iter()
    .find(|d| d.join("libcoregrind-amd64-linux.a").is_file())
}

fn include_dir(valgrind: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(valgrind).unwrap_or_else(|_| valgrind.to_path_buf());
    let prefix = real.parent().and_then(Path::parent)?;
    [
        prefix.join("include/valgrind"),
        "/usr/include/valgrind".into(),
    ]
    .into_iter()
    .find(|d| d.join("pub_tool_basics.h").is_file())
}

/// A short hash of the embedded sources (FNV-1a), naming the build directory.
fn sources_hash() -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, text) in SOURCES {
        for b in name.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// Where built tools live: `MEMLENS_TOOL_CACHE`, else next to the executable when
/// writable, else `$XDG_CACHE_HOME/memlens` or `~/.cache/memlens`.
fn cache_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(dir) = std::env::var_os("MEMLENS_TOOL_CACHE") {
        roots.push(PathBuf::from(dir));
        return roots;
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        roots.push(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        roots.push(PathBuf::from(dir).join("memlens"));
    } else if let Some(home) = std::env::var_os("HOME") {
        roots.push(PathBuf::from(home).join(".cache/memlens"));
    }
    roots
}

/// Finds Valgrind (`MEMLENS_VALGRIND`, else `valgrind` on the PATH) and returns it
/// with a `VALGRIND_LIB` directory holding the memlens tool, building it if needed.
/// Errors are one sentence naming what to install.
pub fn prepare(quiet: bool) -> Result<Tool, String> {
    let valgrind = match std::env::var_os("MEMLENS_VALGRIND") {
        Some(v) => PathBuf::from(v),
        None => find_in_path("valgrind").unwrap_or_else(|| PathBuf::from("valgrind")),
    };
    if !is_executable(&valgrind) {
        return Err(format!(
            "memlens cache record needs Valgrind, but {} was not found: {INSTALL}",
            valgrind.display()
        ));
    }
    let tool_dir = system_tool_dir(&valgrind).ok_or_else(|| {
        format!(
            "Valgrind's tool directory (with none-amd64-linux) was not found next to {}: {INSTALL}",
            valgrind.display()
        )
    })?;
    let name = format!("memlens-valgrind-{}", sources_hash());
    let roots = cache_roots();
    for root in &roots {
        let dir = root.join(&name);
        if dir.join(TOOL_FILE).is_file() {
            return Ok(Tool {
                valgrind,
                lib_dir: dir,
            });
        }
    }
    let include = include_dir(&valgrind).ok_or_else(|| {
        format!("Valgrind's tool headers (valgrind/pub_tool_basics.h) are missing: {INSTALL}")
    })?;
    let libs = static_lib_dir(&tool_dir, &valgrind).ok_or_else(|| {
        format!("Valgrind's static library libcoregrind-amd64-linux.a is missing: {INSTALL}")
    })?;
    let mut last_error = String::new();
    for root in &roots {
        match build(root, &name, &include, &libs, &tool_dir, quiet) {
            Ok(dir) => {
                return Ok(Tool {
                    valgrind,
                    lib_dir: dir,
                });
            }
            Err(e) => last_error = e,
        }
    }
    Err(last_error)
}

fn build(
    root: &Path,
    name: &str,
    include: &Path,
    libs: &Path,
    tool_dir: &Path,
    quiet: bool,
) -> Result<PathBuf, String> {
    let fail = |what: String| {
        format!(
            "cannot build the memlens Valgrind tool in {}: {what}",
            root.display()
        )
    };
    std::fs::create_dir_all(root).map_err(|e| fail(e.to_string()))?;
    let temp = root.join(format!("{name}.build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&temp);
    std::fs::create_dir_all(&temp).map_err(|e| fail(e.to_string()))?;
    let cleanup = |r: Result<PathBuf, String>| {
        let _ = std::fs::remove_dir_all(&temp);
        r
    };
    for (file, text) in SOURCES {
        if let Err(e) = std::fs::write(temp.join(file), text) {
            return cleanup(Err(fail(e.to_string())));
        }
    }
    if !quiet {
        eprintln!(
            "memlens: building the Valgrind tool (once) in {}",
            root.join(name).display()
        );
    }
    let mut inc = OsString::from("VALGRIND_INC=");
    inc.push(include);
    let mut lib = OsString::from("VALGRIND_LIBDIR=");
    lib.push(libs);
    let out = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(&temp)
        .arg(inc)
        .arg(lib)
        .output();
    match out {
        Err(e) => {
            return cleanup(Err(format!(
                "cannot run make to build the memlens Valgrind tool ({e}): {INSTALL}"
            )));
        }
        Ok(o) if !o.status.success() => {
            let log = String::from_utf8_lossy(&o.stderr);
            let first = log
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or(log.trim());
            return cleanup(Err(format!(
                "building the memlens Valgrind tool failed ({}): {INSTALL}",
                first.trim()
            )));
        }
        Ok(_) => {}
    }
    // Valgrind's own files beside ours, so the directory works as VALGRIND_LIB.
    if let Ok(entries) = std::fs::read_dir(tool_dir) {
        for entry in entries.flatten() {
            let file = entry.file_name();
            if file.to_string_lossy().starts_with("memlens-") {
                continue;
            }
            if let Err(e) = std::os::unix::fs::symlink(entry.path(), temp.join(&file)) {
                return cleanup(Err(fail(e.to_string())));
            }
        }
    }
    for (file, _) in SOURCES {
        let _ = std::fs::remove_file(temp.join(file));
    }
    let dir = root.join(name);
    match std::fs::rename(&temp, &dir) {
        Ok(()) => Ok(dir),
        // Another memlens finished the same build first: use theirs.
        Err(_) if dir.join(TOOL_FILE).is_file() => cleanup(Ok(dir)),
        Err(e) => cleanup(Err(fail(e.to_string()))),
    }
}
