//! The pool-allocator replay on a hand-made trace through a 3-bin pool: exact
//! simulated addresses, overflows, high-water marks and waste, for both heap policies.

mod common;

use memlens_alloc::*;

const BASE: u64 = 0x1000_0000;
const HEAP_TOP: u64 = 0x1000_1100;

/// Blocks A..I of the scenario (see the test for where each one must go).
fn trace() -> AllocModel {
    common::model(
        &[
            (1, Some(6), 0xa000, 10, 1),   // A → bin 0 slot 0, freed at 6
            (2, None, 0xa100, 16, 1),      // B → bin 0 slot 1
            (3, Some(8), 0xa200, 12, 1),   // C → bin 0 full: heap, 16 B at the top
            (4, None, 0xa300, 20, 1),      // D → bin 1 slot 0
            (5, Some(11), 0xa400, 100, 1), // E → larger than every bin: heap, 112 B
            (7, None, 0xa500, 1, 1),       // F → bin 0 slot 0 again
            (9, None, 0xa600, 64, 1),      // G → bin 2 slot 0
            (10, None, 0xa700, 65, 1),     // H → too large: heap, 80 B
            (12, None, 0xa800, 40, 1),     // I → bin 2 full: heap, 48 B
        ],
        20,
    )
}

fn config(overflow: OverflowPolicy) -> PoolConfig {
    PoolConfig {
        bins: PoolConfig::parse_bins("16:2, 32:2, 64:1").unwrap(),
        overflow,
        heap_size: Some(256),
        heap_align: 16,
    }
}

fn addresses(model: &AllocModel) -> Vec<(u64, u64)> {
    model
        .blocks()
        .iter()
        .map(|b| (b.addr, b.reserved))
        .collect()
}

#[test]
fn first_fit_replay_places_every_request_exactly() {
    let (m, report) = replay(&trace(), &config(OverflowPolicy::FirstFit)).unwrap();
    // Bins: 16×2 at BASE, 32×2 at BASE+32, 64×1 at BASE+96; heap page-aligned after them.
    assert_eq!(
        addresses(&m),
        vec![
            (BASE, 16),            // A
            (BASE + 16, 16),       // B
            (HEAP_TOP - 16, 16),   // C: top of the heap
            (BASE + 32, 32),       // D
            (HEAP_TOP - 128, 112), // E: below C
            (BASE, 16),            // F: A's slot, the lowest free one
            (BASE + 96, 64),       // G
            (0x1000_1030, 80),     // H: the highest run that fits, [0x1000, 0x1080), at its top
            (HEAP_TOP - 48, 48), // I: first fit = the highest run, [0x1080, 0x1100) after E's free
        ]
    );
    assert_eq!(report.requests, 9);
    let hw: Vec<u64> = report.bins.iter().map(|b| b.high_water).collect();
    assert_eq!(hw, vec![2, 1, 1]);
    let overflowed: Vec<u64> = report.bins.iter().map(|b| b.overflowed).collect();
    assert_eq!(overflowed, vec![1, 0, 1]);
    let waste: Vec<u64> = report.bins.iter().map(|b| b.waste_bytes).collect();
    assert_eq!(waste, vec![6 + 15, 12, 0]);
    assert_eq!(report.too_large, 2);
    assert_eq!(report.heap_served, 4);
    assert_eq!(report.heap_waste_bytes, 4 + 12 + 15 + 8);
    assert_eq!(report.failed, 0);
    assert_eq!(report.heap_high_water_bytes, HEAP_TOP - 0x1000_1030);
    let overflowing: Vec<(u64, Option<usize>)> =
        report.overflows.iter().map(|o| (o.size, o.bin)).collect();
    assert_eq!(
        overflowing,
        vec![(12, Some(0)), (100, None), (65, None), (40, Some(2))]
    );
    // Bins of the replayed model: the three pool bins, then the heap.
    let kinds: Vec<&str> = m.bins().iter().map(|b| b.kind.name()).collect();
    assert_eq!(kinds, vec!["pool", "pool", "pool", "heap"]);
    assert_eq!(m.bins()[3].capacity(), 256);
}

#[test]
fn best_fit_takes_the_smallest_run() {
    let (m, report) = replay(&trace(), &config(OverflowPolicy::BestFit)).unwrap();
    // I (48 B) now takes the 48-byte run [0x1000, 0x1030) left below H.
    assert_eq!(m.blocks()[8].addr, 0x1000_1000);
    assert_eq!(report.heap_high_water_bytes, 256);
}

#[test]
fn a_full_heap_fails_requests_and_drops_them() {
    let mut c = config(OverflowPolicy::FirstFit);
    c.heap_size = Some(64);
    let (m, report) = replay(&trace(), &c).unwrap();
    // C (16) fits; E (112) does not; H (80) does not; I (48) fits below C.
    assert_eq!(report.failed, 2);
    assert_eq!(m.blocks().len(), 7);
    assert!(
        report
            .overflows
            .iter()
            .filter(|o| o.failed)
            .all(|o| o.size > 64)
    );
}

#[test]
fn bad_configurations_are_refused_with_a_sentence() {
    let m = trace();
    let bad = PoolConfig::new(PoolConfig::parse_bins("32:4,16:4").unwrap());
    let e = replay(&m, &bad).unwrap_err();
    assert_eq!(
        e,
        AllocError::BinSizesNotIncreasing {
            index: 1,
            size: 16,
            previous: 32
        }
    );
    assert!(e.to_string().contains("must strictly increase"), "{e}");
    assert!(PoolConfig::parse_bins("32").is_err());
    assert!(PoolConfig::parse_bins("32:x").is_err());
    assert!(replay(&m, &PoolConfig::new(vec![])).is_err());
    assert_eq!(
        PoolConfig::parse_bins("1K:2,2M:1").unwrap(),
        vec![
            PoolBin {
                block_size: 1024,
                count: 2
            },
            PoolBin {
                block_size: 2 << 20,
                count: 1
            }
        ]
    );
}
