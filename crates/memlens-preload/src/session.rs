//! The recording session of this process: its settings, its writer, and the
//! queues of user marks and warnings the writer picks up.
//!
//! The writer sits behind a mutex that the writer thread holds for one round
//! at a time; `exec` (to rename the trace) and `fork` (so the child never
//! inherits it mid-round) take it too. The allocation hot path never does.

use core::cell::UnsafeCell;
use std::sync::OnceLock;

use crate::config::Config;
use crate::writer::Writer;

struct Locked<T> {
    lock: UnsafeCell<libc::pthread_mutex_t>,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only touched with `lock` held.
unsafe impl<T> Sync for Locked<T> {}

impl<T> Locked<T> {
    const fn new(value: T) -> Self {
        Locked {
            lock: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
            value: UnsafeCell::new(value),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: the mutex serialises access to `value`.
        unsafe {
            libc::pthread_mutex_lock(self.lock.get());
            let r = f(&mut *self.value.get());
            libc::pthread_mutex_unlock(self.lock.get());
            r
        }
    }

    fn lock(&self) {
        // SAFETY: statically initialised mutex.
        unsafe { libc::pthread_mutex_lock(self.lock.get()) };
    }

    fn unlock(&self) {
        // SAFETY: called by the holder.
        unsafe { libc::pthread_mutex_unlock(self.lock.get()) };
    }

    /// In a forked child: the lock may have been held by a thread that does
    /// not exist here; start over with `value` (the old one is abandoned).
    fn reset(&self, value: T) {
        // SAFETY: single-threaded child.
        unsafe {
            *self.lock.get() = libc::PTHREAD_MUTEX_INITIALIZER;
            let old = core::mem::replace(&mut *self.value.get(), value);
            core::mem::forget(old);
        }
    }
}

static CONFIG: OnceLock<Config> = OnceLock::new();
static WRITER: Locked<Option<Writer>> = Locked::new(None);
static MARKS: Locked<Vec<(u64, u32, String)>> = Locked::new(Vec::new());
static WARNINGS: Locked<Vec<String>> = Locked::new(Vec::new());
/// Module maps taken by the `dlopen`/`dlclose` hooks, with their raw times.
static MODULE_SNAPSHOTS: Locked<Vec<(u64, Vec<memlens_trace::Module>)>> = Locked::new(Vec::new());

/// The settings (read at start-up).
pub fn config() -> &'static Config {
    CONFIG.get_or_init(Config::from_env)
}

/// Installs the writer.
pub fn set_writer(w: Writer) {
    WRITER.with(|slot| *slot = Some(w));
}

/// Runs `f` on the writer, if there is one.
pub fn with_writer<R>(f: impl FnOnce(&mut Writer) -> R) -> Option<R> {
    WRITER.with(|slot| slot.as_mut().map(f))
}

/// Queues a user mark taken at raw time `raw` on thread `tid`.
pub fn add_mark(raw: u64, tid: u32, name: String) {
    MARKS.with(|m| m.push((raw, tid, name)));
}

/// Takes the queued marks.
pub fn take_marks() -> Vec<(u64, u32, String)> {
    MARKS.with(std::mem::take)
}

/// Queues a warning for the trace (and so for the user).
pub fn add_warning(message: String) {
    WARNINGS.with(|w| w.push(message));
}

/// Takes the queued warnings.
pub fn take_warnings() -> Vec<String> {
    WARNINGS.with(std::mem::take)
}

/// Queues the module map as it is right after a `dlopen`/`dlclose`.
pub fn add_module_snapshot(raw: u64, modules: Vec<memlens_trace::Module>) {
    MODULE_SNAPSHOTS.with(|m| m.push((raw, modules)));
}

/// Takes the queued module maps, oldest first.
pub fn take_module_snapshots() -> Vec<(u64, Vec<memlens_trace::Module>)> {
    MODULE_SNAPSHOTS.with(std::mem::take)
}

/// `fork` prepare: hold every lock so the child gets them in a clean state.
pub fn before_fork() {
    WRITER.lock();
    MARKS.lock();
    WARNINGS.lock();
    MODULE_SNAPSHOTS.lock();
}

/// `fork`, parent side.
pub fn after_fork_parent() {
    MODULE_SNAPSHOTS.unlock();
    WARNINGS.unlock();
    MARKS.unlock();
    WRITER.unlock();
}

/// `fork`, child side: the parent's writer and queues are not ours.
pub fn after_fork_child() {
    WRITER.reset(None);
    MARKS.reset(Vec::new());
    WARNINGS.reset(Vec::new());
    MODULE_SNAPSHOTS.reset(Vec::new());
}
