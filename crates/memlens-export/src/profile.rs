//! The stack profile behind the pprof, collapsed and speedscope exports: per
//! (stack, thread, size class), what was allocated in a window of the run and what was
//! in use at one instant — the peak, the end or a time the user named — in one pass.
//!
//! "In use at the peak" needs no second pass and no snapshots: every key remembers the
//! peak epoch of its last change, and a key unchanged since the latest peak still holds
//! what it held then (the summary's lazy snapshot). A named time is an epoch that
//! starts once, when the first event after it arrives. The peak is the summary's: the
//! most requested bytes live at once, first reached.

use memlens_heap::TimeWindow;
use rustc_hash::FxHashMap;

use crate::lifetimes::{Block, Step};

/// The instant whose in-use values a profile holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// When the most bytes were live (first reached).
    Peak,
    /// The end of the run: what was never freed.
    End,
    /// A time in the run, ns since the process started.
    Time(u64),
}

/// What a sample is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// The trace's stack id.
    pub stack: u32,
    /// The allocating thread.
    pub tid: u32,
    /// The power-of-two size class (`memlens_heap::size_class_label` names it).
    pub size_class: u32,
}

/// A sample's four values, pprof's heap convention.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Values {
    /// Blocks allocated in the window (allocations and reallocations).
    pub alloc_objects: u64,
    /// Bytes requested by them.
    pub alloc_bytes: u64,
    /// Blocks in use at the instant.
    pub inuse_objects: u64,
    /// Their requested bytes.
    pub inuse_bytes: u64,
}

impl Values {
    /// Adds `other` to these values.
    pub fn add(&mut self, other: &Values) {
        self.alloc_objects += other.alloc_objects;
        self.alloc_bytes += other.alloc_bytes;
        self.inuse_objects += other.inuse_objects;
        self.inuse_bytes += other.inuse_bytes;
    }
}

/// The finished profile.
#[derive(Debug, Clone)]
pub struct StackProfile {
    /// One sample per key with any value, ordered by key.
    pub samples: Vec<(Key, Values)>,
    /// The instant of the in-use values, ns since the process started.
    pub at_ns: u64,
    /// The window of the allocated values.
    pub window: TimeWindow,
}

