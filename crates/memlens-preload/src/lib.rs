//! memlens' LD_PRELOAD recorder: interposes the whole malloc family and
//! writes a memlens trace of every allocation, free and reallocation with
//! nanosecond timestamps, addresses, thread ids and call stacks (and, with
//! `MEMLENS_LATENCY=1`, how long each call took inside the allocator).
//!
//! Guarantees:
//! - the program behaves as without the recorder (errno preserved, nothing
//!   blocks on the hot path, every hook forwards to the real allocator);
//! - lossless: when a thread's ring is full it waits for the writer;
//! - no lock and no shared atomic on the allocation path (per-thread rings,
//!   per-thread stack interning, state found through initial-exec TLS), but
//!   in a sampled recording without a writer thread, where a sampled event
//!   may run the writer's round when its lock is free (`rounds.rs`);
//! - crash-safe: complete chunks reach the file at least every 100 ms (in a
//!   sampled recording without a writer thread, every 100 ms of sampling).
//!
//! Map: `hooks` (the malloc family), `map_hooks` (`mmap`, `munmap`, `mremap`
//! with `MEMLENS_MMAP=1`), `thread`/`registry` (per-thread state),
//! `slot` (the 32-byte event slots) and `ring` (the SPSC ring of them),
//! `stack`/`dwarf` (unwinding), `interning` (stack ids),
//! `writer`/`ticks`/`output` (the writer and the file), `rounds` (the
//! writer thread, or rounds run by the program's threads), `wakeup`
//! (waking the writer, synchronous flushes), `modules` (the module map),
//! `lifecycle` (start, fork, exec, exit, dlopen, marks), `real` (the next
//! allocator and the bootstrap arena), `recording` (the process-wide
//! switches), `sampling` (`MEMLENS_SAMPLE`: the per-thread byte counters and the
//! set of sampled live blocks), `config`, `session`, `locked`; `attach`
//! (`memlens attach`: a session started in a running process), `got`
//! (routing its modules' calls through their GOT slots) and `attach_hooks`
//! (finding the hooks they are routed to; the doors of `dlopen`, `dlclose`
//! and `_exit`).
//!
//! The modules form a layered graph without cycles (the unit test in
//! `module_graph.rs` keeps it so): the entry points (`hooks`, `lifecycle`,
//! `exec_variadic`) use the machinery, which never calls back into them;
//! what several layers share lives low (`slot`, `recording`, `wakeup`,
//! `locked`), and the few upward needs are passed down as values or
//! callbacks (`thread::create` takes the registration, `lifecycle::start`
//! the address of our `malloc`).
//!
//! Unit tests build the library without its entry points: a test binary
//! must not interpose its own `malloc`, `exec` or `_exit`, nor start
//! recording from a constructor. Those are tested by running real programs
//! under the built library (`crates/memlens/tests`).

// reason: in unit-test builds the entry points are left out (see above), so
// much of the machinery they drive has no caller there.
#![cfg_attr(test, allow(dead_code))]

#[cfg(not(test))]
mod attach;
#[cfg(not(test))]
mod attach_hooks;
mod clock;
mod config;
mod dwarf;
#[cfg(not(test))]
mod exec_variadic;
mod got;
#[cfg(not(test))]
mod hooks;
mod interning;
#[cfg(not(test))]
mod lifecycle;
mod locked;
#[cfg(not(test))]
mod map_hooks;
#[cfg(test)]
mod module_graph;
mod modules;
mod output;
mod real;
mod recording;
mod registry;
mod ring;
mod rounds;
mod sampling;
mod session;
mod slot;
mod stack;
mod thread;
mod ticks;
mod wakeup;
mod writer;

#[cfg(not(test))]
use core::alloc::{GlobalAlloc, Layout};

/// The recorder's own Rust allocations go straight to the real allocator
/// (never through our hooks), or to the bootstrap arena while resolving.
#[cfg(not(test))]
struct RealAllocator;

// SAFETY: forwards to a correct C allocator with matching free.
#[cfg(not(test))]
unsafe impl GlobalAlloc for RealAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if real::resolving() {
            return real::arena_alloc(layout.size(), layout.align()).cast();
        }
        // SAFETY: forwarding.
        unsafe {
            if layout.align() <= 16 {
                (real::real().malloc)(layout.size()).cast()
            } else {
                (real::real().memalign)(layout.align(), layout.size()).cast()
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() > 16 || real::resolving() {
            // SAFETY: `alloc`, then zeroing the block it returned.
            unsafe {
                let p = self.alloc(layout);
                if !p.is_null() {
                    core::ptr::write_bytes(p, 0, layout.size());
                }
                return p;
            }
        }
        // SAFETY: forwarding: `calloc` returns zeroed memory, and large blocks
        // come from fresh mappings the kernel already zeroed, untouched.
        unsafe { (real::real().calloc)(1, layout.size()).cast() }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        if !real::in_arena(ptr.cast()) {
            // SAFETY: the block came from the real allocator.
            unsafe { (real::real().free)(ptr.cast()) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= 16 && !real::in_arena(ptr.cast()) && !real::resolving() {
            // SAFETY: forwarding.
            return unsafe { (real::real().realloc)(ptr.cast(), new_size).cast() };
        }
        // SAFETY: allocate, copy the smaller size, free the old block.
        unsafe {
            let new = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !new.is_null() {
                core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

#[cfg(not(test))]
#[global_allocator]
static GLOBAL: RealAllocator = RealAllocator;

/// The library constructor: starts recording when preloaded; when
/// `memlens attach` loads the library into a running process, the session
/// starts with `memlens_attach_start` instead (see `attach.rs`).
#[cfg(not(test))]
extern "C" fn init() {
    if attach::loaded_for_attach() {
        return;
    }
    lifecycle::start(hooks::malloc as *const ());
}

#[cfg(not(test))]
#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = init;

#[cfg(not(test))]
#[used]
#[unsafe(link_section = ".fini_array")]
static FINI: extern "C" fn() = lifecycle::fini;
