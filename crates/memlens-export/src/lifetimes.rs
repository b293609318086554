//! Blocks and their lifetimes from a trace's events: every exporter's one view of the
//! events. A block is born at its allocation (or at a `realloc` that moved or resized
//! it: the new size is a new block, the old one dies at the same instant) and dies at
//! its free; the blocks still live at the end die never. Memory is one map entry per
//! live block — bounded by the live set, not by the number of events.
//!
//! The counting is the summary's (`memlens_heap::summary`): a free of an address never
//! seen allocated is counted as unknown and matched to nothing; an allocation at an
//! address still live kills the older block first ([`Death::Conflict`]).

use memlens_trace::{AllocFn, Event};
use rustc_hash::FxHashMap;

/// How a block was born.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Birth {
    /// By an allocation function.
    Alloc(AllocFn),
    /// By a `realloc` (the block it replaced died at the same instant).
    Realloc,
}

impl Birth {
    /// The allocating function's name: `malloc`, `calloc`, … or `realloc`.
    pub fn name(self) -> &'static str {
        match self {
            Birth::Alloc(f) => f.name(),
            Birth::Realloc => "realloc",
        }
    }
}

/// How a block died.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Death {
    /// By `free` (or `realloc(p, 0)`).
    Free,
    /// By a `realloc` that replaced it with a new block.
    Realloc,
    /// An allocation reused its address while it was live (a damaged trace or a
    /// foreign allocator).
    Conflict,
}

impl Death {
    /// `free`, `realloc` or `conflict`.
    pub fn name(self) -> &'static str {
        match self {
            Death::Free => "free",
            Death::Realloc => "realloc",
            Death::Conflict => "conflict",
        }
    }
}

/// One block's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Its address.
    pub address: u64,
    /// Requested bytes.
    pub size: u64,
    /// The allocating thread.
    pub tid: u32,
    /// The allocating stack (the trace's stack id).
    pub stack: u32,
    /// When it was born, ns since the process started.
    pub born_ns: u64,
    /// The birth's position among the trace's events (orders events at the same ns).
    pub born_seq: u64,
    /// How it was born.
    pub birth: Birth,
    /// When it died (`None` while it is live).
    pub died_ns: Option<u64>,
    /// The death's position among the trace's events.
    pub died_seq: Option<u64>,
    /// The thread that freed it.
    pub died_tid: Option<u32>,
    /// The freeing stack (`memlens record --free-stacks`; 0 when not recorded).
    pub died_stack: u32,
    /// How it died.
    pub death: Option<Death>,
}

/// A change of the live set, as [`Lifetimes`] sees it.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// A block was born.
    Born(&'a Block),
    /// A block died (its death fields are set).
    Died(&'a Block),
}

/// The live set of a trace being read, turning events into [`Step`]s.
#[derive(Default)]
pub struct Lifetimes {
    live: FxHashMap<u64, Block>,
    seq: u64,
    /// Frees (and reallocations) of addresses never seen allocated.
    pub unknown_frees: u64,
}

impl Lifetimes {
    /// An empty live set.
    pub fn new() -> Lifetimes {
        Lifetimes::default()
    }

    /// Blocks live now.
    pub fn live(&self) -> usize {
        self.live.len()
    }

    /// Applies one event, telling `step` each block born and died (a `realloc` is a
    /// death then a birth).
    pub fn event(&mut self, event: &Event, step: &mut impl FnMut(Step<'_>)) {
        let seq = self.seq;
        self.seq += 1;
        match *event {
            Event::Alloc {
                t,
                tid,
                addr,
                size,
                stack,
                func,
            } => self.born(t, seq, tid, addr, size, stack, Birth::Alloc(func), step),
            Event::Free {
                t,
                tid,
                addr,
                stack,
            } => self.died(t, seq, tid, addr, stack, Death::Free, step),
            Event::Realloc {
                t,
                tid,
                old_addr,
                new_addr,
                size,
                stack,
            } => {
                self.died(t, seq, tid, old_addr, stack, Death::Realloc, step);
                self.born(t, seq, tid, new_addr, size, stack, Birth::Realloc, step);
            }
        }
    }

    /// Hands every block still live to `live`, in address order.
    pub fn finish(self, mut live: impl FnMut(&Block)) {
        let mut blocks: Vec<Block> = self.live.into_values().collect();
        blocks.sort_unstable_by_key(|b| b.address);
        for block in &blocks {
            live(block);
        }
    }

    fn born(
        &mut self,
        t: u64,
        seq: u64,
        tid: u32,
        address: u64,
        size: u64,
        stack: u32,
        birth: Birth,
        step: &mut impl FnMut(Step<'_>),
    ) {
        let block = Block {
            address,
            size,
            tid,
            stack,
            born_ns: t,
            born_seq: seq,
            birth,
            died_ns: None,
            died_seq: None,
            died_tid: None,
            died_stack: 0,
            death: None,
        };
        if let Some(mut old) = self.live.insert(address, block) {
            old.died_ns = Some(t);
            old.died_seq = Some(seq);
            old.died_tid = Some(tid);
            old.death = Some(Death::Conflict);
            step(Step::Died(&old));
        }
        step(Step::Born(&block));
    }

    fn died(
        &mut self,
        t: u64,
        seq: u64,
        tid: u32,
        address: u64,
        stack: u32,
        death: Death,
        step: &mut impl FnMut(Step<'_>),
    ) {
        match self.live.remove(&address) {
            Some(mut block) => {
                block.died_ns = Some(t);
                block.died_seq = Some(seq);
                block.died_tid = Some(tid);
                block.died_stack = if death == Death::Free { stack } else { 0 };
                block.death = Some(death);
                step(Step::Died(&block));
            }
            None => self.unknown_frees += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(t: u64, addr: u64, size: u64) -> Event {
        Event::Alloc {
            t,
            tid: 1,
            addr,
            size,
            stack: 1,
            func: AllocFn::Malloc,
        }
    }

    #[test]
    fn a_realloc_ends_one_block_and_starts_another_at_the_same_instant() {
        let mut life = Lifetimes::new();
        let mut steps = Vec::new();
        let mut record = |s: Step<'_>| {
            steps.push(match s {
                Step::Born(b) => ("born", b.address, b.size, b.born_ns, b.death),
                Step::Died(b) => ("died", b.address, b.size, b.died_ns.unwrap(), b.death),
            })
        };
        life.event(&alloc(1, 0x10, 8), &mut record);
        life.event(
            &Event::Realloc {
                t: 2,
                tid: 1,
                old_addr: 0x10,
                new_addr: 0x20,
                size: 16,
                stack: 2,
            },
            &mut record,
        );
        life.event(
            &Event::Free {
                t: 3,
                tid: 1,
                addr: 0x99,
                stack: 0,
            },
            &mut record,
        );
        life.event(&alloc(4, 0x20, 4), &mut record);
        assert_eq!(
            steps,
            vec![
                ("born", 0x10, 8, 1, None),
                ("died", 0x10, 8, 2, Some(Death::Realloc)),
                ("born", 0x20, 16, 2, None),
                ("died", 0x20, 16, 4, Some(Death::Conflict)),
                ("born", 0x20, 4, 4, None),
            ]
        );
        assert_eq!(life.unknown_frees, 1);
        let mut left = Vec::new();
        life.finish(|b| left.push((b.address, b.size)));
        assert_eq!(left, vec![(0x20, 4)]);
    }
}
