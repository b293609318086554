//! The recorder's side of `memlens attach PID` and `memlens detach PID`:
//! recording a process that is already running, from the moment the
//! library is `dlopen`ed into it until it is told to stop, then leaving the
//! program exactly as it was.
//!
//! `memlens attach` (crate `memlens-attach`) makes one of the program's
//! threads call `dlopen` on this library and then [`memlens_attach_start`]
//! with the session's settings as text (`NAME=value` lines, the variables of
//! `config.rs`, never the program's environment). The start call connects
//! to the command's control socket (an abstract Unix socket named in the
//! settings), receives the open trace file over it (`SCM_RIGHTS`: the
//! command creates the file, with its permissions, in its directory), starts
//! the writer (`lifecycle::start_attached`: the trace says it starts mid-run)
//! and routes every loaded module's malloc family, `dlopen`, `dlclose` and
//! `_exit` to the recorder (`got.rs`, `attach_hooks.rs`). A control thread
//! then waits on the socket: a byte or the end of the connection (the
//! command stopped, or died) detaches ([`detach`]): the slots get their
//! original values back, the threads still inside a hook are waited for, the
//! trace is finished with `end` how `detach` and closed, the writer thread
//! leaves, and the control thread answers `detached` and ends. The library
//! stays loaded; the next attach finds it (the same `dlopen` handle) and
//! starts again with fresh per-thread tables.
//!
//! [`memlens_attach_state`] tells the command, which reads it from the
//! process's memory, whether the library was preloaded (`memlens record`),
//! is idle, or is recording an attached session.

use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicU32, Ordering};
use std::ffi::{CStr, OsString};

use crate::attach_hooks::{self, ATTACHED};
use crate::config::Config;
use crate::recording::RECORDING;
use crate::thread::{self, BUSY};
use crate::{got, lifecycle, output, registry, rounds, session, wakeup};

/// The state `memlens attach` reads from the process: one of the `STATE_*`
/// values. Exported by name (the command finds it in the library's dynamic
/// symbols).
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)] // reason: a C symbol other programs look up by name
pub static memlens_attach_state: AtomicU32 = AtomicU32::new(STATE_IDLE);

/// Loaded by `LD_PRELOAD` (`memlens record`): never attachable.
pub const STATE_PRELOADED: u32 = 1;
/// Loaded by `memlens attach`, not recording: attachable.
pub const STATE_IDLE: u32 = 2;
/// An attached session is starting or recording.
pub const STATE_ATTACHED: u32 = 3;

/// [`memlens_attach_start`]'s results (the command turns each into a sentence).
pub const STARTED: c_int = 0;
/// Another attached session records this process.
pub const ALREADY_ATTACHED: c_int = 1;
/// The library was preloaded by `memlens record`.
pub const PRELOADED: c_int = 2;
/// The control socket could not be reached or sent no trace file.
pub const NO_CONTROL: c_int = 3;
/// The writer thread or the control thread could not start.
pub const NO_THREAD: c_int = 4;
/// No module calls `malloc` through a slot: a statically linked allocator.
pub const NO_MALLOC_SLOT: c_int = 5;

/// Called by the library constructor: true when the library was `dlopen`ed
/// into a running process (by `memlens attach`), which must not start
/// recording from the environment; false when it is preloaded (named in
/// `LD_PRELOAD`), the usual `memlens record` start.
pub fn loaded_for_attach() -> bool {
    let mut info: libc::Dl_info = unsafe_zeroed();
    // SAFETY: dladdr on an address of this library, into a local struct.
    let own = unsafe { libc::dladdr(loaded_for_attach as *const c_void, &mut info) } != 0
        && !info.dli_fname.is_null();
    let file: Vec<u8> = if own {
        // SAFETY: the loader's NUL-terminated file name of this library.
        let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
        path.rsplit(|&b| b == b'/').next().unwrap_or(path).to_vec()
    } else {
        b"libmemlens_preload".to_vec()
    };
    let preloaded = crate::config::env(c"LD_PRELOAD").is_some_and(|list| {
        let list = list.into_encoded_bytes();
        list.windows(file.len()).any(|w| w == file.as_slice())
    });
    let state = if preloaded {
        STATE_PRELOADED
    } else {
        STATE_IDLE
    };
    memlens_attach_state.store(state, Ordering::Release);
    !preloaded
}

fn unsafe_zeroed<T: Copy>() -> T {
    // SAFETY: only used for plain C structs, for which all-zero is valid.
    unsafe { core::mem::zeroed() }
}

/// The session's settings: `NAME=value` lines.
fn settings(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .collect()
}

