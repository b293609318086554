//! Software prefetching: a hint that the cache line holding a value will be read
//! soon. The event-chunk encoder's tables (`live_blocks.rs`, `predict.rs`) are
//! indexed by addresses and size classes in no predictable order, so each lookup
//! would wait for its line; the recorder's writer knows the events a few slots
//! ahead and asks for their lines first (`ColumnEncoder::prefetch`). A prefetch
//! never faults and changes no state: results never depend on it.

/// Starts loading the cache line holding `value` into every cache level.
#[inline(always)]
pub(crate) fn line<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is SSE, part of the x86-64 baseline; it reads nothing
    // architecturally and never faults.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(value).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
