//! In-process DWARF unwinding with framehop, reading `.eh_frame_hdr` and
//! `.eh_frame` straight from the loaded images (no file IO, no allocation
//! while unwinding).
//!
//! The unwinder and the table of module ranges live in a [`Snapshot`] that is
//! rebuilt when modules are loaded or unloaded and published with one atomic
//! pointer store; old snapshots are leaked on purpose, since a thread may
//! still be reading one (modules change rarely, so this is bounded).

use core::sync::atomic::{AtomicPtr, Ordering};

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, FrameAddress, MustNotAllocateDuringUnwind, Unwinder};

use crate::modules::Scanned;

type Unw = UnwinderX86_64<&'static [u8], MustNotAllocateDuringUnwind>;

/// The per-thread rule cache.
pub type Cache = CacheX86_64<MustNotAllocateDuringUnwind>;

struct Range {
    start: u64,
    end: u64,
    lacks_fp: bool,
}

/// An immutable view of the loaded modules for unwinding.
pub struct Snapshot {
    unwinder: Unw,
    ranges: Vec<Range>,
}

static SNAPSHOT: AtomicPtr<Snapshot> = AtomicPtr::new(core::ptr::null_mut());

/// System libraries are built without frame pointers on most distributions
/// (Debian, Ubuntu ≤ 22.04), so frame-pointer walks take DWARF steps there.
fn is_system_path(path: &str) -> bool {
    [
        "/lib/",
        "/lib64/",
        "/usr/lib/",
        "/usr/lib64/",
        "/usr/local/lib/",
    ]
    .iter()
    .any(|p| path.starts_with(p))
        || path.contains("linux-vdso")
}

fn slice(addr: u64, len: u64) -> &'static [u8] {
    // SAFETY: callers pass ranges inside loaded, readable PT_LOAD segments of
    // a module that stays loaded while this snapshot is current.
    unsafe { core::slice::from_raw_parts(addr as *const u8, len as usize) }
}

/// Reads the `eh_frame_ptr` field of `.eh_frame_hdr` (version 1) and returns
/// the `.eh_frame` SVMA.
fn eh_frame_svma(hdr_svma: u64, hdr: &[u8]) -> Option<u64> {
    if hdr.len() < 8 || hdr[0] != 1 {
        return None;
    }
    let enc = hdr[1];
    let field_svma = hdr_svma + 4;
    let value = match enc & 0x0f {
        0x0b => i64::from(i32::from_le_bytes([hdr[4], hdr[5], hdr[6], hdr[7]])) as u64, // sdata4
        0x03 => u64::from(u32::from_le_bytes([hdr[4], hdr[5], hdr[6], hdr[7]])),        // udata4
        _ => return None,
    };
    match enc & 0x70 {
        0x00 => Some(value),
        0x10 => Some(field_svma.wrapping_add(value)), // pcrel
        0x30 => Some(hdr_svma.wrapping_add(value)),   // datarel
        _ => None,
    }
}

/// Builds and publishes a snapshot for `modules`.
pub fn publish(modules: &[Scanned]) {
    let mut unwinder = Unw::new();
    let mut ranges = Vec::new();
    for m in modules {
        let bias = m.module.load_bias;
        let lo = m.module.segments.iter().map(|s| s.vaddr).min().unwrap_or(0);
        let hi = m
            .module
            .segments
            .iter()
            .map(|s| s.vaddr + s.memsz)
            .max()
            .unwrap_or(0);
        let lacks_fp = is_system_path(&m.module.path);
        for s in m.module.segments.iter().filter(|s| s.flags & 1 != 0) {
            ranges.push(Range {
                start: bias + s.vaddr,
                end: bias + s.vaddr + s.memsz,
                lacks_fp,
            });
        }
        let Some((hdr_vaddr, hdr_len)) = m.eh_frame_hdr else {
            continue;
        };
        let hdr = slice(bias + hdr_vaddr, hdr_len);
        let Some(eh_svma) = eh_frame_svma(hdr_vaddr, hdr) else {
            continue;
        };
        // `.eh_frame` runs to at most the end of the segment that holds it.
        let Some(seg) = m
            .module
            .segments
            .iter()
            .find(|s| eh_svma >= s.vaddr && eh_svma < s.vaddr + s.memsz)
        else {
            continue;
        };
        let eh_len = seg.vaddr + seg.memsz - eh_svma;
        let text = m.module.segments.iter().find(|s| s.flags & 1 != 0);
        let info = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: text.map(|s| s.vaddr..s.vaddr + s.memsz),
            text: text.map(|s| slice(bias + s.vaddr, s.memsz)),
            eh_frame_svma: Some(eh_svma..eh_svma + eh_len),
            eh_frame: Some(slice(bias + eh_svma, eh_len)),
            eh_frame_hdr_svma: Some(hdr_vaddr..hdr_vaddr + hdr_len),
            eh_frame_hdr: Some(hdr),
            ..Default::default()
        };
        unwinder.add_module(framehop::Module::new(
            m.module.path.clone(),
            (bias + lo)..(bias + hi),
            bias,
            info,
        ));
    }
    ranges.sort_by_key(|r| r.start);
    let snap = Box::into_raw(Box::new(Snapshot { unwinder, ranges }));
    // The previous snapshot is intentionally leaked (see the module docs).
    SNAPSHOT.store(snap, Ordering::Release);
}

fn snapshot() -> Option<&'static Snapshot> {
    let p = SNAPSHOT.load(Ordering::Acquire);
    // SAFETY: snapshots are never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// What is known about a code address.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Not inside any loaded executable segment: not a real return address.
    Unknown,
    /// In a module assumed to use frame pointers.
    FramePointers,
    /// In a module assumed to be built without frame pointers.
    NoFramePointers,
}

/// Classifies `ip` by the module that contains it.
#[inline]
pub fn classify(ip: usize) -> Code {
    let Some(s) = snapshot() else {
        return Code::FramePointers;
    };
    let ip = ip as u64;
    let i = s.ranges.partition_point(|r| r.start <= ip);
    if i == 0 || ip >= s.ranges[i - 1].end {
        Code::Unknown
    } else if s.ranges[i - 1].lacks_fp {
        Code::NoFramePointers
    } else {
        Code::FramePointers
    }
}

/// One DWARF step from the frame `(ip, sp, bp)`, where `ip` is a return
/// address: returns the caller's `(return address, sp, bp)`. Every stack
/// word the step needs is read through `read_stack`, which refuses
/// addresses outside the thread's stack.
pub fn step(
    cache: &mut Cache,
    ip: usize,
    sp: usize,
    bp: usize,
    read_stack: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Option<(usize, usize, usize)> {
    let snap = snapshot()?;
    let mut regs = UnwindRegsX86_64::new(ip as u64, sp as u64, bp as u64);
    let frame = FrameAddress::from_return_address(ip as u64)?;
    match snap
        .unwinder
        .unwind_frame(frame, &mut regs, cache, read_stack)
    {
        Ok(Some(ret)) if (regs.sp() as usize) > sp => {
            Some((ret as usize, regs.sp() as usize, regs.bp() as usize))
        }
        _ => None,
    }
}
