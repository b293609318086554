//! The list of every thread's state, so the writer can drain all rings.
//!
//! A plain mutex guards it: it is taken only when a thread registers (its
//! first allocation), when the writer takes a snapshot of the list (every
//! round), when the writer retires an exited thread, and around `fork`.
//! The allocation hot path never touches it.

use core::cell::UnsafeCell;

use crate::thread::ThreadState;

struct Registry {
    lock: UnsafeCell<libc::pthread_mutex_t>,
    states: UnsafeCell<Vec<*mut ThreadState>>,
}

// SAFETY: every access to `states` happens with `lock` held.
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry {
    lock: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
    states: UnsafeCell::new(Vec::new()),
};

fn lock() {
    // SAFETY: the mutex is statically initialised.
    unsafe { libc::pthread_mutex_lock(REGISTRY.lock.get()) };
}

fn unlock() {
    // SAFETY: called by the thread that holds the lock.
    unsafe { libc::pthread_mutex_unlock(REGISTRY.lock.get()) };
}

/// Adds a new thread's state.
pub fn register(state: *mut ThreadState) {
    lock();
    // SAFETY: lock held.
    unsafe { (*REGISTRY.states.get()).push(state) };
    unlock();
}

/// Copies the current list into `out`.
pub fn snapshot(out: &mut Vec<*mut ThreadState>) {
    out.clear();
    lock();
    // SAFETY: lock held.
    out.extend_from_slice(unsafe { &*REGISTRY.states.get() });
    unlock();
}

/// Removes a state (the writer retires exited, drained threads).
pub fn remove(state: *mut ThreadState) {
    lock();
    // SAFETY: lock held.
    unsafe { (*REGISTRY.states.get()).retain(|&s| s != state) };
    unlock();
}

/// `fork` prepare: hold the lock so the child never inherits it taken.
pub fn before_fork() {
    lock();
}

/// `fork` in the parent: release it.
pub fn after_fork_parent() {
    unlock();
}

/// `fork` in the child: only the forking thread exists; reinitialise the
/// lock and keep only `survivor` (the other threads' states are abandoned).
pub fn after_fork_child(survivor: *mut ThreadState) {
    // SAFETY: single-threaded in the child; re-initialising the mutex we
    // held at fork time is the documented way to recover it.
    unsafe {
        *REGISTRY.lock.get() = libc::PTHREAD_MUTEX_INITIALIZER;
        let states = &mut *REGISTRY.states.get();
        // Abandon (leak) the parent's other states: their threads do not exist here.
        let old = core::mem::take(states);
        core::mem::forget(old);
        if !survivor.is_null() {
            states.push(survivor);
        }
    }
}
