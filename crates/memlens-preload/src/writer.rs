//! The writer: drains every thread's ring, turns raw slots into trace
//! records, and writes checksummed chunks to the trace file. Who runs its
//! rounds (its own thread, or in a sampled recording the program's threads)
//! is `rounds.rs`'s.
//!
//! A round runs every 10 ms (sooner when a producer's ring fills), maps each
//! thread's local stack ids to global ids in the trace's prefix tree,
//! converts raw ticks to nanoseconds, writes module loads/unloads, thread
//! names, marks and periodic marks, and closes every open chunk at least
//! every `MEMLENS_FLUSH_MS` (100 ms), so a SIGKILL loses at most that much.
//! Threads that call `exit`, `_exit` or `exec` ask for a synchronous flush
//! and wait (bounded) for the answer.

use core::sync::atomic::Ordering;
use rustc_hash::FxHashMap as HashMap;

use memlens_trace::format::ChunkKind;
use memlens_trace::{ChunkBuilder, Event, Meta, Module};

use crate::locked::Locked;
use crate::output::{self, Output};
use crate::slot::{Decoder, Record};
use crate::thread::ThreadState;
use crate::ticks::TickConverter;
use crate::{clock, modules, recording, registry, sampling, session, wakeup};

/// The writer, behind a mutex that the writer thread holds for one round at
/// a time; `fork` (so the child never inherits it mid-round) takes it too.
/// The allocation hot path never does.
static WRITER: Locked<Option<Writer>> = Locked::new(None);

/// Installs the writer.
pub fn install(w: Writer) {
    WRITER.with(|slot| *slot = Some(w));
}

/// Runs `f` on the writer, if there is one.
pub fn with_writer<R>(f: impl FnOnce(&mut Writer) -> R) -> Option<R> {
    WRITER.with(|slot| slot.as_mut().map(f))
}

/// Runs a round unless one is under way (on another thread, or further up
/// this one's stack); false only then (true when there is no writer: there
/// is nothing to wait for).
pub fn try_round() -> bool {
    WRITER
        .try_with(|slot| {
            if let Some(w) = slot.as_mut() {
                w.round();
            }
        })
        .is_some()
}

/// Takes the writer out (the session ends: `rounds::stop`).
pub fn take() -> Option<Writer> {
    WRITER.with(Option::take)
}

/// Closes the trace's descriptor of a writer taken out.
pub fn close(w: Writer) {
    // SAFETY: closing the trace's descriptor, which only the writer used.
    unsafe { libc::close(w.out.fd) };
}

/// `fork` prepare: hold the writer's lock (waiting for a round to end).
pub fn before_fork() {
    WRITER.lock();
}

/// `fork`, parent side.
pub fn after_fork_parent() {
    WRITER.unlock();
}

/// `fork`, child side: the parent's writer is not ours. Its memory is
/// abandoned (shared with the parent until written), but its copy of the
/// parent's trace descriptor is closed.
pub fn after_fork_child() {
    if let Some(parent) = WRITER.take_in_child(None) {
        // SAFETY: closing this process's copy of the descriptor; nothing in
        // the child uses it.
        unsafe { libc::close(parent.out.fd) };
        core::mem::forget(parent);
    }
}

struct ThreadOut {
    tid: u32,
    builder: ChunkBuilder,
    local_to_global: Vec<u32>,
    name: [u8; 16],
}

/// The writer's private state.
pub struct Writer {
    out: Output,
    compressor: Option<memlens_trace::chunk::Compressor>,
    process: ChunkBuilder,
    threads: HashMap<usize, ThreadOut>,
    stack_nodes: HashMap<(u32, u64), u32>,
    next_stack: u32,
    modules: Vec<Module>,
    ticks: TickConverter,
    framed: Vec<u8>,
    last_flush: u64,
    mark_every: u64,
    next_mark: u64,
    flush_ns: u64,
    states: Vec<*mut ThreadState>,
    ended: bool,
    failed: bool,
    /// Slots carry allocator latencies (`MEMLENS_LATENCY=1`).
    latency: bool,
    /// Reads the rings' slots back (in the hooks' latency mode).
    decoder: Decoder,
    /// The events written so far, for the totals record at the end.
    totals: memlens_trace::Totals,
    /// The latest event time written, ns.
    latest_ns: u64,
}

