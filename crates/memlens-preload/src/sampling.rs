//! Poisson sampling by bytes (`memlens record --sample BYTES`, `MEMLENS_SAMPLE`), as
//! tcmalloc, heapprofd and Go's heap profiler do it.
//!
//! Think of the bytes a thread allocates as one long line with points thrown on it
//! at random, on average one per `R` bytes (a Poisson process of rate `1/R`). An
//! allocation is *sampled* — recorded as in a full recording, with its time and
//! stack — when a point falls inside its bytes, which happens with probability
//! `p(s) = 1 − exp(−s/R)` for `s` bytes, independently of every other allocation.
//! The gaps between points are exponential with mean `R` and memoryless, so each
//! thread keeps one counter, the bytes left to the next point (a word of its TLS,
//! drawn by its [`Sampler`]): an allocation smaller than the counter only
//! subtracts its size (no clock read, no stack, no ring slot, not even the thread's
//! state: the fast path of the hooks, which then tail-calls the real allocator);
//! one that reaches it is sampled, and a fresh gap is drawn, counted from the
//! allocation's end. Readers weigh a sampled allocation by `1/p(s)` (the trace
//! says `R`), which makes every count and byte total an unbiased estimate.
//!
//! Frees are recorded only for sampled blocks. The free hook's fast path asks
//! [`page_may_hold_sampled`]: a bitmap with one bit per 4 KiB page modulo 1 GiB
//! ([`PAGES`], one relaxed load, no lock and no write), clear for nearly every
//! page since sampled blocks are few, and small enough (1/32768 of the heap it
//! covers) to stay in the first-level cache. On a set bit, a second bitmap with one
//! bit per 16-byte granule modulo 128 MiB ([`FILTER`]; indexing by address rather
//! than by a hash keeps the bits a program touches as close together as its heap
//! blocks — a hashed filter of byte counters missed the cache on most frees), and
//! only then the exact set of sampled live addresses behind a lock ([`SAMPLED`], an
//! open-addressing table), which also keeps the counts that say when a bit may be
//! cleared. The set is touched only by sampled allocations and filter hits, both
//! rare (about one per `R` bytes allocated, and frees of blocks sharing a granule
//! modulo 128 MiB with a sampled live one), so the allocation path keeps the
//! recorder's invariant: no lock and no shared cache line written in the common
//! case. A free's pointer leaves the set before the real `free`, so a thread that
//! gets the same address next finds it gone.
//!
//! Each thread draws its gaps from its own xorshift generator, seeded from
//! `MEMLENS_SAMPLE_SEED` and the thread's creation order when the seed is given (a
//! test's run repeats exactly), else from the clock and the thread id.

use core::cell::Cell;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::locked::Locked;

/// The mean sampling interval in bytes; 0 when every allocation is recorded.
static MEAN: AtomicU64 = AtomicU64::new(0);

/// The seed the user gave (`MEMLENS_SAMPLE_SEED`), or 0 for a seed from the clock.
static SEED: AtomicU64 = AtomicU64::new(0);

/// Threads that have made a [`Sampler`] so far (the seeded generators' stream index).
static THREADS: AtomicU64 = AtomicU64::new(0);

/// Forks this process descends from since sampling started: a sampler made before
/// the latest one reseeds at its next draw, so a child does not repeat its parent.
static FORKS: AtomicU64 = AtomicU64::new(0);

/// Turns sampling on with mean interval `mean` bytes (0: off), before recording
/// starts; `seed` fixes every thread's generator.
pub fn configure(mean: u64, seed: Option<u64>) {
    SEED.store(seed.map_or(0, |s| s | 1 << 63), Ordering::Relaxed);
    MEAN.store(mean, Ordering::Relaxed);
    // Once per process image (a followed child configures again; handlers are inherited).
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    if mean > 0 && !REGISTERED.swap(true, Ordering::Relaxed) {
        // SAFETY: registering plain C callbacks.
        unsafe { libc::pthread_atfork(Some(before_fork), Some(after_fork), Some(in_child)) };
    }
}

/// True when the recording is sampled (one relaxed load).
#[inline(always)]
pub fn on() -> bool {
    MEAN.load(Ordering::Relaxed) != 0
}

/// SplitMix64: turns a seed or a counter into a well-mixed word.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One thread's sampling state: its random generator (the bytes left to its next
/// sample point are a word of the thread's TLS, which the hooks' fast path reads
/// without finding the state: `thread::sample_left`). Only the owning thread
/// touches it.
pub struct Sampler {
    rng: Cell<u64>,
    /// [`FORKS`] when the generator was seeded.
    forks: Cell<u64>,
    /// The mean gap in bytes.
    mean: u64,
}

