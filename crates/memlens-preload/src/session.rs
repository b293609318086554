//! The recording session of this process: its settings, and the queues of
//! user marks, warnings and module maps the writer picks up.
//!
//! Each queue has its own mutex, taken briefly by the thread that adds to it
//! and by the writer (inside its round, so after the writer's own lock) that
//! takes from it. The allocation hot path never takes any.

use core::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use crate::config::Config;
use crate::locked::Locked;

static CONFIG: OnceLock<Config> = OnceLock::new();
/// The settings of the current attached session (`memlens attach`), which
/// come with its start call, not from the program's environment.
static ATTACHED_CONFIG: AtomicPtr<Config> = AtomicPtr::new(core::ptr::null_mut());
static MARKS: Locked<Vec<(u64, u32, String)>> = Locked::new(Vec::new());
static WARNINGS: Locked<Vec<String>> = Locked::new(Vec::new());
/// Module maps taken by the `dlopen`/`dlclose` hooks, with their raw times.
static MODULE_SNAPSHOTS: Locked<Vec<(u64, Vec<memlens_trace::Module>)>> = Locked::new(Vec::new());

/// The settings (read at start-up, or given by the attached session).
pub fn config() -> &'static Config {
    let attached = ATTACHED_CONFIG.load(Ordering::Acquire);
    if !attached.is_null() {
        // SAFETY: set by `set_attached_config` from a leaked box, never freed.
        return unsafe { &*attached };
    }
    CONFIG.get_or_init(Config::from_env)
}

/// Sets the settings of an attached session, before it starts. Each
/// attach's settings are kept for the life of the process (they are small,
/// and a late reader may still hold the previous ones).
pub fn set_attached_config(config: Config) {
    ATTACHED_CONFIG.store(Box::into_raw(Box::new(config)), Ordering::Release);
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

/// `fork` prepare: hold every lock so the child gets them in a clean state
/// (after the writer's: see `lifecycle::fork_prepare`).
pub fn before_fork() {
    MARKS.lock();
    WARNINGS.lock();
    MODULE_SNAPSHOTS.lock();
}

/// `fork`, parent side.
pub fn after_fork_parent() {
    MODULE_SNAPSHOTS.unlock();
    WARNINGS.unlock();
    MARKS.unlock();
}

/// `fork`, child side: the parent's queues are not ours.
pub fn after_fork_child() {
    MARKS.reset(Vec::new());
    WARNINGS.reset(Vec::new());
    MODULE_SNAPSHOTS.reset(Vec::new());
}
