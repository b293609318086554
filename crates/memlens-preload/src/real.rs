//! The real allocator: the next definitions of the malloc family after ours
//! (and of `mmap`, `munmap` and `mremap`), resolved once with
//! `dlsym(RTLD_NEXT, …)`, and a bootstrap arena for the few allocations
//! `dlsym` itself makes while we resolve them. Until then the mapping calls
//! are the raw system calls.
//!
//! Resolving through `RTLD_NEXT` (rather than calling `__libc_malloc`)
//! keeps a jemalloc/tcmalloc/mimalloc that the program links dynamically
//! working: we forward to whatever allocator the program would have used.
//! `dlsym` is never called on the hot path.

use core::ffi::c_void;
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

type MallocFn = unsafe extern "C" fn(usize) -> *mut c_void;
type CallocFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;
type ReallocFn = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type MemalignFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;
type PosixMemalignFn = unsafe extern "C" fn(*mut *mut c_void, usize, usize) -> i32;
type UsableFn = unsafe extern "C" fn(*mut c_void) -> usize;
type MmapFn = unsafe extern "C" fn(*mut c_void, usize, i32, i32, i32, i64) -> *mut c_void;
type MunmapFn = unsafe extern "C" fn(*mut c_void, usize) -> i32;
/// `mremap` is variadic in C; its optional fifth argument (the new address,
/// read only with `MREMAP_FIXED`) travels in the register a fixed fifth
/// parameter uses, so forwarding it as one is exact on x86-64 and aarch64.
type MremapFn = unsafe extern "C" fn(*mut c_void, usize, usize, i32, *mut c_void) -> *mut c_void;

/// The resolved functions. Written once during [`resolve`], read-only afterwards.
pub struct Real {
    pub malloc: MallocFn,
    pub calloc: CallocFn,
    pub realloc: ReallocFn,
    pub free: FreeFn,
    pub memalign: MemalignFn,
    pub posix_memalign: PosixMemalignFn,
    pub aligned_alloc: MemalignFn,
    pub valloc: MallocFn,
    pub pvalloc: MallocFn,
    pub usable_size: UsableFn,
    pub mmap: MmapFn,
    pub munmap: MunmapFn,
    pub mremap: MremapFn,
}

unsafe extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_free(p: *mut c_void);
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
}

const UNRESOLVED: u8 = 0;
const RESOLVING: u8 = 1;
const RESOLVED: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(UNRESOLVED);
static mut REAL: Real = Real {
    malloc: __libc_malloc,
    calloc: __libc_calloc,
    realloc: __libc_realloc,
    free: __libc_free,
    memalign: __libc_memalign,
    posix_memalign: libc_posix_memalign,
    aligned_alloc: __libc_memalign,
    valloc: libc_valloc,
    pvalloc: libc_pvalloc,
    usable_size: libc_usable_size,
    mmap: sys_mmap,
    munmap: sys_munmap,
    mremap: sys_mremap,
};

unsafe extern "C" fn sys_mmap(
    addr: *mut c_void,
    len: usize,
    prot: i32,
    flags: i32,
    fd: i32,
    offset: i64,
) -> *mut c_void {
    // SAFETY: the system call with the caller's arguments; `syscall` returns
    // -1 (MAP_FAILED) and sets errno on failure, as `mmap` does.
    unsafe { libc::syscall(libc::SYS_mmap, addr, len, prot, flags, fd, offset) as *mut c_void }
}

unsafe extern "C" fn sys_munmap(addr: *mut c_void, len: usize) -> i32 {
    // SAFETY: the system call with the caller's arguments.
    unsafe { libc::syscall(libc::SYS_munmap, addr, len) as i32 }
}

unsafe extern "C" fn sys_mremap(
    old: *mut c_void,
    old_len: usize,
    new_len: usize,
    flags: i32,
    new_addr: *mut c_void,
) -> *mut c_void {
    // SAFETY: the system call with the caller's arguments.
    unsafe {
        libc::syscall(libc::SYS_mremap, old, old_len, new_len, flags, new_addr) as *mut c_void
    }
}

unsafe extern "C" fn libc_posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32 {
    // SAFETY: glibc's memalign takes any alignment and size (it returns null
    // when it cannot serve them).
    let p = unsafe { __libc_memalign(align, size) };
    if p.is_null() {
        return libc::ENOMEM;
    }
    // SAFETY: `out` is the caller's out-parameter, valid for a write by
    // `posix_memalign`'s contract.
    unsafe { *out = p };
    0
}

unsafe extern "C" fn libc_valloc(size: usize) -> *mut c_void {
    // SAFETY: glibc's memalign takes any size with a power-of-two alignment.
    unsafe { __libc_memalign(4096, size) }
}

unsafe extern "C" fn libc_pvalloc(size: usize) -> *mut c_void {
    // SAFETY: glibc's memalign takes any size with a power-of-two alignment.
    unsafe { __libc_memalign(4096, size.div_ceil(4096).max(1) * 4096) }
}

unsafe extern "C" fn libc_usable_size(_p: *mut c_void) -> usize {
    0
}

/// The real functions. Before resolution finishes these are glibc's own
/// `__libc_*` entry points, which are always correct for glibc's allocator.
#[inline(always)]
pub fn real() -> &'static Real {
    // SAFETY: REAL is only written by `resolve`, which runs before STATE
    // becomes RESOLVED and before any other thread of the process can call
    // in (it runs in our constructor or in the first hook call).
    unsafe { &*core::ptr::addr_of!(REAL) }
}

