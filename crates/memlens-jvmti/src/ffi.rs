//! Hand-written declarations of the small part of JNI and JVMTI the agent uses.
//!
//! Written from the JVMTI specification (the function numbers and struct layouts of
//! `jvmti.h`, JDK 11 and later), without bindgen: a JVMTI environment is a pointer to a
//! pointer to a table of function pointers, where function number *N* of the
//! specification sits in slot *N − 1* (slot 0 is "reserved1"). [`Jvmti`] wraps an
//! environment and exposes each function the agent calls as a typed method that looks
//! its slot up in the table, so the unsafe pointer casts live in one place.
//!
//! Every method returns the raw [`JvmtiError`] (0 is success); callers decide what a
//! failure means for them.

use std::ffi::{c_char, c_void};

/// `jint`.
pub type JInt = i32;
/// `jlong`.
pub type JLong = i64;
/// `jobject` (also `jthread`, `jclass`): an opaque JNI reference.
pub type JObject = *mut c_void;
/// `jmethodID`: an opaque method handle, stable while its class is loaded.
pub type JMethodId = *mut c_void;
/// `jlocation`: a bytecode index (−1 for native methods).
pub type JLocation = i64;
/// `jvmtiError`.
pub type JvmtiError = i32;
/// `JNIEnv*`, never dereferenced by the agent.
pub type JniEnv = *mut c_void;

/// `JNI_OK`.
pub const JNI_OK: JInt = 0;
/// `JNI_ERR`.
pub const JNI_ERR: JInt = -1;
/// `JVMTI_VERSION_11`: the first version with heap sampling (JEP 331).
pub const JVMTI_VERSION_11: JInt = 0x300B_0000;
/// `JVMTI_ERROR_NONE`.
pub const JVMTI_ERROR_NONE: JvmtiError = 0;
/// `JVMTI_ENABLE`.
pub const JVMTI_ENABLE: JInt = 1;
/// `JVMTI_DISABLE`.
pub const JVMTI_DISABLE: JInt = 0;

/// Event numbers (`jvmtiEvent`).
pub mod event {
    /// `JVMTI_EVENT_VM_INIT`, the first event number (slot 0 of the callback table).
    pub const VM_INIT: i32 = 50;
    /// `JVMTI_EVENT_VM_DEATH`.
    pub const VM_DEATH: i32 = 51;
    /// `JVMTI_EVENT_THREAD_END`.
    pub const THREAD_END: i32 = 53;
    /// `JVMTI_EVENT_GARBAGE_COLLECTION_START`.
    pub const GC_START: i32 = 81;
    /// `JVMTI_EVENT_GARBAGE_COLLECTION_FINISH`.
    pub const GC_FINISH: i32 = 82;
    /// `JVMTI_EVENT_OBJECT_FREE`.
    pub const OBJECT_FREE: i32 = 83;
    /// `JVMTI_EVENT_SAMPLED_OBJECT_ALLOC`, the last event number the table needs.
    pub const SAMPLED_OBJECT_ALLOC: i32 = 86;
}

/// `jvmtiCapabilities`: 128 bits of flags, in declaration order from bit 0 of the
/// first 32-bit word (the x86-64 System V bit-field layout).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Capabilities {
    /// The four 32-bit words.
    pub words: [u32; 4],
}

impl Capabilities {
    /// `can_tag_objects` (bit 0).
    pub const TAG_OBJECTS: u32 = 0;
    /// `can_get_source_file_name` (bit 11).
    pub const SOURCE_FILE_NAME: u32 = 11;
    /// `can_get_line_numbers` (bit 12).
    pub const LINE_NUMBERS: u32 = 12;
    /// `can_generate_garbage_collection_events` (bit 31).
    pub const GC_EVENTS: u32 = 31;
    /// `can_generate_object_free_events` (bit 32).
    pub const OBJECT_FREE: u32 = 32;
    /// `can_generate_sampled_object_alloc_events` (bit 43).
    pub const SAMPLED_ALLOC: u32 = 43;

    /// Sets capability bit `bit`.
    pub fn set(&mut self, bit: u32) {
        self.words[(bit / 32) as usize] |= 1 << (bit % 32);
    }

