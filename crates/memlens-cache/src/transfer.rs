//! Moving lines between levels: fills and their victims, write-backs, write-through
//! traffic, back-invalidation (inclusive) and victim moves (exclusive).
//!
//! This is where the inclusion mode and the write policy take effect:
//! - **Inclusive**: a victim of level `j` is first invalidated in every level above
//!   (their dirty data merges into it), then written back to `j + 1` if dirty.
//! - **Non-inclusive**: a clean victim is dropped; a dirty one is written back to
//!   `j + 1`, which allocates it if it is write-allocate.
//! - **Exclusive**: every victim moves into `j + 1` with its dirty bit, pushing that
//!   level's own victim further down; memory receives only dirty lines.
//!
//! Every line leaving a level produces one eviction event, emitted before the
//! consequences below it, with the place the line ends up in.

use crate::config::Inclusion;
use crate::events::{Destination, Event, EventSink, Eviction, EvictionCause, Fill, ProbeKind};
use crate::hierarchy::{Hierarchy, Served};
use crate::level::Resident;
use crate::outcome::Outcome;
use crate::reference::RegionId;

impl Hierarchy {
    /// Places `line` in `set` of level `i`, evicting a victim if the set is full, and
    /// returns the way used.
    pub(crate) fn allocate<S: EventSink>(
        &mut self,
        i: usize,
        set: usize,
        line: u64,
        dirty: bool,
        owner: RegionId,
        sink: &mut S,
    ) -> usize {
        let way = self.levels[i].choose_way(set);
        // Evictions are not counted here: they are derived when statistics are read
        // (fills − invalidations − resident lines), which keeps an increment at an
        // address that depends on the victim's owner off the hot path.
        if let Some(victim) = self.levels[i].take_victim(set, way) {
            self.dispose(i, set, way, victim, sink);
        }
        self.levels[i].install(set, way, line, dirty, owner);
        self.stats.at(owner, i).fills += 1;
        if S::WANTS_EVENTS {
            sink.event(Event::Fill(Fill {
                level: i as u8,
                line_addr: self.levels[i].geometry.line_addr(line),
                set: set as u32,
                way: way as u32,
                region: owner,
            }));
        }
        way
    }

