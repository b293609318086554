//! The agent's state and its JVMTI event callbacks.
//!
//! Every allocation (`SampledObjectAlloc`) gets a fresh 64-bit tag (its identity,
//! written as the event's address), its class id (cached in the tag of the class
//! object, so only a class's first allocation asks for its signature), and its
//! stack (`GetStackTrace`, interned per thread, then agent-wide). Deaths arrive as
//! `ObjectFree(tag)`; since JDK 16 the JVM posts them after the collection from its
//! service thread, so each free is timestamped just before the end of the latest
//! collection (the paper's snapshot points are the `GC n start`/`GC n end` marks).
//!
//! # Locks and the JVM
//!
//! The callbacks take only the agent's own mutexes, and **no agent lock is ever held
//! across a call into the JVM**: method and class names are looked up first, the
//! locks are taken afterwards for pure Rust work (hash lookups, a `Vec` push). The
//! only other holders of those locks are the writer thread, which never calls into the
//! JVM, and the heap walker ([`crate::heap_walk`]), which holds none across a JVM call
//! either (its heap callback, run at a safepoint, takes no lock at all). So a callback
//! waiting for a lock waits for code that cannot itself wait for a safepoint or for
//! the garbage collector, and cannot deadlock with them (the hang seen with a lock held
//! across a JVMTI call, in the research notes, cannot happen).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use memlens_trace::{AllocFn, Event, Meta, StackId, TimeNs};
use rustc_hash::FxHashMap;

use crate::ffi::{self, FrameInfo, JInt, JLong, JMethodId, JObject, Jvmti, JvmtiError};
use crate::heap_walk::{WALK_TAG, Walks};
use crate::interner::{Interner, JavaFrame, MethodInfo};
use crate::names;
use crate::options::Options;

/// Tags with this bit name class objects (the class id is in the low 32 bits);
/// object tags are sequence numbers below it (and below
/// [`WALK_TAG`](crate::heap_walk::WALK_TAG)).
pub(crate) const CLASS_TAG: JLong = 1 << 62;

/// How long the JVM's exit waits for the trace to be written.
pub const EXIT_WAIT: Duration = Duration::from_secs(2);

/// One thread's events, drained by the writer.
#[derive(Debug, Default)]
pub struct Buffer {
    /// Events in the thread's time order.
    pub events: Vec<Event>,
}

/// What every thread shares with the writer besides the per-thread buffers.
#[derive(Debug, Default)]
pub struct Shared {
    /// Records from callbacks (marks, thread names, thread ends).
    pub metas: Vec<Meta>,
    /// Every thread's buffer.
    pub buffers: Vec<Arc<Mutex<Buffer>>>,
    /// Set at VM death: the writer drains, ends the trace and stops.
    pub stop: bool,
    /// Set by the writer when the trace is complete.
    pub done: bool,
}

/// The agent-wide state.
pub struct Agent {
    /// The JVMTI environment.
    pub jvmti: Jvmti,
    /// The options it was started with.
    pub options: Options,
    start: Instant,
    next_tag: AtomicU64,
    /// The time frees are given: just before the end of the latest collection
    /// (`u64::MAX` before the first one).
    free_time: AtomicU64,
    gc_count: AtomicU64,
    /// Set at VM death: callbacks record nothing more.
    pub stopped: AtomicBool,
    methods: Mutex<FxHashMap<usize, Arc<MethodInfo>>>,
    /// The agent-wide interning tables.
    pub interner: Mutex<Interner>,
    /// Shared with the writer.
    pub shared: Mutex<Shared>,
    /// Wakes the writer (stop) and the exiting JVM (done).
    pub signal: Condvar,
    /// The heap walks' schedule.
    pub walks: Walks,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").finish_non_exhaustive()
    }
}

/// Locks a mutex even if a thread panicked while holding it (the data stays usable).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A per-thread cache key: the type id and the frames as (method, bytecode index).
type StackKey = (u32, Box<[(usize, i64)]>);

struct Local {
    tid: u32,
    /// Whether the thread's name was recorded (retried until the JVM gives it).
    named: bool,
    buffer: Arc<Mutex<Buffer>>,
    /// (type id, frames as (method, bytecode index)) → stack id.
    cache: FxHashMap<StackKey, StackId>,
    frames: Vec<FrameInfo>,
    key: Vec<(usize, i64)>,
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

impl Agent {
    /// A new agent of JVM `vm`; `start` is time 0 of the trace.
    pub fn new(jvmti: Jvmti, vm: ffi::JavaVm, options: Options, start: Instant) -> Agent {
        Agent {
            walks: Walks::new(vm, options.heap_walks),
            jvmti,
            options,
            start,
            next_tag: AtomicU64::new(1),
            free_time: AtomicU64::new(u64::MAX),
            gc_count: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            methods: Mutex::new(FxHashMap::default()),
            interner: Mutex::new(Interner::default()),
            shared: Mutex::new(Shared::default()),
            signal: Condvar::new(),
        }
    }

