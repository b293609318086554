//! The streaming summary behind `memlens summary`: totals, the peak and when
//! it happened, what is still live at exit, temporary allocations, and per
//! stack the counts and bytes, all in one pass.
//!
//! Memory is bounded by the live set (one map entry per live block) plus one
//! small record per unique stack; it does not grow with the trace length.
//! The bytes each stack held *at the global peak* are found in the same pass
//! without snapshots: every stack remembers the peak epoch of its last
//! change, and a stack unchanged since the latest peak still holds what it
//! held then (a lazy snapshot).
//!
//! A sampled trace's allocations each stand for the objects [`Sampling::objects`]
//! draws (the same as the heap model's): every count and byte figure is then an
//! unbiased estimate, and a `realloc` is a free and a fresh allocation. Temporary
//! allocations are not counted there: a sample does not see the next allocation.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::sampling::{Sampling, event_key};

/// A multiplicative hasher for addresses and ids (the keys are already
/// well-spread integers; SipHash would cost more than the rest of the pass).
#[derive(Default, Clone, Copy)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        self.0 ^= self.0 >> 32;
    }
}

type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// Per-stack figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StackFigures {
    /// Allocation calls (including reallocations attributed to this stack).
    pub allocations: u64,
    /// Bytes requested by those calls.
    pub bytes: u64,
    /// Allocations freed right after being allocated (see [`Summary::temporary`]).
    pub temporary: u64,
    /// Bytes live at the global peak.
    pub peak_bytes: u64,
    /// Bytes still live at the end of the trace.
    pub leaked_bytes: u64,
    /// Blocks still live at the end of the trace.
    pub leaked_allocations: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct StackState {
    figures: StackFigures,
    current: u64,
    current_blocks: u64,
    epoch: u64,
}

#[derive(Clone, Copy)]
struct Live {
    /// All its objects' bytes.
    size: u64,
    stack: u32,
    /// The objects it stands for (1 unless the trace is sampled).
    objects: u64,
}

/// The finished summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Allocation calls (`malloc`, `calloc`, the memalign family, `realloc(NULL, n)`).
    pub allocations: u64,
    /// `free` calls (and `realloc(p, 0)`) that freed a recorded block. Frees
    /// of blocks allocated before recording started are counted in
    /// [`Summary::unknown_frees`] instead (heaptrack counts the same way).
    pub frees: u64,
    /// `realloc` calls that resized or moved a block.
    pub reallocations: u64,
    /// Total bytes requested by allocations and reallocations.
    pub allocated_bytes: u64,
    /// The largest number of live bytes at any moment.
    pub peak_bytes: u64,
    /// When it was first reached (ns since start).
    pub peak_time_ns: u64,
    /// Live blocks at that moment.
    pub peak_allocations: u64,
    /// Bytes still live at the end.
    pub leaked_bytes: u64,
    /// Blocks still live at the end.
    pub leaked_allocations: u64,
    /// Allocations freed by the same thread before it allocated anything
    /// else (the shortest possible lifetime).
    pub temporary: u64,
    /// Frees of addresses never seen allocated (blocks from before recording
    /// started, or a damaged trace).
    pub unknown_frees: u64,
    /// Allocations at an address that was still live (the older block is
    /// treated as freed; only a damaged trace or a foreign allocator does this).
    pub address_conflicts: u64,
    /// Time of the last event.
    pub duration_ns: u64,
    /// Per stack id, indexed by stack id.
    pub stacks: Vec<StackFigures>,
}

/// Builds a [`Summary`] from time-ordered events.
#[derive(Default)]
pub struct SummaryBuilder {
    s: Summary,
    live: AddrMap<Live>,
    stacks: Vec<StackState>,
    current: u64,
    peak_epoch: u64,
    /// Per thread, the address of its latest allocation (few threads: a
    /// short list searched from the thread seen last is cheaper than a map).
    last_alloc_by_thread: Vec<(u32, u64)>,
    /// Objects live now (blocks, or their estimates in a sampled trace).
    live_objects: u64,
    /// Set for a sampled trace.
    sampling: Option<Sampling>,
}

