//! The batched statistics loop (`Hierarchy::run`, and `Simulation::access_all` with
//! its outcome codes) against the plain per-reference general path, on random
//! streams and every policy, inclusion and write policy, with the shapes the batched
//! loop is specialised for (one to three levels; eight ways everywhere, or mixed
//! ways). Counts, resident lines, windowed miss rates and temperature must be equal.

use memlens_cache::{
    AccessKind, Hierarchy, HierarchyConfig, Inclusion, LabelId, LevelConfig, NoEvents, Reference,
    RegionId, Replacement, Simulation, WritePolicy,
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

                        let mut general = Hierarchy::new(&config).unwrap();
                        general.set_fast_path(false);
                        for r in &references {
                            general.access(r, &mut NoEvents);
                        }
                        let mut batched = Hierarchy::new(&config).unwrap();
                        batched.run(&references);
                        assert_eq!(
                            format!("{:?}", batched.statistics()),
                            format!("{:?}", general.statistics()),
                            "{what}"
                        );
                        let (mut x, mut y) = (Vec::new(), Vec::new());
                        for level in 0..levels {
                            for set in 0..general.geometry(level).sets as usize {
                                batched.set_contents(level, set, &mut x);
                                general.set_contents(level, set, &mut y);
                                assert_eq!(x, y, "{what}: level {level} set {set}");
                            }
                        }

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
