//! [`EventStream`]: every thread's events merged into one time-ordered stream.
//!
//! Each thread's chunks are in time order already (a thread's clock never
//! goes backwards), so a k-way merge over the threads gives the global order.
//! Chunk headers carry each chunk's first and last time, so a thread's stream
//! is only opened when the merge reaches its first chunk's time and dropped
//! when its last chunk is consumed: memory is one decoded chunk per thread
//! alive at a time, independent of the trace length.
//!
//! Decoding runs on a second thread. The merge asks for a thread's next chunk
//! exactly when the previous one runs out, at that chunk's last time, so the
//! order of requests is known from the headers alone; the decoding thread
//! works through the chunks in that order a few chunks ahead (a bounded
//! channel), and the merge stashes the rare chunk that arrives early because
//! of a tie. The vectors of a chunk the merge is done with go back to the
//! decoders (`Spare`), so decoding a chunk allocates nothing and touches no
//! fresh page.
//!
//! A stream may start at a time ([`EventStream::from_time`]): a thread's chunks that
//! end before it are not read at all, and the events before it in the first chunk
//! read are skipped, so it gives exactly the events of the whole stream from that
//! time on, in the same order (the merge orders by time, then thread id, each
//! thread's clock never going backwards): what a reader resuming from a checkpoint
//! of the events before that time reads.
//!
//! Allocator latencies (recorded with `memlens record --latency`) travel
//! beside the events rather than inside them: [`EventStream::latency_ns`]
//! gives the latency of the event last returned, and
//! [`EventStream::next_with_latency`] returns both.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rustc_hash::FxHashMap as HashMap;
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use crate::columns::latency_from_code;
use crate::decode::decode_events_with_latency;
use crate::format::ChunkKind;
use crate::reader::{ChunkInfo, Damage, TraceFile};
use crate::record::Event;

/// A decoded chunk's content: its events, their stored latencies (empty
/// when the chunk has none) and the damage met (the events before the damage
/// are kept).
type Content = (Vec<Event>, Vec<u32>, Option<Damage>);

/// A decoded chunk: its index in [`TraceFile::chunks`] and its content.
type Decoded = (usize, Content);

struct Stream {
    /// Indices into the trace's chunk list, in order.
    chunks: VecDeque<usize>,
    events: Vec<Event>,
    /// Stored latency per event (0 = not measured, else ns + 1), or empty.
    latencies: Vec<u32>,
    pos: usize,
    /// The time the stream starts at: earlier events are skipped.
    from: u64,
}

impl Stream {
    /// Loads a chunk's events and latencies, skipping those before the stream's
    /// start (only ever in its first chunk); returns the previous chunk's vectors.
    fn load(&mut self, events: Vec<Event>, latencies: Vec<u32>) -> Buffers {
        let from = self.from;
        self.pos = events.iter().take_while(|e| e.time() < from).count();
        (
            std::mem::replace(&mut self.events, events),
            std::mem::replace(&mut self.latencies, latencies),
        )
    }

    /// Whether an event is left in the loaded chunk.
    fn has_next(&self) -> bool {
        self.pos < self.events.len()
    }

    /// The time of the next event; call only when [`Stream::has_next`].
    fn next_time(&self) -> u64 {
        self.events[self.pos].time()
    }

    /// The event at `pos` and its stored latency; advances.
    #[inline]
    fn take(&mut self) -> Option<(Event, u32)> {
        let e = *self.events.get(self.pos)?;
        let l = self.latencies.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        Some((e, l))
    }
}

/// A decoded chunk's vectors: events and latencies.
type Buffers = (Vec<Event>, Vec<u32>);

/// Vectors of chunks the merge is done with, for the decoders to fill again.
#[derive(Default)]
struct Spare(Mutex<Vec<Buffers>>);

impl Spare {
    /// The most vectors kept: the chunks in flight (a few per decoder) and
    /// the one open per thread are never more than this in a run's steady
    /// state, and more are dropped.
    const KEPT: usize = 16;

    /// Empty vectors, reused when some were given back.
    fn take(&self) -> Buffers {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut events, mut latencies) = kept.pop().unwrap_or_default();
        events.clear();
        latencies.clear();
        (events, latencies)
    }

    /// Gives back a chunk's vectors.
    fn give(&self, buffers: Buffers) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < Self::KEPT && buffers.0.capacity() > 0 {
            kept.push(buffers);
        }
    }
}

