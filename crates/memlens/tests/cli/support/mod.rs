//! Shared helpers for the recorder tests: compiling small C and C++ programs,
//! running them under `memlens record` with a time limit, reading traces back
//! through `summary --json` and `dump`, and a heaptrack oracle to compare
//! counts with.
//!
//! The tests run the `memlens` binary that Cargo builds for them
//! (`CARGO_BIN_EXE_memlens`) and the recorder library next to it,
//! `libmemlens_preload.so`. Cargo does not build a workspace's `cdylib`s for
//! another crate's tests, so **`cargo build --release -p memlens-preload`
//! must run before these tests** (with the same `CARGO_TARGET_DIR`); the
//! project's test command does this. When the library is missing, every
//! recorder test fails with a message that says so.
//!
//! Every process a test starts is bounded by a time limit (see `run.rs`), so
//! a recorder that hangs its target fails the test instead of hanging it.

pub mod compile;
pub mod heaptrack;
pub mod run;
pub mod trace;
pub mod viewer;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use compile::{FRAME_POINTER_FLAGS, Lang, compile};
pub use heaptrack::{LibstdcxxStartup, Peak, assert_counts_match, heaptrack};
pub use run::{Finished, TIME_LIMIT, run, run_with_timeout, spawn};
pub use trace::{
    Recorded, Summary, dump, memlens, process_record, record, record_command, summary, summary_run,
    written_paths,
};

/// The `memlens` executable under test.
pub fn memlens_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_memlens"))
}

/// The recorder library next to `memlens`; panics with the command that
/// builds it when it is missing.
pub fn preload_library() -> PathBuf {
    let exe = memlens_exe();
    let lib = exe
        .parent()
        .expect("the memlens executable has a directory")
        .join("libmemlens_preload.so");
    assert!(
        lib.is_file(),
        "the recorder library {} is missing: run `cargo build --release -p memlens-preload` \
         (with the same CARGO_TARGET_DIR) before these tests",
        lib.display()
    );
    lib
}

/// A command for `program` that inherits no recorder settings or preloads
/// from whoever runs the tests (`MEMLENS_*`, `LD_PRELOAD`).
pub fn clean_command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("MEMLENS_") || key == "LD_PRELOAD" {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// A fresh temporary directory for one test, removed when dropped.
pub fn test_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("memlens-{name}-"))
        .tempdir()
        .expect("cannot create a temporary directory")
}

/// The shared benchmark `alloc-bench.c`, which lives beside the repository
/// (in `../shared/bench/`), or `None` with a message when it is absent.
pub fn alloc_bench_source() -> Option<(PathBuf, String)> {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/bench/alloc-bench.c"
    ));
    match std::fs::read_to_string(path) {
        Ok(text) => Some((path.to_path_buf(), text)),
        Err(e) => {
            eprintln!("skipped: {} is not readable ({e})", path.display());
            None
        }
    }
}

/// The `*.mlens` files directly in `dir`, sorted by name.
pub fn traces_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("cannot list the test directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "mlens"))
        .collect();
    found.sort();
    found
}
