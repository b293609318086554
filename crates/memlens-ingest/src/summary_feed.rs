//! The streaming summary's feed ([`SummaryFeed`]). Beside other models, a trace's
//! events with their allocator latencies are added up on a thread of their own in
//! batches, so that the pass reading the events (one thread, the slowest of the
//! pipeline) pays a push per event, not the summary's own live-set lookups. That is
//! what lets a pass reading the events anyway — for the heap model, or for an
//! allocation map reaching the run's end — keep the summary in the index too for less
//! than a pass of its own (see `pass.rs`). A trace of fewer events than a batch starts
//! no thread. The queue holds a few batches at most, each given back emptied to be
//! filled again: a pass faster than the summary waits for it, so memory stays bounded.

use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use memlens_heap::Sampling;
use memlens_heap::latency::LatencyTable;
use memlens_heap::summary::{Summary, SummaryBuilder};
use memlens_trace::{AllocFn, Event, Metadata};

/// Events per batch handed to the thread.
const BATCH: usize = 1 << 14;

/// Batches queued for the thread at most.
const QUEUED: usize = 4;

/// An event and its allocator latency (ns), if recorded.
type Timed = (Event, Option<u32>);

/// The summary of a trace, with allocator latencies per function, fed event by event.
pub(crate) struct SummaryFeed {
    /// Whether the events go to a thread (see [`SummaryFeed::new`]).
    beside: bool,
    pending: Vec<Timed>,
    adder: Adder,
}

/// Where the summary is added up.
enum Adder {
    /// Here (no batch was full yet).
    Here(Box<SummaryAdder>),
    /// On its thread.
    Away {
        batches: SyncSender<Vec<Timed>>,
        /// Batches the thread is done with, to be filled again.
        spent: Receiver<Vec<Timed>>,
        thread: JoinHandle<SummaryAdder>,
    },
}

impl SummaryFeed {
    /// The summary of the trace `md` describes (estimates when it is sampled), added
    /// up on a thread of its own when `beside` says the pass feeds other models too
    /// (alone, the pass's thread has nothing else to do: handing the events over
    /// would only cost it).
    pub(crate) fn new(md: &Metadata, beside: bool) -> SummaryFeed {
        SummaryFeed {
            beside,
            pending: Vec::with_capacity(if beside { BATCH } else { 0 }),
            adder: Adder::Here(Box::new(SummaryAdder::new(md))),
        }
    }

    /// Feeds one event, with its allocator latency if recorded.
    #[inline]
    pub(crate) fn event(&mut self, event: &Event, latency: Option<u32>) {
        match &mut self.adder {
            Adder::Here(adder) if !self.beside => adder.event(event, latency),
            _ => {
                self.pending.push((*event, latency));
                if self.pending.len() >= BATCH {
                    self.hand_over();
                }
            }
        }
    }