fn setting<'a>(settings: &'a [(String, String)], name: &str) -> Option<&'a str> {
    settings
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Connects to the abstract Unix socket `name` and receives the trace file's
/// descriptor; `(socket, trace)`.
fn connect_control(name: &str) -> Option<(c_int, c_int)> {
    // SAFETY: plain socket calls on a local address and buffers; every
    // descriptor is closed on failure.
    unsafe {
        let sock = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return None;
        }
        let mut addr: libc::sockaddr_un = unsafe_zeroed();
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let bytes = name.as_bytes();
        if bytes.len() + 1 > addr.sun_path.len() {
            libc::close(sock);
            return None;
        }
        for (i, &b) in bytes.iter().enumerate() {
            addr.sun_path[i + 1] = b as c_char;
        }
        let len = core::mem::size_of::<libc::sa_family_t>() + 1 + bytes.len();
        let timeout = libc::timeval {
            tv_sec: 10,
            tv_usec: 0,
        };
        libc::setsockopt(
            sock,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            core::mem::size_of::<libc::timeval>() as u32,
        );
        if libc::connect(sock, (&addr as *const libc::sockaddr_un).cast(), len as u32) != 0 {
            libc::close(sock);
            return None;
        }
        let mut byte = 0u8;
        let mut iov = libc::iovec {
            iov_base: (&mut byte as *mut u8).cast(),
            iov_len: 1,
        };
        let mut control = [0u64; 8];
        let mut msg: libc::msghdr = unsafe_zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = core::mem::size_of_val(&control);
        let n = libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC);
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if n != 1
            || cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            libc::close(sock);
            return None;
        }
        let fd = (libc::CMSG_DATA(cmsg) as *const c_int).read_unaligned();
        // Back to blocking reads without a limit for the control thread.
        let forever = libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        };
        libc::setsockopt(
            sock,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&forever as *const libc::timeval).cast(),
            core::mem::size_of::<libc::timeval>() as u32,
        );
        Some((sock, fd))
    }
}

fn say(sock: c_int, line: &str) {
    output::write_all(sock, line.as_bytes());
}

/// Forgets what the threads' tables hold from a previous session: the new
/// trace must receive every stack again. No thread is inside a hook (the
/// previous session waited for them), so the tables are the callers' alone.
fn reset_threads() {
    let mut states = Vec::new();
    registry::snapshot(&mut states);
    for &p in &states {
        // SAFETY: registered states stay allocated while registered, and no
        // thread is inside a hook, so nothing else touches these fields.
        unsafe {
            (*p).ring.reset();
            (*p).forget_stacks();
        }
    }
    wakeup::reset_after_fork();
}

/// Starts an attached session with `settings` (NUL-terminated `NAME=value`
/// lines); returns [`STARTED`] or the reason it did not start. Called by
/// `memlens attach` on one of the program's threads, after `dlopen`.
///
/// # Safety
///
/// `settings` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memlens_attach_start(settings_text: *const c_char) -> c_int {
    match memlens_attach_state.compare_exchange(
        STATE_IDLE,
        STATE_ATTACHED,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => {}
        Err(STATE_PRELOADED) => return PRELOADED,
        Err(_) => return ALREADY_ATTACHED,
    }
    thread::init_key();
    let was = thread::current();
    thread::set_current(BUSY);
    let text = if settings_text.is_null() {
        String::new()
    } else {
        // SAFETY: the caller passes a NUL-terminated string.
        unsafe { CStr::from_ptr(settings_text) }
            .to_string_lossy()
            .into_owned()
    };
    let result = start(&settings(&text));
    if result != STARTED {
        memlens_attach_state.store(STATE_IDLE, Ordering::Release);
    }
    thread::set_current(was);
    result
}

fn start(settings: &[(String, String)]) -> c_int {
    let Some((sock, trace)) = setting(settings, "MEMLENS_ATTACH_CONTROL").and_then(connect_control)
    else {
        return NO_CONTROL;
    };
    session::set_attached_config(Config::from_vars(|name| {
        setting(settings, name.to_str().ok()?).map(OsString::from)
    }));
    reset_threads();
    let attached = memlens_trace::Attached {
        // SAFETY: getpid has no preconditions.
        pid: unsafe { libc::getpid() } as u32,
        attach_unix_ns: 0,
        process_start_unix_ns: setting(settings, "MEMLENS_ATTACH_PROCESS_START")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
    };
    if !lifecycle::start_attached(output::Output { fd: trace }, attached) {
        // SAFETY: our socket.
        unsafe { libc::close(sock) };
        return NO_THREAD;
    }
    attach_hooks::resolve();
    ATTACHED.store(true, Ordering::SeqCst);
    register_membarrier();
    let own = memlens_attach_start as *const () as usize;
    let counts = got::patch(&attach_hooks::routes(), own);
    if counts.malloc_slots == 0 {
        end_session();
        // SAFETY: our socket.
        unsafe { libc::close(sock) };
        return NO_MALLOC_SLOT;
    }
    register_fork_child();
    if !spawn_control(sock) {
        end_session();
        // SAFETY: our socket.
        unsafe { libc::close(sock) };
        return NO_THREAD;
    }
    say(
        sock,
        &format!(
            "attached slots={} modules={}\n",
            counts.patched, counts.modules
        ),
    );
    STARTED
}