    /// Nanoseconds since the agent started.
    pub fn now(&self) -> TimeNs {
        self.start.elapsed().as_nanos() as TimeNs
    }

    fn push_meta(&self, meta: Meta) {
        lock(&self.shared).metas.push(meta);
    }

    /// Runs `f` with this thread's state, creating it (and naming the thread from
    /// `thread`, when given) on first use. Does nothing if the state is in use (a
    /// re-entrant callback).
    fn with_local<R>(&self, thread: Option<JObject>, f: impl FnOnce(&mut Local) -> R) -> Option<R> {
        LOCAL
            .try_with(|cell| {
                let mut slot = cell.try_borrow_mut().ok()?;
                if slot.is_none() {
                    let buffer = Arc::new(Mutex::new(Buffer::default()));
                    lock(&self.shared).buffers.push(buffer.clone());
                    *slot = Some(Local {
                        tid: gettid(),
                        named: false,
                        buffer,
                        cache: FxHashMap::default(),
                        frames: vec![FrameInfo::default(); self.options.depth as usize],
                        key: Vec::with_capacity(self.options.depth as usize),
                    });
                }
                let local = slot.as_mut()?;
                if !local.named
                    && let Some(name) = thread.and_then(|t| self.thread_name(t))
                {
                    local.named = true;
                    self.push_meta(Meta::ThreadName {
                        t: self.now(),
                        tid: local.tid,
                        name,
                    });
                }
                Some(f(local))
            })
            .ok()
            .flatten()
    }

    fn thread_name(&self, thread: JObject) -> Option<String> {
        if thread.is_null() {
            return None;
        }
        let mut info = ffi::ThreadInfo {
            name: std::ptr::null_mut(),
            priority: 0,
            is_daemon: 0,
            thread_group: std::ptr::null_mut(),
            context_class_loader: std::ptr::null_mut(),
        };
        // SAFETY: a live thread reference from the callback; the name is ours to free.
        unsafe {
            if self.jvmti.get_thread_info(thread, &mut info) != ffi::JVMTI_ERROR_NONE {
                return None;
            }
            self.jvmti.take_string(info.name)
        }
    }

    /// The class id of `klass`, from its tag or, the first time, from its signature.
    pub(crate) fn class_id(&self, klass: JObject) -> u32 {
        let mut tag: JLong = 0;
        // SAFETY: `klass` is a live local reference given to the callback.
        unsafe {
            if self.jvmti.get_tag(klass, &mut tag) == ffi::JVMTI_ERROR_NONE && tag & CLASS_TAG != 0
            {
                return tag as u32;
            }
        }
        let mut signature = std::ptr::null_mut();
        // SAFETY: as above; the signature is ours to free.
        let name = unsafe {
            if self
                .jvmti
                .get_class_signature(klass, &mut signature, std::ptr::null_mut())
                != ffi::JVMTI_ERROR_NONE
            {
                return 0;
            }
            self.jvmti.take_string(signature)
        };
        let Some(name) = name else { return 0 };
        let id = lock(&self.interner).type_id(&names::class_name(&name));
        // SAFETY: as above.
        unsafe { self.jvmti.set_tag(klass, CLASS_TAG | JLong::from(id)) };
        id
    }