    /// Hands the pending events to the thread, starting it the first time.
    fn hand_over(&mut self) {
        if let Adder::Here(adder) = &mut self.adder {
            let adder = std::mem::replace(adder, Box::new(SummaryAdder::empty()));
            let (batches, received) = sync_channel(QUEUED);
            let (give_back, spent) = channel();
            let thread = std::thread::spawn(move || add_up(*adder, received, give_back));
            self.adder = Adder::Away {
                batches,
                spent,
                thread,
            };
        }
        if let Adder::Away { batches, spent, .. } = &self.adder {
            let empty = spent
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(BATCH));
            let batch = std::mem::replace(&mut self.pending, empty);
            // The thread only stops when the feed drops its sender (in `finish`).
            let _ = batches.send(batch);
        }
    }

    /// The summary of the run ending at `end_ns`, and the allocator latencies.
    pub(crate) fn finish(self, end_ns: u64) -> (Summary, LatencyTable) {
        let mut adder = match self.adder {
            Adder::Here(adder) => *adder,
            Adder::Away {
                batches, thread, ..
            } => {
                drop(batches);
                match thread.join() {
                    Ok(adder) => adder,
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        };
        adder.add(&self.pending);
        adder.finish(end_ns)
    }
}

/// The thread: adds up the batches, giving each back emptied, until the feed hangs
/// up; then hands back the adder.
fn add_up(
    mut adder: SummaryAdder,
    batches: Receiver<Vec<Timed>>,
    give_back: Sender<Vec<Timed>>,
) -> SummaryAdder {
    for mut batch in batches {
        adder.add(&batch);
        batch.clear();
        // The feed may be finishing and no longer take it back.
        let _ = give_back.send(batch);
    }
    adder
}

/// The summary's builder and the latency table, and the table's operation per
/// allocator function.
struct SummaryAdder {
    builder: SummaryBuilder,
    latency: LatencyTable,
    alloc_ops: [usize; AllocFn::ALL.len()],
    realloc_op: usize,
    free_op: usize,
}

impl SummaryAdder {
    /// The adder of the trace `md` describes (estimates when it is sampled).
    fn new(md: &Metadata) -> SummaryAdder {
        let builder = md
            .sample_interval
            .and_then(Sampling::new)
            .map_or_else(SummaryBuilder::new, SummaryBuilder::sampled);
        SummaryAdder::with(builder)
    }

    /// The placeholder left behind when the adder moves to its thread.
    fn empty() -> SummaryAdder {
        SummaryAdder::with(SummaryBuilder::new())
    }

    fn with(builder: SummaryBuilder) -> SummaryAdder {
        let mut latency = LatencyTable::new();
        let alloc_ops = AllocFn::ALL.map(|f| latency.op(f.name()));
        let realloc_op = latency.op("realloc");
        let free_op = latency.op("free");
        SummaryAdder {
            builder,
            latency,
            alloc_ops,
            realloc_op,
            free_op,
        }
    }

    fn add(&mut self, events: &[Timed]) {
        for (event, latency) in events {
            self.event(event, *latency);
        }
    }

    fn event(&mut self, event: &Event, latency: Option<u32>) {
        let op = match *event {
            Event::Alloc {
                t,
                tid,
                addr,
                size,
                stack,
                func,
            } => {
                self.builder.alloc(t, tid, addr, size, stack);
                self.alloc_ops[func as usize]
            }
            Event::Free { t, tid, addr, .. } => {
                self.builder.free(t, tid, addr);
                self.free_op
            }
            Event::Realloc {
                t,
                tid,
                old_addr,
                new_addr,
                size,
                stack,
            } => {
                self.builder
                    .realloc(t, tid, old_addr, new_addr, size, stack);
                self.realloc_op
            }
        };
        if let Some(ns) = latency {
            self.latency.record(op, ns);
        }
    }

    fn finish(mut self, end_ns: u64) -> (Summary, LatencyTable) {
        self.builder.end(end_ns);
        (self.builder.finish(), self.latency)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocations, frees and reallocations over a pool of addresses on two threads,
    /// some with a latency.
    fn events(n: usize) -> Vec<Timed> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut live: Vec<u64> = Vec::new();
        (0..n as u64)
            .map(|t| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let tid = (x % 2) as u32;
                let event = match (x >> 8) % 8 {
                    0..=3 => {
                        let addr = 0x1000 + 16 * (x >> 20) % (1 << 20);
                        live.push(addr);
                        Event::Alloc {
                            t,
                            tid,
                            addr,
                            size: 1 + (x >> 32) % 5000,
                            stack: ((x >> 40) % 50) as u32,
                            func: AllocFn::Malloc,
                        }
                    }
                    4 if !live.is_empty() => {
                        let old_addr = live.swap_remove((x >> 24) as usize % live.len());
                        let new_addr = old_addr + 8;
                        live.push(new_addr);
                        Event::Realloc {
                            t,
                            tid,
                            old_addr,
                            new_addr,
                            size: (x >> 36) % 9000,
                            stack: ((x >> 44) % 50) as u32,
                        }
                    }
                    _ => {
                        let addr = match live.is_empty() {
                            true => 0xdead_0000, // a free of an unknown block
                            false => live.swap_remove((x >> 24) as usize % live.len()),
                        };
                        Event::Free {
                            t,
                            tid,
                            addr,
                            stack: 0,
                        }
                    }
                };
                (
                    event,
                    (x >> 50)
                        .is_multiple_of(3)
                        .then_some((x >> 16) as u32 % 100_000),
                )
            })
            .collect()
    }

    #[test]
    fn events_added_on_a_thread_make_the_summary_of_events_added_here() {
        let md = Metadata::default();
        let all = events(3 * BATCH + 77);
        let (mut here, mut away) = (SummaryFeed::new(&md, false), SummaryFeed::new(&md, true));
        for &(event, latency) in &all {
            here.event(&event, latency);
            away.event(&event, latency);
        }
        assert!(
            matches!(away.adder, Adder::Away { .. }),
            "no thread started"
        );
        assert!(
            matches!(here.adder, Adder::Here(_)),
            "a thread started alone"
        );
        let (here, here_latency) = here.finish(1 << 40);
        let (away, away_latency) = away.finish(1 << 40);
        assert!(here.allocations > 0 && here.frees > 0 && here.reallocations > 0);
        assert_eq!(away, here);
        assert_eq!(format!("{away_latency:?}"), format!("{here_latency:?}"));
    }
}
