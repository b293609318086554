//! The trace file: where it goes, its process record, and the manifest line that
//! tells `memlens record` where it went.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use memlens_trace::{ClockSource, Meta, ProcessInfo, TraceWriter};

use crate::options::Options;
use crate::writer::Sink;

/// The output path: the `output=` option, else `$MEMLENS_OUTPUT`, else
/// `memlens.java.<pid>.mlens` in `$MEMLENS_DIR` or the current directory.
pub fn output_path(options: &Options) -> PathBuf {
    if let Some(p) = &options.output {
        return p.clone();
    }
    if let Some(p) = std::env::var_os("MEMLENS_OUTPUT").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let dir = std::env::var_os("MEMLENS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    dir.join(format!("memlens.java.{}.mlens", std::process::id()))
}

fn cmdline() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|bytes| {
            bytes
                .split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Creates the trace file, writes its process record (and the sampling record in sampled mode)
/// and appends its path to `$MEMLENS_MANIFEST` when set. The error is one sentence.
pub fn open_trace(options: &Options, start: Instant) -> Result<Sink, String> {
    let path = output_path(options);
    let file = File::create(&path)
        .map_err(|e| format!("cannot create the trace file {}: {e}", path.display()))?;
    let mut sink = TraceWriter::new(BufWriter::with_capacity(1 << 20, file), true)
        .map_err(|e| format!("cannot write the trace file {}: {e}", path.display()))?;
    let start_unix_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        .saturating_sub(start.elapsed().as_nanos() as u64);
    let exe = std::fs::read_link("/proc/self/exe")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let process = ProcessInfo {
        pid: std::process::id(),
        // SAFETY: getppid has no preconditions.
        ppid: unsafe { libc::getppid() } as u32,
        exe,
        cmdline: cmdline(),
        start_unix_ns,
        clock: ClockSource::Monotonic,
        unwinder: "jvmti".into(),
        recorder: format!(
            "memlens-jvmti {} (interval={}, depth={}, frees={})",
            env!("CARGO_PKG_VERSION"),
            options.interval,
            options.depth,
            u8::from(options.frees)
        ),
    };
    let written = sink.meta(&Meta::Process(process)).and_then(|()| {
        if options.interval > 0 {
            // JVMTI heap sampling is the native recorder's Poisson sampling by bytes
            // (JEP 331): the same record, so every command weighs the samples alike.
            sink.meta(&Meta::Sampling {
                mean_interval_bytes: u64::from(options.interval),
            })?;
        }
        if !options.frees {
            sink.meta(&Meta::Warning {
                t: 0,
                message: "object deaths were not recorded (frees=0): every object stays live"
                    .into(),
            })?;
        }
        Ok(())
    });
    written.map_err(|e| format!("cannot write the trace file {}: {e}", path.display()))?;
    if let Some(manifest) = std::env::var_os("MEMLENS_MANIFEST") {
        let absolute = std::path::absolute(&path).unwrap_or(path.clone());
        if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(manifest) {
            let _ = writeln!(f, "{}", absolute.display());
        }
    } else if !options.quiet {
        eprintln!("memlens: recording the Java heap to {}", path.display());
    }
    Ok(sink)
}
