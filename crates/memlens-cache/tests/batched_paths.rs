//! The batched statistics loop (`Hierarchy::run`, and `Simulation::access_all` with
//! its outcome codes) against the plain per-reference general path, on random
//! streams and every policy, inclusion and write policy, with the shapes the batched
//! loop is specialised for (one to three levels and more; eight ways everywhere, or
//! mixed ways; 64-byte lines or not; power-of-two set counts or not) and the cases
//! where it stops (references that span lines, regions not seen before, dirty
//! victims at every level). Counts, resident lines, windowed miss rates and
//! temperature must be equal.

use memlens_cache::{
    AccessKind, Hierarchy, HierarchyConfig, Inclusion, LabelId, LevelConfig, NoEvents, Reference,
    ReferenceBounds, RegionId, Replacement, Simulation, WritePolicy,
};

/// A xorshift stream, reproducible.
fn stream(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// Random references over 16 KiB: hits, evictions, dirty victims and accesses that
/// straddle lines, attributed to three regions.
fn trace(next: &mut impl FnMut() -> u64, count: usize) -> Vec<Reference> {
    (0..count)
        .map(|_| {
            let addr = 0x8000 + next() % 16384;
            let size = [1u16, 4, 8, 8, 8, 16, 64][(next() % 7) as usize];
            let kind = [
                AccessKind::Read,
                AccessKind::Read,
                AccessKind::Write,
                AccessKind::Modify,
                AccessKind::Instruction,
            ][(next() % 5) as usize];
            Reference::new(kind, addr, size).with(RegionId((next() % 3) as u16), LabelId::NONE)
        })
        .collect()
}

fn hierarchy(
    levels: usize,
    ways: &[u32],
    replacement: Replacement,
    writes: (WritePolicy, bool),
    inclusion: Inclusion,
) -> HierarchyConfig {
    let levels = (0..levels)
        .map(|i| {
            let ways = ways[i % ways.len()];
            // 4, 8 and 16 sets of 64-byte lines.
            let sets = 4u64 << i;
            LevelConfig::new(format!("L{}", i + 1), sets * u64::from(ways) * 64, ways, 64)
                .with_replacement(replacement)
                .with_writes(writes.0, writes.1)
        })
        .collect();
    HierarchyConfig::new(levels).with_inclusion(inclusion)
}

/// Asserts that [`Hierarchy::run`] leaves the statistics and every set as the general
/// path does, reference by reference.
fn assert_batched_is_general(config: &HierarchyConfig, references: &[Reference], what: &str) {
    let mut general = Hierarchy::new(config).unwrap();
    general.set_fast_path(false);
    for r in references {
        general.access(r, &mut NoEvents);
    }
    let mut batched = Hierarchy::new(config).unwrap();
    batched.run(references);
    assert_eq!(
        format!("{:?}", batched.statistics()),
        format!("{:?}", general.statistics()),
        "{what}"
    );
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for level in 0..config.levels.len() {
        for set in 0..general.geometry(level).sets as usize {
            batched.set_contents(level, set, &mut x);
            general.set_contents(level, set, &mut y);
            assert_eq!(x, y, "{what}: level {level} set {set}");
        }
    }
}

#[test]
fn batched_statistics_equal_the_general_path_for_every_policy() {
    let mut next = stream(0x5EED);
    let policies = [
        Replacement::Lru,
        Replacement::Fifo,
        Replacement::TreePlru,
        Replacement::Random { seed: 9 },
    ];
    let inclusions = [
        Inclusion::NonInclusive,
        Inclusion::Inclusive,
        Inclusion::Exclusive,
    ];
    let writes = [
        (WritePolicy::WriteBack, true),
        (WritePolicy::WriteBack, false),
        (WritePolicy::WriteThrough, true),
        (WritePolicy::WriteThrough, false),
    ];
    let shapes: [&[u32]; 3] = [&[8], &[4, 8], &[2, 16]];
    for levels in 1..=3 {
        for ways in shapes {
            for replacement in policies {
                for inclusion in inclusions {
                    for write in writes {
                        let config = hierarchy(levels, ways, replacement, write, inclusion);
                        let what = format!("{config:?}");
                        let references = trace(&mut next, 3000);

                        assert_batched_is_general(&config, &references, &what);

                        // The outcome codes behind the windows and the temperature.
                        let mut bulk = Simulation::new(&config, 100).unwrap();
                        bulk.access_all(&references);
                        let mut single = Simulation::new(&config, 100).unwrap();
                        for r in &references {
                            single.access(r);
                        }
                        assert_eq!(bulk.summary(), single.summary(), "{what}");
                    }
                }
            }
        }
    }
}

/// A random geometry: `levels` levels whose lines only grow, ways among 1 to 16,
/// set counts powers of two or not.
fn random_config(next: &mut impl FnMut() -> u64, levels: usize) -> HierarchyConfig {
    let mut line = [16u64, 32, 64, 64, 64, 128][(next() % 6) as usize];
    let uniform = next().is_multiple_of(2);
    let ways_all = [4u32, 8, 16][(next() % 3) as usize];
    let levels = (0..levels)
        .map(|i| {
            if next().is_multiple_of(4) {
                line = (line * 2).min(256);
            }
            let ways = if uniform {
                ways_all
            } else {
                [1u32, 2, 3, 4, 6, 8, 12, 16][(next() % 8) as usize]
            };
            let sets = if next().is_multiple_of(3) {
                [3u64, 5, 6, 12][(next() % 4) as usize] << i
            } else {
                4u64 << (next() % 3 + i as u64)
            };
            let replacement =
                [Replacement::Lru, Replacement::Lru, Replacement::Fifo][(next() % 3) as usize];
            LevelConfig::new(
                format!("L{}", i + 1),
                sets * u64::from(ways) * line,
                ways,
                line as u32,
            )
            .with_replacement(replacement)
        })
        .collect();
    HierarchyConfig::new(levels)
}

/// Random references over `span` bytes, stores often (dirty victims at every
/// level), a few spanning two lines, of `regions` regions whose ids grow along the
/// trace (regions not seen before in the middle of a batch).
fn stream_of(
    next: &mut impl FnMut() -> u64,
    count: usize,
    span: u64,
    regions: u64,
) -> Vec<Reference> {
    (0..count)
        .map(|i| {
            let addr = 0x10_0000 + next() % span;
            let size = if next().is_multiple_of(50) {
                64
            } else {
                [1u16, 4, 8][(next() % 3) as usize]
            };
            let addr = if size == 1 {
                addr
            } else {
                addr & !(u64::from(size) - 1)
            };
            let kind = [
                AccessKind::Read,
                AccessKind::Write,
                AccessKind::Modify,
                AccessKind::Instruction,
            ][(next() % 4) as usize];
            // Region ids appear one after another, the largest last.
            let seen = 1 + (i as u64 * regions / count as u64);
            let region = RegionId((next() % seen) as u16 * 3);
            Reference::new(kind, addr, size).with(region, LabelId::NONE)
        })
        .collect()
}

/// The bounds that `references` keep, found one by one.
fn bounds_of(references: &[Reference]) -> ReferenceBounds {
    let aligned = references.iter().all(|r| {
        let size = u64::from(r.size.max(1));
        size.is_power_of_two() && r.addr.is_multiple_of(size)
    });
    ReferenceBounds {
        max_region: references
            .iter()
            .map(|r| r.region)
            .max()
            .unwrap_or_default(),
        aligned_size: match aligned {
            true => references.iter().map(|r| r.size).max().unwrap_or(0).max(1),
            false => 0,
        },
    }
}

#[test]
fn batched_simulations_equal_reference_by_reference_ones_on_any_geometry() {
    let mut next = stream(0xB47C4);
    for case in 0..60 {
        let levels = 1 + case % 5;
        let config = random_config(&mut next, levels);
        let what = format!("case {case}: {config:?}");
        let regions = 1 + next() % 9;
        let references = stream_of(&mut next, 6000, 24 * 1024, regions);
        for window in [1, 7, 1000] {
            let mut single = Simulation::new(&config, window).unwrap();
            references.iter().for_each(|r| single.access(r));
            // In one batch, and in batches of every size the callers use.
            let mut whole = Simulation::new(&config, window).unwrap();
            whole.access_all(&references);
            assert_eq!(whole.summary(), single.summary(), "{what}, window {window}");
            let mut pieces = Simulation::new(&config, window).unwrap();
            for batch in references.chunks(1 + (next() % 700) as usize) {
                pieces.access_all(batch);
            }
            assert_eq!(
                pieces.summary(),
                single.summary(),
                "{what}, window {window}, batches"
            );
            // With the bounds each batch keeps (as the trace decoder gives them),
            // which leave out the first level's checks when no reference spans its
            // lines.
            let mut within = Simulation::new(&config, window).unwrap();
            for batch in references.chunks(1 + (next() % 5000) as usize) {
                within.access_all_within(batch, bounds_of(batch));
            }
            assert_eq!(
                within.summary(),
                single.summary(),
                "{what}, window {window}, within bounds"
            );
        }
        assert_batched_is_general(&config, &references, &what);
    }
}

#[test]
fn bounds_that_do_not_hold_give_wrong_counts_not_a_crash() {
    let mut next = stream(0x5EED);
    let config = hierarchy(
        2,
        &[8],
        Replacement::Lru,
        (WritePolicy::WriteBack, true),
        Inclusion::NonInclusive,
    );
    // Regions up to 24 and references spanning lines, said to be neither.
    let mut references = stream_of(&mut next, 5000, 24 * 1024, 9);
    references.extend((0..100).map(|i| Reference::read(0x10_0000 + 64 * i + 60, 8)));
    let lie = ReferenceBounds {
        max_region: RegionId(0),
        aligned_size: 8,
    };
    let mut lied_to = Simulation::new(&config, 100).unwrap();
    lied_to.access_all_within(&references, lie);
    assert_eq!(lied_to.summary().references, references.len() as u64);
}
