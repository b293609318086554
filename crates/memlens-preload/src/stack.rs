//! Call-stack capture on the allocating thread.
//!
//! By default every step is a DWARF step (`dwarf.rs`, framehop over the
//! loaded images' `.eh_frame`), so programs built without frame pointers —
//! most distributions' packages — get complete stacks; where a module has no
//! unwind information (JIT code) the step falls back to the frame pointer.
//! With `--unwind fp` the unwinder walks the frame-pointer chain instead,
//! taking a DWARF step only where the return address lies in a module
//! registered as lacking frame pointers (Debian's libstdc++ `operator new` is
//! the classic case). Every dereference is bounds-checked (inside the
//! thread's stack, strictly increasing, 8-byte aligned), the recorder's own
//! frames are skipped, and the [`StackCache`] keeps each thread's previous
//! walk, so only the frames that changed since are unwound: DWARF then costs
//! about what frame pointers do.

use core::arch::asm;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::dwarf;

/// The most frames kept per stack.
pub const MAX_DEPTH: usize = 64;

/// True when the `len` bytes at `a` lie inside this thread's stack
/// `[lo, hi)` and `a` is 8-byte aligned. Written without `a + len`, which
/// wraps for garbage such as a frame pointer of −16 and would let it pass.
#[inline(always)]
fn readable(a: usize, len: usize, lo: usize, hi: usize) -> bool {
    a >= lo && a <= hi.saturating_sub(len) && a & 7 == 0
}

/// The previous stack of a thread, with each frame's stack pointer.
///
/// Every return address of a walk was read from the stack slot just below
/// its caller's stack pointer (`sp − 8`, for frame-pointer and DWARF steps
/// alike). When a new walk reaches a frame at the same stack pointer and
/// return address as a frame of the previous walk, and every outer slot of
/// the previous walk still holds the return address read from it, the stack
/// from there on is the same: its frames are copied instead of unwound.
/// (Matching one frame alone is not enough: a helper called from two
/// different functions with equal frame sizes sits at the same place.)
/// Allocation-heavy loops then unwind only the frames that changed, and
/// never again the DWARF steps through libc's start-up frames.
pub struct StackCache {
    sp: [usize; MAX_DEPTH],
    ip: [u64; MAX_DEPTH],
    len: usize,
}

impl StackCache {
    /// An empty cache.
    pub fn new() -> Self {
        StackCache {
            sp: [0; MAX_DEPTH],
            ip: [0; MAX_DEPTH],
            len: 0,
        }
    }

    /// Index of the cached frame with this stack pointer and return address
    /// whose outer frames are all still on the stack unchanged. Stack pointers
    /// grow outwards along both walks, so `cursor` (0 at the start of a walk)
    /// only moves forwards: each cached frame is passed over once per walk.
    #[inline]
    fn find(&self, cursor: &mut usize, sp: usize, ip: u64, lo: usize, hi: usize) -> Option<usize> {
        while *cursor < self.len && self.sp[*cursor] < sp {
            *cursor += 1;
        }
        let i = *cursor;
        if i >= self.len || self.sp[i] != sp || self.ip[i] != ip {
            return None;
        }
        for k in i + 1..self.len {
            let slot = self.sp[k].wrapping_sub(8);
            if !readable(slot, 8, lo, hi) {
                return None;
            }
            // SAFETY: bounds-checked against this thread's stack.
            if unsafe { *(slot as *const u64) } != self.ip[k] {
                return None;
            }
        }
        Some(i)
    }
}

/// How stacks are captured.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Frame pointers, with DWARF steps through frames known to lack them.
    FramePointer,
    /// DWARF CFI for every frame.
    Dwarf,
}

/// The mode of this process ([`Mode::Dwarf`] when set), chosen at start-up.
static DWARF_MODE: AtomicBool = AtomicBool::new(false);

/// Sets the unwinding mode (start-up only).
pub fn set_mode(mode: Mode) {
    DWARF_MODE.store(mode == Mode::Dwarf, Ordering::Relaxed);
}

/// The unwinding mode chosen at start-up.
#[inline(always)]
pub fn mode() -> Mode {
    if DWARF_MODE.load(Ordering::Relaxed) {
        Mode::Dwarf
    } else {
        Mode::FramePointer
    }
}

/// The recorder's own code range, skipped at the top of every stack.
static mut SELF_TEXT: (usize, usize) = (0, 0);

/// Records the recorder's own text range (set once at start-up).
pub fn set_self_text(start: usize, end: usize) {
    // SAFETY: written once during initialisation before any capture.
    unsafe { SELF_TEXT = (start, end) };
}

#[inline(always)]
fn is_self(ip: usize) -> bool {
    // SAFETY: read-only after initialisation.
    let (s, e) = unsafe { SELF_TEXT };
    ip >= s && ip < e
}