impl Sampler {
    /// A thread's sampler, its first gap drawn (`tid` seeds it when no seed was given).
    pub fn new(tid: u32) -> Sampler {
        let ordinal = THREADS.fetch_add(1, Ordering::Relaxed);
        let seed = match SEED.load(Ordering::Relaxed) {
            0 => mix(crate::clock::monotonic_ns() ^ u64::from(tid) << 32),
            seed => mix(seed ^ mix(ordinal)),
        };
        Sampler::seeded(seed, MEAN.load(Ordering::Relaxed))
    }

    /// A sampler from `seed` for mean interval `mean`.
    fn seeded(seed: u64, mean: u64) -> Sampler {
        Sampler {
            rng: Cell::new(seed | 1),
            forks: Cell::new(FORKS.load(Ordering::Relaxed)),
            mean,
        }
    }

    /// Counts an allocation of `size` bytes against `left`, the thread's bytes to
    /// its next sample point (0: none drawn yet, the first gap is drawn now); true
    /// when it is sampled, and then the next gap is drawn into `left`. The common
    /// case is a compare and a subtraction (which the hooks make themselves
    /// first, on the TLS word, before they find the thread's state).
    #[inline(always)]
    pub fn take(&self, left: &Cell<u64>, size: usize) -> bool {
        let mut l = left.get();
        if l == 0 {
            l = self.gap();
        }
        let size = size as u64;
        if size < l {
            left.set(l - size);
            return false;
        }
        left.set(self.gap());
        true
    }

    /// The bytes to the next sample point: `⌈x⌉` for `x` exponential with mean
    /// `self.mean`, so an allocation of `s` bytes reaches it with probability
    /// `P(x ≤ s) = 1 − exp(−s/mean)` (at least 1: zero-byte allocations are never
    /// sampled).
    #[cold]
    fn gap(&self) -> u64 {
        let forks = FORKS.load(Ordering::Relaxed);
        if self.forks.get() != forks {
            // A forked child: draw what its parent does not.
            self.forks.set(forks);
            self.rng
                .set(mix(self.rng.get() ^ mix(forks) ^ u64::from(std::process::id())) | 1);
        }
        // xorshift64*: only the owning thread steps it.
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        let bits = x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        // Uniform in (0, 1]: 1 − [0, 1) on the 53-bit grid.
        let u = 1.0 - bits as f64 * (1.0 / (1u64 << 53) as f64);
        let x = -u.ln() * self.mean as f64;
        (x.ceil() as u64).max(1)
    }
}

/// Bits of granule index in the filter: 2^23 bits (1 MiB of zeroed memory, of which
/// only the words under the program's heap are ever touched), one per 16-byte
/// granule of a 128 MiB window.
const FILTER_BITS: u32 = 23;

/// One bit per granule index: set while a sampled live block starts in a granule
/// with that index (zero means "certainly not sampled"). Written only with
/// [`SAMPLED`]'s lock held, which also keeps the counts that say when a bit may
/// be cleared. A bit per granule, not a byte, keeps the filter 128 times smaller
/// than the heap it covers, so the free path's load stays in cache.
static FILTER: [AtomicU64; 1 << (FILTER_BITS - 6)] =
    [const { AtomicU64::new(0) }; 1 << (FILTER_BITS - 6)];

/// Bits of page index in [`PAGES`]: 2^18 bits (32 KiB), one per 4 KiB page of a
/// 1 GiB window.
const PAGE_BITS: u32 = 18;

/// One bit per page index: set while a sampled live block starts in a page with
/// that index, kept like [`FILTER`]. The free hook's fast path reads only this
/// bitmap: at 512 KiB a program has a few sampled blocks per 512 KiB of live heap,
/// so nearly every page's bit is clear, and the bitmap is 1/32768 of the heap it
/// covers, so the load stays in the first-level cache where [`FILTER`]'s, 1/128 of
/// the heap, missed it on most frees.
static PAGES: [AtomicU64; 1 << (PAGE_BITS - 6)] =
    [const { AtomicU64::new(0) }; 1 << (PAGE_BITS - 6)];

/// The exact set of sampled live block addresses.
static SAMPLED: Locked<AddressSet> = Locked::new(AddressSet::new());

/// The filter index of `addr`: its 16-byte granule (blocks are 16-byte aligned, and
/// two live blocks never start in one granule) modulo 2^23.
#[inline(always)]
fn slot(addr: u64) -> usize {
    ((addr >> 4) & ((1 << FILTER_BITS) - 1)) as usize
}

/// The [`PAGES`] index of `addr`: its 4 KiB page modulo 2^18.
#[inline(always)]
fn page(addr: u64) -> usize {
    ((addr >> 12) & ((1 << PAGE_BITS) - 1)) as usize
}

