//! Start-up, `fork`, `exec`, `exit`, `_exit`, `dlopen`/`dlclose` and the
//! user mark API: everything around the allocation hooks that keeps the
//! trace complete and the program unchanged. (The variadic `execl`,
//! `execle` and `execlp` are in `exec_variadic.rs` and call the hooks here.)
//!
//! Which processes record is `output.rs`'s: by default only the one the user
//! launched, through its `exec`s. Every other process (a forked child, a
//! program it `exec`s) starts no session: it opens no file, starts no writer
//! and sets up nothing for recording, so its hooks only forward to the real
//! allocator. A forked child of a recording process drops what it inherited
//! (the writer, the queues, the forking thread's state) and closes its copy
//! of the parent's trace descriptor first. Before an `exec` the trace is
//! flushed and ends with an `exec` mark; the new image, when it records,
//! truncates the same file.

use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use crate::config::Config;
use crate::recording::{self, RECORDING};
use crate::thread::{self, BUSY};
use crate::{
    clock, dwarf, modules, output, real, registry, rounds, session, stack, wakeup, writer,
};

static PID: AtomicU32 = AtomicU32::new(0);

/// `__gnu_cxx::__freeres` when libstdc++ is loaded (resolved at start-up so
/// the exit handler allocates nothing of its own).
static FREERES: AtomicUsize = AtomicUsize::new(0);

/// Start-up state: 0 not started, 1 starting, 2 done.
static STARTED: AtomicU32 = AtomicU32::new(0);

/// Starts recording from the first allocation if the constructor has not
/// run yet: libraries initialised before ours (libstdc++'s emergency pool)
/// allocate in their constructors, and those allocations belong in the trace.
/// `our_malloc` is as for [`start`].
#[cold]
pub fn start_early(our_malloc: *const ()) {
    if STARTED.load(Ordering::Acquire) == 0 {
        start(our_malloc);
    }
}

/// Real `dlopen`, `dlclose` and the exec family, resolved at start-up (by
/// [`start`]: an attached session routes `dlopen` and `dlclose` itself).
static REAL_DLOPEN: AtomicUsize = AtomicUsize::new(0);
static REAL_DLCLOSE: AtomicUsize = AtomicUsize::new(0);
static REAL_EXECVE: AtomicUsize = AtomicUsize::new(0);
static REAL_EXECV: AtomicUsize = AtomicUsize::new(0);
static REAL_EXECVP: AtomicUsize = AtomicUsize::new(0);
static REAL_EXECVPE: AtomicUsize = AtomicUsize::new(0);
static REAL_FEXECVE: AtomicUsize = AtomicUsize::new(0);
static REAL_PTHREAD_CREATE: AtomicUsize = AtomicUsize::new(0);

fn resolve_into(slot: &AtomicUsize, name: &core::ffi::CStr) {
    // SAFETY: dlsym with a NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    slot.store(p as usize, Ordering::Release);
}

fn gettid() -> u32 {
    // SAFETY: no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

fn getpid() -> u32 {
    // SAFETY: no preconditions.
    unsafe { libc::getpid() as u32 }
}

/// True when this process is the one this session records (not a `vfork`
/// child sharing our memory).
fn is_our_process() -> bool {
    RECORDING.load(Ordering::Acquire) && getpid() == PID.load(Ordering::Relaxed)
}

/// Set once the clock, the unwinder and the module map are set up (a forked
/// child of a recording process inherits them).
static PREPARED: AtomicBool = AtomicBool::new(false);

/// Sets up what recording needs, once per process image: the clock, the
/// unwinder and its view of the loaded modules, latency mode.
fn prepare(config: &Config) {
    if PREPARED.swap(true, Ordering::AcqRel) {
        return;
    }
    clock::choose(config.monotonic);
    let scanned = modules::scan();
    if let Some((s, e)) =
        modules::text_range_containing(&scanned, start as *const () as usize as u64)
    {
        stack::set_self_text(s as usize, e as usize);
    }
    dwarf::publish(&scanned);
    stack::set_mode(config.unwind);
    recording::set_latency(config.latency);
}

/// Opens this process's trace and starts the writer, when this process
/// records (see `output.rs`); true when it does.
fn start_session(forked: bool, ppid: u32) -> bool {
    let config = session::config();
    let pid = getpid();
    PID.store(pid, Ordering::Relaxed);
    let Some(path) = output::trace_path(config, pid, forked) else {
        return false;
    };
    prepare(config);
    let raw0 = clock::now_raw();
    let mono0 = clock::monotonic_ns();
    let start_unix_ns = clock::realtime_ns();
    let Some(out) = output::open(config, &path) else {
        return false;
    };
    let info = process_info(config, pid, ppid, start_unix_ns);
    let w = writer::Writer::new(out, info, raw0, mono0);
    writer::install(w);
    // A sampled recording writes from the program's threads until the
    // program starts one of its own (see `rounds.rs`).
    if rounds::start(config.sample_bytes > 0) {
        RECORDING.store(true, Ordering::Release);
        true
    } else {
        session::add_warning(
            "the recorder could not start its writer thread; nothing was recorded".into(),
        );
        false
    }
}

/// The trace's first record: who is recorded, and how.
fn process_info(
    config: &Config,
    pid: u32,
    ppid: u32,
    start_unix_ns: u64,
) -> memlens_trace::ProcessInfo {
    let cmdline = read_cmdline();
    let exe = std::fs::read_link("/proc/self/exe")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    memlens_trace::ProcessInfo {
        pid,
        ppid,
        exe,
        cmdline,
        start_unix_ns,
        clock: if clock::uses_tsc() {
            memlens_trace::ClockSource::Tsc
        } else {
            memlens_trace::ClockSource::Monotonic
        },
        unwinder: match config.unwind {
            stack::Mode::FramePointer => "fp".into(),
            stack::Mode::Dwarf => "dwarf".into(),
        },
        recorder: concat!("memlens-preload ", env!("CARGO_PKG_VERSION")).into(),
    }
}

/// Set once the `fork` handlers are registered.
static ATFORK: AtomicBool = AtomicBool::new(false);

fn register_fork_handlers() {
    if !ATFORK.swap(true, Ordering::AcqRel) {
        // SAFETY: registering plain C callbacks.
        unsafe {
            libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child));
        }
    }
}

