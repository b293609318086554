//! The interposed malloc family and the recording path behind it.
//!
//! Every hook calls the real function, then records: it takes the raw time
//! (before the call for `free`, after it for allocations, so an address
//! reused by another thread is always freed before it is handed out again),
//! captures the stack for allocations, interns it per thread, and publishes
//! a few 32-byte slots (`slot.rs`) to the thread's ring. `errno` is saved
//! and restored around everything the recorder does. `free(NULL)` and
//! failed allocations are not recorded. In a process that records nothing (one
//! the run does not follow, see `output.rs`) every hook only forwards: one
//! relaxed load, no clock read.
//!
//! With `--free-stacks` (`MEMLENS_FREE_STACKS=1`) frees capture their stack
//! as allocations do (same unwinder, same per-thread stack cache); the
//! program's own `mmap`, `munmap` and `mremap` are in `map_hooks.rs`.
//!
//! With `--latency` (`MEMLENS_LATENCY=1`) every hook also reads the clock on
//! the other side of the real call and records the difference: how long the
//! allocator took. Each hook picks its mode once per call (one relaxed load,
//! [`recording::latency`]) and runs a copy of its body compiled for that
//! mode, so the default mode does exactly the work it did before.
//!
//! With `--sample BYTES` (`MEMLENS_SAMPLE`, see `sampling.rs`) an allocation
//! forwards, subtracts its size from the thread's byte counter and returns; only
//! one that reaches the counter is recorded (and its block remembered), and only
//! frees of remembered blocks are. A `realloc` is a free of the old block (when it
//! was sampled) and a sampling decision for the new one. A sampled event may run
//! the writer's round, before its hook returns, when the program has no writer
//! thread (`rounds.rs`).

use core::ffi::c_void;
use core::sync::atomic::Ordering;

use memlens_trace::AllocFn;

use crate::real::{arena_alloc, arena_size, in_arena, real, resolve, resolved, resolving};
use crate::recording::{self, RECORDING};
use crate::ring::CAPACITY;
use crate::slot::{self, MAX_LATENCY_TICKS, Slot};
use crate::stack;
use crate::thread::{self, BUSY, ThreadState};
use crate::{clock, lifecycle, registry, rounds, sampling, wakeup};

#[inline(always)]
fn timed() -> bool {
    recording::latency()
}

/// `AllocFn` code for `realloc(NULL, n)` and arena moves (recorded as allocations).
const REALLOC_AS_ALLOC: AllocFn = AllocFn::Malloc;

/// This thread inside the recorder (see [`enter`]); restores `errno` and
/// leaves when dropped.
pub(crate) struct Guard<'a> {
    pub(crate) state: &'a ThreadState,
    errno: i32,
}

impl Drop for Guard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: the state's errno pointer is this thread's errno.
        unsafe { *self.state.errno = self.errno };
        self.state.in_hook.set(false);
    }
}

/// True when this process records nothing (yet, or at all: a process the run
/// does not follow): the hook then only forwards, with no clock read. Starts
/// recording first if the constructor has not run yet.
#[inline(always)]
fn idle() -> bool {
    !RECORDING.load(Ordering::Relaxed) && still_idle()
}

#[cold]
#[inline(never)]
fn still_idle() -> bool {
    lifecycle::start_early(malloc as *const ());
    !RECORDING.load(Ordering::Acquire)
}

/// Enters the recorder for this thread, or `None` when this call must not be
/// recorded (not recording, nested call, writer thread, set-up in progress).
#[inline(always)]
pub(crate) fn enter() -> Option<Guard<'static>> {
    if !RECORDING.load(Ordering::Relaxed) {
        lifecycle::start_early(malloc as *const ());
        if !RECORDING.load(Ordering::Acquire) {
            return None;
        }
    }
    let mut p = thread::current();
    if p == BUSY {
        return None;
    }
    if p.is_null() {
        // SAFETY: errno location is always valid.
        let errno = unsafe { *libc::__errno_location() };
        p = thread::create(registry::register).cast();
        // SAFETY: restore errno clobbered by set-up.
        unsafe { *libc::__errno_location() = errno };
        if p.is_null() {
            return None;
        }
    }
    // SAFETY: a non-sentinel key value is this thread's live state.
    let state: &'static ThreadState = unsafe { &*(p as *const ThreadState) };
    if state.in_hook.replace(true) {
        return None;
    }
    // Checked again once inside: `memlens detach` (attach.rs) clears RECORDING,
    // then waits for every thread inside a hook; its membarrier orders this
    // thread's flag before this load.
    core::sync::atomic::compiler_fence(Ordering::SeqCst);
    if !RECORDING.load(Ordering::Relaxed) {
        state.in_hook.set(false);
        return None;
    }
    // SAFETY: the state's errno pointer is this thread's errno.
    let errno = unsafe { *state.errno };
    Some(Guard { state, errno })
}

