//! Hand-made reference sequences that pin down the simulator's semantics: each
//! replacement policy, each write policy, each inclusion mode, straddling accesses and
//! the event stream's content and order.

use memlens_cache::{
    AccessKind, Destination, Event, EventBuffer, EvictionCause, Hierarchy, HierarchyConfig,
    Inclusion, Involvement, LevelConfig, NoEvents, Reference, Replacement, SlotView, WritePolicy,
};

const LINE: u64 = 64;

/// Line `n` of a single-set cache (all lines map to set 0).
fn line(n: u64) -> u64 {
    0x10_000 + n * LINE
}

fn one_set(name: &str, ways: u32, replacement: Replacement) -> LevelConfig {
    LevelConfig::new(name, u64::from(ways) * LINE, ways, LINE as u32).with_replacement(replacement)
}

fn build(levels: Vec<LevelConfig>, inclusion: Inclusion) -> Hierarchy {
    Hierarchy::new(&HierarchyConfig::new(levels).with_inclusion(inclusion))
        .expect("valid test hierarchy")
}

/// Runs reads of the given lines and returns per access (hit at level 0?, evicted line at level 0).
fn trace(cache: &mut Hierarchy, lines: &[u64]) -> Vec<(bool, Option<u64>)> {
    let mut events = EventBuffer::new();
    lines
        .iter()
        .map(|&n| {
            cache.access(&Reference::read(line(n), 8), &mut events);
            let evicted = events.events().iter().find_map(|e| match e {
                Event::Evict(ev) if ev.from == 0 => Some((ev.line_addr - line(0)) / LINE),
                _ => None,
            });
            (events.outcome().involvement(0) == Involvement::Hit, evicted)
        })
        .collect()
}

#[test]
fn lru_evicts_the_least_recently_used_line() {
    let mut cache = build(
        vec![one_set("L1", 2, Replacement::Lru)],
        Inclusion::NonInclusive,
    );
    let got = trace(&mut cache, &[0, 1, 0, 2, 0, 1]);
    assert_eq!(
        got,
        vec![
            (false, None),
            (false, None),
            (true, None),
            (false, Some(1)),
            (true, None),
            (false, Some(2))
        ]
    );
}

#[test]
fn fifo_evicts_the_oldest_fill_whatever_the_hits() {
    let mut cache = build(
        vec![one_set("L1", 2, Replacement::Fifo)],
        Inclusion::NonInclusive,
    );
    let got = trace(&mut cache, &[0, 1, 0, 2, 0, 1]);
    assert_eq!(
        got,
        vec![
            (false, None),
            (false, None),
            (true, None),
            (false, Some(0)),
            (false, Some(1)),
            (false, Some(2))
        ]
    );
}

#[test]
fn tree_plru_follows_the_tree_not_true_lru() {
    let mut cache = build(
        vec![one_set("L1", 4, Replacement::TreePlru)],
        Inclusion::NonInclusive,
    );
    // Fill ways 0..3 with lines 0..3, touch line 0, then line 4: the root points to
    // the right half (ways 2, 3) and its node to way 2, so line 2 goes, although true
    // LRU would evict line 1.
    let got = trace(&mut cache, &[0, 1, 2, 3, 0, 4]);
    assert_eq!(got[5], (false, Some(2)));
    let mut lru = build(
        vec![one_set("L1", 4, Replacement::Lru)],
        Inclusion::NonInclusive,
    );
    assert_eq!(trace(&mut lru, &[0, 1, 2, 3, 0, 4])[5], (false, Some(1)));
}

#[test]
fn random_replacement_is_reproducible_per_seed() {
    let sequence: Vec<u64> = (0..200).map(|i| (i * 7919) % 13).collect();
    let run = |seed| {
        let mut cache = build(
            vec![one_set("L1", 4, Replacement::Random { seed })],
            Inclusion::NonInclusive,
        );
        trace(&mut cache, &sequence)
    };
    assert_eq!(run(42), run(42));
    assert_ne!(run(42), run(43));
    // A hit never evicts, and the first four distinct lines fill empty ways.
    let r = run(42);
    assert!(r.iter().all(|(hit, evicted)| !(*hit && evicted.is_some())));
    assert!(r[..4].iter().all(|(_, evicted)| evicted.is_none()));
}