    /// Whether capability bit `bit` is set.
    pub fn has(&self, bit: u32) -> bool {
        self.words[(bit / 32) as usize] & (1 << (bit % 32)) != 0
    }
}

/// `jvmtiFrameInfo`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct FrameInfo {
    /// The method.
    pub method: JMethodId,
    /// The bytecode index executing in it.
    pub location: JLocation,
}

impl Default for FrameInfo {
    fn default() -> Self {
        FrameInfo {
            method: std::ptr::null_mut(),
            location: 0,
        }
    }
}

/// `jvmtiLineNumberEntry`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LineNumberEntry {
    /// The first bytecode index of the line.
    pub start_location: JLocation,
    /// The source line.
    pub line_number: JInt,
}

/// `jvmtiThreadInfo`.
#[repr(C)]
#[derive(Debug)]
pub struct ThreadInfo {
    /// The thread's name (modified UTF-8, allocated by JVMTI).
    pub name: *mut c_char,
    /// Its priority.
    pub priority: JInt,
    /// Whether it is a daemon thread.
    pub is_daemon: u8,
    /// Its thread group (a local reference).
    pub thread_group: JObject,
    /// Its context class loader (a local reference).
    pub context_class_loader: JObject,
}

/// A callback slot: any `extern "C"` function, cast to the slot's real signature by
/// the JVM.
pub type Callback = Option<unsafe extern "C" fn()>;

/// `jvmtiEventCallbacks` up to `SampledObjectAlloc`: slot `e − 50` holds the callback
/// of event `e`.
#[repr(C)]
#[derive(Debug)]
pub struct EventCallbacks {
    /// The slots.
    pub slots: [Callback; (event::SAMPLED_OBJECT_ALLOC - event::VM_INIT + 1) as usize],
}

impl Default for EventCallbacks {
    fn default() -> Self {
        EventCallbacks {
            slots: [None; (event::SAMPLED_OBJECT_ALLOC - event::VM_INIT + 1) as usize],
        }
    }
}

impl EventCallbacks {
    /// Puts `callback` in the slot of `event`.
    ///
    /// # Safety
    /// `callback` must have the C signature the JVMTI specification gives `event`.
    pub unsafe fn set(&mut self, event: i32, callback: *const ()) {
        // SAFETY: a non-null function pointer, transmuted to the generic slot type;
        // the JVM calls it with the event's real signature (the caller's promise).
        self.slots[(event - event::VM_INIT) as usize] =
            Some(unsafe { std::mem::transmute::<*const (), unsafe extern "C" fn()>(callback) });
    }
}

/// `JavaVM*`: a pointer to the invocation interface table.
pub type JavaVm = *mut *const *const c_void;

/// `JVMTI_VISIT_OBJECTS`: a heap reference callback's "follow this object's references".
pub const JVMTI_VISIT_OBJECTS: JInt = 0x100;
/// `JVMTI_HEAP_REFERENCE_FIELD`: an instance field of the referrer.
pub const HEAP_REFERENCE_FIELD: JInt = 2;
/// `JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT`: an element of the referrer array.
pub const HEAP_REFERENCE_ARRAY_ELEMENT: JInt = 3;

/// `jvmtiHeapReferenceCallback`.
pub type HeapReferenceCallback = unsafe extern "C" fn(
    kind: JInt,
    info: *const c_void,
    class_tag: JLong,
    referrer_class_tag: JLong,
    size: JLong,
    tag: *mut JLong,
    referrer_tag: *mut JLong,
    length: JInt,
    user_data: *mut c_void,
) -> JInt;

/// `jvmtiHeapCallbacks`: the heap reference callback and 14 unused slots.
#[repr(C)]
#[derive(Debug, Default)]
pub struct HeapCallbacks {
    /// `heap_iteration_callback` (unused).
    pub iteration: Option<unsafe extern "C" fn()>,
    /// `heap_reference_callback`.
    pub reference: Option<HeapReferenceCallback>,
    /// The primitive, array, string and reserved callbacks (unused).
    pub rest: [Option<unsafe extern "C" fn()>; 13],
}

