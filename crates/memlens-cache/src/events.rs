//! The per-reference event stream that drives the ring visualization.
//!
//! For every reference the simulator reports, in the order they happen: each probe of
//! a level (hit or miss), each line placed in a level (a fill: line, level, set, way),
//! each line leaving a level (an eviction: line, from, to, dirty, why), and the
//! eviction rank of the accessed line in every level it was accessed in — everything
//! needed to place and move the paper's glyphs. At the end comes the [`Outcome`].
//!
//! Consumers implement [`EventSink`], a visitor whose methods are called inline by
//! the simulator; nothing is allocated per reference. A sink that sets
//! [`EventSink::WANTS_EVENTS`] to `false` receives only the outcomes and gets the
//! statistics-only fast path; [`NoEvents`] receives nothing. [`EventBuffer`] is a
//! reusable per-reference buffer for callers that prefer to look at a list.

use crate::outcome::Outcome;
use crate::reference::{Reference, RegionId};

/// Where a line that leaves a level goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination {
    /// A cache level (index 0 is the first level), which holds it afterwards.
    Level(u8),
    /// Main memory (it either is written back there or memory already holds it).
    Memory,
}

/// What kind of traffic probed a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// A load, fetch or modify, or a line fetch requested by the level above.
    Read,
    /// A store, or write-through / no-write-allocate traffic from above.
    Write,
    /// A dirty line written back from the level above.
    WriteBack,
}

/// Why a line left a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictionCause {
    /// It was the replacement victim of a fill.
    Replacement,
    /// A lower level evicted it and inclusion required removing it here too.
    BackInvalidation,
    /// It hit below the first level of an exclusive hierarchy and moved up.
    Promotion,
    /// The whole hierarchy was flushed.
    Flush,
}

/// A level was looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The level probed.
    pub level: u8,
    /// The first byte of the line (at this level's line size).
    pub line_addr: u64,
    /// The set probed.
    pub set: u32,
    /// What kind of traffic it was.
    pub kind: ProbeKind,
    /// Whether the line was found.
    pub hit: bool,
}

/// A line was placed in a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fill {
    /// The level filled.
    pub level: u8,
    /// The first byte of the line.
    pub line_addr: u64,
    /// The set.
    pub set: u32,
    /// The way.
    pub way: u32,
    /// The region the line is attributed to (that of the reference that brought it).
    pub region: RegionId,
}

/// A line left a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eviction {
    /// The level it left.
    pub from: u8,
    /// Where it went.
    pub to: Destination,
    /// The first byte of the line (at the `from` level's line size).
    pub line_addr: u64,
    /// The set it left.
    pub set: u32,
    /// The way it left.
    pub way: u32,
    /// Whether it carried modified data.
    pub dirty: bool,
    /// The region it is attributed to.
    pub region: RegionId,
    /// Why it left.
    pub cause: EvictionCause,
}

/// Where the accessed line sits in a set after the access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// The level.
    pub level: u8,
    /// The first byte of the line.
    pub line_addr: u64,
    /// The set.
    pub set: u32,
    /// The way.
    pub way: u32,
    /// The eviction rank: 0 = evicted last (the spiral's head), ways − 1 = next victim.
    pub rank: u32,
}

/// One event of the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A level was looked up.
    Probe(Probe),
    /// A line was placed in a level.
    Fill(Fill),
    /// A line left a level.
    Evict(Eviction),
    /// The accessed line's place in a set after the access.
    Position(Position),
}

/// A consumer of the simulator's output.
///
/// All methods have empty defaults; implement the ones you need. The simulator calls
/// `begin_reference`, then `event` for each event (only when `WANTS_EVENTS` is true),
/// then `end_reference`.
pub trait EventSink {
    /// Whether the simulator should produce detailed events. When false, it skips all
    /// event bookkeeping (destinations, ranks) and runs the statistics-only path.
    const WANTS_EVENTS: bool = true;

    /// Called before a reference is simulated.
    #[inline]
    fn begin_reference(&mut self, _reference: &Reference) {}

    /// Called for each event of the current reference.
    #[inline]
    fn event(&mut self, _event: Event) {}

    /// Called after a reference is simulated.
    #[inline]
    fn end_reference(&mut self, _reference: &Reference, _outcome: &Outcome) {}
}

/// The sink that wants nothing: the statistics-only fast path.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEvents;

impl EventSink for NoEvents {
    const WANTS_EVENTS: bool = false;
}

impl<S: EventSink + ?Sized> EventSink for &mut S {
    const WANTS_EVENTS: bool = S::WANTS_EVENTS;

    #[inline]
    fn begin_reference(&mut self, reference: &Reference) {
        (**self).begin_reference(reference);
    }

    #[inline]
    fn event(&mut self, event: Event) {
        (**self).event(event);
    }

    #[inline]
    fn end_reference(&mut self, reference: &Reference, outcome: &Outcome) {
        (**self).end_reference(reference, outcome);
    }
}

impl<A: EventSink, B: EventSink> EventSink for (A, B) {
    const WANTS_EVENTS: bool = A::WANTS_EVENTS || B::WANTS_EVENTS;

    #[inline]
    fn begin_reference(&mut self, reference: &Reference) {
        self.0.begin_reference(reference);
        self.1.begin_reference(reference);
    }

    #[inline]
    fn event(&mut self, event: Event) {
        if A::WANTS_EVENTS {
            self.0.event(event);
        }
        if B::WANTS_EVENTS {
            self.1.event(event);
        }
    }

    #[inline]
    fn end_reference(&mut self, reference: &Reference, outcome: &Outcome) {
        self.0.end_reference(reference, outcome);
        self.1.end_reference(reference, outcome);
    }
}

/// A reusable buffer holding the events of the latest reference.
///
/// It is cleared at the start of every reference and keeps its capacity, so after the
/// first few references it never allocates.
#[derive(Clone, Debug, Default)]
pub struct EventBuffer {
    events: Vec<Event>,
    outcome: Outcome,
}

impl EventBuffer {
    /// Makes an empty buffer.
    pub fn new() -> EventBuffer {
        EventBuffer::default()
    }

    /// Returns the events of the latest reference, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Returns the outcome of the latest reference.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }
}

impl EventSink for EventBuffer {
    #[inline]
    fn begin_reference(&mut self, _reference: &Reference) {
        self.events.clear();
    }

    #[inline]
    fn event(&mut self, event: Event) {
        self.events.push(event);
    }

    #[inline]
    fn end_reference(&mut self, _reference: &Reference, outcome: &Outcome) {
        self.outcome = *outcome;
    }
}