#[test]
fn position_events_report_the_eviction_rank_after_the_access() {
    for (policy, expected_rank_of_hit) in [(Replacement::Lru, 0), (Replacement::Fifo, 1)] {
        let mut cache = build(vec![one_set("L1", 2, policy)], Inclusion::NonInclusive);
        let mut events = EventBuffer::new();
        for n in [0, 1, 0] {
            cache.access(&Reference::read(line(n), 8), &mut events);
        }
        let rank = events.events().iter().find_map(|e| match e {
            Event::Position(p) => Some(p.rank),
            _ => None,
        });
        assert_eq!(rank, Some(expected_rank_of_hit), "{policy:?}");
        let mut slots: Vec<SlotView> = Vec::new();
        cache.set_contents(0, 0, &mut slots);
        let mut ranks: Vec<u32> = slots.iter().map(|s| s.rank).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, vec![0, 1]);
    }
}

#[test]
fn write_back_marks_dirty_and_writes_back_on_eviction() {
    let mut cache = build(
        vec![
            one_set("L1", 2, Replacement::Lru),
            one_set("L2", 8, Replacement::Lru),
        ],
        Inclusion::NonInclusive,
    );
    cache.run(&[Reference::write(line(0), 8), Reference::read(line(1), 8)]);
    let mut slots = Vec::new();
    cache.set_contents(0, 0, &mut slots);
    assert!(slots.iter().any(|s| s.dirty && s.line_addr == line(0)));
    cache.run(&[Reference::read(line(2), 8)]);
    let (l1, l2) = (cache.statistics().level(0), cache.statistics().level(1));
    assert_eq!(
        (
            l1.write_misses,
            l1.read_misses,
            l1.evictions,
            l1.write_backs
        ),
        (1, 2, 1, 1)
    );
    assert_eq!((l2.writeback_hits, l2.write_hits + l2.write_misses), (1, 0));
    cache.set_contents(1, 0, &mut slots);
    assert!(
        slots.iter().any(|s| s.dirty && s.line_addr == line(0)),
        "L2 now holds the dirty data"
    );
}

#[test]
fn write_through_passes_every_store_on_and_never_dirties() {
    let l1 = one_set("L1", 2, Replacement::Lru).with_writes(WritePolicy::WriteThrough, true);
    let mut cache = build(
        vec![l1, one_set("L2", 8, Replacement::Lru)],
        Inclusion::NonInclusive,
    );
    let stores = [
        Reference::write(line(0), 8),
        Reference::write(line(0), 8),
        Reference::write(line(0), 8),
    ];
    cache.run(&stores);
    cache.run(&[Reference::read(line(1), 8), Reference::read(line(2), 8)]);
    let (l1, l2) = (cache.statistics().level(0), cache.statistics().level(1));
    assert_eq!((l1.write_misses, l1.write_hits, l1.write_backs), (1, 2, 0));
    assert_eq!(
        l2.write_hits, 3,
        "each store reaches L2 (the first after the fetch)"
    );
    assert_eq!(l2.read_misses, 3);
}

#[test]
fn no_write_allocate_sends_store_misses_down_without_filling() {
    let l1 = one_set("L1", 2, Replacement::Lru).with_writes(WritePolicy::WriteThrough, false);
    let mut cache = build(
        vec![l1, one_set("L2", 8, Replacement::Lru)],
        Inclusion::NonInclusive,
    );
    let mut events = EventBuffer::new();
    cache.access(&Reference::write(line(0), 8), &mut events);
    assert!(
        !cache.contains(0, line(0)),
        "no-write-allocate does not fill L1"
    );
    assert!(
        cache.contains(1, line(0)),
        "L2 is write-allocate and takes the line"
    );
    assert_eq!(
        events.outcome().served_by,
        2,
        "L2 had to fetch it from memory"
    );
    let l1 = cache.statistics().level(0);
    assert_eq!((l1.write_misses, l1.fills), (1, 0));
    assert_eq!(cache.statistics().level(1).write_misses, 1);
}

#[test]
fn inclusive_back_invalidates_and_merges_dirty_copies() {
    let levels = || {
        vec![
            one_set("L1", 4, Replacement::Lru),
            one_set("L2", 4, Replacement::Lru),
        ]
    };
    // Lines 0..3 fill both levels; line 0 is then written in L1 only, so it stays
    // least recent in L2, which evicts it for line 4.
    let refs = [0, 1, 2, 3]
        .map(|n| Reference::read(line(n), 8))
        .into_iter()
        .chain([Reference::write(line(0), 8), Reference::read(line(4), 8)])
        .collect::<Vec<_>>();

    let mut inclusive = build(levels(), Inclusion::Inclusive);
    let mut events = EventBuffer::new();
    for r in &refs {
        inclusive.access(r, &mut events);
    }
    assert!(!inclusive.contains(0, line(0)), "L2's victim left L1 too");
    let back = events.events().iter().find_map(|e| match e {
        Event::Evict(ev) if ev.cause == EvictionCause::BackInvalidation => Some(*ev),
        _ => None,
    });
    let back = back.expect("a back-invalidation event");
    assert_eq!(
        (back.from, back.line_addr, back.dirty, back.to),
        (0, line(0), true, Destination::Memory)
    );
    let l2 = inclusive.statistics().level(1);
    assert_eq!(
        l2.write_backs, 1,
        "the dirty L1 copy was merged into L2's write-back"
    );
    assert_eq!(inclusive.statistics().level(0).invalidations, 1);

    let mut nine = build(levels(), Inclusion::NonInclusive);
    nine.run(&refs);
    assert!(nine.contains(0, line(0)), "non-inclusive L1 keeps it");
    assert!(!nine.contains(1, line(0)));
    assert_eq!(nine.statistics().level(1).write_backs, 0);
}

