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
//! walk with the id of every suffix of it, so only the frames that changed
//! since are unwound and interned: DWARF then costs about what frame pointers
//! do, and an allocation from the same place as the one before costs one
//! comparison per frame.

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

/// The stacks a thread captured last, each with every frame's stack pointer
/// and the thread-local stack id (`interning.rs`) of the stack from that frame
/// out: the last [`WAYS`] walks with different frames 0 (the allocation's
/// return address and the stack pointer it returns to).
///
/// Every return address of a walk was read from the stack slot just below
/// its caller's stack pointer (`sp − 8`, for frame-pointer and DWARF steps
/// alike). When a new capture starts at the same frame 0 as a cached walk and
/// every outer slot of that walk still holds the return address read from it,
/// the stack is the same: its id is returned with no unwinding at all. A
/// program that allocates from a few call paths in turn keeps each of them
/// here. Otherwise the new walk unwinds until it reaches a frame at the same
/// stack pointer and return address as a frame of the previous walk whose
/// outer slots are intact, and keeps that walk's frames, and their ids, from
/// there on. (Matching one frame alone is not enough: a helper called from two
/// different functions with equal frame sizes sits at the same place.) Only
/// the frames that changed are unwound and interned, and never again the
/// DWARF steps through libc's start-up frames.
pub struct StackCache {
    walks: Box<[Walk]>,
    /// Frame 0 of each walk, `(return address, stack pointer)`, side by side
    /// for the search (0, 0 for an empty walk).
    keys: [(u64, usize); WAYS],
    /// When each walk was last used (a count of captures), for replacement.
    used: [u32; WAYS],
    clock: u32,
    /// The walk used last: the reference of the next unwinding.
    last: usize,
}

/// Walks kept per thread (a power of two).
const WAYS: usize = 8;

/// One cached walk.
struct Walk {
    sp: [usize; MAX_DEPTH],
    ip: [u64; MAX_DEPTH],
    /// `node[i]`: the id of the stack `ip[i..len]` (its outermost frame last).
    node: [u32; MAX_DEPTH],
    len: usize,
}

impl Walk {
    fn new() -> Walk {
        Walk {
            sp: [0; MAX_DEPTH],
            ip: [0; MAX_DEPTH],
            node: [0; MAX_DEPTH],
            len: 0,
        }
    }

    /// True when every slot from frame `from` out still holds the return
    /// address read from it. A walk's stack pointers grow strictly (every step
    /// checks it) and were 8-byte aligned when read, so the slots lie between
    /// the first and the last, and checking those two bounds all of them.
    #[inline(always)]
    fn intact_from(&self, from: usize, lo: usize, hi: usize) -> bool {
        if from >= self.len {
            return true;
        }
        let (first, last) = (
            self.sp[from].wrapping_sub(8),
            self.sp[self.len - 1].wrapping_sub(8),
        );
        if !readable(first, 8, lo, hi) || !readable(last, 8, lo, hi) || first > last {
            return false;
        }
        // A plain loop, as in `StackCache::way`.
        for k in from..self.len {
            // SAFETY: between two slots checked against this thread's stack, and
            // aligned (see above).
            if unsafe { *(self.sp[k].wrapping_sub(8) as *const u64) } != self.ip[k] {
                return false;
            }
        }
        true
    }

    /// True when this walk's frames from `j` on complete a new walk that has
    /// `n` frames of its own: always, unless this walk was cut at
    /// [`MAX_DEPTH`] (its stack goes on past its last frame) and the new one
    /// would not be. (The outer slots of a recursive function hold the same
    /// return address at every depth, so matching them says the frames are
    /// the same, not that the stack ends where this walk stopped looking.)
    #[inline]
    fn keeps(&self, j: usize, n: usize) -> bool {
        self.len < MAX_DEPTH || n + self.len - j >= MAX_DEPTH
    }

    /// Index of the frame with this stack pointer and return address whose
    /// outer frames are all still on the stack unchanged. Stack pointers grow
    /// outwards along both walks, so `cursor` (0 at the start of a walk) only
    /// moves forwards: each frame is passed over once per walk.
    #[inline]
    fn find(&self, cursor: &mut usize, sp: usize, ip: u64, lo: usize, hi: usize) -> Option<usize> {
        while *cursor < self.len && self.sp[*cursor] < sp {
            *cursor += 1;
        }
        let i = *cursor;
        (i < self.len && self.sp[i] == sp && self.ip[i] == ip && self.intact_from(i + 1, lo, hi))
            .then_some(i)
    }
}