/// Waits until the ring has room for `n` slots, waking the writer (or, with
/// no writer thread, running a round). Recording is lossless: the thread waits
/// as long as the writer makes progress; only if the ring stays full for two
/// seconds (a wedged writer) does it give up and drop the event, so the
/// program can never hang on the recorder.
#[cold]
fn wait_for_room(state: &ThreadState, n: u64) -> bool {
    let deadline = clock::monotonic_ns() + 2_000_000_000;
    loop {
        if !rounds::inline() {
            wakeup::wait_for_room(|| state.ring.has_room(n));
        } else if !rounds::round_now() {
            // Another thread is running the round.
            // SAFETY: sched_yield has no preconditions.
            unsafe { libc::sched_yield() };
        }
        if state.ring.has_room(n) {
            return true;
        }
        if clock::monotonic_ns() > deadline {
            recording::count_dropped();
            return false;
        }
    }
}

/// Publishes `slots` (one record) to the thread's ring, waiting for room when
/// it is full.
#[inline(always)]
pub(crate) fn publish(state: &ThreadState, slots: &[Slot]) {
    let n = slots.len() as u64;
    if !state.ring.has_room(n) && !wait_for_room(state, n) {
        return;
    }
    for (i, s) in slots.iter().enumerate() {
        state.ring.stage(i as u64, *s);
    }
    let head = state.ring.publish(n);
    // Each time the head passes a quarter of the ring, wake the writer if a
    // quarter of the ring is waiting for it.
    if head % (CAPACITY / 4) < n {
        wake_if_filling(state);
    }
}

#[cold]
#[inline(never)]
fn wake_if_filling(state: &ThreadState) {
    if state.ring.used() >= CAPACITY / 4 {
        wakeup::wake();
    }
}

/// Captures the current stack; returns its thread-local id, after publishing
/// the stack nodes the thread had not sent yet (`interning.rs`).
#[inline(always)]
pub(crate) fn stack_id(state: &ThreadState) -> u32 {
    // SAFETY: only this thread touches its cache and stack table, and it is
    // inside the guard.
    let (cache, stacks, previous) = unsafe {
        (
            &mut *state.dwarf_cache.get(),
            &mut *state.stacks.get(),
            &mut *state.stack_cache.get(),
        )
    };
    let mut intern = |parent: u32, ip: u64| {
        let (id, new) = stacks.node(parent, ip);
        if new {
            publish(state, &[slot::encode_node(id, parent, ip)]);
        }
        id
    };
    stack::capture(
        state.stack_lo,
        state.stack_hi,
        stack::mode(),
        cache,
        previous,
        &mut intern,
    )
}

/// The clock before a real call: read only in latency mode (`TIMED`).
#[inline(always)]
fn start<const TIMED: bool>() -> u64 {
    if TIMED { clock::now_raw() } else { 0 }
}

/// Ticks from `t0` to `t`, at most [`MAX_LATENCY_TICKS`] (0 unless `TIMED`).
#[inline(always)]
fn ticks<const TIMED: bool>(t0: u64, t: u64) -> u64 {
    if TIMED {
        t.saturating_sub(t0).min(MAX_LATENCY_TICKS)
    } else {
        0
    }
}