/// Event chunks close at 1 MiB of columns: larger chunks compress better
/// (the prediction state starts empty in every chunk).
const CHUNK_BYTES: usize = 1 << 20;

/// How many slots ahead the drain asks for an event's table lines: far enough
/// for a line to arrive from memory while the events in between are encoded.
const PREFETCH_AHEAD: usize = 8;

impl Writer {
    /// Creates the writer for an opened trace and writes the header and
    /// process record.
    pub fn new(out: Output, info: memlens_trace::ProcessInfo, raw0: u64, mono0: u64) -> Writer {
        let cfg = session::config();
        // The hooks' capture modes, set before recording starts.
        recording::set_captures(cfg.free_stacks, cfg.mmap);
        sampling::configure(cfg.sample_bytes, cfg.sample_seed);
        let mut w = Writer {
            out,
            compressor: if cfg.compress {
                memlens_trace::chunk::compressor().ok()
            } else {
                None
            },
            process: ChunkBuilder::new(ChunkKind::Process, 0),
            threads: HashMap::default(),
            stack_nodes: HashMap::default(),
            next_stack: 1,
            modules: Vec::new(),
            ticks: TickConverter::start(clock::uses_tsc(), raw0, mono0, || {
                (clock::now_raw(), clock::monotonic_ns())
            }),
            framed: Vec::with_capacity(1 << 20),
            last_flush: mono0,
            mark_every: cfg.mark_every_ns,
            next_mark: cfg.mark_every_ns,
            flush_ns: cfg.flush_ns,
            states: Vec::new(),
            ended: false,
            failed: false,
            latency: cfg.latency,
            decoder: Decoder::new(cfg.latency),
            totals: memlens_trace::Totals::default(),
            latest_ns: 0,
        };
        let header = memlens_trace::header::header_bytes();
        w.failed = !output::write_all(w.out.fd, &header);
        w.process.meta(&Meta::Process(info));
        if cfg.sample_bytes > 0 {
            w.process.meta(&Meta::Sampling {
                mean_interval_bytes: cfg.sample_bytes,
            });
        }
        for pattern in &cfg.wrappers {
            w.process.meta(&Meta::Wrapper {
                pattern: pattern.clone(),
            });
        }
        let t = w.now_ns();
        w.apply_modules(t, modules::scan().into_iter().map(|s| s.module).collect());
        w.flush_all();
        w
    }

    /// Adds a record to the process stream (written with the next flush).
    pub fn note(&mut self, meta: &Meta) {
        self.process.meta(meta);
    }

    fn now_ns(&self) -> u64 {
        self.ticks.convert(clock::now_raw())
    }

    fn write_framed(&mut self) {
        if !self.framed.is_empty() {
            if !self.failed && !output::write_all(self.out.fd, &self.framed) {
                self.failed = true;
            }
            self.framed.clear();
        }
    }

    /// Records the differences between the last module map and `now`, a
    /// map taken at time `t`.
    fn apply_modules(&mut self, t: u64, now: Vec<Module>) {
        for m in &self.modules {
            if !now
                .iter()
                .any(|n| n.load_bias == m.load_bias && n.path == m.path)
            {
                self.process.meta(&Meta::ModuleUnload {
                    t,
                    load_bias: m.load_bias,
                    path: m.path.clone(),
                });
            }
        }
        for n in &now {
            if !self
                .modules
                .iter()
                .any(|m| n.load_bias == m.load_bias && n.path == m.path)
            {
                self.process.meta(&Meta::ModuleLoad {
                    t,
                    module: n.clone(),
                });
            }
        }
        self.modules = now;
    }