fn set_bit(bits: &[AtomicU64], i: usize, on: bool) {
    if on {
        bits[i >> 6].fetch_or(1 << (i & 63), Ordering::Relaxed);
    } else {
        bits[i >> 6].fetch_and(!(1 << (i & 63)), Ordering::Relaxed);
    }
}

#[inline(always)]
fn bit(bits: &[AtomicU64], i: usize) -> bool {
    bits[i >> 6].load(Ordering::Relaxed) & (1 << (i & 63)) != 0
}

/// Remembers the sampled block at `addr` (before the allocation returns to the program).
pub fn insert(addr: u64) {
    SAMPLED.with(|set| {
        if set.insert(addr) {
            if set.count(Level::Granule, slot(addr), 1) {
                set_bit(&FILTER, slot(addr), true);
            }
            if set.count(Level::Page, page(addr), 1) {
                set_bit(&PAGES, page(addr), true);
            }
        }
    });
}

/// Whether the page of `addr` may hold a sampled block: false for nearly every
/// unsampled one (one relaxed load of a bitmap that stays in cache; the block's
/// allocation happened before its free, so its bit is visible). The free hook's
/// fast path asks only this; [`maybe_sampled`] asks the finer bitmap too.
#[inline(always)]
pub fn page_may_hold_sampled(addr: u64) -> bool {
    bit(&PAGES, page(addr))
}

/// Whether `addr` may be a sampled block: [`page_may_hold_sampled`] and the bit
/// of its 16-byte granule.
#[inline(always)]
pub fn maybe_sampled(addr: u64) -> bool {
    page_may_hold_sampled(addr) && bit(&FILTER, slot(addr))
}

/// Forgets `addr` if it is a sampled live block; true when it was (its free is
/// then recorded). Call it before the real `free` and after [`maybe_sampled`].
pub fn take(addr: u64) -> bool {
    SAMPLED.with(|set| {
        let removed = set.remove(addr);
        if removed {
            if set.count(Level::Granule, slot(addr), -1) {
                set_bit(&FILTER, slot(addr), false);
            }
            if set.count(Level::Page, page(addr), -1) {
                set_bit(&PAGES, page(addr), false);
            }
        }
        removed
    })
}

/// Which bitmap a count belongs to.
#[derive(Clone, Copy)]
enum Level {
    /// [`FILTER`]: 16-byte granules.
    Granule,
    /// [`PAGES`]: 4 KiB pages.
    Page,
}

extern "C" fn before_fork() {
    SAMPLED.lock();
}

extern "C" fn after_fork() {
    SAMPLED.unlock();
}

