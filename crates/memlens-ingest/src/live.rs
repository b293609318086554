//! Reading a trace that is still being written a little more at a time
//! ([`follow`](crate::follow)): each read decodes only the event chunks written since
//! the one before, so an update of the live view costs what the program recorded
//! meanwhile, not what it recorded since it started.
//!
//! **Which events are fed.** The recorder's writer drains every thread's events and
//! writes a chunk per thread at each flush (every 100 ms), so the threads' chunks
//! arrive out of step by about that much. A read feeds the builders, in time order
//! across threads, the events up to [`LAG`] before the latest event read; later ones
//! wait in per-thread queues for the next read, or for the last one, once the program
//! has ended ([`LiveRead::finish`]), which feeds them all. An event that still arrives behind that
//! line (a thread descheduled for longer) is fed at the line, and the heap model counts
//! it among its out-of-order events.
//!
//! **What a read keeps.** The heap model's and the allocation map's builders, their
//! feeds (the context added so far, the site cache) and the symbolizer; an update's
//! models are snapshots of the builders (a copy of the live set, the coalesced rows and
//! the map's blocks), the builders going on.
//!
//! **Never starting again.** The heap model is exact at [`GRID_LINES`] lines spaced over
//! a horizon (twice the run recorded when the read started), which doubles as the run
//! passes it, every other line going (`memlens-heap`'s `coalescing_growing`): between
//! half and all of the lines over the run so far, at every update, for a run of any
//! length. The allocation map keeps within half its memory budget (the model being
//! served and the next one are both in memory as it is replaced): past that, its window
//! slides forward to the newest half (the blocks live at the new start stay). Its
//! snapshot costs a pass over its blocks (finding bins, indexing): about 0.1 s per
//! million, so it is taken at most once per [`ALLOC_SHARE`] of the time since the last
//! one's cost, and the heap model updates at every read in between.
//! Modules the program loads later get a new symbolizer (the frames named so far were
//! in modules the old one knew). Traces of the Java agent (typed stacks, heap walks)
//! are read whole at every update instead.
//!
//! [`GRID_LINES`]: crate::GRID_LINES

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::{Duration, Instant};

use memlens_alloc::AllocModelBuilder;
use memlens_trace::columns::latency_from_code;
use memlens_trace::format::ChunkKind;
use memlens_trace::merge::read_event_chunk;
use memlens_trace::{Damage, Event, EventStream, Metadata};
use rustc_hash::FxHashMap;

use crate::alloc_feed::AllocFeed;
use crate::alloc_plan;
use crate::heap_feed::HeapFeed;
use crate::input::TraceInput;
use crate::pass::{Models, Wanted};
use crate::progress::{ChunkProgress, Progress};
use crate::symbols::StackSymbols;

/// How far behind the latest event read the builders are fed: several of the
/// recorder's flushes, so that every thread's chunk up to there has been written.
pub const LAG: u64 = 500_000_000;

/// The shortest horizon (ns).
const MIN_HORIZON: u64 = 2_000_000_000;

/// The allocation map's snapshot takes at most this share of the time: it is taken
/// again only once four times its last cost has passed since.
const ALLOC_SHARE: u32 = 4;

/// The allocation map's part of a read: its builder, its feed, the window it keeps
/// when the run does not fit its budget.
struct AllocPart {
    builder: AllocModelBuilder,
    feed: AllocFeed,
    /// The start of the window (ns), when the map holds one.
    window: Option<u64>,
    budget: u64,
    /// When its last snapshot was taken, and what it cost.
    snapshot: Option<(Instant, Duration)>,
}

/// One trace read so far, the builders fed up to [`LiveRead::fed_to`].
pub(crate) struct LiveRead {
    /// Every chunk starting before this file offset has been read.
    read_to: u64,
    /// Events read and not yet fed, per thread, in time order, with their stored
    /// latency.
    queues: FxHashMap<u32, VecDeque<(Event, Option<u32>)>>,
    /// The latest event time read.
    newest: u64,
    /// The builders have every event up to this time.
    fed_to: u64,
    /// The process stream's marks and mappings fed so far.
    marks_fed: usize,
    mappings_fed: usize,
    heap: Option<HeapFeed>,
    alloc: Option<AllocPart>,
    symbols: StackSymbols,
    /// The modules the symbolizer was made with.
    modules: usize,
    /// Damage met in the chunks read.
    damage: Vec<Damage>,
    notes: Vec<String>,
}

/// Whether a trace can be read a little more at a time: not one of the Java agent
/// (whose types and heap walks the feed takes in once).
pub(crate) fn can_read_live(md: &Metadata) -> bool {
    md.heap_walks.is_empty() && !md.stacks.has_types()
}