/// Records an allocation that the real allocator returned; `t0` is the clock
/// before the call (latency mode only).
#[inline(always)]
fn record_alloc<const TIMED: bool>(p: *mut c_void, size: usize, func: AllocFn, t0: u64) {
    if p.is_null() {
        return;
    }
    let t = clock::now_raw();
    let lat = ticks::<TIMED>(t0, t);
    let Some(g) = enter() else { return };
    let stack = stack_id(g.state);
    let event = slot::encode_alloc::<TIMED>(t, p as u64, size as u64, func, stack, lat);
    publish(g.state, &[event]);
}

/// Records a free taken at `t` (before the real call) that took `lat` ticks,
/// with its stack when frees have stacks (`--free-stacks`).
#[inline(always)]
fn record_free(p: *mut c_void, t: u64, lat: u64) {
    let Some(g) = enter() else { return };
    let stack = if recording::free_stacks() {
        stack_id(g.state)
    } else {
        0
    };
    publish(g.state, &[slot::encode_free(t, p as u64, lat, stack)]);
}

#[inline(always)]
fn record_realloc<const TIMED: bool>(old: *mut c_void, new: *mut c_void, size: usize, t0: u64) {
    let t = clock::now_raw();
    let lat = ticks::<TIMED>(t0, t);
    let Some(g) = enter() else { return };
    let stack = stack_id(g.state);
    let event = slot::encode_realloc(t, old as u64, new as u64, size as u64, stack, lat);
    publish(g.state, &event);
}

/// Runs a real allocation call and records its result, timing the call in
/// latency mode.
#[inline(always)]
fn alloc_with<const TIMED: bool>(
    size: usize,
    func: AllocFn,
    call: impl FnOnce() -> *mut c_void,
) -> *mut c_void {
    let t0 = start::<TIMED>();
    let p = call();
    record_alloc::<TIMED>(p, size, func, t0);
    p
}

/// [`alloc_with`] in the mode chosen at start-up. The timed copy is a
/// separate function, so the default path is the code it always was.
#[inline(always)]
fn alloc(size: usize, func: AllocFn, call: impl FnOnce() -> *mut c_void) -> *mut c_void {
    if idle() {
        return call();
    }
    if sampling::on() {
        let p = call();
        if !p.is_null() && sampled(size) {
            record_sampled(p, size, func);
        }
        return p;
    }
    if timed() {
        alloc_timed(size, func, call)
    } else {
        alloc_with::<false>(size, func, call)
    }
}

#[inline(never)]
fn alloc_timed(size: usize, func: AllocFn, call: impl FnOnce() -> *mut c_void) -> *mut c_void {
    alloc_with::<true>(size, func, call)
}

/// Counts an allocation of `size` bytes against this thread's sampling counter;
/// true when it is sampled. Nested calls (the recorder's own) and threads that do
/// not record do not count.
#[inline(always)]
fn sampled(size: usize) -> bool {
    let p = thread::current();
    if p == BUSY {
        return false;
    }
    if p.is_null() {
        return first_sampled(size);
    }
    // SAFETY: a non-sentinel key value is this thread's live state.
    let state = unsafe { &*(p as *const ThreadState) };
    !state.in_hook.get() && state.sampler.take(thread::sample_left(), size)
}

/// [`sampled`] for a thread's first allocation: its state is made first.
#[cold]
#[inline(never)]
fn first_sampled(size: usize) -> bool {
    enter().is_some_and(|g| g.state.sampler.take(thread::sample_left(), size))
}

/// Records a sampled allocation and remembers its block, so its free is recorded.
#[cold]
#[inline(never)]
fn record_sampled(p: *mut c_void, size: usize, func: AllocFn) {
    let t = clock::now_raw();
    let Some(g) = enter() else { return };
    sampling::insert(p as u64);
    let stack = stack_id(g.state);
    let event = slot::encode_alloc::<false>(t, p as u64, size as u64, func, stack, 0);
    publish(g.state, &[event]);
    rounds::round_if_due();
}

/// Forgets `p` if it is a sampled block; true when it was, and then its free is
/// recorded at `t` (before the real call, which the caller makes after this).
#[inline(always)]
fn take_sampled(p: *mut c_void, t: impl FnOnce() -> u64) -> bool {
    sampling::maybe_sampled(p as u64) && take_sampled_slow(p, t())
}