/// `membarrier(2)` commands.
const MEMBARRIER_CMD_GLOBAL: libc::c_long = 1;
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

fn membarrier(cmd: libc::c_long) -> bool {
    // SAFETY: the membarrier system call with a command and no flags.
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0, 0) == 0 }
}

fn register_membarrier() {
    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
}

/// Waits until no thread is inside a hook, after `RECORDING` was cleared
/// (at most two seconds). A hook sets its thread's `in_hook`, then checks
/// `RECORDING` again (`hooks::enter`); the membarrier makes every thread's
/// flag visible here, or its check see the cleared flag: the asymmetric
/// fence that keeps the allocation path free of atomic read-modify-writes.
fn wait_for_hooks_to_leave() {
    if !membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) && !membarrier(MEMBARRIER_CMD_GLOBAL) {
        // No membarrier (an old kernel, a seccomp filter): give a thread that
        // was between its two checks time to reach the second.
        // SAFETY: usleep has no preconditions.
        unsafe { libc::usleep(20_000) };
    }
    let mut states = Vec::new();
    registry::snapshot(&mut states);
    let deadline = crate::clock::monotonic_ns() + 2_000_000_000;
    for &p in &states {
        // SAFETY: registered states stay allocated while registered; the flag
        // is its thread's, read here with a volatile load (a byte, never torn).
        while unsafe { core::ptr::read_volatile((*p).in_hook.as_ptr()) }
            && crate::clock::monotonic_ns() < deadline
        {
            // SAFETY: sched_yield has no preconditions.
            unsafe { libc::sched_yield() };
        }
    }
}

/// Ends the session: restores the slots, stops recording, waits for the
/// threads inside a hook, finishes and closes the trace, stops the writer.
fn end_session() {
    got::restore();
    ATTACHED.store(false, Ordering::SeqCst);
    let was_recording = RECORDING.swap(false, Ordering::SeqCst);
    wait_for_hooks_to_leave();
    if was_recording {
        rounds::flush_and_wait(Some(wakeup::END_DETACH));
    }
    rounds::stop();
}

/// Detaches (the control thread, told to stop): see the module comment.
fn detach() {
    end_session();
    memlens_attach_state.store(STATE_IDLE, Ordering::Release);
}

/// `fork` in the child: the parent's session is not the child's, which can be
/// attached to on its own (its routed slots lead to hooks that only forward
/// while it records nothing).
extern "C" fn fork_child() {
    ATTACHED.store(false, Ordering::SeqCst);
    memlens_attach_state.store(STATE_IDLE, Ordering::Release);
}

fn register_fork_child() {
    static REGISTERED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    if !REGISTERED.swap(true, Ordering::AcqRel) {
        // SAFETY: registering a plain C callback.
        unsafe { libc::pthread_atfork(None, None, Some(fork_child)) };
    }
}

/// The control thread: waits for a byte or the end of the connection, then
/// detaches and says so.
extern "C" fn control_main(arg: *mut c_void) -> *mut c_void {
    let sock = arg as usize as c_int;
    thread::set_current(BUSY);
    // SAFETY: blocking every signal for this thread only, naming it.
    unsafe {
        let mut all: libc::sigset_t = unsafe_zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, core::ptr::null_mut());
        libc::prctl(
            libc::PR_SET_NAME,
            c"memlens-attach".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    let mut byte = 0u8;
    loop {
        // SAFETY: reading one byte into a local.
        let n = unsafe { libc::read(sock, (&mut byte as *mut u8).cast(), 1) };
        // SAFETY: errno location is valid.
        if n < 0 && unsafe { *libc::__errno_location() } == libc::EINTR {
            continue;
        }
        break;
    }
    detach();
    say(sock, "detached\n");
    // SAFETY: our socket.
    unsafe { libc::close(sock) };
    core::ptr::null_mut()
}

fn spawn_control(sock: c_int) -> bool {
    // SAFETY: plain pthread creation with a static entry point.
    unsafe {
        let mut tid: libc::pthread_t = 0;
        let mut attr: libc::pthread_attr_t = unsafe_zeroed();
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        let r = libc::pthread_create(&mut tid, &attr, control_main, sock as usize as *mut c_void);
        libc::pthread_attr_destroy(&mut attr);
        r == 0
    }
}