/// The forking thread, the child's only one, holds the lock (`before_fork`) and
/// the set is consistent: the child keeps it, and its generators draw afresh.
extern "C" fn in_child() {
    SAMPLED.unlock();
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// An open-addressing set of block addresses (linear probing; 0 marks an empty
/// slot, 1 a removed one: no block lives at either address).
pub struct AddressSet {
    slots: Vec<u64>,
    /// Live addresses per filter index (saturating: a full count stays), allocated
    /// at the first insert (zeroed pages, touched only where sampled blocks live).
    counts: Vec<u8>,
    /// Live addresses per page index, likewise.
    page_counts: Vec<u8>,
    /// Slots that are not empty (live and removed).
    used: usize,
    live: usize,
}

const EMPTY: u64 = 0;
const REMOVED: u64 = 1;

impl AddressSet {
    /// An empty set (allocates on the first insert).
    pub const fn new() -> AddressSet {
        AddressSet {
            slots: Vec::new(),
            counts: Vec::new(),
            page_counts: Vec::new(),
            used: 0,
            live: 0,
        }
    }

    /// Adds `delta` (±1) to the count of index `i` of `level`'s bitmap; true when
    /// its bit must change (the count left or reached zero).
    fn count(&mut self, level: Level, i: usize, delta: i8) -> bool {
        let (counts, bits) = match level {
            Level::Granule => (&mut self.counts, FILTER_BITS),
            Level::Page => (&mut self.page_counts, PAGE_BITS),
        };
        if counts.is_empty() {
            *counts = vec![0; 1 << bits];
        }
        let c = &mut counts[i];
        match (*c, delta) {
            (u8::MAX, _) => false,
            (n, 1) => {
                *c = n + 1;
                n == 0
            }
            (n, _) => {
                *c = n.saturating_sub(1);
                n == 1
            }
        }
    }

    fn home(&self, addr: u64) -> usize {
        (mix(addr) as usize) & (self.slots.len() - 1)
    }

    /// Adds `addr`; false when it was there already.
    pub fn insert(&mut self, addr: u64) -> bool {
        if addr <= REMOVED {
            return false;
        }
        if (self.used + 1) * 2 > self.slots.len() {
            self.rebuild();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(addr);
        let mut reuse = None;
        loop {
            match self.slots[i] {
                EMPTY => break,
                REMOVED => {
                    reuse.get_or_insert(i);
                }
                a if a == addr => return false,
                _ => {}
            }
            i = (i + 1) & mask;
        }
        match reuse {
            Some(r) => self.slots[r] = addr,
            None => {
                self.slots[i] = addr;
                self.used += 1;
            }
        }
        self.live += 1;
        true
    }

    /// Removes `addr`; true when it was there.
    pub fn remove(&mut self, addr: u64) -> bool {
        if self.slots.is_empty() || addr <= REMOVED {
            return false;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(addr);
        loop {
            match self.slots[i] {
                EMPTY => return false,
                a if a == addr => {
                    self.slots[i] = REMOVED;
                    self.live -= 1;
                    return true;
                }
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Rehashes into a table at most a quarter full of live addresses.
    fn rebuild(&mut self) {
        let capacity = (self.live * 4).next_power_of_two().max(1024);
        let old = core::mem::replace(&mut self.slots, vec![EMPTY; capacity]);
        self.used = 0;
        self.live = 0;
        for a in old {
            if a > REMOVED {
                self.insert(a);
            }
        }
    }

    /// Sampled blocks live now.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_allocation_is_sampled_with_probability_one_minus_exp_minus_size_over_mean() {
        let mean = 4096u64;
        let s = Sampler::seeded(mix(7), mean);
        let left = Cell::new(0);
        for size in [16usize, 512, 4096, 20_000] {
            // Interleave the measured size with others, as a program does.
            let (mut hit, n) = (0u32, 200_000u32);
            for i in 0..n {
                s.take(&left, 48 * (i as usize % 5));
                hit += u32::from(s.take(&left, size));
            }
            let p = 1.0 - (-(size as f64) / mean as f64).exp();
            let got = f64::from(hit) / f64::from(n);
            let sd = (p * (1.0 - p) / f64::from(n)).sqrt();
            assert!(
                (got - p).abs() < 5.0 * sd + 1e-4,
                "size {size}: {got} vs {p}"
            );
        }
    }

    #[test]
    fn zero_byte_allocations_are_never_sampled() {
        let s = Sampler::seeded(mix(3), 1);
        let left = Cell::new(0);
        assert!((0..10_000).all(|_| !s.take(&left, 0)));
    }

    #[test]
    fn seeded_samplers_repeat_their_draws() {
        let draws = |seed| {
            let s = Sampler::seeded(seed, 1000);
            let left = Cell::new(0);
            (0..1000)
                .map(|i| s.take(&left, i % 300))
                .collect::<Vec<bool>>()
        };
        assert_eq!(draws(11), draws(11));
        assert_ne!(draws(11), draws(12));
    }

    #[test]
    fn the_address_set_keeps_exactly_what_is_live() {
        let mut set = AddressSet::new();
        let mut model = std::collections::HashSet::new();
        let mut x = 99u64;
        for _ in 0..200_000 {
            x = mix(x);
            let addr = 0x1000 + (x % 5000) * 16;
            if x >> 63 == 0 {
                assert_eq!(set.insert(addr), model.insert(addr));
            } else {
                assert_eq!(set.remove(addr), model.remove(&addr));
            }
        }
        assert_eq!(set.len(), model.len());
        assert!(!set.remove(0) && !set.insert(REMOVED));
    }

    #[test]
    fn the_filter_answers_no_for_blocks_never_sampled_and_yes_until_freed() {
        let (a, b) = (0x5555_0000_1230u64, 0x5555_0000_9990u64);
        insert(a);
        assert!(maybe_sampled(a));
        assert!(!take(b), "not sampled");
        assert!(take(a) && !take(a), "freed once");
        assert!(!maybe_sampled(a));
        // Two blocks 128 MiB apart share a filter bit: freeing one keeps the other's.
        let c = a + (16 << FILTER_BITS);
        insert(a);
        insert(c);
        assert!(take(a) && maybe_sampled(c) && take(c) && !maybe_sampled(c));
        // A page keeps its bit while any sampled block starts in it.
        insert(a);
        insert(b);
        assert!(page_may_hold_sampled(a + 0x10) && !maybe_sampled(a + 0x10));
        assert!(take(a) && page_may_hold_sampled(b) && take(b));
        assert!(!page_may_hold_sampled(a) && !page_may_hold_sampled(b));
    }
}
