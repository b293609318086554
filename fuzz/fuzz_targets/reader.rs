//! Coverage-guided fuzzing of the trace reader: any byte string, written to
//! a file, must open (or be refused with a message) and read back through
//! the index, the metadata, the time merge, `dump` and the reference reader
//! without panicking.
//!
//! Run: `cargo fuzz run -s none reader -- -max_total_time=60` (on stable,
//! `-s none` turns off the sanitizer that needs a nightly compiler).
#![no_main]

use libfuzzer_sys::fuzz_target;
use memlens_trace::{EventStream, Metadata, TraceFile};

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("case.mlens");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(trace) = TraceFile::open(&path) {
        let mut damage = Vec::new();
        let _ = Metadata::load(&trace, &mut damage);
        let _ = EventStream::new(&trace).count();
        let _ = memlens_trace::dump::dump(&trace, &mut std::io::sink());
        let _ = memlens_trace::refs::read_references(&trace, &mut |_| {});
    }
});