/// Starts recording a process that is already running (`memlens attach`,
/// see `attach.rs`) into `out`, with the session's settings already set
/// (`session::set_attached_config`): the real functions as the program sees
/// them, the unwinder's view of the modules loaded now, the writer. The
/// environment never starts a session in such a process. The trace's
/// process record is followed by `attached`, with the attach time filled in.
/// False when the writer thread could not start (nothing is recorded).
pub fn start_attached(out: output::Output, mut attached: memlens_trace::Attached) -> bool {
    STARTED.store(2, Ordering::Release);
    real::resolve_global();
    thread::init_key();
    // SAFETY: dlsym lookup of a NUL-terminated name.
    let freeres = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_ZN9__gnu_cxx9__freeresEv".as_ptr()) };
    FREERES.store(freeres as usize, Ordering::Release);
    register_fork_handlers();
    let config = session::config();
    // The modules, unwinder and latency mode of this attach, not the last one's.
    PREPARED.store(false, Ordering::Release);
    prepare(config);
    let pid = getpid();
    PID.store(pid, Ordering::Relaxed);
    let raw0 = clock::now_raw();
    let mono0 = clock::monotonic_ns();
    attached.attach_unix_ns = clock::realtime_ns();
    // SAFETY: getppid has no preconditions.
    let ppid = unsafe { libc::getppid() } as u32;
    let info = process_info(config, pid, ppid, attached.attach_unix_ns);
    let mut w = writer::Writer::new(out, info, raw0, mono0);
    w.note(&memlens_trace::Meta::Attached(attached));
    writer::install(w);
    if !rounds::start(false) {
        rounds::stop();
        return false;
    }
    RECORDING.store(true, Ordering::Release);
    true
}

fn read_cmdline() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Starts recording: the library constructor calls this, or the first
/// allocation hook when that comes first; it runs once. `our_malloc` is the
/// `malloc` this library exports: when the program's lookup finds another
/// one, the trace says so.
pub fn start(our_malloc: *const ()) {
    if STARTED
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    real::resolve();
    thread::init_key();
    thread::set_current(BUSY);
    for (slot, name) in [
        (&REAL_DLOPEN, c"dlopen"),
        (&REAL_DLCLOSE, c"dlclose"),
        (&REAL_EXECVE, c"execve"),
        (&REAL_EXECV, c"execv"),
        (&REAL_EXECVP, c"execvp"),
        (&REAL_EXECVPE, c"execvpe"),
        (&REAL_FEXECVE, c"fexecve"),
        (&REAL_PTHREAD_CREATE, c"pthread_create"),
    ] {
        resolve_into(slot, name);
    }
    // SAFETY: getppid has no preconditions.
    let ppid = unsafe { libc::getppid() } as u32;
    // A statically linked allocator (or one the executable defines itself)
    // wins the symbol lookup over LD_PRELOAD: detect and say so.
    // SAFETY: dlsym lookup of a NUL-terminated name.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"malloc".as_ptr()) };
    if start_session(false, ppid) && !core::ptr::eq(found as *const (), our_malloc) {
        session::add_warning(
            "the program's malloc is not the one memlens interposes (it is statically linked or defined by the executable); allocations through it are not recorded".into(),
        );
    }
    // SAFETY: dlsym lookup of a NUL-terminated name.
    let freeres = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_ZN9__gnu_cxx9__freeresEv".as_ptr()) };
    FREERES.store(freeres as usize, Ordering::Release);
    register_fork_handlers();
    STARTED.store(2, Ordering::Release);
    thread::set_current(core::ptr::null_mut());
}

