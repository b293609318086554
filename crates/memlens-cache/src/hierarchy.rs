//! The multi-level cache simulator: demand accesses, hits, misses and fills.
//!
//! [`Hierarchy::access`] runs one reference through the levels. Each line the
//! reference touches is a demand access at the first level; a miss fetches the line
//! from the level below (recursively, down to memory) and fills it, and the fill's
//! victim is handed to the `transfer` module, which applies the inclusion mode and the
//! write policy. The code is generic over the [`EventSink`], so the statistics-only
//! path ([`NoEvents`]) compiles without any event bookkeeping. The most common shape
//! (non-inclusive, write-back, write-allocate, LRU or FIFO) takes the flat loops of
//! the `fast_path` (one reference) and `batch` (statistics only, a batch at a time)
//! modules instead, which compute exactly the same thing.
//!
//! Modelling choices, stated once:
//! - Only demand traffic (the CPU's accesses at the first level and line fetches
//!   requested by a level above) updates replacement state. Writes arriving from above
//!   (write-backs, write-through and no-write-allocate traffic) mark the line dirty but
//!   do not make it "recently used"; this is also pycachesim's behaviour.
//! - A write miss in a write-allocate level fetches the line first, even when the
//!   write covers the whole line (as pycachesim does).

use crate::batch::BatchScratch;
use crate::config::{HierarchyConfig, Inclusion};
use crate::events::{Event, EventSink, NoEvents, Position, Probe, ProbeKind};
use crate::geometry::{ConfigError, Geometry, validate};
use crate::level::Level;
use crate::outcome::{CodeSink, NoCodes, Outcome};
use crate::reference::{AccessKind, Reference, ReferenceBounds, RegionId};
use crate::stats::Statistics;

/// The demand traffic a level sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Demand {
    /// A load, instruction fetch, or a line fetch for the level above.
    Read,
    /// A store.
    Write,
    /// A load and store of the same bytes: allocates like a read, then writes.
    Modify,
}

impl Demand {
    #[inline(always)]
    pub(crate) fn of(kind: AccessKind) -> Demand {
        // A table rather than a match: the match compiles to an indirect jump per
        // reference on the hot path.
        const DEMAND: [Demand; 4] = [Demand::Read, Demand::Write, Demand::Modify, Demand::Read];
        DEMAND[kind as usize & 3]
    }

    pub(crate) fn writes(self) -> bool {
        self != Demand::Read
    }

    pub(crate) fn probe_kind(self) -> ProbeKind {
        match self {
            Demand::Write => ProbeKind::Write,
            Demand::Read | Demand::Modify => ProbeKind::Read,
        }
    }
}

/// Which level satisfied a demand access, and whether the line it delivers is dirty
/// (only ever true for a line moving up in an exclusive hierarchy).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Served {
    pub level: usize,
    pub dirty: bool,
}

/// What one slot of a set holds, for viewers that draw a whole set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotView {
    /// The way.
    pub way: u32,
    /// The first byte of the line held.
    pub line_addr: u64,
    /// Whether the line is modified.
    pub dirty: bool,
    /// The region the line is attributed to.
    pub region: RegionId,
    /// The eviction rank: 0 = evicted last, ways − 1 = next victim.
    pub rank: u32,
}

/// A simulated cache hierarchy.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    pub(crate) levels: Vec<Level>,
    pub(crate) inclusion: Inclusion,
    pub(crate) stats: Statistics,
    /// Whether the fast path applies to this shape (and is not switched off).
    fast: bool,
    /// The buffers of `fast_batch`.
    pub(crate) scratch: BatchScratch,
    config: HierarchyConfig,
}

