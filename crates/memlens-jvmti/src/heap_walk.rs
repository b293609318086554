//! Heap walks for the containing data structure: when to walk, the walk itself
//! (`FollowReferences` from the heap roots) and the trace records it produces.
//!
//! A garbage collection's end (`GarbageCollectionFinish`) only *requests* a walk —
//! nothing else may be called there — if the policy allows one ([`HeapWalks`]: by
//! default at most one per second of run time, and never sooner than 4 times the
//! previous walk's time after it); a dedicated walker thread, attached to
//! the JVM as a daemon, makes it. `VMDeath` asks for a last walk and waits for it.
//!
//! # Why a walk cannot deadlock
//!
//! The walker holds no agent lock while it calls into the JVM (`GetLoadedClasses`,
//! the class names through [`Agent::class_id`], `FollowReferences`), as every
//! callback of the agent. `FollowReferences` stops the Java threads at a safepoint
//! and runs [`reference`] on the JVM's thread; that callback touches only the walk's
//! own state, handed to it by pointer, and takes no lock at all. A Java thread
//! stopped at the safepoint may hold no agent lock (locks are never held across a
//! JVM call), and one running agent code in native state is not stopped and only
//! takes locks the walk does not hold. The GC callback sets a flag and notifies a
//! condition variable without taking its mutex.
//!
//! Every recorded object the walk reaches is written in one [`Meta::Contained`]
//! record or another (in no data structure: container 1); an object it does not reach
//! is garbage not collected yet, and keeps what the previous walk said of it.
//!
//! Objects the agent did not record get tags of their own during the walk (with
//! [`WALK_TAG`] set) so that every reference has two ends; they are never written as
//! events and their deaths are ignored.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use memlens_trace::{Contained, HeapWalk, Meta};
use rustc_hash::FxHashMap;

use crate::agent::{Agent, CLASS_TAG, address_of, lock};
use crate::containment::{ClassKind, Graph, Owner, class_kind};
use crate::ffi::{self, HeapCallbacks, JInt, JLong, JObject, JavaVm, JniEnv};
use crate::names;
use crate::options::HeapWalks;

/// Tags with this bit name objects the agent did not record, tagged by a walk.
pub const WALK_TAG: JLong = 1 << 61;

/// The most members per [`Meta::Contained`] record.
const MEMBERS_PER_RECORD: usize = 8192;

/// How long `VMDeath` waits for the last walk.
const LAST_WALK_WAIT: Duration = Duration::from_secs(60);

/// The JVM, shareable with the walker thread.
#[derive(Debug, Clone, Copy)]
pub struct Vm(pub JavaVm);

// SAFETY: the invocation interface may be used from any native thread.
unsafe impl Send for Vm {}
// SAFETY: as above.
unsafe impl Sync for Vm {}

/// The walks' schedule and their totals.
#[derive(Debug)]
pub struct Walks {
    vm: Vm,
    policy: HeapWalks,
    /// A collection ended and the policy allows a walk.
    requested: AtomicBool,
    /// The time before which no collection requests a walk.
    next_allowed: AtomicU64,
    /// `(last walk requested, last walk done)`, guarded with [`Walks::wake`].
    last: Mutex<(bool, bool)>,
    wake: Condvar,
    /// Walks made, their total and largest time in ns.
    totals: Mutex<(u64, u64, u64)>,
}

impl Walks {
    /// The schedule of `policy` on JVM `vm`.
    pub fn new(vm: JavaVm, policy: HeapWalks) -> Walks {
        Walks {
            vm: Vm(vm),
            policy,
            requested: AtomicBool::new(false),
            next_allowed: AtomicU64::new(policy.gap_ns()),
            last: Mutex::new((false, false)),
            wake: Condvar::new(),
            totals: Mutex::new((0, 0, 0)),
        }
    }

    /// Whether any walk is made.
    pub fn enabled(&self) -> bool {
        self.policy != HeapWalks::None
    }

    /// `GarbageCollectionFinish` at `now`: requests a walk if the policy allows one.
    /// Takes no lock.
    pub fn collection_finished(&self, now: u64) {
        if self.policy == HeapWalks::None {
            return;
        }
        if now >= self.next_allowed.load(Ordering::Relaxed) {
            self.requested.store(true, Ordering::Release);
            self.wake.notify_one();
        }
    }

