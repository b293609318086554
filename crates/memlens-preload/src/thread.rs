//! Per-thread recorder state, found through two words of *initial-exec* ELF
//! TLS, and a `pthread_key` whose destructor is our thread-exit hook.
//!
//! Why initial-exec: the words sit at a fixed offset from the thread pointer
//! (`%fs`), resolved once by the loader, so a hook finds them with two loads
//! and no call. The general-dynamic TLS model that Rust's `thread_local!`
//! uses in a shared library goes through `__tls_get_addr`, which can itself
//! call `malloc` while it grows the DTV after a `dlopen` (the recursion that
//! breaks other recorders), and `pthread_getspecific` is a call into libc on
//! every hook. The words are defined in assembly ([`tls`]); the library then
//! needs 16 bytes of static TLS, which the loader reserves at start-up for a
//! preloaded library and takes from its surplus when `memlens attach`
//! `dlopen`s it.
//!
//! The state word is null (no state yet), [`BUSY`] (this thread must not be
//! recorded: it is being set up, or it is the writer), or a pointer to the
//! thread's [`ThreadState`]; the key holds the same value, for its destructor.
//! The state's `in_hook` flag is the reentrancy guard: an allocation made
//! while the thread is already inside a hook (by libc code we call, or by a
//! signal handler) passes straight through. The second word is the sampled
//! recording's count of bytes to the thread's next sample point
//! ([`sample_left`], see `sampling.rs`).

use core::cell::Cell;
use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::interning::LocalStacks;
use crate::ring::Ring;
use crate::sampling::Sampler;
use crate::stack::StackCache;
use crate::{dwarf, wakeup};

/// The key value meaning "do not record this thread".
pub const BUSY: *mut c_void = core::ptr::without_provenance_mut(1);

static mut KEY: libc::pthread_key_t = 0;
static KEY_READY: AtomicBool = AtomicBool::new(false);

/// Everything one thread needs to record.
pub struct ThreadState {
    /// Events on their way to the writer.
    pub ring: Ring,
    /// The kernel thread id.
    pub tid: u32,
    /// The reentrancy guard.
    pub in_hook: Cell<bool>,
    /// This thread's `errno` (`__errno_location()`, fixed for the thread's life),
    /// saved and restored around every hook without a call into libc.
    pub errno: *mut libc::c_int,
    /// This thread's stack, for bounds-checked unwinding.
    pub stack_lo: usize,
    /// One past the top of the stack.
    pub stack_hi: usize,
    /// Stacks this thread has already sent.
    pub stacks: core::cell::UnsafeCell<LocalStacks>,
    /// DWARF unwind rule cache.
    pub dwarf_cache: core::cell::UnsafeCell<dwarf::Cache>,
    /// The previous stack and the ids of its suffixes, for reuse of unchanged
    /// outer frames.
    pub stack_cache: core::cell::UnsafeCell<StackCache>,
    /// Set by the key destructor: the writer retires the state once drained.
    pub exited: AtomicBool,
    /// The thread's name, read at exit (`prctl(PR_GET_NAME)`).
    pub exit_name: core::cell::UnsafeCell<[u8; 16]>,
    /// Bytes to this thread's next sampled allocation (`MEMLENS_SAMPLE`).
    pub sampler: Sampler,
}

impl ThreadState {
    /// Forgets the stacks this thread has sent (a forked child, or a new
    /// attached session, starts a new trace). Only the owning thread, or a
    /// caller that knows the thread is outside every hook, may call this.
    pub fn forget_stacks(&self) {
        // SAFETY: see above: no one else uses the tables now.
        unsafe {
            (*self.stacks.get()).clear();
            (*self.stack_cache.get()).clear();
        }
    }
}

// SAFETY: the fields other threads touch (ring, exited, exit_name after
// `exited`) follow the ring's release/acquire protocol; the rest is only
// used by the owning thread.
unsafe impl Sync for ThreadState {}
// SAFETY: see above.
unsafe impl Send for ThreadState {}