    /// What the agent knows about `method`, looked up once.
    fn method_info(&self, method: JMethodId) -> Arc<MethodInfo> {
        if let Some(info) = lock(&self.methods).get(&(method as usize)) {
            return info.clone();
        }
        let j = self.jvmti;
        let mut name = std::ptr::null_mut();
        let mut klass: JObject = std::ptr::null_mut();
        let mut signature = std::ptr::null_mut();
        let mut file = std::ptr::null_mut();
        let mut count: JInt = 0;
        let mut table: *mut ffi::LineNumberEntry = std::ptr::null_mut();
        // SAFETY: `method` comes from GetStackTrace in this callback (its class is
        // loaded); every out-pointer is valid and JVMTI's allocations are freed.
        let info = unsafe {
            let method_name = if j.get_method_name(
                method,
                &mut name,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            ) == ffi::JVMTI_ERROR_NONE
            {
                j.take_string(name)
            } else {
                None
            };
            let mut class_signature = None;
            let mut source = None;
            if j.get_method_declaring_class(method, &mut klass) == ffi::JVMTI_ERROR_NONE {
                if j.get_class_signature(klass, &mut signature, std::ptr::null_mut())
                    == ffi::JVMTI_ERROR_NONE
                {
                    class_signature = j.take_string(signature);
                }
                if j.get_source_file_name(klass, &mut file) == ffi::JVMTI_ERROR_NONE {
                    source = j.take_string(file);
                }
            }
            let mut lines = Vec::new();
            if j.get_line_number_table(method, &mut count, &mut table) == ffi::JVMTI_ERROR_NONE
                && !table.is_null()
            {
                for e in std::slice::from_raw_parts(table, count.max(0) as usize) {
                    lines.push((e.start_location, e.line_number.max(0) as u32));
                }
                j.deallocate(table.cast());
            }
            MethodInfo {
                function: names::method_name(
                    class_signature.as_deref().unwrap_or("L<unknown>;"),
                    method_name.as_deref().unwrap_or("<unknown>"),
                ),
                file: source.unwrap_or_default(),
                lines,
            }
        };
        lock(&self.methods)
            .entry(method as usize)
            .or_insert_with(|| Arc::new(info))
            .clone()
    }

    /// `SampledObjectAlloc`: one allocation.
    fn on_alloc(&self, thread: JObject, object: JObject, klass: JObject, size: JLong) {
        if self.stopped.load(Ordering::Relaxed) {
            return;
        }
        let t = self.now();
        let tag = self.next_tag.fetch_add(1, Ordering::Relaxed);
        if self.options.frees || self.walks.enabled() {
            // SAFETY: `object` is the live object the event is about.
            unsafe { self.jvmti.set_tag(object, tag as JLong) };
        }
        let type_id = self.class_id(klass);
        self.with_local(Some(thread), |local| {
            let mut count: JInt = 0;
            if !local.frames.is_empty() {
                // SAFETY: the buffer holds `depth` frames.
                let rc: JvmtiError = unsafe {
                    self.jvmti.get_stack_trace(
                        thread,
                        0,
                        local.frames.len() as JInt,
                        local.frames.as_mut_ptr(),
                        &mut count,
                    )
                };
                if rc != ffi::JVMTI_ERROR_NONE {
                    count = 0;
                }
            }
            let frames = &local.frames[..count.clamp(0, local.frames.len() as JInt) as usize];
            local.key.clear();
            local
                .key
                .extend(frames.iter().map(|f| (f.method as usize, f.location)));
            let stack = match local.cache.get(&(type_id, &*local.key) as &dyn CacheKey) {
                Some(&s) => s,
                None => {
                    let java: Vec<JavaFrame> = frames
                        .iter()
                        .map(|f| JavaFrame {
                            method: f.method as usize,
                            info: self.method_info(f.method),
                            location: f.location,
                        })
                        .collect();
                    let s = lock(&self.interner).stack(&java, type_id);
                    local
                        .cache
                        .insert((type_id, local.key.clone().into_boxed_slice()), s);
                    s
                }
            };
            lock(&local.buffer).events.push(Event::Alloc {
                t,
                tid: local.tid,
                addr: address_of(tag),
                size: size.max(0) as u64,
                stack,
                func: AllocFn::Malloc,
            });
        });
    }

    /// `ObjectFree`: an object tagged by [`Agent::on_alloc`] was collected.
    fn on_free(&self, tag: JLong) {
        if tag & (CLASS_TAG | WALK_TAG) != 0 || tag <= 0 || self.stopped.load(Ordering::Relaxed) {
            return;
        }
        let t = match self.free_time.load(Ordering::Relaxed) {
            u64::MAX => self.now(),
            t => t,
        };
        self.with_local(None, |local| {
            lock(&local.buffer).events.push(Event::Free {
                t,
                tid: local.tid,
                addr: address_of(tag as u64),
                stack: 0,
            });
        });
    }

    fn on_gc_start(&self) {
        let t = self.now();
        let n = self.gc_count.fetch_add(1, Ordering::Relaxed) + 1;
        self.free_time.store(t, Ordering::Relaxed);
        self.push_meta(Meta::Mark {
            t,
            tid: 0,
            name: format!("GC {n} start"),
        });
    }

    fn on_gc_finish(&self) {
        let t = self.now();
        let n = self.gc_count.load(Ordering::Relaxed);
        // Frees posted after this collection happened inside it: just before its end.
        let start = self.free_time.load(Ordering::Relaxed);
        let free_t = t
            .saturating_sub(1)
            .max(if start == u64::MAX { 0 } else { start });
        self.free_time.store(free_t, Ordering::Relaxed);
        self.push_meta(Meta::Mark {
            t,
            tid: 0,
            name: format!("GC {n} end"),
        });
        self.walks.collection_finished(t);
    }

