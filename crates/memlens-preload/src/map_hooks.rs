//! The interposed `mmap`, `mmap64`, `munmap` and `mremap`: the program's own
//! mappings, recorded with `--mmap` (`MEMLENS_MMAP=1`).
//!
//! Without `--mmap` each hook forwards at once: one relaxed load after the
//! real call. With it, a successful call publishes an `MMAP` or `MUNMAP` slot
//! (`slot.rs`) with the caller's stack, through the same guard as the malloc
//! hooks (`hooks.rs`), so a mapping made while the thread is already inside
//! the recorder — its ring is itself an `mmap` — passes straight through and
//! nothing recurses; `errno` is kept as the real call left it. Failed calls
//! are not recorded.
//!
//! glibc's malloc maps its large blocks and arenas with an internal `mmap`
//! that no library can interpose, so only the mappings of the program and of
//! its libraries are seen (the allocator's are blocks of the allocation
//! events already). On x86-64 `mmap64` is the same function as `mmap`; both
//! names are exported so either reference finds the hook.

use core::ffi::{c_int, c_void};

use crate::hooks::{enter, publish, stack_id};
use crate::real::real;
use crate::slot::{self, MAP_FILE, MAP_REMAP};
use crate::{clock, recording};

/// Records a mapping the real call returned; `old` is the range an `mremap`
/// replaced (unmapped at the same time).
#[inline(never)]
fn record_map(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    source: u64,
    old: Option<(*mut c_void, usize)>,
) {
    let t = clock::now_raw();
    let Some(g) = enter() else { return };
    let stack = stack_id(g.state);
    let [first, second] = slot::encode_mmap(
        t,
        addr as u64,
        len as u64,
        prot as u32,
        flags as u32,
        source,
        stack,
    );
    match old {
        Some((old, old_len)) => publish(
            g.state,
            &[
                slot::encode_munmap(t, old as u64, old_len as u64),
                first,
                second,
            ],
        ),
        None => publish(g.state, &[first, second]),
    }
}

/// Records an unmapping that succeeded; `t` was read before the call.
#[inline(never)]
fn record_unmap(t: u64, addr: *mut c_void, len: usize) {
    let Some(g) = enter() else { return };
    publish(g.state, &[slot::encode_munmap(t, addr as u64, len as u64)]);
}

/// `mmap`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: libc::off_t,
) -> *mut c_void {
    // SAFETY: forwarding the caller's arguments.
    let p = unsafe { (real().mmap)(addr, len, prot, flags, fd, offset) };
    if recording::mmap() && p != libc::MAP_FAILED {
        let file = fd >= 0 && flags & libc::MAP_ANONYMOUS == 0;
        record_map(p, len, prot, flags, if file { MAP_FILE } else { 0 }, None);
    }
    p
}

/// `mmap64` (the same function as `mmap` where `off_t` has 64 bits).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: libc::off64_t,
) -> *mut c_void {
    // SAFETY: same contract as mmap.
    unsafe { mmap(addr, len, prot, flags, fd, offset) }
}

/// `munmap`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    if !recording::mmap() {
        // SAFETY: forwarding.
        return unsafe { (real().munmap)(addr, len) };
    }
    // Read before the call, as for `free`: a thread that maps the range
    // again after it is gone always has a later time.
    let t = clock::now_raw();
    // SAFETY: forwarding.
    let r = unsafe { (real().munmap)(addr, len) };
    if r == 0 {
        record_unmap(t, addr, len);
    }
    r
}

/// `mremap`. C declares it variadic (`…, /* void *new_address */`); the
/// optional argument is taken as a fixed fifth one (see `real.rs`) and
/// forwarded as it came.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mremap(
    old: *mut c_void,
    old_len: usize,
    new_len: usize,
    flags: c_int,
    new_addr: *mut c_void,
) -> *mut c_void {
    // SAFETY: forwarding the caller's arguments.
    let p = unsafe { (real().mremap)(old, old_len, new_len, flags, new_addr) };
    if recording::mmap() && p != libc::MAP_FAILED {
        record_map(p, new_len, 0, 0, MAP_REMAP, Some((old, old_len)));
    }
    p
}