impl Hierarchy {
    /// Builds an empty hierarchy, or says which level cannot be built and why.
    pub fn new(config: &HierarchyConfig) -> Result<Hierarchy, ConfigError> {
        let geometries = validate(config)?;
        let levels = config
            .levels
            .iter()
            .zip(geometries)
            .map(|(level, geometry)| Level::new(level, geometry))
            .collect::<Vec<_>>();
        let mut hierarchy = Hierarchy {
            stats: Statistics::new(levels.len()),
            levels,
            inclusion: config.inclusion,
            fast: false,
            scratch: BatchScratch::default(),
            config: config.clone(),
        };
        hierarchy.fast = hierarchy.fast_path_applies();
        Ok(hierarchy)
    }

    /// Switches the fast path off (or back on where it applies), so that tests can
    /// compare it with the general path. Results never depend on it.
    #[doc(hidden)]
    pub fn set_fast_path(&mut self, enabled: bool) {
        self.fast = enabled && self.fast_path_applies();
    }

    /// Returns the configuration the hierarchy was built from.
    pub fn config(&self) -> &HierarchyConfig {
        &self.config
    }

    /// Returns the number of levels.
    pub fn level_count(&self) -> usize {
        self.levels.len()
    }

    /// Returns a level's validated geometry.
    pub fn geometry(&self, level: usize) -> Geometry {
        self.levels[level].geometry
    }

    /// Returns the statistics gathered so far.
    ///
    /// This is a snapshot: it derives the eviction counts from the lines resident
    /// now, which takes one pass over every level's slots.
    pub fn statistics(&self) -> Statistics {
        let mut stats = self.stats.clone();
        stats.fold_lines();
        for (i, level) in self.levels.iter().enumerate() {
            let mut resident = vec![0u64; stats.region_count()];
            level.for_each_owner(|owner| {
                if let Some(count) = resident.get_mut(owner.index()) {
                    *count += 1;
                }
            });
            stats.derive_evictions(i, &resident);
        }
        stats
    }

    /// Simulates one reference, reporting its events to `sink`, and returns its outcome.
    #[inline]
    pub fn access<S: EventSink>(&mut self, reference: &Reference, sink: &mut S) -> Outcome {
        self.access_from(0, reference, sink)
    }

    /// Simulates one reference that enters the hierarchy at level `entry` instead of
    /// the first level, as the misses of a cache kept outside the hierarchy do (for
    /// example a separate instruction L1 in front of a unified L2). An `entry` past
    /// the last level sends the reference straight to memory.
    pub fn access_at<S: EventSink>(
        &mut self,
        entry: usize,
        reference: &Reference,
        sink: &mut S,
    ) -> Outcome {
        self.access_from(entry, reference, sink)
    }

    #[inline(always)]
    fn access_from<S: EventSink>(
        &mut self,
        entry: usize,
        reference: &Reference,
        sink: &mut S,
    ) -> Outcome {
        sink.begin_reference(reference);
        let region = reference.region;
        self.stats.ensure_region(region);
        let demand = Demand::of(reference.kind);
        if entry == 0 {
            let outcome = if self.fast {
                Some(self.fast_access(reference, demand, sink))
            } else {
                self.mru_hit(reference, demand, sink)
            };
            if let Some(outcome) = outcome {
                sink.end_reference(reference, &outcome);
                return outcome;
            }
        }
        let mut outcome = Outcome::default();
        let mut served = entry.min(self.levels.len());
        if let Some(level) = self.levels.get(entry) {
            let shift = level.geometry.line_shift;
            let last = reference.last_byte() >> shift;
            let mut line = reference.addr >> shift;
            loop {
                let s = self.demand(entry, line << shift, demand, region, &mut outcome, sink);
                served = served.max(s.level);
                if line >= last {
                    break;
                }
                line += 1;
            }
        }
        outcome.served_by = served as u8;
        self.stats.record_served(region, served);
        sink.end_reference(reference, &outcome);
        outcome
    }