/// Captures return addresses (innermost first) into `out`; returns how many.
/// `stack_lo..stack_hi` bounds every read.
#[inline(never)]
pub fn capture(
    out: &mut [u64; MAX_DEPTH],
    stack_lo: usize,
    stack_hi: usize,
    mode: Mode,
    cache: &mut dwarf::Cache,
    previous: &mut StackCache,
) -> usize {
    let mut fp: usize;
    let mut sp: usize;
    // SAFETY: reading registers has no side effects.
    unsafe {
        asm!("mov {}, rbp", out(reg) fp, options(nomem, nostack, preserves_flags));
        asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    // Every frame of the walk lies above the current stack pointer: nothing below it
    // is read, whatever the thread's recorded bounds say.
    let stack_lo = stack_lo.max(sp);
    let in_stack = |a: usize| readable(a, 16, stack_lo, stack_hi);
    let mut read_stack = |addr: u64| -> Result<u64, ()> {
        let a = addr as usize;
        if !readable(a, 8, stack_lo, stack_hi) {
            return Err(());
        }
        // SAFETY: bounds-checked against this thread's stack.
        Ok(unsafe { *(a as *const u64) })
    };
    let mut n = 0;
    // Walk our own frames (they all have frame pointers) until the first
    // return address outside the recorder: that is the allocation's caller.
    loop {
        if !in_stack(fp) || fp < sp {
            return 0;
        }
        // SAFETY: fp is inside this thread's stack and 8-aligned.
        let (next_fp, ret) = unsafe { (*(fp as *const usize), *((fp + 8) as *const usize)) };
        let caller_sp = fp + 16;
        if !is_self(ret) {
            // `ret` is frame 0; the caller's registers at that point are:
            // sp = caller_sp, bp = next_fp (our frame saved the caller's rbp).
            if ret == 0 {
                return 0;
            }
            out[0] = ret as u64;
            n = 1;
            let mut sps = [0usize; MAX_DEPTH];
            sps[0] = caller_sp;
            let mut regs = (ret, caller_sp, next_fp);
            let mut cursor = 0;
            while n < MAX_DEPTH {
                let (ip, sp_now, bp_now) = regs;
                if let Some(j) = previous.find(&mut cursor, sp_now, ip as u64, stack_lo, stack_hi) {
                    // Same activation as in the previous walk: reuse its callers.
                    let k = (previous.len - j - 1).min(MAX_DEPTH - n);
                    out[n..n + k].copy_from_slice(&previous.ip[j + 1..j + 1 + k]);
                    sps[n..n + k].copy_from_slice(&previous.sp[j + 1..j + 1 + k]);
                    n += k;
                    break;
                }
                let code = dwarf::classify(ip);
                if code == dwarf::Code::Unknown {
                    // A frame-pointer walk through code without frame
                    // pointers read something that is not a return address.
                    // (Frame 0 is always real: it was read from our own frame;
                    // it may be JIT code, which is kept.)
                    if n > 1 {
                        n -= 1;
                    }
                    break;
                }
                let use_dwarf = mode == Mode::Dwarf || code == dwarf::Code::NoFramePointers;
                let step = if use_dwarf {
                    dwarf::step(cache, ip, sp_now, bp_now, &mut read_stack)
                } else {
                    None
                };
                let next = match step {
                    Some(next) => Some(next),
                    None => fp_step(bp_now, sp_now, stack_lo, stack_hi),
                };
                match next {
                    Some((ip2, sp2, bp2)) if ip2 > 4096 => {
                        out[n] = ip2 as u64;
                        sps[n] = sp2;
                        n += 1;
                        regs = (ip2, sp2, bp2);
                    }
                    _ => break,
                }
            }
            previous.ip[..n].copy_from_slice(&out[..n]);
            previous.sp[..n].copy_from_slice(&sps[..n]);
            previous.len = n;
            return n;
        }
        if next_fp <= fp {
            return n;
        }
        fp = next_fp;
    }
}

/// One frame-pointer step from a frame whose frame pointer is `bp`: returns
/// the caller's (return address, stack pointer, frame pointer).
#[inline(always)]
fn fp_step(bp: usize, sp: usize, lo: usize, hi: usize) -> Option<(usize, usize, usize)> {
    if !readable(bp, 16, lo, hi) || bp < sp {
        return None;
    }
    // SAFETY: bp lies within this thread's stack and is aligned.
    let (saved_bp, ret) = unsafe { (*(bp as *const usize), *((bp + 8) as *const usize)) };
    if saved_bp != 0 && saved_bp <= bp {
        // Strictly increasing frame pointers only; the outermost frame may have 0.
        return Some((ret, bp + 16, 0)).filter(|_| ret != 0);
    }
    Some((ret, bp + 16, saved_bp))
}