    /// The trace's stack node for the stack `parent` extended by the innermost
    /// return address `ip`, written to the process stream when new.
    fn node(&mut self, parent: u32, ip: u64) -> u32 {
        *self.stack_nodes.entry((parent, ip)).or_insert_with(|| {
            let id = self.next_stack;
            self.next_stack += 1;
            self.process.meta(&Meta::StackNode { id, parent, ip });
            id
        })
    }

    /// Drains one thread's ring.
    fn drain(&mut self, state_ptr: *mut ThreadState) {
        // SAFETY: states stay allocated until the writer itself retires them.
        let state = unsafe { &*state_ptr };
        let (i, head) = state.ring.readable();
        if i == head {
            return;
        }
        let key = state_ptr as usize;
        if !self.threads.contains_key(&key) {
            let t = self.now_ns();
            let name = read_comm(state.tid);
            self.process.meta(&Meta::ThreadName {
                t,
                tid: state.tid,
                name: name_str(&name),
            });
            self.threads.insert(
                key,
                ThreadOut {
                    tid: state.tid,
                    builder: ChunkBuilder::new(ChunkKind::Events, state.tid),
                    local_to_global: vec![0],
                    name,
                },
            );
        }
        let mut written = 0u64;
        let Some(mut t) = self.threads.remove(&key) else {
            return;
        };
        let mut slots = state.ring.slots(i, head);
        let mut next_look = 256;
        // The plain paths' state in locals, written back after the loop: the
        // column writes store through pointers that could alias `self`, so
        // fields would be loaded and stored again for every event.
        let newest = self.ticks.newest();
        let mut latest_ns = self.latest_ns;
        let mut totals = self.totals;
        loop {
            // The encoder's tables are read in no predictable order: their lines
            // for an event a few slots ahead are asked for now (see
            // `ChunkBuilder::prefetch`).
            if let Some((addr, size)) = slots
                .ahead(PREFETCH_AHEAD)
                .and_then(|s| self.decoder.lookup(s))
            {
                t.builder.prefetch(addr, size);
            }
            let Some(first) = slots.next_ref() else {
                break;
            };
            if written >= next_look {
                next_look = written + 256;
                self.chunk_if_full(&mut t.builder);
            }
            let stack = |local: u32| t.local_to_global.get(local as usize).copied().unwrap_or(0);
            // Allocations and frees without latencies go straight to their own
            // column paths: their kinds come in no predictable order, and every
            // dispatch on one costs a mispredicted branch.
            if let Some((time, addr, size, func, local)) = self.decoder.plain_alloc(first) {
                let time = newest
                    .convert(time)
                    .unwrap_or_else(|| self.ticks.convert(time));
                latest_ns = latest_ns.max(time);
                totals.count_alloc(size);
                t.builder.alloc(time, addr, size, stack(local), func);
                written += 1;
                continue;
            }
            if let Some((time, addr, local)) = self.decoder.plain_free(first) {
                let time = newest
                    .convert(time)
                    .unwrap_or_else(|| self.ticks.convert(time));
                latest_ns = latest_ns.max(time);
                totals.count_free();
                t.builder.free(time, addr, stack(local));
                written += 1;
                continue;
            }
            let first = *first;
            let record = self.decoder.decode_from(first, &mut slots);
            let tid = t.tid;
            let event = match record {
                Record::Node {
                    local_id,
                    parent,
                    ip,
                } => {
                    let global = self.node(stack(parent), ip);
                    let local = local_id as usize;
                    if t.local_to_global.len() <= local {
                        t.local_to_global.resize(local + 1, 0);
                    }
                    t.local_to_global[local] = global;
                    continue;
                }
                Record::Unknown => continue,
                Record::Mmap {
                    time,
                    addr,
                    len,
                    prot,
                    flags,
                    file,
                    remap,
                    stack: local,
                } => {
                    let mapping = memlens_trace::Mapping {
                        t: self.ticks.convert(time),
                        tid,
                        addr,
                        len,
                        prot,
                        flags,
                        file,
                        remap,
                        stack: stack(local),
                    };
                    self.process.meta(&Meta::Mmap(mapping));
                    continue;
                }
                Record::Munmap { time, addr, len } => {
                    let t = self.ticks.convert(time);
                    let unmapping = memlens_trace::Unmapping { t, tid, addr, len };
                    self.process.meta(&Meta::Munmap(unmapping));
                    continue;
                }
                // A reallocation without latencies (allocations and frees took
                // the paths above).
                Record::Realloc {
                    time,
                    old_addr,
                    new_addr,
                    size,
                    stack: local,
                    ..
                } if !self.latency => {
                    let time = self.ticks.convert(time);
                    latest_ns = latest_ns.max(time);
                    totals.count_realloc(size);
                    t.builder
                        .realloc(time, old_addr, new_addr, size, stack(local));
                    written += 1;
                    continue;
                }
                Record::Alloc {
                    time,
                    addr,
                    size,
                    func,
                    stack: local,
                    ..
                } => Event::Alloc {
                    t: self.ticks.convert(time),
                    tid,
                    addr,
                    size,
                    stack: stack(local),
                    func,
                },
                Record::Free {
                    time,
                    addr,
                    stack: local,
                    ..
                } => Event::Free {
                    t: self.ticks.convert(time),
                    tid,
                    addr,
                    stack: stack(local),
                },
                Record::Realloc {
                    time,
                    old_addr,
                    new_addr,
                    size,
                    stack: local,
                    ..
                } => Event::Realloc {
                    t: self.ticks.convert(time),
                    tid,
                    old_addr,
                    new_addr,
                    size,
                    stack: stack(local),
                },
            };
            // Latency mode.
            latest_ns = latest_ns.max(event.time());
            totals.count(&event);
            let ns = record.call_interval().map_or(0, |(start, end)| {
                self.ticks
                    .span(start, end)
                    .min(u64::from(memlens_trace::columns::MAX_LATENCY_NS))
            });
            t.builder.event_with_latency(&event, Some(ns as u32));
            written += 1;
        }
        self.latest_ns = latest_ns;
        self.totals = totals;
        state.ring.release(head);
        wakeup::room_made();
        self.chunk_if_full(&mut t.builder);
        self.threads.insert(key, t);
        if self.framed.len() >= CHUNK_BYTES {
            self.write_framed();
        }
    }

