//! What an attached session routes the program's GOT slots to (`got.rs`): the
//! malloc family goes straight to this library's exported hooks (`hooks.rs`, the
//! same functions `memlens record` interposes, so a call costs what it costs
//! there), and `dlopen`/`dlclose` (so modules loaded later are routed too) and
//! `_exit` to the small doors below.
//!
//! The hooks are found with `dlsym` on the library's own handle ([`resolve`]),
//! never named in code: a call to an exported function goes through this
//! library's own GOT, which the loader bound to the program's allocator (the
//! library is loaded `RTLD_LOCAL`, after the program in the lookup order).
//!
//! Detaching restores the slots, clears `RECORDING` and waits for the threads
//! still inside a hook (`attach.rs`); a thread that read a slot just before it
//! was restored still lands in a hook, which then only forwards to the real
//! allocator. The library is never closed, so that is always safe.

use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::{got, lifecycle};

/// True while an attached session records (set after its writer runs, cleared
/// first thing on detach): `dlopen` routes new modules only then.
pub static ATTACHED: AtomicBool = AtomicBool::new(false);

/// The malloc family routed.
const ALLOCATOR: [&core::ffi::CStr; 10] = [
    c"malloc",
    c"calloc",
    c"realloc",
    c"free",
    c"memalign",
    c"aligned_alloc",
    c"posix_memalign",
    c"valloc",
    c"pvalloc",
    c"reallocarray",
];

/// The addresses of this library's own hooks of [`ALLOCATOR`], then `_exit`.
static OWN: [AtomicUsize; 11] = [const { AtomicUsize::new(0) }; 11];
const OWN_EXIT: usize = 10;

/// The program's `dlopen` and `dlclose` (resolved when the session starts).
static REAL_DLOPEN: AtomicUsize = AtomicUsize::new(0);
static REAL_DLCLOSE: AtomicUsize = AtomicUsize::new(0);

/// Resolves the program's `dlopen` and `dlclose` (in the global scope, as the
/// program sees them) and this library's own hooks (by its handle).
pub fn resolve() {
    for (slot, name) in [(&REAL_DLOPEN, c"dlopen"), (&REAL_DLCLOSE, c"dlclose")] {
        // SAFETY: dlsym with a NUL-terminated name.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        slot.store(p as usize, Ordering::Release);
    }
    let (dlopen, dlclose) = (
        REAL_DLOPEN.load(Ordering::Acquire),
        REAL_DLCLOSE.load(Ordering::Acquire),
    );
    if dlopen == 0 || dlclose == 0 {
        return;
    }
    // SAFETY: dladdr on an address of this library, into a local struct; then
    // a handle to the library itself (already loaded: RTLD_NOLOAD), released
    // after the lookups. The program's dlopen and dlclose are called through
    // their addresses: by name, the call would reach this library's own
    // `dlopen` (lifecycle.rs), which forwards only in a preloaded recorder.
    unsafe {
        let dlopen: unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void =
            core::mem::transmute(dlopen);
        let dlclose: unsafe extern "C" fn(*mut c_void) -> c_int = core::mem::transmute(dlclose);
        let mut info: libc::Dl_info = core::mem::zeroed();
        if libc::dladdr(resolve as *const () as *const c_void, &mut info) == 0 {
            return;
        }
        let own = dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if own.is_null() {
            return;
        }
        for (slot, name) in OWN.iter().zip(ALLOCATOR.iter().chain([&c"_exit"])) {
            slot.store(libc::dlsym(own, name.as_ptr()) as usize, Ordering::Release);
        }
        dlclose(own);
    }
}

/// `_exit` and `_Exit`: finish the trace, then leave (the hook in `lifecycle.rs`).
unsafe extern "C" fn attached_exit(status: c_int) -> ! {
    let hook = OWN[OWN_EXIT].load(Ordering::Relaxed);
    if hook != 0 {
        // SAFETY: our exported `_exit`, which never returns.
        let f: extern "C" fn(c_int) -> ! = unsafe { core::mem::transmute(hook) };
        f(status);
    }
    // SAFETY: exit_group never returns.
    unsafe { libc::syscall(libc::SYS_exit_group, status) };
    unreachable!("exit_group returned")
}

/// `dlopen`: routes the new modules' slots too, and records the module map.
unsafe extern "C" fn attached_dlopen(file: *const c_char, mode: c_int) -> *mut c_void {
    let p = REAL_DLOPEN.load(Ordering::Acquire);
    if p == 0 {
        return core::ptr::null_mut();
    }
    // SAFETY: the program's dlopen.
    let f: unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void =
        unsafe { core::mem::transmute::<usize, _>(p) };
    // SAFETY: forwarding.
    let handle = unsafe { f(file, mode) };
    if !handle.is_null() && ATTACHED.load(Ordering::Acquire) {
        got::patch(&routes(), resolve as *const () as usize);
        lifecycle::modules_changed();
    }
    handle
}

/// `dlclose`: forgets the unloaded modules' slots, and records the module map.
unsafe extern "C" fn attached_dlclose(handle: *mut c_void) -> c_int {
    let r = lifecycle::forward_dlclose(&REAL_DLCLOSE, handle);
    got::forget_unloaded();
    if ATTACHED.load(Ordering::Acquire) {
        lifecycle::modules_changed();
    }
    r
}

/// Every function an attached session routes (a hook [`resolve`] did not find
/// is left out).
pub fn routes() -> Vec<got::Route> {
    let mut routes: Vec<got::Route> = ALLOCATOR
        .iter()
        .zip(&OWN)
        .map(|(&name, own)| (name, own.load(Ordering::Acquire)))
        .filter(|&(_, address)| address != 0)
        .collect();
    routes.extend([
        (c"dlopen", attached_dlopen as *const () as usize),
        (c"dlclose", attached_dlclose as *const () as usize),
        (c"_exit", attached_exit as *const () as usize),
        (c"_Exit", attached_exit as *const () as usize),
    ]);
    routes
}
