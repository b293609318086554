//! An opened trace: the file, its process stream (modules, threads, stacks, marks) and
//! the damage met so far. Opening reads the chunk index and the process stream only;
//! the events are read by [`ingest`](crate::ingest).

use std::path::Path;

use memlens_heap::Sampling;
use memlens_trace::{Damage, Metadata, OpenError, TraceFile};

use crate::damage::DamageNote;

/// Why a trace could not be opened at all (damage inside a readable file is not an
/// error: it is kept in [`TraceInput::damage`]).
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// Not a readable memlens trace.
    #[error(transparent)]
    Open(#[from] OpenError),
}

/// One opened trace.
pub struct TraceInput {
    /// The file.
    pub file: TraceFile,
    /// Its process stream.
    pub metadata: Metadata,
    /// Damage found so far (chunk index and process stream; the event pass adds more).
    pub damage: Vec<Damage>,
}

impl TraceInput {
    /// Opens `path` and loads its process stream; an unreadable or foreign file is an
    /// error, damage is not.
    pub fn open(path: &Path) -> Result<TraceInput, IngestError> {
        let file = TraceFile::open(path)?;
        let mut damage = file.index_damage().to_vec();
        let metadata = Metadata::load(&file, &mut damage);
        Ok(TraceInput {
            file,
            metadata,
            damage,
        })
    }

    /// The trace's path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The run from the process start (time 0) to the last record: the window every
    /// time a user types (`1.5s`, `50%`) refers to.
    pub fn run_end_ns(&self) -> u64 {
        self.metadata.last_time
    }

    /// Whether the trace comes from the Java agent: its allocations carry types and
    /// synthetic object ids instead of addresses.
    pub fn is_java(&self) -> bool {
        self.metadata.stacks.has_types()
    }

    /// How the trace was sampled (`memlens record --sample`), if it was: every model
    /// read from it then holds estimates, and every output says so.
    pub fn sampling(&self) -> Option<Sampling> {
        self.metadata.sample_interval.and_then(Sampling::new)
    }

    /// The sentence saying the trace starts mid-run (`memlens attach`), if it does:
    /// every view shows it, since blocks allocated before the attach are unknown.
    pub fn mid_run_note(&self) -> Option<String> {
        self.metadata
            .attached
            .as_ref()
            .map(crate::mid_run::mid_run_note)
    }

    /// The number of event chunks (the units of the event pass's progress).
    pub fn event_chunks(&self) -> u64 {
        self.event_chunks_from(0)
    }

    /// The number of event chunks holding events at or after `t` (trace clock): those
    /// a reading from `t` reads.
    pub fn event_chunks_from(&self, t: u64) -> u64 {
        self.file
            .chunks()
            .iter()
            .filter(|c| c.header.kind == memlens_trace::format::ChunkKind::Events)
            .filter(|c| c.header.t_last >= t)
            .count() as u64
    }

    /// The damage met so far, one sentence each.
    pub fn damage_notes(&self) -> Vec<DamageNote> {
        DamageNote::all(self.path(), &self.damage)
    }
}
