//! [`EventStream`]: every thread's events merged into one time-ordered stream.
//!
//! Each thread's chunks are in time order already (a thread's clock never
//! goes backwards), so a k-way merge over the threads gives the global order.
//! Chunk headers carry each chunk's first and last time, so a thread's stream
//! is only opened when the merge reaches its first chunk's time and dropped
//! when its last chunk is consumed: memory is one decoded chunk per thread
//! alive at a time, independent of the trace length. With one thread the
//! merge is a straight walk over its chunks.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use crate::decode::{Record, RecordDecoder};
use crate::format::ChunkKind;
use crate::reader::{ChunkInfo, Damage, TraceFile};
use crate::record::Event;

struct Stream {
    chunks: VecDeque<ChunkInfo>,
    events: Vec<Event>,
    pos: usize,
}

/// Time-ordered events of a trace.
pub struct EventStream<'a> {
    trace: &'a TraceFile,
    /// Threads not yet opened, by the time of their first chunk (popped from the back).
    pending: Vec<(u64, u32)>,
    streams: HashMap<u32, Stream>,
    /// Open streams keyed by their next event's time, then tid.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    damage: Vec<Damage>,
    scratch: Vec<u8>,
    payload: Vec<u8>,
    chunks_done: u64,
}

impl std::fmt::Debug for EventStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream").finish_non_exhaustive()
    }
}

impl<'a> EventStream<'a> {
    /// Prepares the merge over every event chunk of `trace`.
    pub fn new(trace: &'a TraceFile) -> Self {
        let mut per_thread: HashMap<u32, VecDeque<ChunkInfo>> = HashMap::new();
        for c in trace.chunks() {
            if c.header.kind == ChunkKind::Events {
                per_thread.entry(c.header.stream).or_default().push_back(*c);
            }
        }
        let mut pending: Vec<(u64, u32)> = per_thread
            .iter()
            .map(|(tid, chunks)| (chunks[0].header.t_first, *tid))
            .collect();
        pending.sort_unstable_by(|a, b| b.cmp(a));
        let streams = per_thread
            .into_iter()
            .map(|(tid, chunks)| {
                (
                    tid,
                    Stream {
                        chunks,
                        events: Vec::new(),
                        pos: 0,
                    },
                )
            })
            .collect();
        EventStream {
            trace,
            pending,
            streams,
            heap: BinaryHeap::new(),
            damage: Vec::new(),
            scratch: Vec::new(),
            payload: Vec::new(),
            chunks_done: 0,
        }
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

    /// Loads the next chunk of `tid` that decodes; false when none is left.
    fn refill(&mut self, tid: u32) -> bool {
        let Some(stream) = self.streams.get_mut(&tid) else {
            return false;
        };
        while let Some(chunk) = stream.chunks.pop_front() {
            self.chunks_done += 1;
            stream.events.clear();
            stream.pos = 0;
            if let Err(d) = self
                .trace
                .read_payload(&chunk, &mut self.scratch, &mut self.payload)
            {
                self.damage.push(d);
                continue;
            }
            for record in RecordDecoder::new(&chunk.header, &self.payload) {
                match record {
                    Ok(Record::Event(e)) => stream.events.push(e),
                    Ok(_) => {}
                    Err(e) => {
                        self.damage.push(Damage {
                            offset: chunk.offset,
                            reason: format!(
                                "{} at payload offset {} of the chunk",
                                e.reason, e.offset
                            ),
                            skipped: 0,
                        });
                        break;
                    }
                }
            }
            if !stream.events.is_empty() {
                return true;
            }
        }
        false
    }

    fn open_pending_up_to(&mut self, t: u64) {
        while let Some(&(first, tid)) = self.pending.last() {
            if first > t {
                break;
            }
            self.pending.pop();
            if self.refill(tid) {
                let s = &self.streams[&tid];
                self.heap.push(Reverse((s.events[0].time(), tid)));
            } else {
                self.streams.remove(&tid);
            }
        }
    }
}

impl Iterator for EventStream<'_> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            let horizon = match self.heap.peek() {
                Some(Reverse((t, _))) => *t,
                None => match self.pending.last() {
                    Some(&(t, _)) => t,
                    None => return None,
                },
            };
            // Open every thread whose first chunk starts no later than the
            // earliest event we are about to emit.
            self.open_pending_up_to(horizon);
            let Reverse((_, tid)) = self.heap.pop()?;
            let stream = self.streams.get_mut(&tid)?;
            let event = stream.events[stream.pos];
            stream.pos += 1;
            if stream.pos < stream.events.len() {
                let t = stream.events[stream.pos].time();
                self.heap.push(Reverse((t, tid)));
            } else if self.refill(tid) {
                let t = self.streams[&tid].events[0].time();
                self.heap.push(Reverse((t, tid)));
            } else {
                self.streams.remove(&tid);
            }
            return Some(event);
        }
    }
}