enum Source {
    /// Decode on the calling thread (tiny traces, or no second thread).
    Inline { scratch: Vec<u8>, payload: Vec<u8> },
    /// Decoded ahead by worker threads: worker `w` decodes the chunks whose
    /// position in demand order is `w` modulo the number of workers, in
    /// order, into its own bounded channel.
    Prefetch {
        rx: Vec<Receiver<Decoded>>,
        /// Position in demand order of every chunk index.
        position: HashMap<usize, usize>,
        stash: HashMap<usize, Content>,
    },
}

/// Time-ordered events of a trace.
pub struct EventStream<'a> {
    trace: &'a TraceFile,
    /// Threads not yet opened, by the time of their first chunk (popped from the back).
    pending: Vec<(u64, u32)>,
    streams: HashMap<u32, Stream>,
    /// Open streams keyed by their next event's time, then tid.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    source: Source,
    damage: Vec<Damage>,
    chunks_done: u64,
    /// Once a single thread is left (and none is to come), it is walked
    /// here directly: no heap, no map lookup per event.
    solo: Option<Stream>,
    /// Stored latency of the event last returned (0 = not measured).
    last_latency: u32,
    /// The vectors of consumed chunks, shared with the decoders.
    spare: Arc<Spare>,
}

impl std::fmt::Debug for EventStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream").finish_non_exhaustive()
    }
}

/// Reads and decodes `chunk` into vectors from `spare`.
fn decode_chunk(
    chunk: &ChunkInfo,
    read: &mut impl FnMut(&ChunkInfo, &mut Vec<u8>, &mut Vec<u8>) -> Result<(), Damage>,
    scratch: &mut Vec<u8>,
    payload: &mut Vec<u8>,
    spare: &Spare,
) -> Content {
    if let Err(d) = read(chunk, scratch, payload) {
        return (Vec::new(), Vec::new(), Some(d));
    }
    let (mut events, mut latencies) = spare.take();
    let damage = decode_payload(chunk, payload, &mut events, &mut latencies).err();
    (events, latencies, damage)
}

/// Decodes the payload of event chunk `chunk` into `events` and `latencies`, keeping
/// the events before any damage.
fn decode_payload(
    chunk: &ChunkInfo,
    payload: &[u8],
    events: &mut Vec<Event>,
    latencies: &mut Vec<u32>,
) -> Result<(), Damage> {
    decode_events_with_latency(&chunk.header, payload, events, latencies).map_err(|e| Damage {
        offset: chunk.offset,
        reason: format!("{} at payload offset {} of the chunk", e.reason, e.offset),
        skipped: 0,
    })
}

/// Reads and decodes one event chunk of `trace` into `events` and `latencies` (both
/// cleared first; latencies as [`EventStream`] keeps them, empty when the chunk has
/// none): what a reader of a trace still being written uses for the chunks written
/// since its last read. On damage, the events before it are kept and it is returned.
pub fn read_event_chunk(
    trace: &TraceFile,
    chunk: &ChunkInfo,
    (scratch, payload): (&mut Vec<u8>, &mut Vec<u8>),
    events: &mut Vec<Event>,
    latencies: &mut Vec<u32>,
) -> Result<(), Damage> {
    events.clear();
    latencies.clear();
    trace.read_payload(chunk, scratch, payload)?;
    decode_payload(chunk, payload, events, latencies)
}

impl<'a> EventStream<'a> {
    /// Prepares the merge over every event chunk of `trace`.
    pub fn new(trace: &'a TraceFile) -> Self {
        Self::from_time(trace, 0)
    }

