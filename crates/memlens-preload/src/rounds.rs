//! Who runs the writer's rounds (`writer.rs`): its own thread, or, in a
//! sampled recording, the program's threads themselves.
//!
//! Recording every allocation, the writer encodes tens of millions of events
//! a second: it gets a thread, which a 2-core machine runs beside the program.
//! A sampled recording (`MEMLENS_SAMPLE`) writes a few thousand events a
//! second, and there the thread itself is the cost: glibc's allocator takes
//! its single-threaded fast paths (no atomic operations on its bins and
//! arenas) only while the process has one thread, so a writer thread alone,
//! idle, made a single-threaded program 8 % slower (alloc-bench), more than
//! the sampling hooks themselves cost. So a sampled recording starts
//! **inline**: no writer thread; a hook that records a sampled event runs a
//! round itself when the last one is 10 ms old (taking the writer's lock only
//! if it is free), a thread whose ring is full runs one instead of waiting,
//! and `exit`, `_exit` and `exec` run the final one. The first time the
//! program starts a thread of its own (`pthread_create`, see `lifecycle.rs`)
//! it is multi-threaded anyway: the writer thread starts then, before the
//! program's, and keeps the recording timely when the program idles.
//!
//! What inline changes: chunks still reach the file every 100 ms of the
//! program's sampled activity (a SIGKILL loses at most that much), but a
//! program that stops allocating writes what it sampled last only when it
//! allocates again or exits; periodic marks come with the next round.

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::thread::{self, BUSY};
use crate::{clock, wakeup, writer};

/// True while the program's threads run the rounds (no writer thread).
static INLINE: AtomicBool = AtomicBool::new(false);

/// Inline: when the next round is due, monotonic ns.
static NEXT_ROUND: AtomicU64 = AtomicU64::new(0);

/// Inline: the time between two rounds, as the writer thread sleeps.
const ROUND_NS: u64 = 10_000_000;

/// Asks the writer thread to leave its loop ([`stop`]).
static STOP: AtomicBool = AtomicBool::new(false);
/// True from [`spawn`] until the writer thread has left its loop.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// Starts running the installed writer's rounds: inline when `inline` (a
/// sampled recording), else on the writer thread. False if that thread could
/// not be created.
pub fn start(inline: bool) -> bool {
    NEXT_ROUND.store(0, Ordering::Relaxed);
    INLINE.store(inline, Ordering::Release);
    inline || spawn()
}

/// True while the program's threads run the rounds.
#[inline(always)]
pub fn inline() -> bool {
    INLINE.load(Ordering::Relaxed)
}

/// The program is about to start a thread: an inline recording starts its
/// writer thread first (once; it stays inline if the thread cannot start).
pub fn program_starts_thread() {
    if INLINE.load(Ordering::Acquire)
        && INLINE
            .compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        && !spawn()
    {
        INLINE.store(true, Ordering::Release);
    }
}

/// A forked child has no writer thread, and runs no rounds until its own
/// session (if it records) starts them.
pub fn after_fork_child() {
    INLINE.store(false, Ordering::Release);
    RUNNING.store(false, Ordering::Release);
}

/// Inline: a hook that has just recorded a sampled event (inside its guard,
/// so what the round allocates is not recorded) runs a round when one is
/// due and no other thread is running one.
#[inline]
pub fn round_if_due() {
    if inline() {
        let now = clock::monotonic_ns();
        if now >= NEXT_ROUND.load(Ordering::Relaxed) {
            NEXT_ROUND.store(now + ROUND_NS, Ordering::Relaxed);
            round_now();
        }
    }
}

/// Inline: runs a round unless one is under way; false only then.
pub fn round_now() -> bool {
    writer::try_round()
}

/// Writes everything recorded so far, ending the trace after it with `end`
/// ([`wakeup::END_EXIT`], …), and waits for it, at most two seconds: the
/// writer thread's answer, or inline the round this thread runs (once the
/// writer's lock is free: a round it interrupted itself, in a signal handler,
/// holds it until the wait gives up).
pub fn flush_and_wait(end: Option<u32>) {
    if !INLINE.load(Ordering::Acquire) {
        wakeup::flush_and_wait(end);
        return;
    }
    wakeup::request_flush(end);
    let deadline = clock::monotonic_ns() + 2_000_000_000;
    while !round_now() && clock::monotonic_ns() < deadline {
        // SAFETY: usleep has no preconditions.
        unsafe { libc::usleep(1_000) };
    }
}

/// The writer thread's body.
extern "C" fn writer_main(_arg: *mut c_void) -> *mut c_void {
    thread::set_current(BUSY);
    // Signals go to the program's threads, never to ours.
    // SAFETY: blocking all signals for this thread only.
    unsafe {
        let mut all: libc::sigset_t = core::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, core::ptr::null_mut());
        libc::prctl(
            libc::PR_SET_NAME,
            c"memlens-writer".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    while !STOP.load(Ordering::Acquire) {
        let seen = wakeup::wake_count();
        writer::with_writer(|w| w.round());
        let pending = wakeup::flush_pending(wakeup::flush_requested());
        if !pending && wakeup::wake_count() == seen {
            wakeup::sleep(seen, ROUND_NS);
        }
    }
    RUNNING.store(false, Ordering::Release);
    core::ptr::null_mut()
}

/// Ends an attached session's writer (`memlens detach`; the trace has been
/// finished by a flush with its end): stops the thread (waiting at most two
/// seconds), then closes the trace and drops the writer.
pub fn stop() {
    STOP.store(true, Ordering::Release);
    let deadline = clock::monotonic_ns() + 2_000_000_000;
    while RUNNING.load(Ordering::Acquire) && clock::monotonic_ns() < deadline {
        wakeup::wake();
        // SAFETY: usleep has no preconditions.
        unsafe { libc::usleep(1_000) };
    }
    if RUNNING.load(Ordering::Acquire) {
        // A wedged writer keeps its state; it never touches a new one.
        return;
    }
    if let Some(w) = writer::take() {
        writer::close(w);
    }
    STOP.store(false, Ordering::Release);
}

/// Starts the writer thread; false if it could not be created.
fn spawn() -> bool {
    RUNNING.store(true, Ordering::Release);
    // SAFETY: plain pthread creation with a static entry point.
    unsafe {
        let mut tid: libc::pthread_t = 0;
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        let r = libc::pthread_create(&mut tid, &attr, writer_main, core::ptr::null_mut());
        libc::pthread_attr_destroy(&mut attr);
        if r != 0 {
            RUNNING.store(false, Ordering::Release);
        }
        r == 0
    }
}
