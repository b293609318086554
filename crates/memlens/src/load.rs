//! Opening a trace for a command: the metadata, a progress bar over the
//! event chunks, and the damage report every command prints the same way.

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use memlens_trace::{Damage, EventStream, Metadata, TraceFile};
use std::path::Path;

/// An opened trace with its metadata.
pub struct Loaded {
    /// The file.
    pub trace: TraceFile,
    /// Its process stream.
    pub metadata: Metadata,
    /// Damage found so far (index and metadata).
    pub damage: Vec<Damage>,
}

/// Opens `path`; an unreadable or foreign file is an error, damage is not.
pub fn open(path: &Path) -> Result<Loaded> {
    let trace = TraceFile::open(path)?;
    let mut damage = trace.index_damage().to_vec();
    let metadata = Metadata::load(&trace, &mut damage);
    Ok(Loaded {
        trace,
        metadata,
        damage,
    })
}

/// A progress bar over the event chunks, shown only on a terminal and only
/// for traces big enough to take a noticeable time.
pub fn progress(loaded: &Loaded) -> ProgressBar {
    let chunks = loaded
        .trace
        .chunks()
        .iter()
        .filter(|c| c.header.kind == memlens_trace::format::ChunkKind::Events)
        .count() as u64;
    if loaded.metadata.event_records < 5_000_000 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(chunks);
    bar.set_style(
        ProgressStyle::with_template("{spinner} reading {msg} [{bar:30}] {percent}% ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(loaded.trace.path().display().to_string());
    bar
}

/// Walks every event in time order, ticking `bar`; returns damage met.
pub fn for_each_event(
    loaded: &Loaded,
    bar: &ProgressBar,
    mut f: impl FnMut(&memlens_trace::Event),
) -> Vec<Damage> {
    for_each_event_with_latency(loaded, bar, |e, _| f(e))
}

/// [`for_each_event`], also passing each event's allocator latency in ns
/// (`None` unless recorded with `memlens record --latency`).
pub fn for_each_event_with_latency(
    loaded: &Loaded,
    bar: &ProgressBar,
    mut f: impl FnMut(&memlens_trace::Event, Option<u32>),
) -> Vec<Damage> {
    let mut stream = EventStream::new(&loaded.trace);
    let mut seen = 0u64;
    let mut n = 0u32;
    while let Some(e) = stream.next() {
        f(&e, stream.latency_ns());
        n += 1;
        if n == 65_536 {
            n = 0;
            let done = stream.chunks_done();
            if done != seen {
                seen = done;
                bar.set_position(done);
            }
        }
    }
    bar.finish_and_clear();
    stream.take_damage()
}

/// Prints damage as one sentence per place, naming the file and offset.
pub fn report_damage(path: &Path, damage: &[Damage]) {
    for d in damage {
        eprintln!(
            "memlens: {}: damaged at byte offset {}: {}; the rest of the file was read",
            path.display(),
            d.offset,
            d.reason
        );
    }
}