/// True while `resolve` is running (its `dlsym` calls must be served from
/// the bootstrap arena, not forwarded to functions not yet known).
#[inline(always)]
pub fn resolving() -> bool {
    STATE.load(Ordering::Acquire) == RESOLVING
}

/// True once resolution has finished.
#[inline(always)]
pub fn resolved() -> bool {
    STATE.load(Ordering::Acquire) == RESOLVED
}

unsafe fn lookup(scope: *mut c_void, name: &core::ffi::CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with a NUL-terminated name.
    let p = unsafe { libc::dlsym(scope, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Resolves every function once. Safe to call again (it returns at once).
pub fn resolve() {
    resolve_in(libc::RTLD_NEXT);
}

/// Resolves every function once as the program sees it, in the global scope:
/// for a recorder `dlopen`ed into a running process (`memlens attach`), which
/// is not in the program's lookup order, so `RTLD_NEXT` would miss an allocator
/// the executable or its libraries bring.
pub fn resolve_global() {
    resolve_in(libc::RTLD_DEFAULT);
}

fn resolve_in(scope: *mut c_void) {
    let next = |name| {
        // SAFETY: `scope` is a dlsym pseudo-handle.
        unsafe { lookup(scope, name) }
    };
    if STATE
        .compare_exchange(UNRESOLVED, RESOLVING, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    // SAFETY: we hold the RESOLVING state, so no one else writes REAL; the
    // transmutes give each symbol the C signature of the function it names.
    unsafe {
        let r = &mut *core::ptr::addr_of_mut!(REAL);
        if let Some(p) = next(c"malloc") {
            r.malloc = core::mem::transmute::<*mut c_void, MallocFn>(p);
        }
        if let Some(p) = next(c"calloc") {
            r.calloc = core::mem::transmute::<*mut c_void, CallocFn>(p);
        }
        if let Some(p) = next(c"realloc") {
            r.realloc = core::mem::transmute::<*mut c_void, ReallocFn>(p);
        }
        if let Some(p) = next(c"free") {
            r.free = core::mem::transmute::<*mut c_void, FreeFn>(p);
        }
        if let Some(p) = next(c"memalign") {
            r.memalign = core::mem::transmute::<*mut c_void, MemalignFn>(p);
        }
        if let Some(p) = next(c"posix_memalign") {
            r.posix_memalign = core::mem::transmute::<*mut c_void, PosixMemalignFn>(p);
        }
        if let Some(p) = next(c"aligned_alloc") {
            r.aligned_alloc = core::mem::transmute::<*mut c_void, MemalignFn>(p);
        }
        if let Some(p) = next(c"valloc") {
            r.valloc = core::mem::transmute::<*mut c_void, MallocFn>(p);
        }
        if let Some(p) = next(c"pvalloc") {
            r.pvalloc = core::mem::transmute::<*mut c_void, MallocFn>(p);
        }
        if let Some(p) = next(c"malloc_usable_size") {
            r.usable_size = core::mem::transmute::<*mut c_void, UsableFn>(p);
        }
        if let Some(p) = next(c"mmap") {
            r.mmap = core::mem::transmute::<*mut c_void, MmapFn>(p);
        }
        if let Some(p) = next(c"munmap") {
            r.munmap = core::mem::transmute::<*mut c_void, MunmapFn>(p);
        }
        if let Some(p) = next(c"mremap") {
            r.mremap = core::mem::transmute::<*mut c_void, MremapFn>(p);
        }
    }
    STATE.store(RESOLVED, Ordering::Release);
}

/// The bootstrap arena: a static bump allocator for allocations made while
/// `dlsym` runs. Blocks are never reused; `free` recognises and ignores them.
const ARENA_BYTES: usize = 64 << 10;
#[repr(C, align(16))]
struct Arena([u8; ARENA_BYTES]);
static mut ARENA: Arena = Arena([0; ARENA_BYTES]);
static ARENA_USED: AtomicUsize = AtomicUsize::new(0);

fn arena_base() -> usize {
    core::ptr::addr_of!(ARENA) as usize
}

/// Allocates `size` bytes aligned to `align` (≤ 4096) from the arena, with
/// the size stored in the 16 bytes before the block; null when full.
pub fn arena_alloc(size: usize, align: usize) -> *mut c_void {
    let align = align.max(16);
    loop {
        let used = ARENA_USED.load(Ordering::Relaxed);
        let start = (arena_base() + used + 16).next_multiple_of(align) - arena_base();
        let end = start + size;
        if end > ARENA_BYTES {
            return core::ptr::null_mut();
        }
        if ARENA_USED
            .compare_exchange(used, end, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            let p = (arena_base() + start) as *mut u8;
            // SAFETY: [start-16, end) lies inside the arena and was just reserved.
            unsafe { (p.sub(16) as *mut usize).write(size) };
            return p.cast();
        }
    }
}

/// True when `p` was handed out by the bootstrap arena.
#[inline(always)]
pub fn in_arena(p: *mut c_void) -> bool {
    let a = p as usize;
    a >= arena_base() && a < arena_base() + ARENA_BYTES
}

/// The size recorded for an arena block.
pub fn arena_size(p: *mut c_void) -> usize {
    // SAFETY: only called for pointers with `in_arena(p)`, whose 16-byte
    // prefix holds the size written by `arena_alloc`.
    unsafe { ((p as *mut u8).sub(16) as *const usize).read() }
}
