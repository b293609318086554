//! The list of every thread's state, so the writer can drain all rings.
//!
//! A plain mutex guards it: it is taken only when a thread registers (its
//! first allocation), when the writer takes a snapshot of the list (every
//! round), when the writer retires an exited thread, and around `fork`.
//! The allocation hot path never touches it.

use crate::locked::Locked;
use crate::thread::ThreadState;

static STATES: Locked<Vec<*mut ThreadState>> = Locked::new(Vec::new());

/// Adds a new thread's state.
pub fn register(state: *mut ThreadState) {
    STATES.with(|states| states.push(state));
}

/// Copies the current list into `out`.
pub fn snapshot(out: &mut Vec<*mut ThreadState>) {
    out.clear();
    STATES.with(|states| out.extend_from_slice(states));
}

/// Removes a state (the writer retires exited, drained threads).
pub fn remove(state: *mut ThreadState) {
    STATES.with(|states| states.retain(|&s| s != state));
}

/// `fork` prepare: hold the lock so the child never inherits it taken.
pub fn before_fork() {
    STATES.lock();
}

/// `fork` in the parent: release it.
pub fn after_fork_parent() {
    STATES.unlock();
}

/// `fork` in the child: only the forking thread exists; keep only
/// `survivor` (the other threads' states are abandoned, since their threads
/// do not exist here).
pub fn after_fork_child(survivor: *mut ThreadState) {
    let mut states = Vec::new();
    if !survivor.is_null() {
        states.push(survivor);
    }
    STATES.reset(states);
}
