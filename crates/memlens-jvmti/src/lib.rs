//! `libmemlens_jvmti.so`: a JVMTI agent that records a Java program's heap as a
//! memlens trace, so the heap-evolution lens works on Java as in AntTracks: every
//! allocation with its class, allocation stack (method and line) and thread, every
//! death, each garbage collection as a pair of marks, and, from heap walks after
//! selected collections, the data structure that contains each object.
//!
//! Load it with `java -agentpath:/path/libmemlens_jvmti.so=OPTIONS …` (see
//! [`options`]) or, simpler, `memlens record --java -- java …`.
//!
//! Map of the crate:
//! - [`ffi`]: hand-written JNI/JVMTI declarations (the functions the agent calls);
//! - [`options`]: the option string;
//! - [`names`]: Java names from JVM signatures;
//! - [`interner`]: Java stacks → the trace's stack prefix tree, types, frame names;
//! - [`agent`]: the state and the event callbacks (and why they cannot deadlock);
//! - [`heap_walk`]: when and how the heap is walked, and the records it gives;
//! - [`containment`]: which data structure contains each object (no JVM calls);
//! - [`writer`]: the writer thread;
//! - [`process`]: the process record, the output file and the manifest.
//!
//! JDK 11 or later is needed (`SetHeapSamplingInterval`, `SampledObjectAlloc`).
#![deny(missing_docs)]

pub mod agent;
pub mod containment;
pub mod ffi;
pub mod heap_walk;
pub mod interner;
pub mod names;
pub mod options;
pub mod process;
pub mod writer;

use std::ffi::{CStr, c_char, c_void};
use std::time::Instant;

use ffi::{Capabilities, EventCallbacks, JInt, JNI_ERR, JNI_OK, JavaVm, event};

fn fail(message: &str) -> JInt {
    eprintln!("memlens: the Java agent cannot start: {message}");
    JNI_ERR
}

/// The JVM's entry point for `-agentpath`/`-agentlib`.
///
/// # Safety
/// Called by the JVM with its `JavaVM*` and the option string (or null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Agent_OnLoad(
    vm: JavaVm,
    options: *const c_char,
    _reserved: *mut c_void,
) -> JInt {
    let text = if options.is_null() {
        String::new()
    } else {
        // SAFETY: the JVM passes a NUL-terminated string.
        unsafe { CStr::from_ptr(options) }
            .to_string_lossy()
            .into_owned()
    };
    let options = match options::parse(&text) {
        Ok(o) => o,
        Err(e) => return fail(&format!("bad option string `{text}`: {e}")),
    };
    if agent::AGENT.get().is_some() {
        // Loaded twice (e.g. `-agentpath` and `JAVA_TOOL_OPTIONS`): the first one records.
        eprintln!("memlens: the Java agent is already loaded; ignoring the second `-agentpath`");
        return JNI_OK;
    }
    let start = Instant::now();
    // SAFETY: `vm` is the JVM's.
    let Some(jvmti) = (unsafe { ffi::get_jvmti(vm) }) else {
        return fail("this JVM has no JVMTI 11 environment (JDK 11 or later is needed)");
    };
    let mut potential = Capabilities::default();
    let mut wanted = Capabilities::default();
    // SAFETY: OnLoad phase; valid out-pointers.
    unsafe { jvmti.get_potential_capabilities(&mut potential) };
    for (bit, required) in [
        (Capabilities::SAMPLED_ALLOC, true),
        (Capabilities::TAG_OBJECTS, true),
        (Capabilities::GC_EVENTS, true),
        (Capabilities::OBJECT_FREE, options.frees),
        (Capabilities::LINE_NUMBERS, false),
        (Capabilities::SOURCE_FILE_NAME, false),
    ] {
        if potential.has(bit) {
            wanted.set(bit);
        } else if required {
            return fail(&format!("the JVM lacks JVMTI capability bit {bit}"));
        }
    }
    // SAFETY: OnLoad phase.
    if unsafe { jvmti.add_capabilities(&wanted) } != ffi::JVMTI_ERROR_NONE {
        return fail("the JVM refused the needed JVMTI capabilities");
    }
    let mut callbacks = EventCallbacks::default();
    // SAFETY: each function has the C signature of its event.
    unsafe {
        callbacks.set(event::VM_DEATH, agent::vm_death as *const ());
        callbacks.set(event::THREAD_END, agent::thread_end as *const ());
        callbacks.set(event::GC_START, agent::gc_start as *const ());
        callbacks.set(event::GC_FINISH, agent::gc_finish as *const ());
        callbacks.set(event::OBJECT_FREE, agent::object_free as *const ());
        callbacks.set(
            event::SAMPLED_OBJECT_ALLOC,
            agent::sampled_object_alloc as *const (),
        );
    }
    let size = std::mem::size_of::<EventCallbacks>() as JInt;
    // SAFETY: OnLoad phase; the table is copied by the JVM.
    if unsafe { jvmti.set_event_callbacks(&callbacks, size) } != ffi::JVMTI_ERROR_NONE {
        return fail("SetEventCallbacks failed");
    }
    // SAFETY: OnLoad phase (JDK 11+ allows it here).
    if unsafe { jvmti.set_heap_sampling_interval(options.interval as JInt) }
        != ffi::JVMTI_ERROR_NONE
    {
        return fail("SetHeapSamplingInterval failed");
    }
    let sink = match process::open_trace(&options, start) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if agent::AGENT
        .set(agent::Agent::new(jvmti, vm, options.clone(), start))
        .is_err()
    {
        return fail("the agent was loaded twice");
    }
    let Some(state) = agent::AGENT.get() else {
        return JNI_ERR;
    };
    if let Err(e) = std::thread::Builder::new()
        .name("memlens-writer".into())
        .spawn(move || writer::run(state, sink))
    {
        return fail(&format!("cannot start the writer thread: {e}"));
    }
    if state.walks.enabled()
        && let Err(e) = std::thread::Builder::new()
            .name("memlens-heap-walker".into())
            .spawn(move || heap_walk::run(state))
    {
        return fail(&format!("cannot start the heap walker thread: {e}"));
    }
    let mut events = vec![
        event::VM_DEATH,
        event::THREAD_END,
        event::GC_START,
        event::GC_FINISH,
        event::SAMPLED_OBJECT_ALLOC,
    ];
    if options.frees {
        events.push(event::OBJECT_FREE);
    }
    for e in events {
        // SAFETY: OnLoad phase; the capability of each event was added.
        if unsafe { jvmti.set_event_mode(ffi::JVMTI_ENABLE, e) } != ffi::JVMTI_ERROR_NONE {
            return fail(&format!("cannot enable JVMTI event {e}"));
        }
    }
    JNI_OK
}