#[cold]
#[inline(never)]
fn take_sampled_slow(p: *mut c_void, t: u64) -> bool {
    let Some(g) = enter() else { return false };
    if !sampling::take(p as u64) {
        return false;
    }
    let stack = if recording::free_stacks() {
        stack_id(g.state)
    } else {
        0
    };
    publish(g.state, &[slot::encode_free(t, p as u64, 0, stack)]);
    rounds::round_if_due();
    true
}

/// `realloc` in sampled mode: the old block's free is recorded when it was sampled
/// (it leaves the set before the real call), the new block is sampled by its size.
/// A failed call keeps the old block, and its place in the set.
#[inline(never)]
fn realloc_sampled(p: *mut c_void, size: usize) -> *mut c_void {
    let was_sampled = !p.is_null() && sampling::maybe_sampled(p as u64) && {
        let Some(_g) = enter() else {
            // SAFETY: forwarding (a nested call: the recorder's own).
            return unsafe { (real().realloc)(p, size) };
        };
        sampling::take(p as u64)
    };
    let t = if was_sampled { clock::now_raw() } else { 0 };
    // SAFETY: forwarding.
    let q = unsafe { (real().realloc)(p, size) };
    if q.is_null() && size != 0 {
        if was_sampled {
            sampling::insert(p as u64);
        }
        return q;
    }
    if was_sampled && let Some(g) = enter() {
        let stack = if recording::free_stacks() {
            stack_id(g.state)
        } else {
            0
        };
        publish(g.state, &[slot::encode_free(t, p as u64, 0, stack)]);
        rounds::round_if_due();
    }
    if !q.is_null() && sampled(size) {
        record_sampled(q, size, REALLOC_AS_ALLOC);
    }
    q
}

/// `free` in latency mode: the event keeps its time from before the call
/// and is published after it, once the latency is known.
#[inline(never)]
fn free_timed(p: *mut c_void, t: u64) {
    // SAFETY: forwarding (the caller checked `p`).
    unsafe { (real().free)(p) };
    let lat = ticks::<true>(t, clock::now_raw());
    record_free(p, t, lat);
}

/// Makes sure the real functions are known; returns false while they are
/// being resolved (the caller must then serve from the bootstrap arena).
#[inline(always)]
fn ready() -> bool {
    if resolved() {
        return true;
    }
    if resolving() {
        return false;
    }
    resolve();
    resolved()
}

/// True once a recording has been sampled in this process: the hooks' fast
/// path applies (the real functions are resolved by then). It also runs when
/// recording has stopped (after `exit` began, in a forked child that does not
/// record, after `memlens detach`), where forwarding is all there is to do: a
/// block it lets through unrecorded is one that no sampled block shares a page
/// with, and the slow path, which it leaves the rest to, knows whether to record.
#[inline(always)]
fn sampling_fast() -> bool {
    sampling::on()
}

/// The sampled fast path's test: true when `size` bytes stay short of this
/// thread's next sample point (they are counted); false when the allocation is
/// sampled, or the thread has no gap drawn yet: the slow path decides then.
#[inline(always)]
fn counted(size: usize) -> bool {
    thread::count_sample_bytes(size as u64)
}

/// The sampled fast path's test for a block given back: true when it cannot be
/// a sampled block (nor a bootstrap one), so the real call is all there is to do.
#[inline(always)]
fn unsampled_block(p: *mut c_void) -> bool {
    !in_arena(p) && !sampling::page_may_hold_sampled(p as u64)
}

/// `malloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    if sampling_fast() && counted(size) {
        // SAFETY: forwarding.
        return unsafe { (real().malloc)(size) };
    }
    malloc_slow(size)
}

#[inline(never)]
fn malloc_slow(size: usize) -> *mut c_void {
    if !ready() {
        return arena_alloc(size, 16);
    }
    // SAFETY: forwarding to the real allocator.
    alloc(size, AllocFn::Malloc, move || unsafe {
        (real().malloc)(size)
    })
}

/// `calloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    if sampling_fast()
        && let Some(total) = n.checked_mul(size)
        && counted(total)
    {
        // SAFETY: forwarding.
        return unsafe { (real().calloc)(n, size) };
    }
    calloc_slow(n, size)
}