    /// Closes `builder`'s chunk once it holds [`CHUNK_BYTES`].
    fn chunk_if_full(&mut self, builder: &mut ChunkBuilder) {
        if builder.len() >= CHUNK_BYTES {
            builder.finish(&mut self.framed, self.compressor.as_mut());
        }
    }

    fn retire_exited(&mut self) {
        let t = self.now_ns();
        let mut i = 0;
        while i < self.states.len() {
            let p = self.states[i];
            // SAFETY: still registered, so still allocated.
            let state = unsafe { &*p };
            let (tail, head) = state.ring.readable();
            if state.exited.load(Ordering::Acquire) && tail == head {
                // SAFETY: exit_name was written before `exited` was set.
                let name = unsafe { *state.exit_name.get() };
                let key = p as usize;
                if let Some(mut out) = self.threads.remove(&key) {
                    if name != out.name && name[0] != 0 {
                        self.process.meta(&Meta::ThreadName {
                            t,
                            tid: out.tid,
                            name: name_str(&name),
                        });
                    }
                    out.builder
                        .finish(&mut self.framed, self.compressor.as_mut());
                }
                self.process.meta(&Meta::ThreadEnd { t, tid: state.tid });
                registry::remove(p);
                self.states.swap_remove(i);
                // The thread set `exited` in its key destructor, after which
                // it never touches this state again (glibc cleared the key
                // first, so a late allocation makes a new state): free it.
                // SAFETY: no one else holds the state any more.
                unsafe {
                    (*p).ring.unmap();
                    drop(Box::from_raw(p));
                }
                continue;
            }
            i += 1;
        }
    }

