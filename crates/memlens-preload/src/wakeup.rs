//! The futex words between the program's threads and the writer thread:
//! waking the writer, asking it for a synchronous flush (and, at exit, for
//! the end of the trace) and waiting, bounded, for its answer. (A recording
//! without a writer thread asks with [`request_flush`] and runs the round
//! itself: `rounds.rs`.)
//!
//! Producers only ever call [`wake`] (rarely: when a ring fills up) and
//! [`wait_for_room`] (when one is full: the writer wakes them as soon as it
//! has drained a ring, see [`room_made`]); `exit`, `_exit` and `exec` call
//! [`flush_and_wait`]. The writer's side is the rest. Nothing here locks.

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use crate::clock;

/// Futex word producers bump to wake the writer.
static WAKE: AtomicU32 = AtomicU32::new(0);
/// Futex word the writer bumps when it has made room in the rings while a
/// producer waits for some, and the number of producers waiting.
static ROOM: AtomicU32 = AtomicU32::new(0);
static WAITING: AtomicU32 = AtomicU32::new(0);
/// Flush requests (generation numbers) and the last one completed.
static FLUSH_REQ: AtomicU32 = AtomicU32::new(0);
static FLUSH_DONE: AtomicU32 = AtomicU32::new(0);
/// Set with a flush request when the trace must end after it.
static END_REQUESTED: AtomicBool = AtomicBool::new(false);
static END_HOW: AtomicU32 = AtomicU32::new(0);
/// The raw clock when the end was asked for: the End record's time is when the
/// program called `exit`, not when the writer got to it.
static END_RAW: AtomicU64 = AtomicU64::new(0);

/// How the trace ended, for the End record: `exit` was called.
pub const END_EXIT: u32 = 1;
/// `_exit` was called.
pub const END_UNDERSCORE_EXIT: u32 = 2;
/// `memlens detach` (or the end of `memlens attach`) stopped the recording;
/// the program runs on.
pub const END_DETACH: u32 = 3;

fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a valid aligned u32.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

fn futex_wait(word: &AtomicU32, seen: u32, ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as i64,
        tv_nsec: (ns % 1_000_000_000) as i64,
    };
    // SAFETY: FUTEX_WAIT on a valid aligned u32 with a relative timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            seen,
            &ts as *const libc::timespec,
        );
    }
}

/// Wakes the writer (producers call this rarely: when a ring fills up).
pub fn wake() {
    WAKE.fetch_add(1, Ordering::Release);
    futex_wake(&WAKE);
}

/// A producer whose ring is full: wakes the writer and waits until it has made
/// room, or until a millisecond has passed; returns as soon as `has_room` says
/// there is room. Counted among the waiters before it looks, so the writer,
/// which looks for waiters after it releases room, never misses it.
pub fn wait_for_room(has_room: impl Fn() -> bool) {
    WAITING.fetch_add(1, Ordering::SeqCst);
    let seen = ROOM.load(Ordering::SeqCst);
    if !has_room() {
        wake();
        futex_wait(&ROOM, seen, 1_000_000);
    }
    WAITING.fetch_sub(1, Ordering::SeqCst);
}

/// Writer: it has released room in a ring; wakes the producers waiting for
/// some (a fence and a load when none waits).
pub fn room_made() {
    core::sync::atomic::fence(Ordering::SeqCst);
    if WAITING.load(Ordering::SeqCst) > 0 {
        ROOM.fetch_add(1, Ordering::SeqCst);
        futex_wake(&ROOM);
    }
}

/// Asks the writer to write everything recorded so far and waits for it
/// (at most two seconds, so a wedged writer can never hang the program).
/// With `end` ([`END_EXIT`] or [`END_UNDERSCORE_EXIT`]), the trace is
/// finished with an End record.
pub fn flush_and_wait(end: Option<u32>) {
    let generation = request_flush(end);
    let deadline = clock::monotonic_ns() + 2_000_000_000;
    loop {
        wake();
        let done = FLUSH_DONE.load(Ordering::Acquire);
        if done.wrapping_sub(generation) as i32 >= 0 {
            return;
        }
        if clock::monotonic_ns() > deadline {
            return;
        }
        futex_wait(&FLUSH_DONE, done, 20_000_000);
    }
}

/// Asks for a flush (and with `end`, the end of the trace after it) without
/// waking the writer thread: the next round answers it. Returns the request.
pub fn request_flush(end: Option<u32>) -> u32 {
    if let Some(how) = end {
        END_RAW.store(clock::now_raw(), Ordering::Relaxed);
        END_HOW.store(how, Ordering::Relaxed);
        END_REQUESTED.store(true, Ordering::Release);
    }
    FLUSH_REQ.fetch_add(1, Ordering::AcqRel).wrapping_add(1)
}

/// Writer: the wake-up count, to pass to [`sleep`] after a round.
pub fn wake_count() -> u32 {
    WAKE.load(Ordering::Acquire)
}

/// Writer: sleeps up to `ns` unless woken since it read `seen` from
/// [`wake_count`].
pub fn sleep(seen: u32, ns: u64) {
    futex_wait(&WAKE, seen, ns);
}

/// Writer: the newest flush request.
pub fn flush_requested() -> u32 {
    FLUSH_REQ.load(Ordering::Acquire)
}

/// Writer: true while `request` (from [`flush_requested`]) is unanswered.
pub fn flush_pending(request: u32) -> bool {
    FLUSH_DONE.load(Ordering::Acquire) != request
}

/// Writer: answers every flush request up to `request`.
pub fn complete_flush(request: u32) {
    FLUSH_DONE.store(request, Ordering::Release);
    futex_wake(&FLUSH_DONE);
}

/// Writer: how the trace must end ([`END_EXIT`] or [`END_UNDERSCORE_EXIT`])
/// and the raw clock when that was asked for, if a flush request asked for
/// the end.
pub fn end_requested() -> Option<(u32, u64)> {
    END_REQUESTED.load(Ordering::Acquire).then(|| {
        (
            END_HOW.load(Ordering::Relaxed),
            END_RAW.load(Ordering::Relaxed),
        )
    })
}

/// Resets the words in a forked child (its writer is new), and between two
/// attached sessions.
pub fn reset_after_fork() {
    WAKE.store(0, Ordering::Relaxed);
    WAITING.store(0, Ordering::Relaxed);
    FLUSH_REQ.store(0, Ordering::Relaxed);
    FLUSH_DONE.store(0, Ordering::Relaxed);
    END_REQUESTED.store(false, Ordering::Relaxed);
}