#[inline(never)]
fn calloc_slow(n: usize, size: usize) -> *mut c_void {
    if !ready() {
        return match n.checked_mul(size) {
            Some(total) => arena_alloc(total, 16), // the arena is zeroed static memory
            None => core::ptr::null_mut(),
        };
    }
    // SAFETY: forwarding.
    alloc(n.wrapping_mul(size), AllocFn::Calloc, move || unsafe {
        (real().calloc)(n, size)
    })
}

/// `free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free(p: *mut c_void) {
    if sampling_fast() && unsampled_block(p) {
        // SAFETY: forwarding (the real `free` takes null too).
        return unsafe { (real().free)(p) };
    }
    free_slow(p);
}

#[inline(never)]
fn free_slow(p: *mut c_void) {
    if p.is_null() || in_arena(p) {
        return;
    }
    if idle() {
        // SAFETY: forwarding.
        unsafe { (real().free)(p) };
        return;
    }
    if sampling::on() {
        take_sampled(p, clock::now_raw);
        // SAFETY: forwarding.
        unsafe { (real().free)(p) };
        return;
    }
    let t = clock::now_raw();
    if timed() {
        free_timed(p, t);
        return;
    }
    record_free(p, t, 0);
    // SAFETY: forwarding.
    unsafe { (real().free)(p) };
}

/// `cfree` (obsolete alias of `free`, still exported by some programs' expectations).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cfree(p: *mut c_void) {
    // SAFETY: same contract as free.
    unsafe { free(p) }
}

/// `realloc`, and `reallocarray` once its size is known.
#[inline(always)]
unsafe fn realloc_impl(p: *mut c_void, size: usize) -> *mut c_void {
    if sampling_fast() && (p.is_null() || unsampled_block(p)) && counted(size) {
        // SAFETY: forwarding.
        return unsafe { (real().realloc)(p, size) };
    }
    realloc_slow(p, size)
}

#[inline(never)]
fn realloc_slow(p: *mut c_void, size: usize) -> *mut c_void {
    if timed() {
        realloc_timed(p, size)
    } else {
        // SAFETY: the caller's arguments.
        unsafe { realloc_mode::<false>(p, size) }
    }
}

#[inline(never)]
fn realloc_timed(p: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: called by `realloc_slow` with the caller's arguments.
    unsafe { realloc_mode::<true>(p, size) }
}

#[inline(always)]
unsafe fn realloc_mode<const TIMED: bool>(p: *mut c_void, size: usize) -> *mut c_void {
    if !ready() {
        let q = arena_alloc(size, 16);
        if !p.is_null() && !q.is_null() {
            let n = arena_size(p).min(size);
            // SAFETY: both blocks hold at least n bytes.
            unsafe { core::ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, n) };
        }
        return q;
    }
    if in_arena(p) {
        // Move a bootstrap block into the real heap.
        let t0 = start::<TIMED>();
        // SAFETY: forwarding to the real malloc.
        let q = unsafe { (real().malloc)(size) };
        if !q.is_null() {
            let n = arena_size(p).min(size);
            // SAFETY: `p` is an arena block of `arena_size(p)` bytes and `q` a
            // new block of `size` bytes from the real heap, so both hold `n`
            // bytes and they do not overlap.
            unsafe { core::ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, n) };
            if !sampling::on() {
                record_alloc::<TIMED>(q, size, REALLOC_AS_ALLOC, t0);
            } else if sampled(size) {
                record_sampled(q, size, REALLOC_AS_ALLOC);
            }
        }
        return q;
    }
    if idle() {
        // SAFETY: forwarding.
        return unsafe { (real().realloc)(p, size) };
    }
    if sampling::on() {
        return realloc_sampled(p, size);
    }
    let t_before = clock::now_raw();
    // SAFETY: forwarding.
    let q = unsafe { (real().realloc)(p, size) };
    if p.is_null() {
        record_alloc::<TIMED>(q, size, REALLOC_AS_ALLOC, t_before);
    } else if q.is_null() {
        if size == 0 {
            // glibc frees the block and returns NULL.
            let lat = if TIMED {
                ticks::<true>(t_before, clock::now_raw())
            } else {
                0
            };
            record_free(p, t_before, lat);
        }
    } else {
        record_realloc::<TIMED>(p, q, size, t_before);
    }
    q
}