    /// Handles a replacement victim that just left level `i`.
    fn dispose<S: EventSink>(
        &mut self,
        i: usize,
        set: usize,
        way: usize,
        victim: Resident,
        sink: &mut S,
    ) {
        let below = i + 1;
        let has_below = below < self.levels.len();
        let line_addr = self.levels[i].geometry.line_addr(victim.line);
        match self.inclusion {
            Inclusion::Inclusive => {
                let to = if has_below {
                    Destination::Level(below as u8)
                } else {
                    Destination::Memory
                };
                let line_size = u64::from(self.levels[i].geometry.line_size);
                let dirty = victim.dirty | self.back_invalidate(i, line_addr, line_size, to, sink);
                if S::WANTS_EVENTS {
                    self.eviction_event(
                        i,
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
                    self.stats.at(victim.owner, i).write_backs += 1;
                    if has_below {
                        self.write_back(below, line_addr, victim.owner, sink);
                    }
                }
            }
            Inclusion::NonInclusive => {
                if S::WANTS_EVENTS {
                    let to = if victim.dirty {
                        self.write_back_destination(below, line_addr)
                    } else {
                        self.resting_place(below, line_addr)
                    };
                    self.eviction_event(
                        i,
                        set,
                        way,
                        victim,
                        victim.dirty,
                        to,
                        EvictionCause::Replacement,
                        sink,
                    );
                }
                if victim.dirty {
                    self.stats.at(victim.owner, i).write_backs += 1;
                    if has_below {
                        self.write_back(below, line_addr, victim.owner, sink);
                    }
                }
            }
            Inclusion::Exclusive => {
                if S::WANTS_EVENTS {
                    let to = if has_below {
                        Destination::Level(below as u8)
                    } else {
                        Destination::Memory
                    };
                    self.eviction_event(
                        i,
                        set,
                        way,
                        victim,
                        victim.dirty,
                        to,
                        EvictionCause::Replacement,
                        sink,
                    );
                }
                if victim.dirty {
                    self.stats.at(victim.owner, i).write_backs += 1;
                }
                if has_below {
                    self.insert_victim(below, line_addr, victim.dirty, victim.owner, sink);
                }
            }
        }
    }

    /// Removes every copy of the bytes `[addr, addr + len)` from the levels above `j`
    /// and returns whether any of them was dirty.
    fn back_invalidate<S: EventSink>(
        &mut self,
        j: usize,
        addr: u64,
        len: u64,
        to: Destination,
        sink: &mut S,
    ) -> bool {
        let mut dirty = false;
        for k in 0..j {
            let geometry = self.levels[k].geometry;
            let step = u64::from(geometry.line_size);
            let mut sub = addr;
            while sub < addr.saturating_add(len) {
                let line = geometry.line_of(sub);
                let set = geometry.set_of(line);
                if let Some(copy) = self.levels[k]
                    .find(set, line)
                    .and_then(|way| self.levels[k].take(set, way).map(|copy| (way, copy)))
                {
                    let (way, copy) = copy;
                    dirty |= copy.dirty;
                    self.stats.at(copy.owner, k).invalidations += 1;
                    if S::WANTS_EVENTS {
                        self.eviction_event(
                            k,
                            set,
                            way,
                            copy,
                            copy.dirty,
                            to,
                            EvictionCause::BackInvalidation,
                            sink,
                        );
                    }
                }
                sub = match sub.checked_add(step) {
                    Some(next) => next,
                    None => break,
                };
            }
        }
        dirty
    }

    /// Delivers a dirty line written back from the level above to level `j`
    /// (inclusive and non-inclusive hierarchies).
    pub(crate) fn write_back<S: EventSink>(
        &mut self,
        j: usize,
        addr: u64,
        owner: RegionId,
        sink: &mut S,
    ) {
        let level = &mut self.levels[j];
        let line = level.geometry.line_of(addr);
        let set = level.geometry.set_of(line);
        let found = level.find(set, line);
        let (write_back, write_allocate) = (level.write_back, level.write_allocate);
        if S::WANTS_EVENTS {
            self.probe_event(j, line, set, ProbeKind::WriteBack, found.is_some(), sink);
        }
        let has_below = j + 1 < self.levels.len();
        match found {
            Some(way) => {
                self.stats.at(owner, j).writeback_hits += 1;
                if write_back {
                    self.levels[j].mark_dirty(set, way);
                } else if has_below {
                    self.write_back(j + 1, addr, owner, sink);
                }
            }
            None => {
                self.stats.at(owner, j).writeback_misses += 1;
                if write_allocate {
                    let line_addr = self.levels[j].geometry.line_addr(line);
                    // The write-back is not the reference's demand: its fetch is
                    // counted in the statistics but not in the reference's outcome.
                    let mut scratch = Outcome::default();
                    self.fetch_below(j, line_addr, owner, &mut scratch, sink);
                    self.allocate(j, set, line, write_back, owner, sink);
                    if !write_back && has_below {
                        self.write_back(j + 1, addr, owner, sink);
                    }
                } else if has_below {
                    self.write_back(j + 1, addr, owner, sink);
                }
            }
        }
    }

    /// Delivers a demand write that level `j - 1` passed on: write-through traffic
    /// after a hit (`after_hit`), or a store that missed a no-write-allocate level.
    /// Returns the level that absorbed it (the level count for memory).
    pub(crate) fn forward_write<S: EventSink>(
        &mut self,
        j: usize,
        addr: u64,
        after_hit: bool,
        region: RegionId,
        outcome: &mut Outcome,
        sink: &mut S,
    ) -> Served {
        let memory = Served {
            level: self.levels.len(),
            dirty: false,
        };
        let exclusive = self.inclusion == Inclusion::Exclusive;
        // In an exclusive hierarchy a line held above is held nowhere below.
        if j >= self.levels.len() || (exclusive && after_hit) {
            return memory;
        }
        let level = &mut self.levels[j];
        let line = level.geometry.line_of(addr);
        let set = level.geometry.set_of(line);
        let found = level.find(set, line);
        let (write_back, write_allocate) = (level.write_back, level.write_allocate);
        if S::WANTS_EVENTS {
            self.probe_event(j, line, set, ProbeKind::Write, found.is_some(), sink);
        }
        match found {
            Some(way) => {
                outcome.record_hit(j);
                self.stats.at(region, j).write_hits += 1;
                if write_back {
                    self.levels[j].mark_dirty(set, way);
                } else {
                    self.forward_write(j + 1, addr, true, region, outcome, sink);
                }
                Served {
                    level: j,
                    dirty: false,
                }
            }
            None => {
                outcome.record_miss(j);
                self.stats.at(region, j).write_misses += 1;
                if write_allocate && !exclusive {
                    let line_addr = self.levels[j].geometry.line_addr(line);
                    let served = self.fetch_below(j, line_addr, region, outcome, sink);
                    self.allocate(j, set, line, write_back, region, sink);
                    if !write_back {
                        self.forward_write(j + 1, addr, true, region, outcome, sink);
                    }
                    served
                } else {
                    self.forward_write(j + 1, addr, after_hit, region, outcome, sink)
                }
            }
        }
    }

    /// Moves a victim of level `j - 1` into level `j` (exclusive hierarchies).
    fn insert_victim<S: EventSink>(
        &mut self,
        j: usize,
        addr: u64,
        dirty: bool,
        owner: RegionId,
        sink: &mut S,
    ) {
        let level = &mut self.levels[j];
        let line = level.geometry.line_of(addr);
        let set = level.geometry.set_of(line);
        if let Some(way) = level.find(set, line) {
            // Exclusivity makes this impossible; merge rather than duplicate.
            if dirty {
                level.mark_dirty(set, way);
            }
            return;
        }
        self.allocate(j, set, line, dirty, owner, sink);
    }

    /// Removes a line that hit at level `i > 0` of an exclusive hierarchy so that it
    /// can move up to the first level; returns its dirty bit.
    pub(crate) fn promote<S: EventSink>(
        &mut self,
        i: usize,
        set: usize,
        way: usize,
        sink: &mut S,
    ) -> bool {
        match self.levels[i].take(set, way) {
            Some(line) => {
                self.stats.at(line.owner, i).invalidations += 1;
                if S::WANTS_EVENTS {
                    self.eviction_event(
                        i,
                        set,
                        way,
                        line,
                        line.dirty,
                        Destination::Level(0),
                        EvictionCause::Promotion,
                        sink,
                    );
                }
                line.dirty
            }
            None => false,
        }
    }

    /// Empties every level, writing dirty lines back to memory.
    pub fn flush<S: EventSink>(&mut self, sink: &mut S) {
        for i in 0..self.levels.len() {
            for (set, way, resident) in self.levels[i].drain() {
                let counters = self.stats.at(resident.owner, i);
                counters.invalidations += 1;
                if resident.dirty {
                    counters.write_backs += 1;
                }
                if S::WANTS_EVENTS {
                    self.eviction_event(
                        i,
                        set,
                        way,
                        resident,
                        resident.dirty,
                        Destination::Memory,
                        EvictionCause::Flush,
                        sink,
                    );
                }
            }
        }
    }

    /// Returns the first level at or below `from` holding the byte at `addr`.
    pub(crate) fn resting_place(&self, from: usize, addr: u64) -> Destination {
        (from..self.levels.len())
            .find(|&j| {
                let level = &self.levels[j];
                level.holds(level.geometry.line_of(addr))
            })
            .map_or(Destination::Memory, |j| Destination::Level(j as u8))
    }

    /// Returns where a write-back entering level `from` comes to rest.
    pub(crate) fn write_back_destination(&self, from: usize, addr: u64) -> Destination {
        (from..self.levels.len())
            .find(|&j| {
                let level = &self.levels[j];
                (level.write_back && level.write_allocate)
                    || level.holds(level.geometry.line_of(addr))
            })
            .map_or(Destination::Memory, |j| Destination::Level(j as u8))
    }

    pub(crate) fn eviction_event<S: EventSink>(
        &self,
        i: usize,
        set: usize,
        way: usize,
        line: Resident,
        dirty: bool,
        to: Destination,
        cause: EvictionCause,
        sink: &mut S,
    ) {
        sink.event(Event::Evict(Eviction {
            from: i as u8,
            to,
            line_addr: self.levels[i].geometry.line_addr(line.line),
            set: set as u32,
            way: way as u32,
            dirty,
            region: line.owner,
            cause,
        }));
    }
}