impl StackCache {
    /// An empty cache.
    pub fn new() -> Self {
        StackCache {
            walks: (0..WAYS).map(|_| Walk::new()).collect(),
            keys: [(0, 0); WAYS],
            used: [0; WAYS],
            clock: 0,
            last: 0,
        }
    }

    /// Forgets every walk (their ids are no longer valid).
    pub fn clear(&mut self) {
        for w in self.walks.iter_mut() {
            w.len = 0;
        }
        self.keys = [(0, 0); WAYS];
    }

    /// The walk that starts at frame 0 `(ip, sp)`, or the one to replace by it
    /// (the least recently used), and whether it is the former.
    #[inline(always)]
    fn way(&mut self, ip: u64, sp: usize) -> (usize, bool) {
        self.clock = self.clock.wrapping_add(1);
        // A plain loop: an iterator's `position` here becomes a call of its own
        // once this is inlined into the hooks.
        for way in 0..WAYS {
            if self.keys[way] == (ip, sp) {
                self.used[way] = self.clock;
                return (way, true);
            }
        }
        let clock = self.clock;
        let oldest = (0..WAYS)
            .max_by_key(|&w| clock.wrapping_sub(self.used[w]))
            .unwrap_or(0);
        self.used[oldest] = clock;
        (oldest, false)
    }

    /// The id of the cached stack of walk `way`, when its frames are all still
    /// on the stack.
    #[inline(always)]
    fn hit(&self, way: usize, lo: usize, hi: usize) -> Option<u32> {
        let w = &self.walks[way];
        (w.len > 0 && w.intact_from(1, lo, hi)).then(|| w.node[0])
    }

    /// Makes walk `way` the stack `fresh` (the `n` frames a walk unwound,
    /// innermost first) followed by the previous walk's frames from `keep` on
    /// (`None`: nothing kept), at most [`MAX_DEPTH`] frames, makes it the
    /// previous walk, and returns its id, made with `intern(id of the outer
    /// stack, return address)` for every frame not kept.
    fn splice(
        &mut self,
        way: usize,
        fresh: &Frames,
        n: usize,
        keep: Option<usize>,
        intern: &mut impl FnMut(u32, u64) -> u32,
    ) -> u32 {
        let from = self.last;
        let kept = keep.map_or(0, |j| self.walks[from].len - j);
        // The kept frames keep their ids only when the stack is not cut: a
        // cut changes the outermost frame, and so every id.
        let (kept, whole) = if n + kept <= MAX_DEPTH {
            (kept, true)
        } else {
            (MAX_DEPTH - n, false)
        };
        if let Some(j) = keep {
            if from == way {
                let w = &mut self.walks[way];
                if j != n {
                    w.sp.copy_within(j..j + kept, n);
                    w.ip.copy_within(j..j + kept, n);
                    w.node.copy_within(j..j + kept, n);
                }
            } else {
                let (src, dst) = if from < way {
                    let (a, b) = self.walks.split_at_mut(way);
                    (&a[from], &mut b[0])
                } else {
                    let (a, b) = self.walks.split_at_mut(from);
                    (&b[0], &mut a[way])
                };
                dst.sp[n..n + kept].copy_from_slice(&src.sp[j..j + kept]);
                dst.ip[n..n + kept].copy_from_slice(&src.ip[j..j + kept]);
                dst.node[n..n + kept].copy_from_slice(&src.node[j..j + kept]);
            }
        }
        self.last = way;
        let w = &mut self.walks[way];
        // SAFETY: a walk has at least one frame (frame 0, read from our own frame).
        self.keys[way] = unsafe { (fresh.ip[0].assume_init(), fresh.sp[0].assume_init()) };
        for i in 0..n {
            // SAFETY: the walk wrote frames 0..n.
            unsafe {
                w.ip[i] = fresh.ip[i].assume_init();
                w.sp[i] = fresh.sp[i].assume_init();
            }
        }
        w.len = n + kept;
        let first_new = if whole { n } else { w.len };
        let mut outer = if first_new < w.len {
            w.node[first_new]
        } else {
            0
        };
        for i in (0..first_new).rev() {
            outer = intern(outer, w.ip[i]);
            w.node[i] = outer;
        }
        outer
    }
}