/// `realloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: same contract as realloc.
    unsafe { realloc_impl(p, size) }
}

/// `reallocarray`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn reallocarray(p: *mut c_void, n: usize, size: usize) -> *mut c_void {
    match n.checked_mul(size) {
        // SAFETY: same contract as realloc.
        Some(total) => unsafe { realloc_impl(p, total) },
        None => {
            // SAFETY: errno location is valid.
            unsafe { *libc::__errno_location() = libc::ENOMEM };
            core::ptr::null_mut()
        }
    }
}

/// `posix_memalign`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32 {
    if sampling_fast() && counted(size) {
        // SAFETY: forwarding.
        return unsafe { (real().posix_memalign)(out, align, size) };
    }
    // SAFETY: the caller's arguments.
    unsafe { posix_memalign_slow(out, align, size) }
}

#[inline(never)]
unsafe fn posix_memalign_slow(out: *mut *mut c_void, align: usize, size: usize) -> i32 {
    if !ready() {
        let p = arena_alloc(size, align.min(4096));
        if p.is_null() {
            return libc::ENOMEM;
        }
        // SAFETY: out is the caller's out-parameter.
        unsafe { *out = p };
        return 0;
    }
    let mut r = 0;
    alloc(size, AllocFn::PosixMemalign, || {
        // SAFETY: forwarding; on success *out holds the block.
        r = unsafe { (real().posix_memalign)(out, align, size) };
        if r == 0 {
            // SAFETY: `out` is the caller's valid out-parameter, which the
            // successful call has just written.
            unsafe { *out }
        } else {
            core::ptr::null_mut()
        }
    });
    r
}

/// `aligned_alloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    if sampling_fast() && counted(size) {
        // SAFETY: forwarding.
        return unsafe { (real().aligned_alloc)(align, size) };
    }
    aligned_alloc_slow(align, size)
}

#[inline(never)]
fn aligned_alloc_slow(align: usize, size: usize) -> *mut c_void {
    if !ready() {
        return arena_alloc(size, align.min(4096));
    }
    // SAFETY: forwarding.
    alloc(size, AllocFn::AlignedAlloc, move || unsafe {
        (real().aligned_alloc)(align, size)
    })
}

/// `memalign`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    if sampling_fast() && counted(size) {
        // SAFETY: forwarding.
        return unsafe { (real().memalign)(align, size) };
    }
    memalign_slow(align, size)
}

#[inline(never)]
fn memalign_slow(align: usize, size: usize) -> *mut c_void {
    if !ready() {
        return arena_alloc(size, align.min(4096));
    }
    // SAFETY: forwarding.
    alloc(size, AllocFn::Memalign, move || unsafe {
        (real().memalign)(align, size)
    })
}

/// `valloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
    if sampling_fast() && counted(size) {
        // SAFETY: forwarding.
        return unsafe { (real().valloc)(size) };
    }
    valloc_slow(size)
}

#[inline(never)]
fn valloc_slow(size: usize) -> *mut c_void {
    if !ready() {
        return arena_alloc(size, 4096);
    }
    // SAFETY: forwarding.
    alloc(size, AllocFn::Valloc, move || unsafe {
        (real().valloc)(size)
    })
}

/// `pvalloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
    if sampling_fast() && counted(size) {
        // SAFETY: forwarding.
        return unsafe { (real().pvalloc)(size) };
    }
    pvalloc_slow(size)
}

#[inline(never)]
fn pvalloc_slow(size: usize) -> *mut c_void {
    if !ready() {
        return arena_alloc(size.next_multiple_of(4096), 4096);
    }
    // SAFETY: forwarding.
    alloc(size, AllocFn::Pvalloc, move || unsafe {
        (real().pvalloc)(size)
    })
}

/// `malloc_usable_size` (not recorded; bootstrap blocks report their size).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc_usable_size(p: *mut c_void) -> usize {
    if p.is_null() {
        return 0;
    }
    if in_arena(p) {
        return arena_size(p);
    }
    // SAFETY: forwarding.
    unsafe { (real().usable_size)(p) }
}