/// The library destructor, run by `exit` during `_dl_fini`: after the
/// program's `atexit` handlers and static destructors (which are recorded),
/// at the same point as heaptrack, whose counts memlens is compared with.
/// Like valgrind and heaptrack, it first lets libstdc++ free its emergency
/// exception pool, which it otherwise keeps until the process dies, so that
/// pool is not reported as a leak. Then it ends the trace.
pub extern "C" fn fini() {
    if is_our_process() {
        let freeres = FREERES.load(Ordering::Acquire);
        if freeres != 0 {
            // SAFETY: `void __gnu_cxx::__freeres()`, resolved at start-up.
            let f: extern "C" fn() = unsafe { core::mem::transmute(freeres) };
            f();
        }
        rounds::flush_and_wait(Some(wakeup::END_EXIT));
        RECORDING.store(false, Ordering::Release);
    }
}

/// `fork` prepare: takes every lock of the recorder, in the order in which
/// the writer's round nests them (its own lock first, then the registry's
/// and the session queues'), so the child inherits none of them mid-use.
extern "C" fn fork_prepare() {
    writer::before_fork();
    registry::before_fork();
    session::before_fork();
}

extern "C" fn fork_parent() {
    session::after_fork_parent();
    registry::after_fork_parent();
    writer::after_fork_parent();
}

extern "C" fn fork_child() {
    let parent = PID.load(Ordering::Relaxed);
    writer::after_fork_child();
    rounds::after_fork_child();
    session::after_fork_child();
    let state = thread::current();
    let survivor = if state.is_null() || state == BUSY {
        core::ptr::null_mut()
    } else {
        // SAFETY: the forking thread's own state.
        let s = unsafe { &*(state as *const thread::ThreadState) };
        s.ring.reset();
        s.forget_stacks();
        // The kernel gave this thread a new tid: start a fresh state instead.
        thread::set_current(core::ptr::null_mut());
        core::ptr::null_mut()
    };
    registry::after_fork_child(survivor);
    wakeup::reset_after_fork();
    RECORDING.store(false, Ordering::Release);
    let was = thread::current();
    thread::set_current(BUSY);
    start_session(true, parent);
    thread::set_current(was);
}

/// `_exit`: finish the trace, then leave at once.
#[unsafe(no_mangle)]
pub extern "C" fn _exit(status: c_int) -> ! {
    if is_our_process() {
        rounds::flush_and_wait(Some(wakeup::END_UNDERSCORE_EXIT));
    }
    // SAFETY: exit_group never returns.
    unsafe { libc::syscall(libc::SYS_exit_group, status) };
    loop {
        // exit_group does not return; never spin if it somehow did.
        // SAFETY: pause has no preconditions.
        unsafe { libc::pause() };
    }
}

/// `_Exit`: same as `_exit`.
#[unsafe(no_mangle)]
pub extern "C" fn _Exit(status: c_int) -> ! {
    _exit(status)
}

fn before_exec() {
    if !is_our_process() {
        return;
    }
    session::add_mark(clock::now_raw(), gettid(), "exec".into());
    rounds::flush_and_wait(None);
}

macro_rules! forward {
    ($slot:ident, $ty:ty) => {{
        let p = $slot.load(Ordering::Acquire);
        if p == 0 {
            // SAFETY: errno location is valid.
            unsafe { *libc::__errno_location() = libc::ENOSYS };
            return -1;
        }
        // SAFETY: the symbol was resolved by name and has this signature.
        unsafe { core::mem::transmute::<usize, $ty>(p) }
    }};
}

type ExecveFn =
    unsafe extern "C" fn(*const c_char, *const *const c_char, *const *const c_char) -> c_int;
type ExecvFn = unsafe extern "C" fn(*const c_char, *const *const c_char) -> c_int;
type FexecveFn = unsafe extern "C" fn(c_int, *const *const c_char, *const *const c_char) -> c_int;

/// `execve`: flush, then exec (the new image, if it records, truncates the
/// same trace).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    before_exec();
    let f = forward!(REAL_EXECVE, ExecveFn);
    // SAFETY: forwarding the caller's arguments.
    unsafe { f(path, argv, envp) }
}