/// The frames a walk unwinds before it meets the cached stack (not zeroed:
/// usually one or two of them are written).
struct Frames {
    ip: [core::mem::MaybeUninit<u64>; MAX_DEPTH],
    sp: [core::mem::MaybeUninit<usize>; MAX_DEPTH],
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

/// Captures the calling thread's stack and returns its thread-local id (0
/// for the empty stack): the id of each stack not seen before is made with
/// `intern(id of the stack without its innermost frame, that frame's return
/// address)`, outermost frame first. `stack_lo..stack_hi` bounds every read;
/// `previous` is the thread's [`StackCache`].
///
/// Inlined into the hooks: a capture that hits the cache (most) then costs no
/// call, no frame of its own to save registers in and one frame fewer to walk
/// up from; a miss goes on in [`unwind`].
#[inline(always)]
pub fn capture(
    stack_lo: usize,
    stack_hi: usize,
    mode: Mode,
    cache: &mut dwarf::Cache,
    previous: &mut StackCache,
    intern: &mut impl FnMut(u32, u64) -> u32,
) -> u32 {
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
            let (way, same_frame_0) = previous.way(ret as u64, caller_sp);
            if same_frame_0 && let Some(id) = previous.hit(way, stack_lo, stack_hi) {
                previous.last = way;
                return id;
            }
            let frame_0 = (ret, caller_sp, next_fp);
            return unwind(
                frame_0, way, stack_lo, stack_hi, mode, cache, previous, intern,
            );
        }
        if next_fp <= fp {
            return 0;
        }
        fp = next_fp;
    }
}

/// The part of [`capture`] after a miss in the cache: unwinds from frame 0
/// `(return address, stack pointer, frame pointer)` until the walk meets the
/// previous one, into walk `way`. Apart, so that a hit (most captures) runs
/// inside the hook, with none of this state set up (the frames' buffer, the
/// DWARF reader, the registers they need saved).
#[inline(never)]
#[allow(clippy::too_many_arguments)] // reason: `capture`'s state at the miss, passed on whole
fn unwind(
    frame_0: (usize, usize, usize),
    way: usize,
    stack_lo: usize,
    stack_hi: usize,
    mode: Mode,
    cache: &mut dwarf::Cache,
    previous: &mut StackCache,
    intern: &mut impl FnMut(u32, u64) -> u32,
) -> u32 {
    let mut read_stack = |addr: u64| -> Result<u64, ()> {
        let a = addr as usize;
        if !readable(a, 8, stack_lo, stack_hi) {
            return Err(());
        }
        // SAFETY: bounds-checked against this thread's stack.
        Ok(unsafe { *(a as *const u64) })
    };
    let (ret, caller_sp, _) = frame_0;
    let mut fresh = Frames {
        ip: [core::mem::MaybeUninit::uninit(); MAX_DEPTH],
        sp: [core::mem::MaybeUninit::uninit(); MAX_DEPTH],
    };
    fresh.ip[0].write(ret as u64);
    fresh.sp[0].write(caller_sp);
    let mut n = 1;
    let mut regs = frame_0;
    let mut cursor = 0;
    let reference = &previous.walks[previous.last];
    while n < MAX_DEPTH {
        let (ip, sp_now, bp_now) = regs;
        if let Some(j) = reference.find(&mut cursor, sp_now, ip as u64, stack_lo, stack_hi)
            && reference.keeps(j, n - 1)
        {
            // Frame n − 1 is the previous walk's frame j: keep the rest.
            return previous.splice(way, &fresh, n - 1, Some(j), intern);
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
                fresh.ip[n].write(ip2 as u64);
                fresh.sp[n].write(sp2);
                n += 1;
                regs = (ip2, sp2, bp2);
            }
            _ => break,
        }
    }
    previous.splice(way, &fresh, n, None, intern)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(len: usize) -> Walk {
        let mut w = Walk::new();
        w.len = len;
        w
    }

    #[test]
    fn a_whole_walk_lends_its_frames_to_any_new_one() {
        let w = walk(10);
        assert!(w.keeps(3, 0) && w.keeps(9, 40));
    }

    #[test]
    fn a_cut_walk_lends_its_frames_only_to_a_walk_cut_as_deep() {
        let w = walk(MAX_DEPTH);
        // From frame 5 on it has MAX_DEPTH − 5 frames: enough after 5 new ones,
        // too few after 4 (the stack goes on past its last frame).
        assert!(w.keeps(5, 5) && w.keeps(5, 60));
        assert!(!w.keeps(5, 4) && !w.keeps(40, 1));
    }
}