impl SummaryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder for a trace sampled as `sampling` says: its figures are estimates.
    pub fn sampled(sampling: Sampling) -> Self {
        SummaryBuilder {
            sampling: Some(sampling),
            ..Self::default()
        }
    }

    fn stack(&mut self, id: u32) -> &mut StackState {
        let i = id as usize;
        if i >= self.stacks.len() {
            self.stacks.resize(i + 1, StackState::default());
        }
        let epoch = self.peak_epoch;
        let s = &mut self.stacks[i];
        if s.epoch < epoch {
            // Unchanged since the latest peak: it held `current` then.
            s.figures.peak_bytes = s.current;
            s.epoch = epoch;
        }
        s
    }

    fn add_live(&mut self, t: u64, addr: u64, block: Live) {
        if let Some(old) = self.live.insert(addr, block) {
            self.s.address_conflicts += 1;
            self.release(old);
        }
        let Live {
            size,
            stack,
            objects,
        } = block;
        self.current += size;
        self.live_objects += objects;
        let st = self.stack(stack);
        st.current += size;
        st.current_blocks += objects;
        if self.current > self.s.peak_bytes {
            self.s.peak_bytes = self.current;
            self.s.peak_time_ns = t;
            self.s.peak_allocations = self.live_objects;
            self.peak_epoch += 1;
            // Every stack's value at this new peak is its current value;
            // stacks catch up lazily, this one eagerly.
            let epoch = self.peak_epoch;
            let st = &mut self.stacks[stack as usize];
            st.figures.peak_bytes = st.current;
            st.epoch = epoch;
        }
    }

    fn release(&mut self, old: Live) {
        self.current -= old.size;
        self.live_objects -= old.objects;
        let st = self.stack(old.stack);
        st.current -= old.size;
        st.current_blocks -= old.objects;
    }

    /// The block an allocation of `size` bytes at `addr` at `t` makes: one object, or
    /// in a sampled trace the objects it stands for.
    fn block(&self, t: u64, addr: u64, size: u64, stack: u32) -> Live {
        let objects = self
            .sampling
            .map_or(1, |s| s.objects(size, event_key(t, addr, size)));
        Live {
            size: size.saturating_mul(objects),
            stack,
            objects,
        }
    }

    /// An allocation of `size` bytes at `addr` by thread `tid`.
    pub fn alloc(&mut self, t: u64, tid: u32, addr: u64, size: u64, stack: u32) {
        let block = self.block(t, addr, size, stack);
        self.s.allocations += block.objects;
        self.s.allocated_bytes += block.size;
        self.s.duration_ns = t;
        let st = self.stack(stack);
        st.figures.allocations += block.objects;
        st.figures.bytes += block.size;
        self.add_live(t, addr, block);
        *self.last_alloc(tid) = addr;
    }

    fn last_alloc(&mut self, tid: u32) -> &mut u64 {
        let list = &mut self.last_alloc_by_thread;
        match list.iter().position(|&(t, _)| t == tid) {
            Some(i) => {
                // Keep the most recent thread first.
                if i != 0 {
                    list.swap(0, i);
                }
                &mut list[0].1
            }
            None => {
                list.insert(0, (tid, 0));
                &mut list[0].1
            }
        }
    }

    /// A free of `addr` by thread `tid`.
    pub fn free(&mut self, t: u64, tid: u32, addr: u64) {
        self.s.duration_ns = t;
        match self.live.remove(&addr) {
            Some(old) => {
                self.s.frees += old.objects;
                // A sample holds no "next allocation": temporaries are not known.
                let full = self.sampling.is_none();
                let last = self.last_alloc(tid);
                if *last == addr && full {
                    *last = 0;
                    self.s.temporary += old.objects;
                    self.stack(old.stack).figures.temporary += old.objects;
                }
                self.release(old);
            }
            None => self.s.unknown_frees += 1,
        }
    }

    /// A reallocation: the block at `old_addr` now has `size` bytes at `new_addr`.
    pub fn realloc(
        &mut self,
        t: u64,
        tid: u32,
        old_addr: u64,
        new_addr: u64,
        size: u64,
        stack: u32,
    ) {
        if self.sampling.is_some() {
            // A sampled block is never resized: its weight is its size's.
            self.free(t, tid, old_addr);
            self.alloc(t, tid, new_addr, size, stack);
            return;
        }
        self.s.reallocations += 1;
        self.s.allocated_bytes += size;
        self.s.duration_ns = t;
        match self.live.remove(&old_addr) {
            Some(old) => self.release(old),
            None => self.s.unknown_frees += 1,
        }
        let st = self.stack(stack);
        st.figures.allocations += 1;
        st.figures.bytes += size;
        let block = self.block(t, new_addr, size, stack);
        self.add_live(t, new_addr, block);
        *self.last_alloc(tid) = new_addr;
    }

    /// Notes the end of the trace (when the last record, not event, was).
    pub fn end(&mut self, t: u64) {
        self.s.duration_ns = self.s.duration_ns.max(t);
    }

    /// Finishes the pass.
    pub fn finish(mut self) -> Summary {
        let epoch = self.peak_epoch;
        self.s.leaked_bytes = self.current;
        self.s.leaked_allocations = self.live_objects;
        self.s.stacks = self
            .stacks
            .iter()
            .map(|s| {
                let mut f = s.figures;
                if s.epoch < epoch {
                    f.peak_bytes = s.current;
                }
                f.leaked_bytes = s.current;
                f.leaked_allocations = s.current_blocks;
                f
            })
            .collect();
        self.s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_and_leaks_are_exact() {
        let mut b = SummaryBuilder::new();
        b.alloc(1, 1, 0x10, 100, 1);
        b.alloc(2, 1, 0x20, 50, 2);
        b.free(3, 1, 0x10);
        b.alloc(4, 1, 0x30, 120, 2); // peak: 50 + 120 = 170
        b.free(5, 1, 0x30);
        b.realloc(6, 1, 0x20, 0x40, 10, 3);
        let s = b.finish();
        assert_eq!((s.allocations, s.frees, s.reallocations), (3, 2, 1));
        assert_eq!((s.peak_bytes, s.peak_time_ns), (170, 4));
        assert_eq!((s.leaked_bytes, s.leaked_allocations), (10, 1));
        assert_eq!(s.stacks[1].peak_bytes, 0);
        assert_eq!(s.stacks[2].peak_bytes, 170);
        assert_eq!(s.stacks[3].leaked_bytes, 10);
        assert_eq!(s.temporary, 1); // 0x30 freed right after it was allocated
    }

    #[test]
    fn lazy_peak_snapshot_matches_recomputation() {
        // Random-ish workload: compare per-stack bytes at the peak with a
        // brute-force replay that snapshots at the known peak time.
        let mut x: u64 = 12345;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut events = Vec::new();
        let mut live: Vec<u64> = Vec::new();
        for t in 1..5000u64 {
            if live.is_empty() || rnd() % 3 != 0 {
                let addr = t * 16;
                events.push((t, true, addr, rnd() % 1000, (rnd() % 7) as u32));
                live.push(addr);
            } else {
                let i = (rnd() as usize) % live.len();
                events.push((t, false, live.swap_remove(i), 0, 0));
            }
        }
        let mut b = SummaryBuilder::new();
        for &(t, a, addr, size, stack) in &events {
            if a {
                b.alloc(t, 1, addr, size, stack);
            } else {
                b.free(t, 1, addr);
            }
        }
        let s = b.finish();
        let mut per: HashMap<u64, (u64, u32)> = HashMap::new();
        let mut expect = [0u64; 7];
        for &(t, a, addr, size, stack) in &events {
            if a {
                per.insert(addr, (size, stack));
            } else {
                per.remove(&addr);
            }
            if t == s.peak_time_ns {
                for (size, stack) in per.values() {
                    expect[*stack as usize] += size;
                }
                break;
            }
        }
        for (i, e) in expect.iter().enumerate() {
            assert_eq!(s.stacks[i].peak_bytes, *e, "stack {i}");
        }
        assert_eq!(expect.iter().sum::<u64>(), s.peak_bytes);
    }
}
