//! The fast path for the most common hierarchy shape.
//!
//! When the hierarchy is non-inclusive and every level is write-back,
//! write-allocate, LRU or FIFO with at most 16 ways (Cachegrind's and pycachesim's
//! model, and the CLI's default), a reference is simulated by a flat loop working
//! directly on each level's arrays: probe the levels downwards until one hits, then
//! fill the levels above it from the bottom up, then apply the write. Counters are a
//! single histogram entry per line. It comes in two codings:
//! - [`Hierarchy::fast_access`], one reference at a time, emitting events only when
//!   the sink wants them (so it is also the fast evented path);
//! - [`Hierarchy::fast_batch`], behind [`Hierarchy::run`], statistics only, which
//!   borrows every level's arrays once per batch and unrolls the level loops.
//!
//! Both are the algorithm of [`Hierarchy::demand`] restricted to that shape, with the
//! same counters, the same events in the same order and the same resulting cache
//! contents; the test `fast_path_matches_the_general_path` checks all of it on
//! random traces. Dirty victims (rare) go through the general write-back code.

use crate::config::Inclusion;
use crate::events::{Event, EventSink, EvictionCause, Fill, ProbeKind};
use crate::geometry::{Geometry, MAX_LEVELS};
use crate::hierarchy::{Demand, Hierarchy};
use crate::level::{EMPTY, LeanParts, Resident, key_of, match_way, print_of, tag_of};
use crate::order::{packed_back_to_front, packed_to_front};
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
            let level = &mut self.levels[i];
            let geometry = level.geometry;
            let ways = geometry.ways as usize;
            let line = geometry.line_of(addr);
            let set = geometry.set_of(line);
            let Some(parts) = level.lean_parts() else {
                unreachable!("the fast path is only enabled for lean levels")
            };
            let queue = parts.queues[set];
            let tags = &parts.tags[set * ways..set * ways + ways];
            let front = (queue & 0xF) as usize;
            let key = key_of(line);
            let found = if tags.get(front).is_some_and(|&t| t | 1 == key) {
                Some(front)
            } else {
                match_way(tags, &parts.prints[set * ways..set * ways + ways], key)
            };
            if let Some(way) = found {
                if parts.lru && way != front {
                    parts.queues[set] = packed_to_front(queue, way);
                }
                first_way = way;
                served = i;
                if S::WANTS_EVENTS {
                    let kind = if i == 0 {
                        demand.probe_kind()
                    } else {
                        ProbeKind::Read
                    };
                    self.probe_event(i, line, set, kind, true, sink);
                    self.position_event(i, line, set, way, sink);
                }
                break;
            }
            if S::WANTS_EVENTS {
                let kind = if i == 0 {
                    demand.probe_kind()
                } else {
                    ProbeKind::Read
                };
                self.probe_event(i, line, set, kind, false, sink);
            }
        }
        // Fill the levels that missed, the deepest first. The victim is the back of
        // the queue (an empty way if there is one) and the filled way goes to the front.
        for j in (0..served).rev() {
            let level = &mut self.levels[j];
            let geometry = level.geometry;
            let ways = geometry.ways as usize;
            let line = geometry.line_of(addr);
            let set = geometry.set_of(line);
            let Some(parts) = level.lean_parts() else {
                unreachable!("the fast path is only enabled for lean levels")
            };
            let queue = parts.queues[set];
            let way = ((queue >> (4 * (ways - 1))) & 0xF) as usize;
            let slot = set * ways + way;
            let old_tag = std::mem::replace(&mut parts.tags[slot], tag_of(line));
            parts.prints[slot] = print_of(key_of(line));
            let old_owner = std::mem::replace(&mut parts.owners[slot], region);
            parts.queues[set] = packed_back_to_front(queue, ways);
            first_way = way;
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

    /// The batched statistics-only loop behind [`Hierarchy::run`]: the same algorithm
    /// as [`Hierarchy::fast_access`], with every level's arrays borrowed once for the
    /// whole batch instead of once per probe. It stops after a reference whose dirty
    /// victims must be written back (they are pushed to `write_backs` as (level,
    /// address, owner), for the caller to deliver in order: no other operation of
    /// that reference touches those levels) and before a reference that spans lines
    /// (`general` is then true and the caller simulates it on the general path).
    /// Returns how many references it simulated.
    ///
    /// With a non-empty `codes` (as long as `references`), it also stores each
    /// simulated reference's outcome there as an [`Outcome::code`].
    pub(crate) fn fast_batch(
        &mut self,
        references: &[Reference],
        codes: &mut [u32],
        write_backs: &mut Vec<(usize, u64, RegionId)>,
    ) -> (usize, bool) {
        // A constant level count lets the compiler unroll the level loops and keep
        // each level's arrays in registers.
        // Power-of-two set counts (the usual case) index sets with a mask only.
        let pow2 = self
            .levels
            .iter()
            .all(|l| l.geometry.sets.is_power_of_two());
        // Eight ways everywhere (the CLI's default hierarchy) makes the way count a
        // constant: shifts instead of multiplies, and scans of a known length.
        let eight = pow2 && self.levels.iter().all(|l| l.geometry.ways == 8);
        let (r, w) = (references, write_backs);
        match (self.levels.len(), pow2, eight, codes.is_empty()) {
            (1, true, true, true) => self.fast_batch_of::<1, true, 8, false>(r, codes, w),
            (2, true, true, true) => self.fast_batch_of::<2, true, 8, false>(r, codes, w),
            (3, true, true, true) => self.fast_batch_of::<3, true, 8, false>(r, codes, w),
            (1, true, _, true) => self.fast_batch_of::<1, true, 0, false>(r, codes, w),
            (2, true, _, true) => self.fast_batch_of::<2, true, 0, false>(r, codes, w),
            (3, true, _, true) => self.fast_batch_of::<3, true, 0, false>(r, codes, w),
            (_, true, _, true) => self.fast_batch_of::<0, true, 0, false>(r, codes, w),
            (_, false, _, true) => self.fast_batch_of::<0, false, 0, false>(r, codes, w),
            (1, true, true, false) => self.fast_batch_of::<1, true, 8, true>(r, codes, w),
            (2, true, true, false) => self.fast_batch_of::<2, true, 8, true>(r, codes, w),
            (3, true, true, false) => self.fast_batch_of::<3, true, 8, true>(r, codes, w),
            (1, true, _, false) => self.fast_batch_of::<1, true, 0, true>(r, codes, w),
            (2, true, _, false) => self.fast_batch_of::<2, true, 0, true>(r, codes, w),
            (3, true, _, false) => self.fast_batch_of::<3, true, 0, true>(r, codes, w),
            (_, true, _, false) => self.fast_batch_of::<0, true, 0, true>(r, codes, w),
            (_, false, _, false) => self.fast_batch_of::<0, false, 0, true>(r, codes, w),
        }
    }

    /// [`Hierarchy::fast_batch`] for `LEVELS` levels (0: any number), all with a
    /// power-of-two number of sets when `POW2` and with `WAYS` ways (0: any number),
    /// storing outcome codes when `KEEP`.
    fn fast_batch_of<const LEVELS: usize, const POW2: bool, const WAYS: usize, const KEEP: bool>(
        &mut self,
        references: &[Reference],
        codes: &mut [u32],
        write_backs: &mut Vec<(usize, u64, RegionId)>,
    ) -> (usize, bool) {
        let count = if LEVELS == 0 {
            self.levels.len()
        } else {
            LEVELS
        };
        // A single-line reference served by level `s` missed every level above it.
        let mut served_code = [0u32; MAX_LEVELS + 1];
        for (s, code) in served_code.iter_mut().enumerate().take(count + 1) {
            *code = Outcome::served(s, count).code();
        }
        let codes = if KEEP {
            &mut codes[..references.len()]
        } else {
            codes
        };
        let mut geometry = [self.levels[0].geometry; MAX_LEVELS];
        let mut parts: [Option<LeanParts<'_>>; MAX_LEVELS] = Default::default();
        for (i, level) in self.levels.iter_mut().enumerate() {
            geometry[i] = level.geometry;
            parts[i] = level.lean_parts();
        }
        let ways_of = |g: &Geometry| if WAYS == 0 { g.ways as usize } else { WAYS };
        // Whether this reference pushed write-backs (kept in a register rather than
        // read back from the vector after every reference).
        let mut wrote_back = false;
        let stats = &mut self.stats;
        let set_of = |g: &Geometry, line: u64| {
            if POW2 {
                (line & (g.sets - 1)) as usize
            } else {
                g.set_of(line)
            }
        };
        let line_mask = u64::from(geometry[0].line_size) - 1;
        let line_size = u64::from(geometry[0].line_size);
        for (index, reference) in references.iter().enumerate() {
            let addr = reference.addr;
            // Within one first-level line (sizes of 0 count as 1).
            if (addr & line_mask) + u64::from(reference.size.max(1)) > line_size {
                return (index, true);
            }
            let region = reference.region;
            stats.ensure_region(region);
            let demand = Demand::of(reference.kind);
            let mut served = count;
            let mut first_way = 0;
            for i in 0..count {
                let (g, Some(p)) = (&geometry[i], parts[i].as_mut()) else {
                    unreachable!("the fast path is only enabled for lean levels")
                };
                let ways = ways_of(g);
                let line = g.line_of(addr);
                let set = set_of(g, line);
                // The same lookup as `fast_line`, written out here: a shared
                // helper measured 3 % slower on this statistics-only loop.
                let queue = p.queues[set];
                let tags = &p.tags[set * ways..set * ways + ways];
                let front = (queue & 0xF) as usize;
                let key = key_of(line);
                let found = if tags.get(front).is_some_and(|&t| t | 1 == key) {
                    Some(front)
                } else {
                    match_way(tags, &p.prints[set * ways..set * ways + ways], key)
                };
                if let Some(way) = found {
                    if p.lru && way != front {
                        p.queues[set] = packed_to_front(queue, way);
                    }
                    first_way = way;
                    served = i;
                    break;
                }
            }
            for j in (0..served).rev() {
                let (g, Some(p)) = (&geometry[j], parts[j].as_mut()) else {
                    unreachable!("the fast path is only enabled for lean levels")
                };
                let ways = ways_of(g);
                let line = g.line_of(addr);
                let set = set_of(g, line);
                let queue = p.queues[set];
                let way = ((queue >> (4 * (ways - 1))) & 0xF) as usize;
                let slot = set * ways + way;
                let old_tag = std::mem::replace(&mut p.tags[slot], tag_of(line));
                p.prints[slot] = print_of(key_of(line));
                let old_owner = std::mem::replace(&mut p.owners[slot], region);
                p.queues[set] = packed_back_to_front(queue, ways);
                first_way = way;
                if old_tag != EMPTY && old_tag & 1 != 0 {
                    stats.at(old_owner, j).write_backs += 1;
                    if j + 1 < count {
                        write_backs.push((j + 1, g.line_addr(old_tag >> 1), old_owner));
                        wrote_back = true;
                    }
                }
            }
            if demand != Demand::Read
                && let Some(p) = parts[0].as_mut()
            {
                let g = &geometry[0];
                let set = set_of(g, g.line_of(addr));
                p.tags[set * ways_of(g) + first_way] |= 1;
            }
            stats.record_single(region, demand == Demand::Write, served);
            if KEEP {
                codes[index] = served_code[served];
            }
            if wrote_back {
                return (index + 1, false);
            }
        }
        (references.len(), false)
    }
}