/// `JavaVM->AttachCurrentThreadAsDaemon` (slot 7 of the invocation interface): the
/// calling native thread's `JNIEnv*`, or `None` when the JVM refuses.
///
/// # Safety
/// `vm` must be the `JavaVM*` the JVM passed to `Agent_OnLoad`.
pub unsafe fn attach_daemon(vm: JavaVm) -> Option<JniEnv> {
    type Attach = unsafe extern "C" fn(JavaVm, *mut JniEnv, *mut c_void) -> JInt;
    let mut env: JniEnv = std::ptr::null_mut();
    // SAFETY: slot 7 of the invocation table is AttachCurrentThreadAsDaemon (jni.h).
    let rc = unsafe {
        let table = *vm;
        let f: Attach = std::mem::transmute::<*const c_void, Attach>(*table.add(7));
        f(vm, &mut env, std::ptr::null_mut())
    };
    (rc == JNI_OK && !env.is_null()).then_some(env)
}

/// `JavaVM->DetachCurrentThread` (slot 5 of the invocation interface).
///
/// # Safety
/// `vm` must be the JVM's, and the calling thread attached with no Java frames.
pub unsafe fn detach(vm: JavaVm) {
    type Detach = unsafe extern "C" fn(JavaVm) -> JInt;
    // SAFETY: slot 5 of the invocation table is DetachCurrentThread (jni.h).
    unsafe {
        let table = *vm;
        let f: Detach = std::mem::transmute::<*const c_void, Detach>(*table.add(5));
        f(vm);
    }
}

/// `JNIEnv->PushLocalFrame` (19) or `PopLocalFrame` (20): local references made by
/// JVMTI calls between the two are freed by the pop.
///
/// # Safety
/// `env` must be the current thread's `JNIEnv*`; pops must match pushes.
pub unsafe fn local_frame(env: JniEnv, push: bool) {
    type Push = unsafe extern "C" fn(JniEnv, JInt) -> JInt;
    type Pop = unsafe extern "C" fn(JniEnv, JObject) -> JObject;
    // SAFETY: a JNIEnv* points to the JNI function table (jni.h slot numbers).
    unsafe {
        let table = *(env as *const *const *const c_void);
        if push {
            let f: Push = std::mem::transmute::<*const c_void, Push>(*table.add(19));
            f(env, 64);
        } else {
            let f: Pop = std::mem::transmute::<*const c_void, Pop>(*table.add(20));
            f(env, std::ptr::null_mut());
        }
    }
}

/// `JavaVM->GetEnv` (slot 6 of the invocation interface).
///
/// # Safety
/// `vm` must be the `JavaVM*` the JVM passed to `Agent_OnLoad`.
pub unsafe fn get_jvmti(vm: JavaVm) -> Option<Jvmti> {
    type GetEnv = unsafe extern "C" fn(JavaVm, *mut *mut c_void, JInt) -> JInt;
    let mut env: *mut c_void = std::ptr::null_mut();
    // SAFETY: slot 6 of the invocation table is GetEnv (jni.h).
    let rc = unsafe {
        let table = *vm;
        let f: GetEnv = std::mem::transmute::<*const c_void, GetEnv>(*table.add(6));
        f(vm, &mut env, JVMTI_VERSION_11)
    };
    (rc == JNI_OK && !env.is_null()).then_some(Jvmti(env as *mut *const *const c_void))
}

/// A JVMTI environment (`jvmtiEnv*`). JVMTI environments may be used from any thread.
#[repr(transparent)]
#[derive(Debug, Clone, Copy)]
pub struct Jvmti(pub *mut *const *const c_void);

// SAFETY: the JVMTI specification allows calling an environment's functions from any
// thread (each function documents the phases and contexts it may be called in).
unsafe impl Send for Jvmti {}
// SAFETY: as above.
unsafe impl Sync for Jvmti {}