#[test]
fn exclusive_moves_victims_down_and_hits_up() {
    let mut cache = build(
        vec![
            one_set("L1", 2, Replacement::Lru),
            one_set("L2", 2, Replacement::Lru),
        ],
        Inclusion::Exclusive,
    );
    cache.run(&[Reference::read(line(0), 8), Reference::write(line(1), 8)]);
    assert!(
        !cache.contains(1, line(0)),
        "misses fill the first level only"
    );
    cache.run(&[Reference::read(line(2), 8)]);
    assert!(
        cache.contains(1, line(0)) && !cache.contains(0, line(0)),
        "line 0 moved down"
    );
    // Line 1 (dirty) moves down next, then comes back up with its dirty bit.
    cache.run(&[Reference::read(line(3), 8)]);
    assert!(cache.contains(1, line(1)));
    let mut events = EventBuffer::new();
    cache.access(&Reference::read(line(1), 8), &mut events);
    assert_eq!(events.outcome().served_by, 1);
    assert!(cache.contains(0, line(1)) && !cache.contains(1, line(1)));
    let mut slots = Vec::new();
    cache.set_contents(0, 0, &mut slots);
    assert!(slots.iter().any(|s| s.line_addr == line(1) && s.dirty));
    let causes: Vec<(u8, EvictionCause, Destination)> = events
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Evict(ev) => Some((ev.from, ev.cause, ev.to)),
            _ => None,
        })
        .collect();
    assert_eq!(
        causes,
        vec![
            (1, EvictionCause::Promotion, Destination::Level(0)),
            (0, EvictionCause::Replacement, Destination::Level(1)),
        ]
    );
    let l2 = cache.statistics().level(1);
    assert_eq!((l2.read_hits, l2.read_misses), (1, 4));
    // Line 2 was the L1 victim and now sits in L2: both levels together hold 4 lines.
    assert!(cache.contains(1, line(2)));
}

#[test]
fn straddling_accesses_touch_both_lines() {
    let mut cache = build(
        vec![LevelConfig::new("L1", 4096, 4, 64)],
        Inclusion::NonInclusive,
    );
    cache.run(&[Reference::read(60, 8)]);
    let l1 = cache.statistics().level(0);
    assert_eq!((l1.accesses(), l1.misses()), (2, 2), "one miss per line");
    assert_eq!(cache.statistics().reference_misses(0), 1, "one reference");
    assert!(cache.contains(0, 0) && cache.contains(0, 64));
    cache.run(&[Reference::read(62, 4), Reference::read(63, 1)]);
    let l1 = cache.statistics().level(0);
    assert_eq!((l1.hits(), l1.misses()), (3, 2));
    // A reference at the very top of the address space does not overflow.
    cache.run(&[Reference::read(u64::MAX - 2, 8)]);
    assert_eq!(cache.statistics().references(), 4);
}

