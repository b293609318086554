//! Listing and reading Rust source files, in a stable order so that every report
//! lists its findings the same way on every machine.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively, sorted by path. A missing `dir` has none.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    collect(dir, &mut found);
    found.sort();
    found
}

fn collect(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The text of every `.rs` file under `src_dir`, keyed by its path relative to `src_dir`
/// with `/` separators (`lib.rs`, `raster/mod.rs`): the input of
/// [`ModuleGraph::from_sources`](crate::ModuleGraph::from_sources).
pub fn read_sources(src_dir: &Path) -> Result<BTreeMap<String, String>, String> {
    let mut sources = BTreeMap::new();
    for path in rust_files(src_dir) {
        let text = fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let relative = path.strip_prefix(src_dir).unwrap_or(&path);
        let key: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        sources.insert(key.join("/"), text);
    }
    Ok(sources)
}
