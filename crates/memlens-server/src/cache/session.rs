//! One source simulated by one hierarchy: the pass that builds the miss-rate timeline
//! and checkpoints, and random access to any reference by re-simulating from the
//! nearest checkpoint.
//!
//! A checkpoint is a clone of the hierarchy and the temperature windows before
//! reference `k × every`. `every` grows with the trace so that at most
//! [`MAX_CHECKPOINTS`] are kept, and shrinks the count further when one hierarchy is
//! large, keeping them within [`CHECKPOINT_BUDGET`] bytes. Playback asks for
//! consecutive ranges, so the session also keeps a *head* that simply continues where
//! the last answer stopped; a jump costs at most `every` statistics-only accesses.

use std::sync::Arc;

use memlens_cache::{
    ConfigError, Hierarchy, HierarchyConfig, Outcome, Reference, Statistics, Temperature,
    TemperatureConfig,
};

use memlens_cache::events::EventSink;

/// The most checkpoints one session keeps.
pub const MAX_CHECKPOINTS: usize = 512;

/// The memory the checkpoints of one session may take, estimated.
pub const CHECKPOINT_BUDGET: usize = 256 << 20;

/// The fewest references between two checkpoints.
pub const MIN_EVERY: usize = 4096;

/// The number of buckets of the miss-rate timeline (fewer for short traces).
pub const TIMELINE_BUCKETS: usize = 1000;

/// The simulator's state before reference `at`.
#[derive(Clone)]
pub(crate) struct Cursor {
    pub at: usize,
    pub cache: Hierarchy,
    pub temperature: Temperature,
}

/// The per-level miss rate over equal slices of the trace.
#[derive(Clone, Debug, Default)]
pub(crate) struct Timeline {
    /// References per bucket (the last may hold fewer).
    pub bucket: usize,
    /// Per level, per bucket: accesses (references that probed the level).
    pub accesses: Vec<Vec<u32>>,
    /// Per level, per bucket: references that missed in the level.
    pub misses: Vec<Vec<u32>>,
}

struct TimelineSink<'a> {
    timeline: &'a mut Timeline,
    index: usize,
}

impl EventSink for TimelineSink<'_> {
    const WANTS_EVENTS: bool = false;

    #[inline]
    fn end_reference(&mut self, _reference: &Reference, outcome: &Outcome) {
        let b = self.index / self.timeline.bucket;
        let probed = outcome.hit | outcome.missed;
        for (level, (accesses, misses)) in self
            .timeline
            .accesses
            .iter_mut()
            .zip(self.timeline.misses.iter_mut())
            .enumerate()
        {
            let bit = 1u16 << level;
            if probed & bit != 0 {
                accesses[b] += 1;
                if outcome.missed & bit != 0 {
                    misses[b] += 1;
                }
            }
        }
        self.index += 1;
    }
}

/// A source under one hierarchy.
pub(crate) struct Session {
    pub references: Arc<[Reference]>,
    pub config: HierarchyConfig,
    pub every: usize,
    checkpoints: Vec<Cursor>,
    pub head: Cursor,
    pub timeline: Timeline,
    /// The statistics after the last reference.
    pub totals: Statistics,
    /// How temperature is computed (window and per-level weights).
    pub temperature: TemperatureConfig,
}

/// An estimate of one hierarchy's size in memory.
fn hierarchy_bytes(cache: &Hierarchy) -> usize {
    (0..cache.level_count())
        .map(|l| {
            let g = cache.geometry(l);
            g.sets as usize * g.ways as usize * 24 + g.sets as usize * 16
        })
        .sum::<usize>()
        + 256
}