impl LiveRead {
    /// Reads what `input` holds now, from its start, building the `wanted` models and
    /// reporting to `progress`.
    pub(crate) fn start(input: &TraceInput, wanted: &Wanted, progress: &dyn Progress) -> LiveRead {
        let md = &input.metadata;
        let mut symbols = StackSymbols::new(md);
        let newest = newest_event(input);
        let horizon = newest.saturating_mul(2).max(MIN_HORIZON);
        let heap = wanted
            .heap
            .then(|| HeapFeed::growing(md, &mut symbols, horizon));
        let mut notes = Vec::new();
        let alloc = wanted.alloc.then(|| {
            let (budget, why) = alloc_plan::memory_budget();
            notes.extend(why);
            // Half the budget (see the module documentation).
            let spread = alloc_plan::Spread::of(std::slice::from_ref(input));
            let blocks = alloc_plan::blocks_of(md);
            let plan = alloc_plan::plan(blocks, newest, &spread, None, budget / 2);
            let mut builder = AllocModelBuilder::new();
            builder.reserve(plan.blocks as usize);
            let window = plan.window.map(|(from, _)| from);
            if let Some(from) = window {
                builder.start_at(from);
            }
            let feed = AllocFeed::new(&mut builder, md, input.path(), 0);
            AllocPart {
                builder,
                feed,
                window,
                budget,
                snapshot: None,
            }
        });
        let mut live = LiveRead {
            read_to: 0,
            queues: FxHashMap::default(),
            newest,
            fed_to: 0,
            marks_fed: 0,
            mappings_fed: 0,
            heap,
            alloc,
            symbols,
            modules: md.modules.len(),
            damage: Vec::new(),
            notes,
        };
        // The events are in time order: fed as they come up to the line, queued after.
        let line = live.line();
        let mut stream = EventStream::new(&input.file);
        let mut ticks = ChunkProgress::default();
        progress.start(&input.path().display().to_string(), input.event_chunks());
        while let Some(event) = stream.next() {
            ticks.event(&stream, progress);
            let latency = stream.latency_ns();
            if event.time() <= line && live.queues.is_empty() {
                live.feed(md, &event, latency);
            } else {
                let queue = live.queues.entry(event.tid()).or_default();
                queue.push_back((event, latency));
            }
        }
        progress.finish();
        live.damage.extend(stream.take_damage());
        live.read_to = read_to(input);
        live.catch_up(md, line);
        live
    }

    /// Reads the chunks `input` (the trace opened again) holds beyond those read, and
    /// feeds the builders up to [`LAG`] before the latest event.
    pub(crate) fn extend(&mut self, input: &TraceInput) {
        let md = &input.metadata;
        if md.modules.len() != self.modules {
            self.symbols = StackSymbols::new(md);
            self.modules = md.modules.len();
        }
        let (mut scratch, mut payload) = (Vec::new(), Vec::new());
        let (mut events, mut codes): (Vec<Event>, Vec<u32>) = (Vec::new(), Vec::new());
        for chunk in input.file.chunks() {
            if chunk.offset < self.read_to || chunk.header.kind != ChunkKind::Events {
                continue;
            }
            let buffers = (&mut scratch, &mut payload);
            let read = read_event_chunk(&input.file, chunk, buffers, &mut events, &mut codes);
            self.damage.extend(read.err());
            let queue = self.queues.entry(chunk.header.stream).or_default();
            for (i, event) in events.iter().enumerate() {
                let code = codes.get(i).copied().unwrap_or(0);
                queue.push_back((*event, latency_from_code(code)));
            }
        }
        self.read_to = self.read_to.max(read_to(input));
        self.newest = self.newest.max(newest_event(input));
        if let Some(heap) = self.heap.as_mut() {
            heap.add_context(md, &mut self.symbols);
        }
        let line = self.line();
        self.catch_up(md, line);
        self.keep_within_budget();
    }

    /// Reads the rest of a trace whose program has ended and feeds every event: the
    /// models then hold the whole run, to its end.
    pub(crate) fn finish(&mut self, input: &TraceInput) {
        if self.read_to < read_to(input) {
            self.extend(input);
        }
        let end = input.run_end_ns();
        self.catch_up(&input.metadata, end.max(self.newest));
        self.fed_to = end.max(self.fed_to);
        self.keep_within_budget();
        if let Some(a) = self.alloc.as_mut() {
            a.snapshot = None; // the whole run's map is due at once
        }
    }