macro_rules! jvmti_fn {
    ($(#[$doc:meta])* $name:ident = $number:literal ( $($arg:ident : $ty:ty),* )) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The arguments must be valid for this JVMTI function in the current phase.
        pub unsafe fn $name(&self, $($arg: $ty),*) -> JvmtiError {
            type F = unsafe extern "C" fn(Jvmti, $($ty),*) -> JvmtiError;
            // SAFETY: function number $number sits in slot $number − 1 of the table.
            unsafe {
                let table = *self.0;
                let f: F = std::mem::transmute::<*const c_void, F>(*table.add($number - 1));
                f(*self, $($arg),*)
            }
        }
    };
}

impl Jvmti {
    jvmti_fn!(
        /// 9: `GetThreadInfo`.
        get_thread_info = 9 (thread: JObject, info: *mut ThreadInfo)
    );
    jvmti_fn!(
        /// 47: `Deallocate`.
        deallocate = 47 (mem: *mut u8)
    );
    jvmti_fn!(
        /// 48: `GetClassSignature`.
        get_class_signature = 48 (klass: JObject, signature: *mut *mut c_char, generic: *mut *mut c_char)
    );
    jvmti_fn!(
        /// 50: `GetSourceFileName`.
        get_source_file_name = 50 (klass: JObject, name: *mut *mut c_char)
    );
    jvmti_fn!(
        /// 64: `GetMethodName`.
        get_method_name = 64 (method: JMethodId, name: *mut *mut c_char, signature: *mut *mut c_char, generic: *mut *mut c_char)
    );
    jvmti_fn!(
        /// 65: `GetMethodDeclaringClass`.
        get_method_declaring_class = 65 (method: JMethodId, klass: *mut JObject)
    );
    jvmti_fn!(
        /// 70: `GetLineNumberTable`.
        get_line_number_table = 70 (method: JMethodId, count: *mut JInt, table: *mut *mut LineNumberEntry)
    );
    jvmti_fn!(
        /// 78: `GetLoadedClasses` (array classes included).
        get_loaded_classes = 78 (count: *mut JInt, classes: *mut *mut JObject)
    );
    jvmti_fn!(
        /// 115: `FollowReferences` from the heap roots.
        follow_references = 115 (filter: JInt, klass: JObject, initial: JObject, callbacks: *const HeapCallbacks, user_data: *const c_void)
    );
    jvmti_fn!(
        /// 104: `GetStackTrace`.
        get_stack_trace = 104 (thread: JObject, start_depth: JInt, max_frames: JInt, frames: *mut FrameInfo, count: *mut JInt)
    );
    jvmti_fn!(
        /// 106: `GetTag`.
        get_tag = 106 (object: JObject, tag: *mut JLong)
    );
    jvmti_fn!(
        /// 107: `SetTag`.
        set_tag = 107 (object: JObject, tag: JLong)
    );
    jvmti_fn!(
        /// 122: `SetEventCallbacks`.
        set_event_callbacks = 122 (callbacks: *const EventCallbacks, size: JInt)
    );
    jvmti_fn!(
        /// 140: `GetPotentialCapabilities`.
        get_potential_capabilities = 140 (caps: *mut Capabilities)
    );
    jvmti_fn!(
        /// 142: `AddCapabilities`.
        add_capabilities = 142 (caps: *const Capabilities)
    );
    jvmti_fn!(
        /// 156: `SetHeapSamplingInterval` (JDK 11+).
        set_heap_sampling_interval = 156 (interval: JInt)
    );

    /// 2: `SetEventNotificationMode` for every thread (a C variadic function).
    ///
    /// # Safety
    /// Callable in the OnLoad and live phases.
    pub unsafe fn set_event_mode(&self, mode: JInt, event: i32) -> JvmtiError {
        type F = unsafe extern "C" fn(Jvmti, JInt, i32, JObject, ...) -> JvmtiError;
        // SAFETY: function 2 sits in slot 1; a null thread means every thread.
        unsafe {
            let table = *self.0;
            let f: F = std::mem::transmute::<*const c_void, F>(*table.add(1));
            f(*self, mode, event, std::ptr::null_mut())
        }
    }

    /// Copies a JVMTI-allocated C string and deallocates it; `None` for null.
    ///
    /// # Safety
    /// `s` must be null or a string this environment allocated.
    pub unsafe fn take_string(&self, s: *mut c_char) -> Option<String> {
        if s.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated string from JVMTI (modified UTF-8, lossily decoded).
        let text = unsafe { std::ffi::CStr::from_ptr(s) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: allocated by this environment.
        unsafe { self.deallocate(s.cast()) };
        Some(text)
    }
}