#[test]
fn a_two_level_miss_reports_probes_fills_and_positions_in_order() {
    let mut cache = build(
        vec![
            LevelConfig::new("L1", 1024, 2, 64),
            LevelConfig::new("L2", 4096, 4, 64),
        ],
        Inclusion::NonInclusive,
    );
    let mut events = EventBuffer::new();
    cache.access(&Reference::new(AccessKind::Modify, 0x1000, 8), &mut events);
    let kinds: Vec<String> = events
        .events()
        .iter()
        .map(|e| match e {
            Event::Probe(p) => format!("probe L{} hit={}", p.level + 1, p.hit),
            Event::Fill(f) => format!("fill L{} set={} way={}", f.level + 1, f.set, f.way),
            Event::Evict(v) => format!("evict L{}", v.from + 1),
            Event::Position(p) => format!("position L{} rank={}", p.level + 1, p.rank),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "probe L1 hit=false",
            "probe L2 hit=false",
            "fill L2 set=0 way=0",
            "position L2 rank=0",
            "fill L1 set=0 way=0",
            "position L1 rank=0",
        ]
    );
    assert_eq!(events.outcome().served_by, 2);
    // The statistics-only path gives the same counts.
    let mut fast = build(
        vec![
            LevelConfig::new("L1", 1024, 2, 64),
            LevelConfig::new("L2", 4096, 4, 64),
        ],
        Inclusion::NonInclusive,
    );
    fast.access(
        &Reference::new(AccessKind::Modify, 0x1000, 8),
        &mut NoEvents,
    );
    assert_eq!(fast.statistics().level(0), cache.statistics().level(0));
    let mut slots = Vec::new();
    cache.set_contents(0, 0, &mut slots);
    assert!(slots[0].dirty, "a modify dirties the line");
}

#[test]
fn unrealisable_levels_are_reported_by_name() {
    let config = HierarchyConfig::new(vec![
        LevelConfig::new("L1", 32768, 8, 64),
        LevelConfig::new("L2", 100_000, 8, 64),
    ]);
    let error = Hierarchy::new(&config).unwrap_err().to_string();
    assert!(
        error.contains("L2") && error.contains("whole number of sets"),
        "{error}"
    );
}

/// The statistics-only fast path and the general, evented path are two codings of the
/// same semantics: on random traces every counter and every resident line agree.
#[test]
fn fast_path_matches_the_general_path() {
    let mut seed = 77u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let policies = [
        Replacement::Lru,
        Replacement::Fifo,
        Replacement::TreePlru,
        Replacement::Random { seed: 3 },
    ];
    for case in 0..40 {
        let mut levels = Vec::new();
        let mut line = 32;
        for i in 0..1 + next() % 3 {
            line = if next() % 3 == 0 {
                (line * 2).min(128)
            } else {
                line
            };
            let ways = [1u32, 2, 4, 8, 16][(next() % 5) as usize];
            let sets = 1u64 << (next() % 5 + i);
            levels.push(
                LevelConfig::new(
                    format!("L{}", i + 1),
                    sets * u64::from(ways) * line,
                    ways,
                    line as u32,
                )
                .with_replacement(policies[(next() % 4) as usize]),
            );
        }
        let config = HierarchyConfig::new(levels).with_inclusion(Inclusion::NonInclusive);
        let mut fast = Hierarchy::new(&config).unwrap();
        let mut fast_evented = Hierarchy::new(&config).unwrap();
        let mut batched = Hierarchy::new(&config).unwrap();
        let mut trace = Vec::new();
        let mut general = Hierarchy::new(&config).unwrap();
        general.set_fast_path(false);
        let (mut events, mut fast_events) = (EventBuffer::new(), EventBuffer::new());
        for _ in 0..5000 {
            let addr = 0x4000 + next() % 8192;
            let size = [1u16, 4, 8, 16, 64][(next() % 5) as usize];
            let kind = [
                AccessKind::Read,
                AccessKind::Write,
                AccessKind::Modify,
                AccessKind::Instruction,
            ][(next() % 4) as usize];
            let r = Reference::new(kind, addr, size).with(
                memlens_cache::RegionId((next() % 3) as u16),
                memlens_cache::LabelId::NONE,
            );
            let a = fast.access(&r, &mut NoEvents);
            let b = general.access(&r, &mut events);
            assert_eq!(a, b, "case {case}: outcome of {r:?}");
            fast_evented.access(&r, &mut fast_events);
            trace.push(r);
            assert_eq!(
                fast_events.events(),
                events.events(),
                "case {case}: events of {r:?}"
            );
        }
        assert_eq!(
            format!("{:?}", fast_evented.statistics()),
            format!("{:?}", fast.statistics())
        );
        batched.run(&trace);
        assert_eq!(
            format!("{:?}", batched.statistics()),
            format!("{:?}", fast.statistics()),
            "case {case}: batched"
        );
        assert_eq!(
            format!("{:?}", fast.statistics()),
            format!("{:?}", general.statistics()),
            "case {case}: {config:?}"
        );
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for level in 0..fast.level_count() {
            for set in 0..fast.geometry(level).sets as usize {
                fast.set_contents(level, set, &mut x);
                general.set_contents(level, set, &mut y);
                assert_eq!(x, y, "case {case}: level {level} set {set}");
                batched.set_contents(level, set, &mut y);
                assert_eq!(x, y, "case {case}: batched, level {level} set {set}");
            }
        }
    }
}
