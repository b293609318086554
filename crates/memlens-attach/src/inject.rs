//! Loading the recorder into the process and starting it: on a borrowed
//! thread (`ptrace.rs`), `dlopen` the library (libc's own `dlopen`, found in
//! the process's libc by its dynamic symbols), then call the library's
//! `memlens_attach_start` with the session's settings. Before anything is
//! touched, a recorder already loaded is asked (its exported state, read
//! from the process's memory) whether it is preloaded by `memlens record` or
//! recording another attached session.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::AttachError;
use crate::process::{Process, is_libc};
use crate::ptrace::Borrowed;

/// The recorder's file name.
const LIBRARY: &str = "libmemlens_preload.so";

/// `memlens_attach_state` values (`memlens-preload`'s `attach.rs`).
const STATE_PRELOADED: u32 = 1;
const STATE_ATTACHED: u32 = 3;

/// `memlens_attach_start` results (`memlens-preload`'s `attach.rs`).
const STARTED: i32 = 0;
const ALREADY_ATTACHED: i32 = 1;
const PRELOADED: i32 = 2;
const NO_CONTROL: i32 = 3;
const NO_THREAD: i32 = 4;
const NO_MALLOC_SLOT: i32 = 5;

fn is_recorder(path: &str) -> bool {
    path.rsplit('/').next() == Some(LIBRARY)
}

/// Refuses a process whose recorder (already loaded) is preloaded or busy.
fn check_loaded_recorder(process: &Process, state: u32) -> Result<(), AttachError> {
    match state {
        STATE_PRELOADED => Err(AttachError::Preloaded { pid: process.pid }),
        STATE_ATTACHED => Err(AttachError::AlreadyAttached { pid: process.pid }),
        _ => Ok(()),
    }
}

/// The state of the recorder loaded at `path` in the process, read from its memory.
fn loaded_state(process: &Process, path: &str) -> Option<u32> {
    let at = process.symbol(path, "memlens_attach_state")?;
    let mem = File::open(format!("/proc/{}/mem", process.pid)).ok()?;
    let mut buf = [0u8; 4];
    mem.read_exact_at(&mut buf, at).ok()?;
    Some(u32::from_ne_bytes(buf))
}

/// System calls in which a thread waits for something else (x86-64 numbers): a
/// thread blocked in one holds no allocator or loader state half-changed.
const WAITING: [u64; 33] = [
    0, 1, 7, 17, 19, 20, 23, 34, 35, 43, 44, 45, 46, 47, 61, 65, 70, 128, 130, 202, 208, 220, 230,
    232, 243, 247, 270, 271, 281, 288, 299, 426, 441,
];

/// How long to look for a thread that can be borrowed safely.
const BORROW_LIMIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Seizes a thread that is safe to make calls on: one waiting in a system call
/// (outside the loader), or one running code that is neither the loader's, the C
/// library's nor the allocator's (so it holds none of their locks and is not
/// halfway through changing their state). Threads are tried in turn, those
/// blocked in a system call first, again and again for up to three seconds.
fn borrow_safely(process: &Process) -> Result<Borrowed, AttachError> {
    let risky = process.allocator_and_loader_code();
    let loader = process.loader_code();
    let inside = |ranges: &[(u64, u64)], at: u64| ranges.iter().any(|&(s, e)| at >= s && at < e);
    let deadline = std::time::Instant::now() + BORROW_LIMIT;
    loop {
        for tid in process.threads_to_try() {
            let thread = match Borrowed::seize(process.pid, tid) {
                Ok(t) => t,
                // A thread that ended meanwhile: try the others.
                Err(AttachError::Exited { .. }) if tid != process.pid => continue,
                Err(e) => return Err(e),
            };
            let safe = match thread.position() {
                (at, Some(call)) => WAITING.contains(&call) && !inside(&loader, at),
                (at, None) => !inside(&risky, at),
            };
            if safe {
                return Ok(thread);
            }
            thread.release()?;
        }
        if std::time::Instant::now() > deadline {
            return Err(AttachError::Injection {
                pid: process.pid,
                reason: format!(
                    "for {} s, every thread was inside the allocator, the C library or the                      loader whenever memlens looked, so none could be borrowed safely; try again",
                    BORROW_LIMIT.as_secs()
                ),
            });
        }
        std::thread::sleep(std::time::Duration::from_micros(1500));
    }
}