    /// Slides the allocation map's window forward past half its budget.
    fn keep_within_budget(&mut self) {
        if let Some(a) = self.alloc.as_mut()
            && alloc_plan::memory_of(a.builder.block_count() as u64) > a.budget / 2
        {
            // The newest half stays.
            let keep = a.builder.block_count() / 2;
            a.window = a.builder.slide_window(keep).or(a.window);
        }
    }

    /// The time up to which the builders are fed.
    fn line(&self) -> u64 {
        self.newest.saturating_sub(LAG)
    }

    /// Feeds the queued events up to `line` in time order across threads (ties by
    /// thread id, as [`EventStream`] orders them), then the marks and mappings up to it.
    fn catch_up(&mut self, md: &Metadata, line: u64) {
        let mut fronts: BinaryHeap<Reverse<(u64, u32)>> = self
            .queues
            .iter()
            .filter_map(|(&tid, q)| q.front().map(|(e, _)| Reverse((e.time(), tid))))
            .collect();
        while let Some(Reverse((t, tid))) = fronts.pop() {
            if t > line {
                break;
            }
            let Some(queue) = self.queues.get_mut(&tid) else {
                continue;
            };
            let Some((event, latency)) = queue.pop_front() else {
                continue;
            };
            if let Some((next, _)) = queue.front() {
                fronts.push(Reverse((next.time(), tid)));
            }
            self.feed(md, &event, latency);
        }
        self.queues.retain(|_, q| !q.is_empty());
        self.fed_to = self.fed_to.max(line);
        self.context_until(md, self.fed_to);
    }

    /// Feeds one event, after the marks and mappings made before it.
    fn feed(&mut self, md: &Metadata, event: &Event, latency: Option<u32>) {
        self.context_until(md, event.time());
        if let Some(heap) = self.heap.as_mut() {
            heap.event(event);
        }
        if let Some(a) = self.alloc.as_mut() {
            a.feed
                .event(&mut a.builder, md, &mut self.symbols, event, latency);
        }
    }

    /// Feeds the marks (heap model) and the program's own mappings (allocation map)
    /// made at or before `t` and not fed yet.
    fn context_until(&mut self, md: &Metadata, t: u64) {
        while let Some(mark) = md.marks.get(self.marks_fed).filter(|m| m.t <= t) {
            if let Some(heap) = self.heap.as_mut() {
                heap.mark(mark.t, &mark.name);
            }
            self.marks_fed += 1;
        }
        while let Some(change) = md.mappings.get(self.mappings_fed).filter(|m| m.time() <= t) {
            if let Some(a) = self.alloc.as_mut() {
                a.feed
                    .mapping(&mut a.builder, md, &mut self.symbols, change);
            }
            self.mappings_fed += 1;
        }
    }

    /// The models of the events fed so far, the run ending at [`LiveRead::fed_to`]
    /// (the builders go on): the heap model every time, the allocation map when its
    /// snapshot is due (see [`ALLOC_SHARE`]).
    pub(crate) fn models(&mut self, input: &TraceInput) -> Models {
        let end = self.fed_to;
        let mut notes: Vec<String> = input.mid_run_note().into_iter().collect();
        notes.extend(self.notes.iter().cloned());
        let due = |a: &AllocPart| {
            a.snapshot
                .is_none_or(|(at, cost)| at.elapsed() >= cost * ALLOC_SHARE)
        };
        let alloc = self.alloc.as_mut().filter(|a| due(a)).map(|a| {
            let started = Instant::now();
            let mut model = a.builder.snapshot(end);
            if let Some(from) = a.window {
                let blocks = alloc_plan::blocks_of(&input.metadata);
                let half = a.budget / 2;
                let note = alloc_plan::window_note(blocks, half, (from, end), end, false, None);
                model.add_note(note);
            }
            a.snapshot = Some((Instant::now(), started.elapsed()));
            model
        });
        Models {
            heap: self.heap.as_ref().map(|h| h.snapshot(end)),
            alloc,
            notes,
            ..Models::default()
        }
    }

    /// The damage met in the chunks read so far.
    pub(crate) fn damage(&self) -> &[Damage] {
        &self.damage
    }

    /// The time up to which the models hold every event (ns).
    pub(crate) fn fed_to(&self) -> u64 {
        self.fed_to
    }
}

/// The latest event time in `input`'s chunks.
fn newest_event(input: &TraceInput) -> u64 {
    let chunks = input.file.chunks().iter();
    let events = chunks.filter(|c| c.header.kind == ChunkKind::Events);
    events.map(|c| c.header.t_last).max().unwrap_or(0)
}

/// The offset after which `input`'s chunks start that have not been read.
fn read_to(input: &TraceInput) -> u64 {
    input
        .file
        .chunks()
        .iter()
        .map(|c| c.offset + 1)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
