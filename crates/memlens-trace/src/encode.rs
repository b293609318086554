//! The record encoder: turns [`Event`]s and [`Meta`] records into the compact
//! byte layout of one chunk payload, keeping the per-chunk delta state.
//!
//! Delta state (previous time, previous address) starts fresh in every chunk,
//! so each chunk decodes on its own. Event times within a chunk never go
//! backwards: the encoder clamps a time that would (which can only happen
//! when a clock is recalibrated) to the previous one.

use crate::chunk::{frame_chunk, frame_columns};
use crate::columns::ColumnEncoder;
use crate::format::{ChunkKind, Codec, tag};
use crate::record::{AllocFn, Event, Meta, TimeNs};
use crate::varint::{put_str, put_u64};

/// Builds one chunk's payload, record by record.
#[derive(Debug)]
pub struct ChunkBuilder {
    kind: ChunkKind,
    stream: u32,
    raw: Vec<u8>,
    records: u32,
    t_first: Option<TimeNs>,
    t_last: TimeNs,
    /// Event chunks are columnar (see `columns.rs`).
    columns: ColumnEncoder,
}

impl ChunkBuilder {
    /// Starts an empty chunk of `kind` for `stream` (the tid for event chunks).
    pub fn new(kind: ChunkKind, stream: u32) -> Self {
        ChunkBuilder {
            kind,
            stream,
            raw: Vec::with_capacity(64 << 10),
            records: 0,
            t_first: None,
            t_last: 0,
            columns: ColumnEncoder::default(),
        }
    }

    /// Bytes of payload so far (before compression).
    pub fn len(&self) -> usize {
        self.raw.len() + self.columns.len()
    }

    /// True when no record has been added since the last [`ChunkBuilder::finish`].
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// The stream this builder writes.
    pub fn stream(&self) -> u32 {
        self.stream
    }

    fn time(&mut self, t: TimeNs) -> TimeNs {
        let first = *self.t_first.get_or_insert(t);
        let t = t.max(self.t_last).max(first);
        self.t_last = t;
        t
    }

    /// Appends an allocation event. The event's `tid` must be this stream's.
    pub fn event(&mut self, event: &Event) {
        self.event_with_latency(event, None);
    }

    /// Appends an allocation event with how long its allocator call took, in
    /// ns (`None`: not measured; see `columns.rs`).
    pub fn event_with_latency(&mut self, event: &Event, latency_ns: Option<u32>) {
        let t = self.event_time(event.time());
        self.columns.push_at(event, t, latency_ns);
    }

    /// Appends an allocation (fields of [`Event::Alloc`] of this stream's
    /// thread, no latency): what [`ChunkBuilder::event`] does, for a caller
    /// that has the fields at hand and does not want to dispatch on the kind
    /// of event twice.
    #[inline]
    pub fn alloc(&mut self, t: TimeNs, addr: u64, size: u64, stack: u32, func: AllocFn) {
        let t = self.event_time(t);
        self.columns.alloc(t, addr, size, stack, func);
    }

    /// [`ColumnEncoder::prefetch`]: a hint for an allocation (`size`) or a free
    /// of `addr` a few events ahead.
    #[inline(always)]
    pub fn prefetch(&self, addr: u64, size: Option<u64>) {
        self.columns.prefetch(addr, size);
    }

    /// [`ChunkBuilder::alloc`] for a free.
    #[inline]
    pub fn free(&mut self, t: TimeNs, addr: u64, stack: u32) {
        let t = self.event_time(t);
        self.columns.free(t, addr, stack);
    }

    /// [`ChunkBuilder::alloc`] for a reallocation.
    #[inline]
    pub fn realloc(&mut self, t: TimeNs, old_addr: u64, new_addr: u64, size: u64, stack: u32) {
        let t = self.event_time(t);
        self.columns.realloc(t, old_addr, new_addr, size, stack);
    }