    fn on_thread_end(&self) {
        if self.stopped.load(Ordering::Relaxed) {
            return;
        }
        let t = self.now();
        self.push_meta(Meta::ThreadEnd { t, tid: gettid() });
    }

    /// `VMDeath`: stop recording, let the writer finish, wait for it at most
    /// [`EXIT_WAIT`].
    fn on_vm_death(&self) {
        // The last heap walk, while the writer still drains.
        self.walks.finish(self.options.quiet);
        self.stopped.store(true, Ordering::SeqCst);
        // ObjectFree stays enabled: disabling it makes the JVM flush the pending frees
        // (`JvmtiTagMap::flush_object_free_events`), which waits without a safepoint
        // check and deadlocks with a safepoint another thread has asked for (seen on
        // JDK 17 as a hung exit in about one run in 25). Frees that arrive now are
        // ignored (`stopped`).
        for e in [
            ffi::event::SAMPLED_OBJECT_ALLOC,
            ffi::event::GC_START,
            ffi::event::GC_FINISH,
            ffi::event::THREAD_END,
        ] {
            // SAFETY: live phase; disabling an event that was never enabled is harmless.
            unsafe { self.jvmti.set_event_mode(ffi::JVMTI_DISABLE, e) };
        }
        let deadline = Instant::now() + EXIT_WAIT;
        let mut shared = lock(&self.shared);
        shared.stop = true;
        self.signal.notify_all();
        while !shared.done {
            let now = Instant::now();
            if now >= deadline {
                eprintln!(
                    "memlens: the trace was not completely written within {} s of the JVM's exit; its end may be missing",
                    EXIT_WAIT.as_secs()
                );
                break;
            }
            shared = self
                .signal
                .wait_timeout(shared, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }
}

/// Lets the per-thread cache be probed with a borrowed key.
trait CacheKey {
    fn key(&self) -> (u32, &[(usize, i64)]);
}

impl CacheKey for StackKey {
    fn key(&self) -> (u32, &[(usize, i64)]) {
        (self.0, &self.1)
    }
}

impl CacheKey for (u32, &[(usize, i64)]) {
    fn key(&self) -> (u32, &[(usize, i64)]) {
        (self.0, self.1)
    }
}

impl<'a> std::borrow::Borrow<dyn CacheKey + 'a> for StackKey {
    fn borrow(&self) -> &(dyn CacheKey + 'a) {
        self
    }
}

impl PartialEq for dyn CacheKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn CacheKey + '_ {}

impl std::hash::Hash for dyn CacheKey + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

/// The trace address of the object with `tag`: distinct per object, 16-byte aligned
/// like a heap block, so the event encoding's address prediction applies.
pub fn address_of(tag: u64) -> u64 {
    tag << 4
}

/// The running agent, set once by `Agent_OnLoad`.
pub static AGENT: std::sync::OnceLock<Agent> = std::sync::OnceLock::new();

fn agent() -> Option<&'static Agent> {
    AGENT.get()
}

/// `SampledObjectAlloc` callback.
pub extern "C" fn sampled_object_alloc(
    _jvmti: Jvmti,
    _jni: ffi::JniEnv,
    thread: JObject,
    object: JObject,
    klass: JObject,
    size: JLong,
) {
    if let Some(a) = agent() {
        a.on_alloc(thread, object, klass, size);
    }
}

/// `ObjectFree` callback.
pub extern "C" fn object_free(_jvmti: Jvmti, tag: JLong) {
    if let Some(a) = agent() {
        a.on_free(tag);
    }
}

/// `GarbageCollectionStart` callback.
pub extern "C" fn gc_start(_jvmti: Jvmti) {
    if let Some(a) = agent() {
        a.on_gc_start();
    }
}

/// `GarbageCollectionFinish` callback.
pub extern "C" fn gc_finish(_jvmti: Jvmti) {
    if let Some(a) = agent() {
        a.on_gc_finish();
    }
}

/// `ThreadEnd` callback.
pub extern "C" fn thread_end(_jvmti: Jvmti, _jni: ffi::JniEnv, _thread: JObject) {
    if let Some(a) = agent() {
        a.on_thread_end();
    }
}

/// `VMDeath` callback.
pub extern "C" fn vm_death(_jvmti: Jvmti, _jni: ffi::JniEnv) {
    if let Some(a) = agent() {
        a.on_vm_death();
    }
}