    /// `VMDeath`: asks for the last walk and waits for it (at most [`LAST_WALK_WAIT`]);
    /// then prints the walks' cost unless `quiet`.
    pub fn finish(&self, quiet: bool) {
        if !self.enabled() {
            return;
        }
        let deadline = Instant::now() + LAST_WALK_WAIT;
        let mut last = lock(&self.last);
        last.0 = true;
        self.wake.notify_all();
        while !last.1 {
            let now = Instant::now();
            if now >= deadline {
                eprintln!("memlens: the last heap walk did not end in time; it is missing");
                break;
            }
            last = self
                .wake
                .wait_timeout(last, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        drop(last);
        let (count, total, max) = *lock(&self.totals);
        if !quiet && count > 0 {
            eprintln!(
                "memlens: {count} heap walks for the containing data structure took {:.1} ms ({:.1} ms per walk, at most {:.1} ms)",
                total as f64 / 1e6,
                total as f64 / 1e6 / count as f64,
                max as f64 / 1e6
            );
        }
    }
}

/// The walker thread: waits for requests and walks, until the last walk is made.
pub fn run(agent: &'static Agent) {
    let walks = &agent.walks;
    let mut env: Option<JniEnv> = None;
    let mut kinds: Vec<Option<ClassKind>> = Vec::new();
    let mut next_tag = WALK_TAG | 1;
    loop {
        let last = {
            let mut last = lock(&walks.last);
            while !last.0 && !walks.requested.load(Ordering::Acquire) {
                last = walks
                    .wake
                    .wait_timeout(last, Duration::from_millis(50))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            last.0
        };
        walks.requested.store(false, Ordering::Release);
        if env.is_none() {
            // SAFETY: the JVM's own pointer; fails harmlessly before the VM is live.
            env = unsafe { ffi::attach_daemon(walks.vm.0) };
        }
        if let Some(env) = env {
            walk(agent, env, &mut kinds, &mut next_tag);
        }
        if last {
            if env.is_some() {
                // SAFETY: attached above, and no Java frame is on this thread.
                unsafe { ffi::detach(walks.vm.0) };
            }
            let mut last = lock(&walks.last);
            last.1 = true;
            walks.wake.notify_all();
            return;
        }
    }
}

/// What [`reference`] works on during one `FollowReferences`.
struct WalkState<'k> {
    graph: Graph,
    /// Recorded objects reached (with repeats: one per reference to them).
    reached: Vec<JLong>,
    kinds: &'k [Option<ClassKind>],
    next_tag: JLong,
}

impl WalkState<'_> {
    fn kind_of_class(&self, class_tag: JLong) -> (ClassKind, u32) {
        if class_tag & CLASS_TAG == 0 {
            return (ClassKind::Other, 0);
        }
        let id = class_tag as u32;
        let kind = self.kinds.get(id as usize).copied().flatten();
        (kind.unwrap_or(ClassKind::Other), id)
    }
}

/// `jvmtiHeapReferenceCallback`: notes the referee (tagging it if it has no tag) and,
/// for fields and array elements, the reference. Runs at a safepoint on the JVM's
/// thread: no JNI, no JVMTI, no lock.
unsafe extern "C" fn reference(
    kind: JInt,
    _info: *const c_void,
    class_tag: JLong,
    referrer_class_tag: JLong,
    _size: JLong,
    tag: *mut JLong,
    referrer_tag: *mut JLong,
    _length: JInt,
    user_data: *mut c_void,
) -> JInt {
    // SAFETY: `user_data` is the `WalkState` that `walk` passed, alive during the call.
    let state = unsafe { &mut *(user_data as *mut WalkState<'_>) };
    if tag.is_null() {
        return ffi::JVMTI_VISIT_OBJECTS;
    }
    // SAFETY: the JVM passes valid tag pointers for the duration of the callback.
    let to = unsafe {
        if *tag == 0 {
            *tag = state.next_tag;
            state.next_tag += 1;
        }
        *tag
    };
    if to & CLASS_TAG != 0 {
        return ffi::JVMTI_VISIT_OBJECTS; // a class object
    }
    if to & WALK_TAG == 0 {
        state.reached.push(to);
    }
    let (to_kind, class) = state.kind_of_class(class_tag);
    state.graph.object(to, to_kind, class);
    if (kind == ffi::HEAP_REFERENCE_FIELD || kind == ffi::HEAP_REFERENCE_ARRAY_ELEMENT)
        && !referrer_tag.is_null()
    {
        // SAFETY: as above.
        let from = unsafe { *referrer_tag };
        let (from_kind, _) = state.kind_of_class(referrer_class_tag);
        state.graph.reference(from, from_kind, to);
    }
    ffi::JVMTI_VISIT_OBJECTS
}

/// Classifies every loaded class not seen yet (tagging it through
/// [`Agent::class_id`]).
fn classify_classes(agent: &Agent, kinds: &mut Vec<Option<ClassKind>>) {
    let j = agent.jvmti;
    let mut count: JInt = 0;
    let mut classes: *mut JObject = std::ptr::null_mut();
    // SAFETY: live phase, attached thread; the array is ours to deallocate.
    if unsafe { j.get_loaded_classes(&mut count, &mut classes) } != ffi::JVMTI_ERROR_NONE
        || classes.is_null()
    {
        return;
    }
    // SAFETY: JVMTI returned `count` class references.
    let list = unsafe { std::slice::from_raw_parts(classes, count.max(0) as usize) };
    for &klass in list {
        let id = agent.class_id(klass) as usize;
        if id == 0 || kinds.get(id).copied().flatten().is_some() {
            continue;
        }
        let mut signature = std::ptr::null_mut();
        // SAFETY: a live class reference; the signature is ours to free.
        let name = unsafe {
            if j.get_class_signature(klass, &mut signature, std::ptr::null_mut())
                != ffi::JVMTI_ERROR_NONE
            {
                continue;
            }
            j.take_string(signature)
        };
        let Some(name) = name else { continue };
        if kinds.len() <= id {
            kinds.resize(id + 1, None);
        }
        kinds[id] = Some(class_kind(
            &names::class_name(&name),
            &agent.options.data_structures,
        ));
    }
    // SAFETY: allocated by JVMTI.
    unsafe { j.deallocate(classes.cast()) };
}

/// One heap walk: classifies new classes, follows every reference from the roots,
/// finds each recorded object's data structure and queues the records.
fn walk(agent: &Agent, env: JniEnv, kinds: &mut Vec<Option<ClassKind>>, next_tag: &mut JLong) {
    let started = Instant::now();
    let t = agent.now();
    // SAFETY: `env` is this attached thread's; the pop below matches.
    unsafe { ffi::local_frame(env, true) };
    classify_classes(agent, kinds);
    let mut state = WalkState {
        graph: Graph::default(),
        reached: Vec::new(),
        kinds,
        next_tag: *next_tag,
    };
    let callbacks = HeapCallbacks {
        reference: Some(reference),
        ..HeapCallbacks::default()
    };
    let follow = Instant::now();
    // SAFETY: live phase, attached thread; `state` outlives the call.
    let rc = unsafe {
        agent.jvmti.follow_references(
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &callbacks,
            (&mut state as *mut WalkState<'_>).cast(),
        )
    };
    // SAFETY: matches the push above.
    unsafe { ffi::local_frame(env, false) };
    *next_tag = state.next_tag;
    let pause_ns = follow.elapsed().as_nanos() as u64;
    if rc != ffi::JVMTI_ERROR_NONE {
        return;
    }
    let references = state.graph.references;
    let objects = state.graph.objects() as u64;
    let mut reached = std::mem::take(&mut state.reached);
    let (owners, classes) = state.graph.attribute();
    reached.sort_unstable();
    reached.dedup();
    // Every recorded object reached, by owner; `Some(0)`: in no data structure.
    let mut members: FxHashMap<Option<JLong>, Vec<u64>> = FxHashMap::default();
    for tag in reached {
        let key = match owners.get(&tag) {
            Some(&Owner::Structure(head)) => Some(head),
            Some(Owner::Multiple) => None,
            None => Some(0),
        };
        members.entry(key).or_default().push(address_of(tag as u64));
    }
    let duration_ns = started.elapsed().as_nanos() as u64;
    // The next walk waits for the policy's gap, and for 4 times this walk's time, so
    // walks take at most a fifth of the run (except with `all`).
    let spacing = match agent.walks.policy {
        HeapWalks::All => 0,
        policy => policy.gap_ns().max(duration_ns.saturating_mul(4)),
    };
    let next = agent.now().saturating_add(spacing);
    agent.walks.next_allowed.store(next, Ordering::Relaxed);
    let mut records = vec![Meta::HeapWalk(HeapWalk {
        t,
        duration_ns,
        pause_ns,
        objects,
        references,
    })];
    let mut structures: Vec<(Option<JLong>, Vec<u64>)> = members.into_iter().collect();
    structures.sort_unstable();
    for (head, mut list) in structures {
        list.sort_unstable();
        let (container, container_type) = match head {
            None => (0, 0),
            Some(0) => (1, 0),
            // A head the agent did not record has no event address.
            Some(h) if h & WALK_TAG != 0 => (u64::MAX, classes.get(&h).copied().unwrap_or(0)),
            Some(h) => (address_of(h as u64), classes.get(&h).copied().unwrap_or(0)),
        };
        for chunk in list.chunks(MEMBERS_PER_RECORD) {
            records.push(Meta::Contained(Contained {
                container,
                container_type,
                members: chunk.to_vec(),
            }));
        }
    }
    lock(&agent.shared).metas.extend(records);
    let mut totals = lock(&agent.walks.totals);
    totals.0 += 1;
    totals.1 += duration_ns;
    totals.2 = totals.2.max(duration_ns);
}