impl StackProfile {
    /// The sum of every sample.
    pub fn total(&self) -> Values {
        let mut total = Values::default();
        for (_, v) in &self.samples {
            total.add(v);
        }
        total
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct KeyState {
    values: Values,
    /// In-use objects and bytes at the latest epoch, valid when `epoch` is the latest.
    saved: (u64, u64),
    epoch: u64,
}

/// Builds a [`StackProfile`] from the [`Step`]s of [`crate::Lifetimes`].
pub struct ProfileBuilder {
    at: At,
    window: TimeWindow,
    keys: FxHashMap<Key, KeyState>,
    live_bytes: u64,
    peak_bytes: u64,
    at_ns: u64,
    epoch: u64,
}

impl ProfileBuilder {
    /// A builder of the values at `at`, with allocations counted inside `window`.
    pub fn new(at: At, window: TimeWindow) -> ProfileBuilder {
        ProfileBuilder {
            at,
            window,
            keys: FxHashMap::default(),
            live_bytes: 0,
            peak_bytes: 0,
            at_ns: 0,
            epoch: 0,
        }
    }

    /// Tells the builder that an event at `t_ns` is about to be applied.
    pub fn before(&mut self, t_ns: u64) {
        if let At::Time(at) = self.at
            && t_ns > at
            && self.epoch == 0
        {
            self.epoch = 1;
            self.at_ns = at;
        }
    }

    /// Applies one step of the live set.
    pub fn step(&mut self, step: Step<'_>) {
        match step {
            Step::Born(block) => {
                let counted = self.window.contains(block.born_ns);
                let state = self.state(block);
                if counted {
                    state.values.alloc_objects += 1;
                    state.values.alloc_bytes += block.size;
                }
                state.values.inuse_objects += 1;
                state.values.inuse_bytes += block.size;
                self.live_bytes += block.size;
                if self.at == At::Peak && self.live_bytes > self.peak_bytes {
                    self.peak_bytes = self.live_bytes;
                    self.at_ns = block.born_ns;
                    self.epoch += 1;
                }
            }
            Step::Died(block) => {
                let state = self.state(block);
                state.values.inuse_objects -= 1;
                state.values.inuse_bytes -= block.size;
                self.live_bytes -= block.size;
            }
        }
    }

    /// The key state of `block`, brought up to the latest epoch.
    fn state(&mut self, block: &Block) -> &mut KeyState {
        let key = Key {
            stack: block.stack,
            tid: block.tid,
            size_class: memlens_heap::size_class_of(block.size),
        };
        let epoch = self.epoch;
        let state = self.keys.entry(key).or_default();
        if state.epoch < epoch {
            // Unchanged since the latest epoch began: it held its current values then.
            state.saved = (state.values.inuse_objects, state.values.inuse_bytes);
            state.epoch = epoch;
        }
        state
    }

    /// The profile, once every event was applied; `end_ns` is the run's end.
    pub fn finish(self, end_ns: u64) -> StackProfile {
        let frozen = self.epoch > 0 && self.at != At::End;
        let epoch = self.epoch;
        let mut samples: Vec<(Key, Values)> = self
            .keys
            .into_iter()
            .map(|(key, state)| {
                let mut values = state.values;
                if frozen && state.epoch == epoch {
                    (values.inuse_objects, values.inuse_bytes) = state.saved;
                }
                (key, values)
            })
            .filter(|(_, v)| v.alloc_objects > 0 || v.inuse_objects > 0)
            .collect();
        samples.sort_unstable_by_key(|(k, _)| *k);
        let at_ns = match self.at {
            At::End => end_ns,
            At::Time(t) => t,
            At::Peak => self.at_ns,
        };
        StackProfile {
            samples,
            at_ns,
            window: self.window,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifetimes::Lifetimes;
    use memlens_trace::{AllocFn, Event};

    const ALL: TimeWindow = TimeWindow {
        start_ns: 0,
        end_ns: u64::MAX,
    };

    fn events() -> Vec<Event> {
        let alloc = |t, addr, size, stack| Event::Alloc {
            t,
            tid: 1,
            addr,
            size,
            stack,
            func: AllocFn::Malloc,
        };
        let free = |t, addr| Event::Free {
            t,
            tid: 1,
            addr,
            stack: 0,
        };
        vec![
            alloc(1, 0x10, 100, 1),
            alloc(2, 0x20, 50, 2),
            free(3, 0x10),
            alloc(4, 0x30, 120, 2), // the peak: 170 bytes
            free(5, 0x30),
            alloc(6, 0x40, 10, 3),
        ]
    }

    fn profile(at: At, window: TimeWindow) -> StackProfile {
        let mut life = Lifetimes::new();
        let mut builder = ProfileBuilder::new(at, window);
        for event in events() {
            builder.before(event.time());
            life.event(&event, &mut |s| builder.step(s));
        }
        builder.finish(7)
    }

    fn inuse_by_stack(p: &StackProfile) -> Vec<(u32, u64)> {
        p.samples
            .iter()
            .filter(|(_, v)| v.inuse_bytes > 0)
            .map(|(k, v)| (k.stack, v.inuse_bytes))
            .collect()
    }

    #[test]
    fn in_use_values_are_exact_at_the_peak_the_end_and_a_named_time() {
        let peak = profile(At::Peak, ALL);
        assert_eq!(peak.at_ns, 4);
        assert_eq!(inuse_by_stack(&peak), vec![(2, 50), (2, 120)]);
        assert_eq!(peak.total().inuse_bytes, 170);
        assert_eq!(peak.total().alloc_bytes, 280);
        let end = profile(At::End, ALL);
        assert_eq!((end.at_ns, end.total().inuse_bytes), (7, 60));
        let at = profile(At::Time(2), ALL);
        assert_eq!(inuse_by_stack(&at), vec![(1, 100), (2, 50)]);
    }

    #[test]
    fn allocated_values_count_the_window_only() {
        let window = TimeWindow {
            start_ns: 2,
            end_ns: 4,
        };
        let p = profile(At::End, window);
        assert_eq!(p.total().alloc_objects, 2);
        assert_eq!(p.total().alloc_bytes, 170);
    }
}
