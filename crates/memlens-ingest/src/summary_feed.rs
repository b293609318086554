//! The streaming summary's feed ([`SummaryFeed`]). Beside other models, a trace's
//! events with their allocator latencies are added up on a thread of their own, in
//! batches of 16 K, four queued at most (`memlens-vocab`'s [`BatchThread`]), so that
//! the pass reading the events pays a push per event, not the summary's own live-set
//! lookups. That is what lets a pass reading the events anyway — for the heap model,
//! or for an allocation map reaching the run's end — keep the summary in the index too
//! for less than a pass of its own (see `pass.rs`).

use memlens_heap::Sampling;
use memlens_heap::latency::LatencyTable;
use memlens_heap::summary::{Summary, SummaryBuilder};
use memlens_trace::{AllocFn, Event, Metadata};
use memlens_vocab::batch_thread::{AddUp, BatchThread};

/// Events per batch handed to the thread.
const BATCH: usize = 1 << 14;

/// Batches queued for the thread at most.
const QUEUED: usize = 4;

/// An event and its allocator latency (ns), if recorded.
type Timed = (Event, Option<u32>);

/// The summary of a trace, with allocator latencies per function, fed event by event.
pub(crate) enum SummaryFeed {
    /// Added up on the pass's thread (the pass feeds nothing else).
    Alone(Box<SummaryAdder>),
    /// Added up on a thread of its own.
    Beside(BatchThread<SummaryAdder, Timed>),
}

impl SummaryFeed {
    /// The summary of the trace `md` describes (estimates when it is sampled), added
    /// up on a thread of its own when `beside` says the pass feeds other models too
    /// (alone, the pass's thread has nothing else to do: handing the events over
    /// would only cost it).
    pub(crate) fn new(md: &Metadata, beside: bool) -> SummaryFeed {
        let adder = SummaryAdder::new(md);
        match beside {
            true => SummaryFeed::Beside(BatchThread::new(adder, BATCH, QUEUED)),
            false => SummaryFeed::Alone(Box::new(adder)),
        }
    }

    /// Feeds one event, with its allocator latency if recorded.
    #[inline]
    pub(crate) fn event(&mut self, event: &Event, latency: Option<u32>) {
        match self {
            SummaryFeed::Alone(adder) => adder.event(event, latency),
            SummaryFeed::Beside(thread) => thread.push((*event, latency)),
        }
    }

    /// The summary of the run ending at `end_ns`, and the allocator latencies.
    pub(crate) fn finish(self, end_ns: u64) -> (Summary, LatencyTable) {
        match self {
            SummaryFeed::Alone(adder) => adder.finish(end_ns),
            SummaryFeed::Beside(thread) => thread.finish().finish(end_ns),
        }
    }
}

impl AddUp<Timed> for SummaryAdder {
    fn add(&mut self, events: &[Timed]) {
        for (event, latency) in events {
            self.event(event, *latency);
        }
    }
}

/// The summary's builder and the latency table, and the table's operation per
/// allocator function.
pub(crate) struct SummaryAdder {
    builder: SummaryBuilder,
    latency: LatencyTable,
    alloc_ops: [usize; AllocFn::ALL.len()],
    realloc_op: usize,
    free_op: usize,
}

impl SummaryAdder {
    /// The adder of the trace `md` describes (estimates when it is sampled).
    fn new(md: &Metadata) -> SummaryAdder {
        let mut latency = LatencyTable::new();
        let alloc_ops = AllocFn::ALL.map(|f| latency.op(f.name()));
        let realloc_op = latency.op("realloc");
        let free_op = latency.op("free");
        SummaryAdder {
            builder: md
                .sample_interval
                .and_then(Sampling::new)
                .map_or_else(SummaryBuilder::new, SummaryBuilder::sampled),
            latency,
            alloc_ops,
            realloc_op,
            free_op,
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
            matches!(&away, SummaryFeed::Beside(t) if t.on_its_thread()),
            "no thread started"
        );
        assert!(
            matches!(here, SummaryFeed::Alone(_)),
            "a thread started alone"
        );
        let (here, here_latency) = here.finish(1 << 40);
        let (away, away_latency) = away.finish(1 << 40);
        assert!(here.allocations > 0 && here.frees > 0 && here.reallocations > 0);
        assert_eq!(away, here);
        assert_eq!(format!("{away_latency:?}"), format!("{here_latency:?}"));
    }
}