    fn marks(&mut self) {
        for (raw, tid, name) in session::take_marks() {
            let t = self.ticks.convert(raw);
            self.process.meta(&Meta::Mark { t, tid, name });
        }
        if self.mark_every > 0 {
            let now = self.now_ns();
            while self.next_mark <= now {
                let t = self.next_mark;
                self.process.meta(&Meta::Mark {
                    t,
                    tid: 0,
                    name: format!("+{}", human_ns(t)),
                });
                self.next_mark += self.mark_every;
            }
        }
    }

    fn flush_all(&mut self) {
        let mut keys: Vec<usize> = self.threads.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            if let Some(t) = self.threads.get_mut(&k) {
                t.builder.finish(&mut self.framed, self.compressor.as_mut());
            }
        }
        self.process
            .finish(&mut self.framed, self.compressor.as_mut());
        self.write_framed();
        self.last_flush = clock::monotonic_ns();
    }

    /// One round: drain everything, emit metadata, flush when due.
    pub fn round(&mut self) {
        if self.ended {
            // The End record is written: the process is exiting, and a chunk
            // cut short by its death would read as damage. Discard what is
            // still produced (so no thread ever waits on a full ring) and
            // answer flush requests.
            registry::snapshot(&mut self.states);
            for &p in &self.states {
                // SAFETY: registered states stay allocated while registered.
                let ring = unsafe { &(*p).ring };
                let (_, head) = ring.readable();
                ring.release(head);
            }
            wakeup::room_made();
            wakeup::complete_flush(wakeup::flush_requested());
            return;
        }
        let raw = clock::now_raw();
        let mono = clock::monotonic_ns();
        if self.ticks.calibrate(raw, mono) {
            let t = self.ticks.convert(raw);
            self.process.meta(&Meta::Clock { t, raw });
        }
        for (raw, map) in session::take_module_snapshots() {
            let t = self.ticks.convert(raw);
            self.apply_modules(t, map);
        }
        let req = wakeup::flush_requested();
        registry::snapshot(&mut self.states);
        let states = std::mem::take(&mut self.states);
        for &s in &states {
            self.drain(s);
        }
        self.states = states;
        self.retire_exited();
        self.marks();
        for warning in session::take_warnings() {
            let t = self.now_ns();
            self.process.meta(&Meta::Warning {
                t,
                message: warning,
            });
        }
        let dropped = recording::take_dropped();
        if dropped > 0 {
            let t = self.now_ns();
            self.process.meta(&Meta::Warning {
                t,
                message: format!(
                    "{dropped} events were dropped because the writer could not keep up for over two seconds"
                ),
            });
        }
        let flush_due = mono.saturating_sub(self.last_flush) >= self.flush_ns;
        let requested = wakeup::flush_pending(req);
        if flush_due || requested || self.process.len() >= CHUNK_BYTES {
            if requested
                && let Some((how, raw)) = wakeup::end_requested()
                && !self.ended
            {
                self.ended = true;
                // When the program called `exit`, and never before an event written
                // so far (threads may still allocate after that call).
                let t = self.ticks.convert(raw).max(self.latest_ns);
                let how = match how {
                    wakeup::END_UNDERSCORE_EXIT => "_exit",
                    wakeup::END_DETACH => "detach",
                    _ => "exit",
                };
                self.process.meta(&Meta::Totals(self.totals));
                self.process.meta(&Meta::End { t, how: how.into() });
            }
            self.flush_all();
        }
        if requested {
            wakeup::complete_flush(req);
        }
    }
}

fn read_comm(tid: u32) -> [u8; 16] {
    let mut name = [0u8; 16];
    let path = format!("/proc/self/task/{tid}/comm\0");
    // SAFETY: open/read/close on a NUL-terminated path into a local buffer.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            let n = libc::read(fd, name.as_mut_ptr().cast(), 15);
            libc::close(fd);
            if n > 0 {
                let n = n as usize;
                if name[n - 1] == b'\n' {
                    name[n - 1] = 0;
                }
            }
        }
    }
    name
}

fn name_str(name: &[u8; 16]) -> String {
    let n = name.iter().position(|&b| b == 0).unwrap_or(16);
    String::from_utf8_lossy(&name[..n]).into_owned()
}

fn human_ns(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", ns / 1_000)
    }
}