    /// Counts an event at time `t` and returns the time it is stored at: `t`,
    /// or the chunk's latest when that is later (times never go back within a
    /// chunk). The first event of a chunk starts its columns.
    #[inline(always)]
    fn event_time(&mut self, t: TimeNs) -> TimeNs {
        debug_assert_eq!(self.kind, ChunkKind::Events);
        let t = if self.records == 0 {
            self.t_first = Some(t);
            self.columns.reset(t);
            t
        } else {
            t.max(self.t_last)
        };
        self.t_last = t;
        self.records += 1;
        t
    }

    /// Appends a process-stream record.
    pub fn meta(&mut self, meta: &Meta) {
        let mut body = Vec::with_capacity(32);
        let record_tag = match meta {
            Meta::Process(p) => {
                put_u64(&mut body, u64::from(p.pid));
                put_u64(&mut body, u64::from(p.ppid));
                put_str(&mut body, &p.exe);
                put_u64(&mut body, p.cmdline.len() as u64);
                for arg in &p.cmdline {
                    put_str(&mut body, arg);
                }
                put_u64(&mut body, p.start_unix_ns);
                body.push(p.clock as u8);
                put_str(&mut body, &p.unwinder);
                put_str(&mut body, &p.recorder);
                tag::PROCESS
            }
            Meta::ModuleLoad { t, module } => {
                self.time(*t);
                put_u64(&mut body, *t);
                put_str(&mut body, &module.path);
                put_u64(&mut body, module.load_bias);
                put_u64(&mut body, module.segments.len() as u64);
                for s in &module.segments {
                    put_u64(&mut body, s.vaddr);
                    put_u64(&mut body, s.memsz);
                    put_u64(&mut body, s.file_offset);
                    put_u64(&mut body, u64::from(s.flags));
                }
                put_u64(&mut body, module.build_id.len() as u64);
                body.extend_from_slice(&module.build_id);
                tag::MODULE_LOAD
            }
            Meta::ModuleUnload { t, load_bias, path } => {
                self.time(*t);
                put_u64(&mut body, *t);
                put_u64(&mut body, *load_bias);
                put_str(&mut body, path);
                tag::MODULE_UNLOAD
            }
            Meta::ThreadName { t, tid, name } => {
                self.time(*t);
                put_u64(&mut body, *t);
                put_u64(&mut body, u64::from(*tid));
                put_str(&mut body, name);
                tag::THREAD_NAME
            }
            Meta::ThreadEnd { t, tid } => {
                self.time(*t);
                put_u64(&mut body, *t);
                put_u64(&mut body, u64::from(*tid));
                tag::THREAD_END
            }
            Meta::StackNode { id, parent, ip } => {
                put_u64(&mut body, u64::from(*id));
                put_u64(&mut body, u64::from(id.wrapping_sub(*parent)));
                put_u64(&mut body, *ip);
                tag::STACK_NODE
            }
            Meta::Mark { t, tid, name } => {
                self.time(*t);
                put_u64(&mut body, *t);
                put_u64(&mut body, u64::from(*tid));
                put_str(&mut body, name);
                tag::MARK
            }
            Meta::Warning { t, message } => {
                self.time(*t);
                put_u64(&mut body, *t);
                put_str(&mut body, message);
                tag::WARNING
            }
            Meta::Clock { t, raw } => {
                self.time(*t);
                put_u64(&mut body, *t);
                put_u64(&mut body, *raw);
                tag::CLOCK
            }
            Meta::Totals(t) => {
                for n in [t.allocations, t.frees, t.reallocations, t.requested_bytes] {
                    put_u64(&mut body, n);
                }
                tag::TOTALS
            }
            Meta::Wrapper { pattern } => {
                put_str(&mut body, pattern);
                tag::WRAPPER
            }
            Meta::End { t, how } => {
                self.time(*t);
                put_u64(&mut body, *t);
                put_str(&mut body, how);
                tag::END
            }
            Meta::Mmap(m) => {
                self.time(m.t);
                for n in [m.t, u64::from(m.tid), m.addr, m.len] {
                    put_u64(&mut body, n);
                }
                put_u64(&mut body, u64::from(m.prot));
                put_u64(&mut body, u64::from(m.flags));
                body.push(u8::from(m.file) | u8::from(m.remap) << 1);
                put_u64(&mut body, u64::from(m.stack));
                tag::MMAP
            }
            Meta::Munmap(u) => {
                self.time(u.t);
                for n in [u.t, u64::from(u.tid), u.addr, u.len] {
                    put_u64(&mut body, n);
                }
                tag::MUNMAP
            }
            Meta::Sampling {
                mean_interval_bytes,
            } => {
                put_u64(&mut body, *mean_interval_bytes);
                tag::SAMPLING
            }
            Meta::Attached(a) => {
                put_u64(&mut body, u64::from(a.pid));
                put_u64(&mut body, a.attach_unix_ns);
                put_u64(&mut body, a.process_start_unix_ns);
                tag::ATTACHED
            }
            Meta::TypeName { id, name } => {
                put_u64(&mut body, u64::from(*id));
                put_str(&mut body, name);
                tag::TYPE_NAME
            }
            Meta::FrameName {
                ip,
                function,
                file,
                line,
            } => {
                put_u64(&mut body, *ip);
                put_str(&mut body, function);
                put_str(&mut body, file);
                put_u64(&mut body, u64::from(*line));
                tag::FRAME_NAME
            }
            Meta::TypedStack { id, stack, type_id } => {
                put_u64(&mut body, u64::from(*id));
                put_u64(&mut body, u64::from(id.wrapping_sub(*stack)));
                put_u64(&mut body, u64::from(*type_id));
                tag::TYPED_STACK
            }
            Meta::HeapWalk(w) => {
                for v in [w.t, w.duration_ns, w.pause_ns, w.objects, w.references] {
                    put_u64(&mut body, v);
                }
                tag::HEAP_WALK
            }
            Meta::Contained(c) => {
                put_u64(&mut body, c.container);
                put_u64(&mut body, u64::from(c.container_type));
                put_u64(&mut body, c.members.len() as u64);
                let mut previous = 0;
                for &m in &c.members {
                    put_u64(&mut body, m.wrapping_sub(previous));
                    previous = m;
                }
                tag::CONTAINED
            }
        };
        self.sized(record_tag, &body);
    }

