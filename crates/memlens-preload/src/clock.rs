//! Timestamps on the hot path: the invariant TSC when the kernel itself uses
//! it as its clock source, `CLOCK_MONOTONIC` otherwise.
//!
//! Reading the TSC costs a few nanoseconds against ~20 for the vDSO clock;
//! the writer thread converts ticks to nanoseconds with a continuous,
//! monotonic piecewise-linear map (see `ticks::TickConverter`), so event
//! order is preserved exactly.

use core::sync::atomic::{AtomicBool, Ordering};

static USE_TSC: AtomicBool = AtomicBool::new(false);

/// Nanoseconds of `CLOCK_MONOTONIC`.
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-parameter.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds since the Unix epoch.
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-parameter.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The raw timestamp stored in ring slots: TSC ticks or monotonic ns.
#[inline(always)]
pub fn now_raw() -> u64 {
    if USE_TSC.load(Ordering::Relaxed) {
        // SAFETY: rdtsc has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    } else {
        monotonic_ns()
    }
}

/// True when raw timestamps are TSC ticks.
pub fn uses_tsc() -> bool {
    USE_TSC.load(Ordering::Relaxed)
}

/// Chooses the clock: the TSC when `/sys/…/current_clocksource` is `tsc`
/// (the kernel has verified it is invariant and synchronised across CPUs)
/// and `MEMLENS_CLOCK` does not say `monotonic`.
pub fn choose(forced_monotonic: bool) {
    if forced_monotonic {
        return;
    }
    let mut buf = [0u8; 16];
    let path = c"/sys/devices/system/clocksource/clocksource0/current_clocksource";
    // SAFETY: plain open/read/close on a local buffer.
    let n = unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    if n >= 3 && &buf[..3] == b"tsc" && (n == 3 || buf[3] == b'\n') {
        USE_TSC.store(true, Ordering::Relaxed);
    }
}