    /// Prepares the merge over the events of `trace` at or after `from` (see the
    /// module documentation): the chunks that end before it are never read.
    pub fn from_time(trace: &'a TraceFile, from: u64) -> Self {
        let all = trace.chunks();
        let mut per_thread: HashMap<u32, VecDeque<usize>> = HashMap::default();
        for (i, c) in all.iter().enumerate() {
            if c.header.kind == ChunkKind::Events && c.header.t_last >= from {
                per_thread.entry(c.header.stream).or_default().push_back(i);
            }
        }
        // A thread opens at its first event's time, or at the stream's start when its
        // first chunk starts before it: never later than its first event, which is
        // what the merge needs (the events before the start are skipped, so that
        // first event is not known before the chunk is decoded).
        let opens = |chunks: &VecDeque<usize>| all[chunks[0]].header.t_first.max(from);
        let mut pending: Vec<(u64, u32)> = per_thread
            .iter()
            .map(|(tid, chunks)| (opens(chunks), *tid))
            .collect();
        pending.sort_unstable_by(|a, b| b.cmp(a));
        // The order in which the merge will ask for chunks: a thread's first
        // chunk when it opens, every later one at the previous one's last time.
        let mut demand: Vec<(u64, u32, usize)> = Vec::new();
        for (tid, chunks) in &per_thread {
            let mut key = opens(chunks);
            for &i in chunks {
                demand.push((key, *tid, i));
                key = all[i].header.t_last;
            }
        }
        demand.sort_unstable();
        let spare = Arc::new(Spare::default());
        let order = demand.iter().map(|d| d.2).collect();
        let source = Self::start_prefetch(trace, order, &spare).unwrap_or(Source::Inline {
            scratch: Vec::new(),
            payload: Vec::new(),
        });
        let streams = per_thread
            .into_iter()
            .map(|(tid, chunks)| {
                (
                    tid,
                    Stream {
                        chunks,
                        events: Vec::new(),
                        latencies: Vec::new(),
                        pos: 0,
                        from,
                    },
                )
            })
            .collect();
        EventStream {
            trace,
            pending,
            streams,
            heap: BinaryHeap::new(),
            source,
            damage: Vec::new(),
            chunks_done: 0,
            solo: None,
            last_latency: 0,
            spare,
        }
    }

    fn start_prefetch(trace: &TraceFile, order: Vec<usize>, spare: &Arc<Spare>) -> Option<Source> {
        if order.len() < 2 {
            return None;
        }
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 2)
            .min(order.len());
        let mut rx = Vec::with_capacity(workers);
        for w in 0..workers {
            let mut reader = trace.chunk_reader().ok()?;
            let mine: Vec<(usize, ChunkInfo)> = order
                .iter()
                .skip(w)
                .step_by(workers)
                .map(|&i| (i, trace.chunks()[i]))
                .collect();
            let (tx, r) = sync_channel::<Decoded>(2);
            let spare = Arc::clone(spare);
            std::thread::Builder::new()
                .name("memlens-decode".into())
                .spawn(move || {
                    let (mut scratch, mut payload) = (Vec::new(), Vec::new());
                    let mut read = |c: &ChunkInfo, s: &mut Vec<u8>, p: &mut Vec<u8>| {
                        reader.read_payload(c, s, p)
                    };
                    for (i, chunk) in mine {
                        let (s, p) = (&mut scratch, &mut payload);
                        let content = decode_chunk(&chunk, &mut read, s, p, &spare);
                        if tx.send((i, content)).is_err() {
                            return; // the merge was dropped
                        }
                    }
                })
                .ok()?;
            rx.push(r);
        }
        let position = order.iter().enumerate().map(|(p, &i)| (i, p)).collect();
        Some(Source::Prefetch {
            rx,
            position,
            stash: HashMap::default(),
        })
    }

    /// Damage met while decoding so far.
    pub fn damage(&self) -> &[Damage] {
        &self.damage
    }

    /// Takes the damage met so far.
    pub fn take_damage(&mut self) -> Vec<Damage> {
        std::mem::take(&mut self.damage)
    }

    /// Number of event chunks fully consumed (for progress reporting).
    pub fn chunks_done(&self) -> u64 {
        self.chunks_done
    }

    /// How long the allocator call of the event last returned by `next`
    /// took, in ns (recorded with `memlens record --latency`); `None` when
    /// it was not measured.
    pub fn latency_ns(&self) -> Option<u32> {
        latency_from_code(self.last_latency)
    }

    /// The next event in time order with its allocator latency in ns
    /// (`None` when not measured).
    pub fn next_with_latency(&mut self) -> Option<(Event, Option<u32>)> {
        let e = self.next()?;
        Some((e, self.latency_ns()))
    }

    fn fetch(&mut self, index: usize) -> Content {
        let trace = self.trace;
        match &mut self.source {
            Source::Inline { scratch, payload } => {
                let mut read =
                    |c: &ChunkInfo, s: &mut Vec<u8>, p: &mut Vec<u8>| trace.read_payload(c, s, p);
                let chunk = &trace.chunks()[index];
                decode_chunk(chunk, &mut read, scratch, payload, &self.spare)
            }
            Source::Prefetch {
                rx,
                position,
                stash,
            } => {
                if let Some(found) = stash.remove(&index) {
                    return found;
                }
                let worker = position.get(&index).map_or(0, |p| p % rx.len());
                while let Ok((i, content)) = rx[worker].recv() {
                    if i == index {
                        return content;
                    }
                    stash.insert(i, content);
                }
                // The decoding thread is gone: decode here.
                self.source = Source::Inline {
                    scratch: Vec::new(),
                    payload: Vec::new(),
                };
                self.fetch(index)
            }
        }
    }

    /// Loads the next chunk of the solo stream that has events.
    fn refill_solo(&mut self) -> bool {
        let Some(mut stream) = self.solo.take() else {
            return false;
        };
        while let Some(index) = stream.chunks.pop_front() {
            self.chunks_done += 1;
            let (events, latencies, damage) = self.fetch(index);
            if let Some(d) = damage {
                self.damage.push(d);
            }
            self.spare.give(stream.load(events, latencies));
            if stream.has_next() {
                self.solo = Some(stream);
                return true;
            }
        }
        false
    }

    /// Loads the next chunk of `tid` that has events; false when none is left.
    fn refill(&mut self, tid: u32) -> bool {
        loop {
            let Some(index) = self
                .streams
                .get_mut(&tid)
                .and_then(|s| s.chunks.pop_front())
            else {
                return false;
            };
            self.chunks_done += 1;
            let (events, latencies, damage) = self.fetch(index);
            if let Some(d) = damage {
                self.damage.push(d);
            }
            let stream = self.streams.get_mut(&tid).expect("checked above");
            self.spare.give(stream.load(events, latencies));
            if stream.has_next() {
                return true;
            }
        }
    }

    /// Opens every thread that opens no later than the earliest event of the open
    /// ones (or the first to open, when none is), so that the next event emitted is
    /// the earliest of all. A thread's opening time is at most its first event's
    /// (exactly it, unless the stream starts inside its first chunk), so the earliest
    /// event may move back as threads open: the horizon is taken again each time.
    fn open_pending(&mut self) {
        while let Some(&(opens, tid)) = self.pending.last() {
            if self.heap.peek().is_some_and(|Reverse((t, _))| opens > *t) {
                break;
            }
            self.pending.pop();
            if self.refill(tid) {
                let t = self.streams[&tid].next_time();
                self.heap.push(Reverse((t, tid)));
            } else {
                self.streams.remove(&tid);
            }
        }
    }
}

