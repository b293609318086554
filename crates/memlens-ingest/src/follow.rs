//! Following a trace that is still being written (`memlens record --view`, or `memlens
//! view` of a running program's trace): the trace is read further whenever it has
//! grown, at most once a [`FOLLOW_INTERVAL`] and never more often than a read takes,
//! and each read's models are handed on; the last read is made once the program has
//! ended.
//!
//! A trace is still being written while it has no `end` record and its process is
//! alive (`/proc/PID`, so on this machine). It has ended when the `end` record arrives
//! (a clean exit), or when its process is gone and the file has stopped growing (a
//! crash or a kill: the recorder had no chance to write `end`).
//!
//! A read decodes only what was written since the last one (`live.rs`), so an update
//! costs what the program recorded meanwhile, whatever the run's length; while the
//! program runs, the models lag the latest event by [`LAG`], and the read after it has
//! ended feeds the rest, so the last models hold the whole run. The Java agent's traces
//! are read whole instead. Reads of
//! a growing trace neither load nor write its index (it would be stale a moment later);
//! the next `memlens view` of the finished trace writes it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::input::TraceInput;
use crate::live::{LiveRead, can_read_live};
use crate::pass::{Models, Wanted, ingest};
use crate::progress::NoProgress;
use crate::symbols::StackSymbols;

pub use crate::live::LAG;

/// The shortest time between two reads.
pub const FOLLOW_INTERVAL: Duration = Duration::from_millis(700);
/// A trace whose process is gone is complete once it has not grown for this long.
const SETTLE: Duration = Duration::from_secs(1);

/// Whether `input` is still being written: no `end` record and its process alive.
pub fn still_written(input: &TraceInput) -> bool {
    let md = &input.metadata;
    md.end.is_none() && md.process.as_ref().is_some_and(|p| process_alive(p.pid))
}

fn process_alive(pid: u32) -> bool {
    pid != 0 && Path::new(&format!("/proc/{pid}")).exists()
}

/// One read of a followed trace.
pub struct Update {
    /// The trace as read (its damage includes a chunk still being written at the end).
    pub input: TraceInput,
    /// What the read built.
    pub models: Models,
    /// Whether the program is still running (more updates follow).
    pub running: bool,
    /// How long the read took.
    pub took: Duration,
    /// The time up to which the models hold every event (ns): the run's end once the
    /// program has ended, [`LAG`] before the latest event while it runs.
    pub until_ns: u64,
}

/// Where following a trace goes on from: the first read of a trace still being written
/// ([`crate::ingest`] with [`Wanted::growing`] set makes it, in
/// [`crate::Models::following`]), so that following it does not read it all again.
pub struct Following(pub(crate) LiveRead);

impl Following {
    /// The time up to which its models hold every event (ns).
    pub fn until_ns(&self) -> u64 {
        self.0.fed_to()
    }
}

/// Follows the trace at `path`: calls `update` with the `wanted` models after every
/// read of a grown trace, going on from `first` when given, until the program has ended
/// (the last call has `running` false) or `update` returns `None`. A trace that cannot
/// be opened any more (deleted, replaced by another file) ends the following, with its
/// error.
pub fn follow(
    path: &Path,
    wanted: &Wanted,
    first: Option<Following>,
    mut update: impl FnMut(Update) -> Option<()>,
) -> Result<(), crate::IngestError> {
    let path: PathBuf = path.to_owned();
    let mut last_len = file_len(&path);
    let mut last_growth = Instant::now();
    let mut wait = FOLLOW_INTERVAL;
    let mut pid: Option<u32> = None;
    let mut live: Option<LiveRead> = first.map(|f| f.0);
    loop {
        std::thread::sleep(wait);
        wait = FOLLOW_INTERVAL;
        let len = file_len(&path);
        let grew = len != last_len;
        if grew {
            last_growth = Instant::now();
        }
        // An unchanged trace of a live process is not opened again.
        let quiet = last_growth.elapsed() >= SETTLE;
        let maybe_gone = quiet && !pid.is_some_and(process_alive);
        if !grew && !maybe_gone {
            continue;
        }
        let input = TraceInput::open(&path)?;
        pid = input.metadata.process.as_ref().map(|p| p.pid);
        let gone = !pid.is_some_and(process_alive);
        let ended = input.metadata.end.is_some() || (gone && quiet);
        if !grew && !ended {
            continue;
        }
        last_len = len;
        let started = Instant::now();
        let mut input = input;
        let (models, until_ns) = if !can_read_live(&input.metadata) {
            live = None;
            let mut inputs = vec![input];
            let mut symbols = vec![StackSymbols::new(&inputs[0].metadata)];
            let models = ingest(&mut inputs, &mut symbols, wanted.clone(), &NoProgress);
            input = inputs.remove(0);
            (models, input.run_end_ns())
        } else {
            let read = match live.as_mut() {
                Some(read) => {
                    read.extend(&input);
                    read
                }
                None => live.insert(LiveRead::start(&input, wanted, &NoProgress)),
            };
            if ended {
                read.finish(&input);
            }
            input.damage.extend(read.damage().iter().cloned());
            (read.models(&input), read.fed_to())
        };
        let took = started.elapsed();
        // Never read more often than reading takes: half the time stays the program's.
        wait = FOLLOW_INTERVAL.max(took);
        let more = update(Update {
            input,
            models,
            running: !ended,
            took,
            until_ns,
        });
        if ended || more.is_none() {
            return Ok(());
        }
    }
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_pid_zero_is_not() {
        assert!(process_alive(std::process::id()));
        assert!(!process_alive(0));
    }
}
