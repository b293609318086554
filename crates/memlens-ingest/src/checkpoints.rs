//! Checkpoints of the allocation map's reading, so that a window of a run too large
//! for the map's memory costs the reading of that window, not of every event before
//! its end.
//!
//! A window's model needs the live set as the window starts, which only the events
//! before it tell: without checkpoints, a window near the end of 10⁹ events meant
//! reading 60–90 s of events to draw a few seconds of them. So a reading of a window
//! of one trace that goes through the events before it (`memlens-alloc`'s
//! `AllocModelBuilder::start_at`: the builder holds only the live set until then)
//! takes checkpoints on the way ([`Taker`]), at the instants that split the run's
//! events into [`PER_RUN`] equal shares ([`schedule`], from the event chunks' headers
//! alone): the builder's state as `AllocModelBuilder::checkpoint` encodes it (the live
//! set, sites, threads, mappings), compressed, with the number of the program's mapping
//! changes fed before it. They are kept in the trace's index with the window's model
//! (`index::store_alloc`, within an eighth of the trace's bytes). The reading of a
//! later window then goes on from the latest checkpoint at or before its start
//! (`index::Opened::checkpoint`): the event stream starts at the checkpoint's time
//! (`memlens-trace`'s `EventStream::from_time`, which never reads the chunks ending
//! before it) and the mapping changes after those fed; the model is the one the
//! reading from the run's start makes (tested byte for byte).
//!
//! That holds because the merged stream orders events by time: a checkpoint taken
//! before the first event at or after its time holds every event before that time and
//! none after. A reading that meets an event earlier than the one before it (a trace
//! whose threads' clocks go backwards, which memlens' recorder never writes) keeps no
//! checkpoint. Each taken checkpoint is held compressed until the pass ends, within
//! the same eighth of the trace's bytes and at most [`MEMORY`]; past it, every other
//! one is dropped.

use memlens_alloc::AllocModelBuilder;

use crate::alloc_plan::Spread;
use crate::index::{self, TakenCheckpoint};

/// How many checkpoints a run gets at most: one per 32nd of its events, so that a
/// window's reading starts at most a 32nd of the run before it.
pub(crate) const PER_RUN: u32 = 32;

/// The most memory the checkpoints a pass takes hold until it ends (compressed).
pub(crate) const MEMORY: u64 = 256 << 20;

/// The instants in `(after, until]` at which a reading takes checkpoints: those that
/// split the events up to `run_end` into [`PER_RUN`] equal shares (as `spread`, the
/// event chunks' headers, tells), except those `kept` already.
pub(crate) fn schedule(
    spread: &Spread,
    run_end: u64,
    (after, until): (u64, u64),
    kept: &[u64],
) -> Vec<u64> {
    let mut times: Vec<u64> = (1..PER_RUN)
        .filter_map(|k| spread.time_at_share(f64::from(k) / f64::from(PER_RUN), run_end))
        .filter(|&t| t > after && t <= until && !kept.contains(&t))
        .collect();
    times.dedup();
    times
}

/// Takes the checkpoints of one reading (see the module documentation).
pub(crate) struct Taker {
    /// The instants still to come, latest first.
    times: Vec<u64>,
    /// The earliest of them, or `u64::MAX`.
    next: u64,
    taken: Vec<TakenCheckpoint>,
    /// The most the taken checkpoints may take.
    room: u64,
    /// The latest event time met, and whether the events came in time order.
    last: u64,
    ordered: bool,
}

impl Taker {
    /// A taker of checkpoints at `times` (in order), holding at most `room` bytes of
    /// them (and [`MEMORY`]); `None` when there are none to take.
    pub(crate) fn new(mut times: Vec<u64>, room: u64) -> Option<Taker> {
        times.reverse();
        let next = *times.last()?;
        Some(Taker {
            times,
            next,
            taken: Vec::new(),
            room: room.min(MEMORY),
            last: 0,
            ordered: true,
        })
    }

    /// Before the event at `t` is fed to `builder`, which has been fed `fed` mapping
    /// changes: takes the checkpoint due, if any.
    #[inline]
    pub(crate) fn before_event(&mut self, t: u64, builder: &AllocModelBuilder, fed: u64) {
        self.ordered &= t >= self.last;
        self.last = t;
        if t >= self.next {
            self.take(t, builder, fed);
        }
    }

    /// Takes the checkpoint of the latest instant due at `t` (every event fed is
    /// before the earliest of them, so before it too).
    #[cold]
    #[inline(never)]
    fn take(&mut self, t: u64, builder: &AllocModelBuilder, fed: u64) {
        let mut at = self.next;
        while let Some(&due) = self.times.last()
            && due <= t
        {
            at = due;
            self.times.pop();
        }
        self.next = self.times.last().copied().unwrap_or(u64::MAX);
        let taken = builder
            .checkpoint()
            .map(|raw| TakenCheckpoint::new(at, fed, &raw));
        if let Some(Ok(taken)) = taken {
            self.taken.push(taken);
            index::thin(&mut self.taken, TakenCheckpoint::size, self.room);
        }
    }

    /// The checkpoints taken, none when the events came out of time order.
    pub(crate) fn finish(self) -> Vec<TakenCheckpoint> {
        match self.ordered {
            true => self.taken,
            false => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A builder before its window, and the times of the checkpoints `taker` took
    /// while the events at `times` went past it.
    fn taken(schedule: Vec<u64>, times: &[u64], room: u64) -> Vec<(u64, u64)> {
        let mut builder = AllocModelBuilder::new();
        builder.start_at(u64::MAX);
        let mut taker = Taker::new(schedule, room).expect("times to take");
        for (fed, &t) in times.iter().enumerate() {
            taker.before_event(t, &builder, fed as u64);
        }
        let taken = taker.finish().into_iter();
        taken.map(|c| (c.t, c.fed)).collect()
    }

    #[test]
    fn a_checkpoint_is_taken_before_the_first_event_at_or_after_its_time() {
        // Before the event at 10 (two events fed), and at 30 for 20 and 25 both: the
        // latest instant due, every event fed being before the earliest.
        let got = taken(vec![10, 20, 25, 50], &[5, 7, 10, 15, 30, 40], u64::MAX);
        assert_eq!(got, vec![(10, 2), (25, 4)]);
        // Events out of time order: none is kept.
        assert!(taken(vec![10], &[5, 12, 8], u64::MAX).is_empty());
        // Within the room: every other one dropped, the first kept.
        let all = taken(vec![1, 2, 3, 4, 5], &[1, 2, 3, 4, 5], u64::MAX);
        let mut builder = AllocModelBuilder::new();
        builder.start_at(u64::MAX);
        let raw = builder.checkpoint().expect("before the window");
        let size = index::TakenCheckpoint::new(0, 0, &raw).map(|c| c.size());
        let room = 3 * size.expect("compressed");
        let thinned = taken(vec![1, 2, 3, 4, 5], &[1, 2, 3, 4, 5], room);
        assert_eq!(all.len(), 5);
        assert_eq!(thinned, vec![all[0], all[2], all[4]]);
    }
}
