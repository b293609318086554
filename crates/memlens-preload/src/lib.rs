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
//!   per-thread stack interning, state found through a pthread key);
//! - crash-safe: complete chunks reach the file at least every 100 ms.
//!
//! Map: `hooks` (the malloc family), `thread`/`registry` (per-thread state),
//! `ring` (SPSC slots), `stack`/`dwarf` (unwinding), `interning` (stack ids),
//! `writer`/`ticks`/`output` (the writer thread and the file), `modules`
//! (the module map), `lifecycle` (start, fork, exec, exit, dlopen, marks),
//! `real` (the next allocator and the bootstrap arena), `config`, `session`.

mod clock;
mod config;
mod dwarf;
mod exec_variadic;
mod hooks;
mod interning;
mod lifecycle;
mod modules;
mod output;
mod real;
mod registry;
mod ring;
mod session;
mod stack;
mod thread;
mod ticks;
mod writer;

use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicBool, Ordering};

/// The recorder's own Rust allocations go straight to the real allocator
/// (never through our hooks), or to the bootstrap arena while resolving.
struct RealAllocator;

// SAFETY: forwards to a correct C allocator with matching free.
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

#[global_allocator]
static GLOBAL: RealAllocator = RealAllocator;

static DWARF_MODE: AtomicBool = AtomicBool::new(false);

fn set_unwind_mode(mode: stack::Mode) {
    DWARF_MODE.store(mode == stack::Mode::Dwarf, Ordering::Relaxed);
}

#[inline(always)]
fn unwind_mode() -> stack::Mode {
    if DWARF_MODE.load(Ordering::Relaxed) {
        stack::Mode::Dwarf
    } else {
        stack::Mode::FramePointer
    }
}

#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = lifecycle::init;

#[used]
#[unsafe(link_section = ".fini_array")]
static FINI: extern "C" fn() = lifecycle::fini;