impl Iterator for EventStream<'_> {
    type Item = Event;

    /// The next event. A trace of one thread (or the last thread left) is walked
    /// alone, and that path inlines into the reader's loop: the events' consumer
    /// is the one thread that sees every event, so what it spends per event bounds
    /// a whole read.
    #[inline]
    fn next(&mut self) -> Option<Event> {
        if let Some(stream) = &mut self.solo
            && let Some((e, l)) = stream.take()
        {
            self.last_latency = l;
            return Some(e);
        }
        self.next_merged()
    }
}

impl EventStream<'_> {
    /// [`EventStream::next`] past the end of the solo stream's chunk, or while
    /// several threads are merged by time.
    #[inline(never)]
    fn next_merged(&mut self) -> Option<Event> {
        loop {
            if let Some(stream) = &mut self.solo {
                if let Some((e, l)) = stream.take() {
                    self.last_latency = l;
                    return Some(e);
                }
                if self.refill_solo() {
                    continue;
                }
                return None;
            }
            // One open thread and none to come: walk it alone from now on.
            if self.pending.is_empty() && self.heap.len() == 1 {
                let Reverse((_, tid)) = self.heap.pop()?;
                self.solo = self.streams.remove(&tid);
                continue;
            }
            // Open every thread that opens no later than the earliest event we are
            // about to emit.
            self.open_pending();
            let Reverse((_, tid)) = self.heap.pop()?;
            let stream = self.streams.get_mut(&tid)?;
            let (event, latency) = stream.take()?;
            self.last_latency = latency;
            if stream.has_next() {
                let t = stream.next_time();
                self.heap.push(Reverse((t, tid)));
            } else if self.refill(tid) {
                let t = self.streams[&tid].next_time();
                self.heap.push(Reverse((t, tid)));
            } else {
                self.streams.remove(&tid);
            }
            return Some(event);
        }
    }
}