impl Session {
    /// Simulates every reference once: timeline, checkpoints and totals.
    pub fn build(
        references: Arc<[Reference]>,
        config: &HierarchyConfig,
        temperature: &TemperatureConfig,
    ) -> Result<Session, ConfigError> {
        let cache = Hierarchy::new(config)?;
        let levels = cache.level_count();
        let n = references.len();
        let by_count = n.div_ceil(MAX_CHECKPOINTS).max(MIN_EVERY);
        let affordable = (CHECKPOINT_BUDGET / hierarchy_bytes(&cache)).max(1);
        let by_memory = n.div_ceil(affordable).max(1);
        let every = by_count.max(by_memory);
        let buckets = TIMELINE_BUCKETS.min(n.max(1));
        let bucket = n.div_ceil(buckets).max(1);
        let slots = n.div_ceil(bucket).max(1);
        let mut timeline = Timeline {
            bucket,
            accesses: vec![vec![0; slots]; levels],
            misses: vec![vec![0; slots]; levels],
        };
        let start = Cursor {
            at: 0,
            cache,
            temperature: Temperature::new(temperature),
        };
        let mut cursor = start.clone();
        let mut checkpoints = Vec::with_capacity(n / every + 1);
        let mut sink = TimelineSink {
            timeline: &mut timeline,
            index: 0,
        };
        for chunk in references.chunks(every) {
            checkpoints.push(cursor.clone());
            for reference in chunk {
                cursor
                    .cache
                    .access(reference, &mut (&mut sink, &mut cursor.temperature));
            }
            cursor.at += chunk.len();
        }
        if checkpoints.is_empty() {
            checkpoints.push(cursor.clone());
        }
        let totals = cursor.cache.statistics();
        Ok(Session {
            references,
            config: config.clone(),
            every,
            checkpoints,
            head: start,
            timeline,
            totals,
            temperature: temperature.clone(),
        })
    }

    /// The number of references.
    pub fn len(&self) -> usize {
        self.references.len()
    }

    /// Moves the head to the state before reference `at` (clamped to the end), from
    /// where it is or from the nearest checkpoint, whichever is closer.
    pub fn seek(&mut self, at: usize) -> &mut Cursor {
        let at = at.min(self.len());
        let nearest = (at / self.every).min(self.checkpoints.len() - 1);
        let from_checkpoint = self.checkpoints[nearest].at;
        if self.head.at > at || from_checkpoint > self.head.at {
            self.head = self.checkpoints[nearest].clone();
        }
        let refs = Arc::clone(&self.references);
        for reference in &refs[self.head.at..at] {
            self.head
                .cache
                .access(reference, &mut self.head.temperature);
        }
        self.head.at = at;
        &mut self.head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memlens_cache::LevelConfig;
    use memlens_cache::SlotView;

    fn references(n: u64) -> Arc<[Reference]> {
        // A strided walk over 64 KiB with some reuse: misses and hits in both levels.
        (0..n)
            .map(|i| Reference::read((i * 72) % 65_536 + (i % 7) * 4096, 8))
            .collect()
    }

    fn config() -> HierarchyConfig {
        HierarchyConfig::new(vec![
            LevelConfig::new("L1", 1024, 2, 64),
            LevelConfig::new("L2", 8192, 4, 64),
        ])
    }

    fn contents(cache: &Hierarchy) -> Vec<Vec<SlotView>> {
        let mut all = Vec::new();
        for level in 0..cache.level_count() {
            for set in 0..cache.geometry(level).sets as usize {
                let mut out = Vec::new();
                cache.set_contents(level, set, &mut out);
                all.push(out);
            }
        }
        all
    }

    #[test]
    fn seeking_anywhere_equals_simulating_from_the_start() {
        let refs = references(20_000);
        let mut session = Session::build(
            Arc::clone(&refs),
            &config(),
            &TemperatureConfig::standard(2),
        )
        .unwrap();
        assert_eq!(session.every, MIN_EVERY);
        for at in [0, 1, 4095, 4096, 12_345, 20_000, 7, 19_999, 5000] {
            let mut cache = Hierarchy::new(&config()).unwrap();
            cache.run(&refs[..at]);
            let head = session.seek(at);
            assert_eq!(head.at, at);
            assert_eq!(contents(&head.cache), contents(&cache), "at {at}");
            assert_eq!(
                head.cache.statistics().level(0),
                cache.statistics().level(0),
                "at {at}"
            );
        }
    }

    #[test]
    fn the_timeline_counts_every_probe_and_miss() {
        let refs = references(10_000);
        let session = Session::build(
            Arc::clone(&refs),
            &config(),
            &TemperatureConfig::standard(2),
        )
        .unwrap();
        let mut cache = Hierarchy::new(&config()).unwrap();
        cache.run(&refs);
        let stats = cache.statistics();
        let misses: u32 = session.timeline.misses[0].iter().sum();
        assert_eq!(u64::from(misses), stats.reference_misses(0));
        assert_eq!(session.totals.level(1), stats.level(1));
        assert_eq!(session.timeline.accesses[0].len(), 1000);
        assert_eq!(session.timeline.bucket, 10);
    }

    #[test]
    fn an_empty_source_has_one_checkpoint() {
        let mut session = Session::build(
            Arc::from(Vec::new()),
            &config(),
            &TemperatureConfig::standard(2),
        )
        .unwrap();
        assert_eq!(session.len(), 0);
        assert_eq!(session.seek(10).at, 0);
    }
}
