//! The one pass: a trace's events, read once in time order, fed to every model asked
//! for. The first trace feeds the heap model, the summary and the allocation map; the
//! others (forked children) feed the allocation map only.

use memlens_alloc::{AllocModel, AllocModelBuilder};
use memlens_heap::HeapModel;
use memlens_heap::latency::LatencyTable;
use memlens_heap::summary::{Summary, SummaryBuilder};
use memlens_trace::{AllocFn, Event, EventStream};

use crate::alloc_feed::AllocFeed;
use crate::heap_feed::HeapFeed;
use crate::input::TraceInput;
use crate::progress::Progress;
use crate::symbols::StackSymbols;

/// Which models a pass builds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wanted {
    /// The heap-evolution model of the first trace.
    pub heap: bool,
    /// The allocation-map model of all traces.
    pub alloc: bool,
    /// The streaming summary and allocator latencies of the first trace.
    pub summary: bool,
}

/// What a pass built.
#[derive(Default)]
pub struct Models {
    /// The heap-evolution model, when asked for.
    pub heap: Option<HeapModel>,
    /// The allocation-map model, when asked for.
    pub alloc: Option<AllocModel>,
    /// The summary, when asked for.
    pub summary: Option<Summary>,
    /// Allocator latencies per function (empty unless recorded with `--latency`), with
    /// the summary.
    pub latency: Option<LatencyTable>,
}

/// Reads the events of `inputs` once and builds the `wanted` models. `symbols` holds
/// one namer per input, in the same order. Damage met in the event chunks is added to
/// each input's [`TraceInput::damage`].
pub fn ingest(
    inputs: &mut [TraceInput],
    symbols: &mut [StackSymbols],
    wanted: Wanted,
    progress: &dyn Progress,
) -> Models {
    let mut models = Models::default();
    let origin = inputs
        .iter()
        .filter_map(|i| i.metadata.process.as_ref().map(|p| p.start_unix_ns))
        .min()
        .unwrap_or(0);
    let mut alloc = wanted.alloc.then(|| {
        let mut builder = AllocModelBuilder::new();
        let total: u64 = inputs.iter().map(|i| i.metadata.event_records).sum();
        builder.reserve((total / 2) as usize);
        builder
    });
    let mut alloc_end = 0u64;
    for (n, (input, names)) in inputs.iter_mut().zip(symbols.iter_mut()).enumerate() {
        let first = n == 0;
        let md = &input.metadata;
        let mut heap = (first && wanted.heap).then(|| HeapFeed::new(md, names));
        let mut summary = (first && wanted.summary).then(SummaryFeed::new);
        let mut alloc_feed = alloc.as_mut().map(|b| {
            let offset = md
                .process
                .as_ref()
                .map_or(0, |p| p.start_unix_ns.saturating_sub(origin));
            AllocFeed::new(b, md, input.file.path(), offset)
        });
        if heap.is_none() && summary.is_none() && alloc_feed.is_none() {
            continue;
        }
        progress.start(
            &input.file.path().display().to_string(),
            input.event_chunks(),
        );
        let mut stream = EventStream::new(&input.file);
        let mut marks = md.marks.iter().peekable();
        let (mut seen, mut count) = (0u64, 0u32);
        while let Some(event) = stream.next() {
            let latency = stream.latency_ns();
            if let Some(heap) = heap.as_mut() {
                while let Some(mark) = marks.next_if(|m| m.t <= event.time()) {
                    heap.mark(mark.t, &mark.name);
                }
                heap.event(&event);
            }
            if let Some(summary) = summary.as_mut() {
                summary.event(&event, latency);
            }
            if let (Some(feed), Some(builder)) = (alloc_feed.as_mut(), alloc.as_mut()) {
                feed.event(builder, md, names, &event, latency);
            }
            count += 1;
            if count == 65_536 {
                count = 0;
                let done = stream.chunks_done();
                if done != seen {
                    seen = done;
                    progress.advance(done);
                }
            }
        }
        progress.finish();
        input.damage.extend(stream.take_damage());
        if let Some(mut heap) = heap {
            for mark in marks {
                heap.mark(mark.t, &mark.name);
            }
            models.heap = Some(heap.finish(md.last_time));
        }
        if let Some(summary) = summary {
            let (summary, latency) = summary.finish(md.last_time);
            models.summary = Some(summary);
            models.latency = Some(latency);
        }
        if let Some(feed) = alloc_feed {
            alloc_end = alloc_end.max(md.last_time.saturating_add(feed.offset()));
        }
    }
    models.alloc = alloc.map(|b| b.finish(alloc_end));
    models
}

/// The streaming summary with allocator latencies per function.
struct SummaryFeed {
    builder: SummaryBuilder,
    latency: LatencyTable,
    alloc_ops: [usize; AllocFn::ALL.len()],
    realloc_op: usize,
    free_op: usize,
}

impl SummaryFeed {
    fn new() -> SummaryFeed {
        let mut latency = LatencyTable::new();
        let alloc_ops = AllocFn::ALL.map(|f| latency.op(f.name()));
        let realloc_op = latency.op("realloc");
        let free_op = latency.op("free");
        SummaryFeed {
            builder: SummaryBuilder::new(),
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
            Event::Free { t, tid, addr } => {
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