/// Loads `library` into the process and starts an attached session with
/// `settings` (`NAME=value` lines).
///
/// # Errors
///
/// Every [`AttachError`] of the checks and the calls.
pub fn start_recorder(
    process: &mut Process,
    library: &Path,
    settings: &str,
) -> Result<(), AttachError> {
    let pid = process.pid;
    if cfg!(not(target_arch = "x86_64")) {
        return Err(AttachError::Unsupported);
    }
    let injection = |reason: String| AttachError::Injection { pid, reason };
    let exe = process.exe.clone();
    let mut thread = borrow_safely(process)?;
    // The maps as they are while the thread is held: a process that `exec`ed
    // since the first look (a wrapper script, a shim) has a new image, with
    // its C library elsewhere; one that has just started may have none yet.
    process.reread_maps()?;
    let now = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    if now.as_ref() != Some(&exe) || process.module(is_libc).is_none() {
        thread.release()?;
        return Err(AttachError::Changing { pid });
    }
    // A recorder already loaded is reused (the same dlopen handle).
    let loaded = process.module(is_recorder).map(str::to_string);
    if let Some(path) = &loaded
        && let Some(state) = loaded_state(process, path)
    {
        check_loaded_recorder(process, state)?;
    }
    let library = loaded.unwrap_or_else(|| library.display().to_string());
    let libc_path = process
        .module(is_libc)
        .ok_or_else(|| injection("no C library is loaded".into()))?
        .to_string();
    let dlopen = process
        .symbol(&libc_path, "dlopen")
        .or_else(|| process.symbol(&libc_path, "__libc_dlopen_mode"))
        .ok_or_else(|| injection(format!("{libc_path} has no dlopen")))?;
    let dlerror = process.symbol(&libc_path, "dlerror");

    let mut path = library.clone().into_bytes();
    path.push(0);
    let path_at = thread.push_data(&path)?;
    let mut text = settings.as_bytes().to_vec();
    text.push(0);
    let settings_at = thread.push_data(&text)?;
    let handle = thread.call(dlopen, &[path_at, libc::RTLD_NOW as u64])?;
    if handle == 0 {
        let why = match dlerror {
            Some(f) => {
                let at = thread.call(f, &[])?;
                if at == 0 {
                    String::new()
                } else {
                    thread.read_string(at)
                }
            }
            None => String::new(),
        };
        return Err(injection(format!("dlopen of {library} failed: {why}")));
    }
    process.reread_maps()?;
    let mapped = process
        .module(is_recorder)
        .ok_or_else(|| injection(format!("{library} is not mapped after dlopen")))?
        .to_string();
    let state_at = process
        .symbol(&mapped, "memlens_attach_state")
        .ok_or_else(|| injection(format!("{mapped} has no memlens_attach_state")))?;
    check_loaded_recorder(process, thread.read_u32(state_at)?)?;
    let start = process
        .symbol(&mapped, "memlens_attach_start")
        .ok_or_else(|| injection(format!("{mapped} has no memlens_attach_start")))?;
    let code = thread.call(start, &[settings_at])? as i32;
    thread.release()?;
    match code {
        STARTED => Ok(()),
        ALREADY_ATTACHED => Err(AttachError::AlreadyAttached { pid }),
        PRELOADED => Err(AttachError::Preloaded { pid }),
        NO_MALLOC_SLOT => Err(AttachError::StaticAllocator {
            pid,
            exe: process.exe_name(),
            symbol: "malloc (no loaded module calls it through a GOT slot)".into(),
        }),
        NO_CONTROL => Err(injection(
            "the recorder could not reach memlens over its control socket (is the process in another network namespace?)".into(),
        )),
        NO_THREAD => Err(injection("the recorder could not start its threads".into())),
        other => Err(injection(format!("unexpected result {other}"))),
    }
}