    /// Appends a sized record with an arbitrary tag and body (for record kinds
    /// defined outside this file, such as reference chunks).
    pub fn sized(&mut self, record_tag: u8, body: &[u8]) {
        debug_assert!(record_tag >= tag::SIZED);
        self.raw.push(record_tag);
        put_u64(&mut self.raw, body.len() as u64);
        self.raw.extend_from_slice(body);
        self.records += 1;
    }

    /// Appends raw compact-record bytes built elsewhere and counts them as
    /// `records` records at times `t_first..=t_last`.
    pub fn raw_records(&mut self, bytes: &[u8], records: u32, t_first: TimeNs, t_last: TimeNs) {
        self.time(t_first);
        self.time(t_last);
        self.raw.extend_from_slice(bytes);
        self.records += records;
    }

    /// Frames the chunk into `out` (compressed with `compressor` when given)
    /// and resets the builder for the next chunk of the same stream.
    pub fn finish(&mut self, out: &mut Vec<u8>, compressor: Option<&mut crate::chunk::Compressor>) {
        if self.records == 0 {
            return;
        }
        let codec = if compressor.is_some() {
            Codec::Zstd
        } else {
            Codec::None
        };
        let t_first = self.t_first.unwrap_or(0);
        if self.kind == ChunkKind::Events {
            frame_columns(
                out,
                self.kind,
                self.stream,
                self.records,
                t_first,
                self.t_last,
                self.columns.columns(),
                compressor,
            );
        } else {
            frame_chunk(
                out,
                self.kind,
                self.stream,
                self.records,
                t_first,
                self.t_last,
                &self.raw,
                codec,
                compressor,
            );
        }
        self.raw.clear();
        self.records = 0;
        self.t_first = None;
        self.t_last = 0;
    }
}