    /// The shortcut for the most common reference: one within one line of the first
    /// level that hits the most recently used way of its set, with nothing to pass
    /// on. It changes no replacement state (the line already is the most recent) and
    /// is handled here without a call; everything else returns `None`.
    #[inline(always)]
    fn mru_hit<S: EventSink>(
        &mut self,
        reference: &Reference,
        demand: Demand,
        sink: &mut S,
    ) -> Option<Outcome> {
        let level = &mut self.levels[0];
        let shift = level.geometry.line_shift;
        let line = reference.addr >> shift;
        if line != reference.last_byte() >> shift || (demand.writes() && !level.write_back) {
            return None;
        }
        let set = level.geometry.set_of(line);
        let way = level.mru_way(set, line)?;
        if demand.writes() {
            level.mark_dirty(set, way);
        }
        self.stats
            .record_single(reference.region, demand == Demand::Write, 0);
        if S::WANTS_EVENTS {
            self.probe_event(0, line, set, demand.probe_kind(), true, sink);
            self.position_event(0, line, set, way, sink);
        }
        Some(Outcome {
            served_by: 0,
            hit: 1,
            missed: 0,
        })
    }

    /// Simulates references with statistics only: the fastest way to run a trace.
    /// Hierarchies of the fast path's shape take its batched loop; the results are
    /// exactly those of calling [`Hierarchy::access`] with [`NoEvents`] on each.
    pub fn run(&mut self, references: &[Reference]) {
        self.run_into(references, ReferenceBounds::UNKNOWN, &mut NoCodes);
    }

    /// [`Hierarchy::run`], also handing every reference's [`Outcome::code`] to
    /// `codes`, in order.
    /// `bounds` are what the references are known to keep (see
    /// [`Simulation::access_all_within`](crate::Simulation::access_all_within)).
    pub(crate) fn run_into<C: CodeSink>(
        &mut self,
        references: &[Reference],
        bounds: ReferenceBounds,
        codes: &mut C,
    ) {
        if !self.fast {
            for reference in references {
                let outcome = self.access(reference, &mut NoEvents);
                codes.record(reference.region, outcome.code());
            }
            return;
        }
        let mut at = 0;
        while at < references.len() {
            // Batches of at most 64 Ki references (the loop's buffers are per batch).
            let batch = &references[at..references.len().min(at + 64 * 1024)];
            let (done, general) = self.fast_batch(batch, bounds, codes);
            at += done;
            if general && let Some(reference) = references.get(at) {
                let outcome = self.access(reference, &mut NoEvents);
                codes.record(reference.region, outcome.code());
                at += 1;
            }
        }
    }

