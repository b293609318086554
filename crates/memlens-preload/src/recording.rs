//! The process-wide switches of the recording, set by `lifecycle.rs` at
//! start-up, fork and exit and read by the hooks with one relaxed load each,
//! and the count of events dropped by a wedged writer.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// True while events are being recorded (after start-up, until shutdown).
pub static RECORDING: AtomicBool = AtomicBool::new(false);

/// True when every call's allocator latency is recorded too (set once at
/// start-up, before recording begins).
static LATENCY: AtomicBool = AtomicBool::new(false);

/// Turns latency recording on or off (start-up only).
pub fn set_latency(on: bool) {
    LATENCY.store(on, Ordering::Relaxed);
}

/// True in latency mode (`MEMLENS_LATENCY=1`).
#[inline(always)]
pub fn latency() -> bool {
    LATENCY.load(Ordering::Relaxed)
}

/// True when frees are recorded with their call stacks (`MEMLENS_FREE_STACKS=1`).
static FREE_STACKS: AtomicBool = AtomicBool::new(false);

/// True when the program's own mappings are recorded (`MEMLENS_MMAP=1`).
static MMAP: AtomicBool = AtomicBool::new(false);

/// Turns free stacks and mapping records on or off (start-up only, before
/// recording begins).
pub fn set_captures(free_stacks: bool, mmap: bool) {
    FREE_STACKS.store(free_stacks, Ordering::Relaxed);
    MMAP.store(mmap, Ordering::Relaxed);
}

/// True when frees capture their stacks.
#[inline(always)]
pub fn free_stacks() -> bool {
    FREE_STACKS.load(Ordering::Relaxed)
}

/// True when `mmap`, `munmap` and `mremap` are recorded; otherwise their
/// hooks forward at once.
#[inline(always)]
pub fn mmap() -> bool {
    MMAP.load(Ordering::Relaxed)
}

/// Events dropped because a ring stayed full (see `hooks::wait_for_room`).
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Counts one dropped event.
pub fn count_dropped() {
    DROPPED.fetch_add(1, Ordering::Relaxed);
}

/// Takes the count of dropped events (the writer reports it as a warning).
pub fn take_dropped() -> u64 {
    DROPPED.swap(0, Ordering::Relaxed)
}