/// `execv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn execv(path: *const c_char, argv: *const *const c_char) -> c_int {
    before_exec();
    let f = forward!(REAL_EXECV, ExecvFn);
    // SAFETY: forwarding.
    unsafe { f(path, argv) }
}

/// `execvp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn execvp(file: *const c_char, argv: *const *const c_char) -> c_int {
    before_exec();
    let f = forward!(REAL_EXECVP, ExecvFn);
    // SAFETY: forwarding.
    unsafe { f(file, argv) }
}

/// `execvpe`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn execvpe(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    before_exec();
    let f = forward!(REAL_EXECVPE, ExecveFn);
    // SAFETY: forwarding.
    unsafe { f(file, argv, envp) }
}

/// `fexecve`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fexecve(
    fd: c_int,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    before_exec();
    let f = forward!(REAL_FEXECVE, FexecveFn);
    // SAFETY: forwarding.
    unsafe { f(fd, argv, envp) }
}

type PthreadCreateFn = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    extern "C" fn(*mut c_void) -> *mut c_void,
    *mut c_void,
) -> c_int;

/// `pthread_create`: a sampled recording whose rounds the program's threads
/// run starts its writer thread first (see `rounds.rs`); then the program's
/// thread starts as it would. (The writer thread's own creation comes here
/// too, and only forwards.)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
) -> c_int {
    rounds::program_starts_thread();
    if REAL_PTHREAD_CREATE.load(Ordering::Acquire) == 0 {
        // Before start-up (a constructor that starts a thread), or attached.
        resolve_into(&REAL_PTHREAD_CREATE, c"pthread_create");
    }
    let p = REAL_PTHREAD_CREATE.load(Ordering::Acquire);
    if p == 0 {
        return libc::EAGAIN;
    }
    // SAFETY: the next `pthread_create`, resolved by name; the caller's arguments.
    unsafe { core::mem::transmute::<usize, PthreadCreateFn>(p)(thread, attr, start, arg) }
}

/// Records the module map right after a `dlopen`/`dlclose`, with the time
/// of the call, so even a library loaded and unloaded between two writer
/// rounds is in the trace.
pub fn modules_changed() {
    if RECORDING.load(Ordering::Acquire) {
        let raw = clock::now_raw();
        let scanned = modules::scan();
        dwarf::publish(&scanned);
        session::add_module_snapshot(raw, scanned.into_iter().map(|s| s.module).collect());
        wakeup::wake();
    }
}

/// `dlopen`: records the new module map. `RTLD_DEEPBIND` is removed, since
/// it would make the library bypass the recorder's malloc.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlopen(file: *const c_char, mut mode: c_int) -> *mut c_void {
    let p = REAL_DLOPEN.load(Ordering::Acquire);
    if p == 0 {
        return core::ptr::null_mut();
    }
    if mode & libc::RTLD_DEEPBIND != 0 {
        mode &= !libc::RTLD_DEEPBIND;
        if RECORDING.load(Ordering::Acquire) {
            session::add_warning("dlopen with RTLD_DEEPBIND: the flag was removed so the library's allocations stay visible".into());
        }
    }
    // SAFETY: the resolved dlopen.
    let f: unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void =
        unsafe { core::mem::transmute::<usize, _>(p) };
    // SAFETY: forwarding.
    let handle = unsafe { f(file, mode) };
    if !handle.is_null() {
        modules_changed();
    }
    handle
}

/// Calls the `dlclose` whose address `slot` holds (-1 while it is not resolved).
pub(crate) fn forward_dlclose(slot: &AtomicUsize, handle: *mut c_void) -> c_int {
    let p = slot.load(Ordering::Acquire);
    if p == 0 {
        return -1;
    }
    // SAFETY: `slot` holds the address of a dlclose.
    let f: unsafe extern "C" fn(*mut c_void) -> c_int =
        unsafe { core::mem::transmute::<usize, _>(p) };
    // SAFETY: forwarding.
    unsafe { f(handle) }
}

/// `dlclose`: records the new module map.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlclose(handle: *mut c_void) -> c_int {
    let r = forward_dlclose(&REAL_DLCLOSE, handle);
    modules_changed();
    r
}

/// Places a named mark at the current time (the C API in `memlens.h` and
/// the `memlens-api` crate call this when the recorder is loaded).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memlens_mark(name: *const c_char) {
    if !RECORDING.load(Ordering::Acquire) {
        return;
    }
    let raw = clock::now_raw();
    let text = if name.is_null() {
        String::new()
    } else {
        // SAFETY: the caller passes a NUL-terminated string.
        unsafe { core::ffi::CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    };
    let was = thread::current();
    thread::set_current(BUSY);
    session::add_mark(raw, gettid(), text);
    thread::set_current(was);
}