    /// Simulates references, reporting everything to `sink`.
    pub fn run_with<'a, S: EventSink>(
        &mut self,
        references: impl IntoIterator<Item = &'a Reference>,
        sink: &mut S,
    ) {
        for reference in references {
            self.access(reference, sink);
        }
    }

    /// A demand access to the line holding `addr` at level `i`.
    pub(crate) fn demand<S: EventSink>(
        &mut self,
        i: usize,
        addr: u64,
        demand: Demand,
        region: RegionId,
        outcome: &mut Outcome,
        sink: &mut S,
    ) -> Served {
        let level = &mut self.levels[i];
        let line = level.geometry.line_of(addr);
        let set = level.geometry.set_of(line);
        if let Some(way) = level.find(set, line) {
            outcome.record_hit(i);
            let counters = self.stats.at(region, i);
            if demand == Demand::Write {
                counters.write_hits += 1;
            } else {
                counters.read_hits += 1;
            }
            if S::WANTS_EVENTS {
                self.probe_event(i, line, set, demand.probe_kind(), true, sink);
            }
            if i > 0 && self.inclusion == Inclusion::Exclusive {
                let dirty = self.promote(i, set, way, sink);
                return Served { level: i, dirty };
            }
            self.levels[i].touch(set, way);
            if demand.writes() {
                self.write_line(i, set, way, addr, region, outcome, sink);
            }
            if S::WANTS_EVENTS {
                self.position_event(i, line, set, way, sink);
            }
            return Served {
                level: i,
                dirty: false,
            };
        }

        outcome.record_miss(i);
        let write_allocate = level.write_allocate;
        let counters = self.stats.at(region, i);
        if demand == Demand::Write {
            counters.write_misses += 1;
        } else {
            counters.read_misses += 1;
        }
        if S::WANTS_EVENTS {
            self.probe_event(i, line, set, demand.probe_kind(), false, sink);
        }
        if demand == Demand::Write && !write_allocate {
            return self.forward_write(i + 1, addr, false, region, outcome, sink);
        }
        let line_addr = self.levels[i].geometry.line_addr(line);
        let served = self.fetch_below(i, line_addr, region, outcome, sink);
        if i > 0 && self.inclusion == Inclusion::Exclusive {
            // Exclusive levels below the first only receive victims.
            return served;
        }
        let way = self.allocate(i, set, line, served.dirty, region, sink);
        if demand.writes() {
            self.write_line(i, set, way, addr, region, outcome, sink);
        }
        if S::WANTS_EVENTS {
            self.position_event(i, line, set, way, sink);
        }
        Served {
            level: served.level,
            dirty: false,
        }
    }

    /// Fetches the line starting at `line_addr` for level `i` from the level below it,
    /// or from memory.
    pub(crate) fn fetch_below<S: EventSink>(
        &mut self,
        i: usize,
        line_addr: u64,
        region: RegionId,
        outcome: &mut Outcome,
        sink: &mut S,
    ) -> Served {
        if i + 1 < self.levels.len() {
            self.demand(i + 1, line_addr, Demand::Read, region, outcome, sink)
        } else {
            Served {
                level: self.levels.len(),
                dirty: false,
            }
        }
    }

    /// Applies a write to the line resident in `way` of `set` at level `i`.
    fn write_line<S: EventSink>(
        &mut self,
        i: usize,
        set: usize,
        way: usize,
        addr: u64,
        region: RegionId,
        outcome: &mut Outcome,
        sink: &mut S,
    ) {
        if self.levels[i].write_back {
            self.levels[i].mark_dirty(set, way);
        } else {
            self.forward_write(i + 1, addr, true, region, outcome, sink);
        }
    }

    pub(crate) fn probe_event<S: EventSink>(
        &self,
        i: usize,
        line: u64,
        set: usize,
        kind: ProbeKind,
        hit: bool,
        sink: &mut S,
    ) {
        sink.event(Event::Probe(Probe {
            level: i as u8,
            line_addr: self.levels[i].geometry.line_addr(line),
            set: set as u32,
            kind,
            hit,
        }));
    }

    pub(crate) fn position_event<S: EventSink>(
        &self,
        i: usize,
        line: u64,
        set: usize,
        way: usize,
        sink: &mut S,
    ) {
        let level = &self.levels[i];
        sink.event(Event::Position(Position {
            level: i as u8,
            line_addr: level.geometry.line_addr(line),
            set: set as u32,
            way: way as u32,
            rank: level.rank_after_access(set, way),
        }));
    }

    /// Returns true when `level` holds the byte at `addr`.
    pub fn contains(&self, level: usize, addr: u64) -> bool {
        let level = &self.levels[level];
        level.holds(level.geometry.line_of(addr))
    }

    /// Fills `out` with the lines resident in one set, in way order.
    pub fn set_contents(&self, level: usize, set: usize, out: &mut Vec<SlotView>) {
        out.clear();
        let level = &self.levels[level];
        for way in 0..level.ways() {
            if let Some(resident) = level.resident(set, way) {
                out.push(SlotView {
                    way: way as u32,
                    line_addr: level.geometry.line_addr(resident.line),
                    dirty: resident.dirty,
                    region: resident.owner,
                    rank: level.rank(set, way),
                });
            }
        }
    }
}
