//! Where the system's Valgrind keeps what the tool build and the run need: the
//! `valgrind` launcher, its tool directory (core files and the stock tools), its
//! tool headers and its static libraries. Distributions put them under different
//! prefixes; each lookup tries the usual ones below the launcher's own prefix.

use std::path::{Path, PathBuf};

/// The `valgrind` launcher: `MEMLENS_VALGRIND` if set, else `valgrind` on the
/// PATH; `Err` carries the path that was looked for, for the message.
pub(crate) fn find_valgrind() -> Result<PathBuf, PathBuf> {
    let wanted = std::env::var_os("MEMLENS_VALGRIND")
        .map_or_else(|| PathBuf::from("valgrind"), PathBuf::from);
    which::which(&wanted).map_err(|_| wanted)
}

/// The prefix the launcher was installed under (`/usr` for `/usr/bin/valgrind`),
/// following symbolic links.
fn prefix(valgrind: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(valgrind).unwrap_or_else(|_| valgrind.to_path_buf());
    real.parent().and_then(Path::parent).map(Path::to_path_buf)
}

/// Valgrind's own tool directory (holding `none-amd64-linux` and the core files):
/// `MEMLENS_VALGRIND_LIB` if set and right, else below the launcher's prefix.
pub(crate) fn system_tool_dir(valgrind: &Path) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("MEMLENS_VALGRIND_LIB") {
        candidates.push(dir.into());
    }
    if let Some(prefix) = prefix(valgrind) {
        candidates.push(prefix.join("libexec/valgrind"));
        candidates.push(prefix.join("lib/x86_64-linux-gnu/valgrind"));
        candidates.push(prefix.join("lib64/valgrind"));
        candidates.push(prefix.join("lib/valgrind"));
    }
    candidates
        .into_iter()
        .find(|d| d.join("none-amd64-linux").is_file())
}

/// The directory holding `libcoregrind-amd64-linux.a`, which a tool links against.
pub(crate) fn static_lib_dir(tool_dir: &Path, valgrind: &Path) -> Option<PathBuf> {
    let prefix = prefix(valgrind)?;
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

/// The directory holding Valgrind's tool headers (`pub_tool_basics.h`).
pub(crate) fn include_dir(valgrind: &Path) -> Option<PathBuf> {
    let prefix = prefix(valgrind)?;
    [
        prefix.join("include/valgrind"),
        "/usr/include/valgrind".into(),
    ]
    .into_iter()
    .find(|d| d.join("pub_tool_basics.h").is_file())
}
