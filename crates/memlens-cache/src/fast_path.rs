//! The fast path for the most common hierarchy shape.
//!
//! When the hierarchy is non-inclusive and every level is write-back,
//! write-allocate, LRU or FIFO with at most 16 ways (Cachegrind's and pycachesim's
//! model, and the CLI's default), a reference is simulated by a flat loop working
//! directly on each level's arrays ([`LeanLevel`]): probe the levels downwards until
//! one hits, then fill the levels above it from the bottom up, then apply the
//! write. Counters are a single histogram entry per line. It comes in two codings:
//! - [`Hierarchy::fast_access`] here, one reference at a time, emitting events only
//!   when the sink wants them (so it is also the fast evented path);
//! - `Hierarchy::fast_batch` (`batch.rs`), behind [`Hierarchy::run`], statistics
//!   only, a batch of references at a time.
//!
//! Both are the algorithm of [`Hierarchy::demand`] restricted to that shape, with the
//! same counters, the same events in the same order and the same resulting cache
//! contents; the tests `fast_path_matches_the_general_path` (tests/simulator.rs) and
//! `tests/batched_paths.rs` check all of it on random traces. Dirty victims (rare)
//! go through the general write-back code.

use crate::config::Inclusion;
use crate::events::{Event, EventSink, EvictionCause, Fill, ProbeKind};
use crate::hierarchy::{Demand, Hierarchy};
use crate::lean::LeanLevel;
use crate::level::{EMPTY, Level, Resident, key_of};
use crate::outcome::Outcome;
use crate::reference::{Reference, RegionId};

impl Hierarchy {
    /// Returns true when [`Hierarchy::fast_access`] may be used for this hierarchy.
    pub(crate) fn fast_path_applies(&mut self) -> bool {
        self.inclusion == Inclusion::NonInclusive
            && self
                .levels
                .iter_mut()
                .all(|l| l.write_back && l.write_allocate && l.lean_parts().is_some())
    }

    /// Simulates one reference on the fast path and returns its outcome.
    #[inline]
    pub(crate) fn fast_access<S: EventSink>(
        &mut self,
        reference: &Reference,
        demand: Demand,
        sink: &mut S,
    ) -> Outcome {
        let region = reference.region;
        let write = demand == Demand::Write;
        let shift = self.levels[0].geometry.line_shift;
        let last = reference.last_byte() >> shift;
        let mut line = reference.addr >> shift;
        let mut outcome = Outcome::default();
        if line == last {
            let served = self.fast_line(line << shift, demand, region, &mut outcome, sink);
            self.stats.record_single(region, write, served);
            outcome.served_by = served as u8;
            return outcome;
        }
        let mut served = 0;
        loop {
            let s = self.fast_line(line << shift, demand, region, &mut outcome, sink);
            self.stats.record_line(region, write, s);
            served = served.max(s);
            if line >= last {
                break;
            }
            line += 1;
        }
        outcome.served_by = served as u8;
        self.stats.record_served(region, served);
        outcome
    }

    /// One line of a reference: returns the level that served it, which the caller
    /// records as one entry of a histogram ([`crate::stats::Statistics::fold_lines`])
    /// instead of updating per-level counters.
    #[inline(always)]
    fn fast_line<S: EventSink>(
        &mut self,
        addr: u64,
        demand: Demand,
        region: RegionId,
        outcome: &mut Outcome,
        sink: &mut S,
    ) -> usize {
        let count = self.levels.len();
        let mut served = count;
        let mut first_way = 0;
        // Probe downwards until a level hits.
        for i in 0..count {
            let (line, set, found) = {
                let mut level = lean(&mut self.levels[i]);
                let line = level.line_of::<0>(addr);
                let set = level.set_of::<false>(line);
                let (queue, key) = (level.queue(set), key_of(line));
                let found = level.find(set, queue, key);
                if let Some(way) = found {
                    level.touch(set, queue, way, key);
                }
                (line, set.index(), found)
            };
            if S::WANTS_EVENTS {
                let kind = if i == 0 {
                    demand.probe_kind()
                } else {
                    ProbeKind::Read
                };
                self.probe_event(i, line, set, kind, found.is_some(), sink);
                if let Some(way) = found {
                    self.position_event(i, line, set, way, sink);
                }
            }
            if let Some(way) = found {
                first_way = way;
                served = i;
                break;
            }
        }
        // Fill the levels that missed, the deepest first. The victim is the back of
        // the queue (an empty way if there is one) and the filled way goes to the front.
        for j in (0..served).rev() {
            let geometry = self.levels[j].geometry;
            let (line, set, filled) = {
                let mut level = lean(&mut self.levels[j]);
                let line = level.line_of::<0>(addr);
                let set = level.set_of::<false>(line);
                let queue = level.queue(set);
                let filled = level.fill(set, queue, line, false, region);
                (line, set.index(), filled)
            };
            let way = filled.way;
            first_way = way;
            let (old_tag, old_owner) = (filled.old_tag, filled.old_owner);
            let (old_line, dirty) = (old_tag >> 1, old_tag & 1 != 0);
            if old_tag != EMPTY && (dirty || S::WANTS_EVENTS) {
                // Installing first is safe: handling the victim below cannot touch this
                // level (non-inclusive). Events still come in the general order.
                let victim_addr = geometry.line_addr(old_line);
                if S::WANTS_EVENTS {
                    let to = if dirty {
                        self.write_back_destination(j + 1, victim_addr)
                    } else {
                        self.resting_place(j + 1, victim_addr)
                    };
                    let victim = Resident {
                        line: old_line,
                        dirty,
                        owner: old_owner,
                    };
                    self.eviction_event(
                        j,
                        set,
                        way,
                        victim,
                        dirty,
                        to,
                        EvictionCause::Replacement,
                        sink,
                    );
                }
                if dirty {
                    self.stats.at(old_owner, j).write_backs += 1;
                    if j + 1 < count {
                        self.write_back(j + 1, victim_addr, old_owner, sink);
                    }
                }
            }
            if S::WANTS_EVENTS {
                sink.event(Event::Fill(Fill {
                    level: j as u8,
                    line_addr: geometry.line_addr(line),
                    set: set as u32,
                    way: way as u32,
                    region,
                }));
                self.position_event(j, line, set, way, sink);
            }
        }
        if demand != Demand::Read {
            let geometry = self.levels[0].geometry;
            let set = geometry.set_of(geometry.line_of(addr));
            self.levels[0].mark_dirty(set, first_way);
        }
        outcome.missed |= ((1u32 << served) - 1) as u16;
        if served < count {
            outcome.hit |= 1 << served;
        }
        served
    }
}

/// A level of a hierarchy on the fast path, as a [`LeanLevel`].
#[inline(always)]
fn lean(level: &mut Level) -> LeanLevel<'_, 0> {
    let Some(lean) = level.lean() else {
        unreachable!("the fast path is only enabled for lean levels")
    };
    lean
}
