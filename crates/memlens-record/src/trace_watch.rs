//! Telling the caller the main trace's path while the program runs (`memlens record
//! --view` opens the viewer on it): a thread reads the manifest until a trace it names
//! holds the process stream (the program, its pid, its modules), then hands its path
//! over, once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use memlens_trace::{Metadata, TraceFile};

use crate::manifest::traces_in_manifest;

/// How often the manifest is read.
const POLL: Duration = Duration::from_millis(50);

/// Watches the manifest at `manifest` until `done` is set; sends the first trace that
/// holds its process stream to `to`.
pub(crate) fn watch(manifest: PathBuf, to: Sender<PathBuf>, done: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        while !done.load(Ordering::Acquire) {
            if let Some(trace) = traces_in_manifest(&manifest)
                .into_iter()
                .find(|t| has_process(t))
            {
                let _ = to.send(trace);
                return;
            }
            std::thread::sleep(POLL);
        }
    });
}

/// Whether the trace at `path` can be opened and names its process.
fn has_process(path: &Path) -> bool {
    TraceFile::open(path).is_ok_and(|file| Metadata::load(&file, &mut Vec::new()).process.is_some())
}