/// Creates the key. Called once from the constructor (or the first hook).
pub fn init_key() {
    if KEY_READY.load(Ordering::Acquire) {
        return;
    }
    // SAFETY: creating a key with our destructor; KEY written once.
    unsafe {
        let mut key: libc::pthread_key_t = 0;
        if libc::pthread_key_create(&mut key, Some(on_thread_exit)) == 0 {
            KEY = key;
            KEY_READY.store(true, Ordering::Release);
        }
    }
}

// The thread's two words: the state pointer and the bytes to the next sample.
core::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 4",
    ".globl memlens_preload_tls",
    ".hidden memlens_preload_tls",
    ".type memlens_preload_tls, @object",
    ".size memlens_preload_tls, 16",
    "memlens_preload_tls:",
    ".zero 16",
    ".popsection",
);

/// The offset of the words (`memlens_preload_tls`) from the thread pointer,
/// which the loader wrote into the GOT.
#[inline(always)]
fn tls_offset() -> usize {
    let offset: usize;
    // SAFETY: reading the GOT entry of an initial-exec TLS symbol; it is fixed
    // once the library is loaded, hence `pure, nomem`.
    unsafe {
        core::arch::asm!(
            "mov {}, qword ptr [rip + memlens_preload_tls@GOTTPOFF]",
            out(reg) offset,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    offset
}

/// The calling thread's TLS words: the thread pointer plus their offset.
#[inline(always)]
fn tls() -> *mut [Cell<u64>; 2] {
    let tp: usize;
    // SAFETY: `%fs:0` holds the thread pointer itself, fixed for the thread's
    // life, hence `pure, nomem`.
    unsafe {
        core::arch::asm!(
            "mov {}, qword ptr fs:[0]",
            out(reg) tp,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    tp.wrapping_add(tls_offset()) as *mut [Cell<u64>; 2]
}

/// The calling thread's state word: null, [`BUSY`] or its [`ThreadState`].
/// (The recording switch is only set once the key exists.)
#[inline(always)]
pub fn current() -> *mut c_void {
    let word: usize;
    // SAFETY: a load of the calling thread's own TLS word, `%fs`-relative.
    unsafe {
        core::arch::asm!(
            "mov {}, qword ptr fs:[{}]",
            out(reg) word,
            in(reg) tls_offset(),
            options(nostack, readonly, preserves_flags),
        );
    }
    word as *mut c_void
}

/// The sampled fast path's test (`hooks.rs`): true when `size` bytes stay short
/// of the calling thread's next sample point, and then they are counted; false
/// when they reach it (or no gap was drawn yet), and then the word is unchanged.
/// Two `%fs`-relative accesses of the word [`sample_left`] names.
#[inline(always)]
pub fn count_sample_bytes(size: u64) -> bool {
    let offset = tls_offset();
    let left: u64;
    // SAFETY: a load of the calling thread's own TLS word, `%fs`-relative.
    unsafe {
        core::arch::asm!(
            "mov {}, qword ptr fs:[{} + 8]",
            out(reg) left,
            in(reg) offset,
            options(nostack, readonly, preserves_flags),
        );
    }
    if size >= left {
        return false;
    }
    // SAFETY: a store to the calling thread's own TLS word, `%fs`-relative.
    unsafe {
        core::arch::asm!(
            "mov qword ptr fs:[{} + 8], {}",
            in(reg) offset,
            in(reg) left - size,
            options(nostack, preserves_flags),
        );
    }
    true
}

/// Sets the calling thread's state word (and its key, for the destructor).
#[inline]
pub fn set_current(value: *mut c_void) {
    // SAFETY: the calling thread's own TLS word.
    unsafe { (*tls())[0].set(value as usize as u64) };
    if KEY_READY.load(Ordering::Acquire) {
        // SAFETY: the key exists; for keys below 32 this never allocates.
        unsafe { libc::pthread_setspecific(KEY, value) };
    }
}

/// The calling thread's count of bytes to its next sample point (sampled
/// recording; 0 until the thread's state draws the first gap). A reference
/// to the calling thread's own word: not to be sent to another thread.
#[inline(always)]
pub fn sample_left() -> &'static Cell<u64> {
    // SAFETY: the calling thread's own TLS word, valid while the thread lives;
    // `Cell` is not `Sync`, so the reference cannot reach another thread.
    unsafe { &(*tls())[1] }
}

/// The calling thread's stack, `[lo, hi)`. The main thread's comes from the
/// loader's `__libc_stack_end` and the stack limit, never from
/// `pthread_getattr_np`: for the main thread glibc reads `/proc/self/maps` with
/// `fopen` while holding the thread's lock, so a program whose first allocation
/// happens inside its own `pthread_getattr_np` call (every Rust program: the
/// runtime asks for the main thread's stack guard before `main`) would deadlock
/// here asking again.
fn stack_bounds(tid: u32) -> (usize, usize) {
    // SAFETY: getpid has no preconditions.
    if tid == unsafe { libc::getpid() } as u32 {
        let (lo, hi) = main_stack_bounds();
        // A child forked by another thread runs on that thread's stack, which glibc
        // knows without reading `/proc/self/maps`.
        let here = core::ptr::addr_of!(lo) as usize;
        if (lo..hi).contains(&here) {
            return (lo, hi);
        }
    }
    // SAFETY: standard attribute query for the calling thread.
    unsafe {
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return (0, 0);
        }
        let mut addr: *mut c_void = core::ptr::null_mut();
        let mut size: usize = 0;
        libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (addr as usize, addr as usize + size)
    }
}

unsafe extern "C" {
    /// The stack pointer at the program's entry, set by the loader (ld.so exports it).
    static __libc_stack_end: *mut c_void;
}

/// The largest main-thread stack assumed when its limit is unlimited.
const UNLIMITED_STACK: usize = 1 << 30;

/// The main thread's stack: from the stack limit below the entry's stack pointer up
/// to the page holding it (above it lie only the arguments and the environment).
fn main_stack_bounds() -> (usize, usize) {
    // SAFETY: the loader sets `__libc_stack_end` before any code of the program runs.
    let end = unsafe { __libc_stack_end } as usize;
    if end == 0 {
        return (0, 0);
    }
    let hi = (end | 4095) + 1;
    let mut limit: libc::rlimit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we own.
    let size = if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY
    {
        (limit.rlim_cur as usize).min(UNLIMITED_STACK)
    } else {
        UNLIMITED_STACK
    };
    (hi.saturating_sub(size), hi)
}

/// Creates the calling thread's state, hands it to `register` (which makes
/// it known to the writer) before the thread can record into it, and returns
/// it; null when it cannot (out of memory). The key must read null on entry.
#[cold]
pub fn create(register: impl FnOnce(*mut ThreadState)) -> *mut ThreadState {
    set_current(BUSY);
    let Some(ring) = Ring::new() else {
        return core::ptr::null_mut();
    };
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
    let (stack_lo, stack_hi) = stack_bounds(tid);
    let state = Box::into_raw(Box::new(ThreadState {
        ring,
        tid,
        in_hook: Cell::new(false),
        // SAFETY: __errno_location returns this thread's errno, valid while it lives.
        errno: unsafe { libc::__errno_location() },
        stack_lo,
        stack_hi,
        stacks: core::cell::UnsafeCell::new(LocalStacks::new()),
        dwarf_cache: core::cell::UnsafeCell::new(dwarf::Cache::new_in()),
        stack_cache: core::cell::UnsafeCell::new(StackCache::new()),
        exited: AtomicBool::new(false),
        exit_name: core::cell::UnsafeCell::new([0; 16]),
        sampler: Sampler::new(tid),
    }));
    register(state);
    set_current(state.cast());
    state
}

/// The key destructor: runs when the thread exits. Everything the thread
/// recorded is already in its ring; this records its name and tells the
/// writer to retire the state once it has drained it.
unsafe extern "C" fn on_thread_exit(value: *mut c_void) {
    if value.is_null() || value == BUSY {
        return;
    }
    // SAFETY: a non-sentinel key value is a state this thread created.
    let state = unsafe { &*(value as *const ThreadState) };
    // SAFETY: prctl writes at most 16 bytes into the buffer we own.
    unsafe {
        libc::prctl(
            libc::PR_GET_NAME,
            state.exit_name.get() as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    // glibc cleared the key; a late allocation of this thread makes a new state.
    // SAFETY: the exiting thread's own TLS word.
    unsafe { (*tls())[0].set(0) };
    state.exited.store(true, Ordering::Release);
    wakeup::wake();
}
