//! The paper's case-study observations, asserted on the event stream of the built-in
//! kernels run through small, paper-sized caches:
//! - Figure 1: the transposed and blocked multiplies miss less in L1 than the
//!   standard one once the matrices exceed L1, and the standard one's misses come
//!   from the right-hand matrix.
//! - Figure 6: bubble sort's late sweeps hit entirely in L1.
//! - Figure 7: merge sort's early merges stay in cache; its final merge spills out.

use memlens_cache::kernels::{Kernel, KernelParams};
use memlens_cache::{
    Event, EventSink, Hierarchy, HierarchyConfig, LevelConfig, Outcome, Reference, RegionId,
};

/// Records, per reference, whether an L1 probe missed and which level served it, and
/// counts L1 misses per region — all from the event stream.
#[derive(Default)]
struct MissLog {
    current_region: RegionId,
    current_l1_miss: bool,
    l1_misses_by_region: Vec<u64>,
    per_reference: Vec<(bool, u8)>,
}

impl EventSink for MissLog {
    fn begin_reference(&mut self, reference: &Reference) {
        self.current_region = reference.region;
        self.current_l1_miss = false;
    }

    fn event(&mut self, event: Event) {
        if let Event::Probe(probe) = event
            && probe.level == 0
            && !probe.hit
        {
            self.current_l1_miss = true;
            let r = self.current_region.index();
            if self.l1_misses_by_region.len() <= r {
                self.l1_misses_by_region.resize(r + 1, 0);
            }
            self.l1_misses_by_region[r] += 1;
        }
    }

    fn end_reference(&mut self, _reference: &Reference, outcome: &Outcome) {
        self.per_reference
            .push((self.current_l1_miss, outcome.served_by));
    }
}

impl MissLog {
    fn l1_misses(&self) -> u64 {
        self.l1_misses_by_region.iter().sum()
    }

    fn region(&self, region: RegionId) -> u64 {
        self.l1_misses_by_region
            .get(region.index())
            .copied()
            .unwrap_or(0)
    }

    fn miss_rate(&self, range: std::ops::Range<usize>) -> f64 {
        let slice = &self.per_reference[range];
        slice.iter().filter(|(missed, _)| *missed).count() as f64 / slice.len() as f64
    }
}

/// A 1 KiB 2-way L1 and a 4 KiB 4-way L2 with 64-byte lines.
fn small_cache() -> Hierarchy {
    Hierarchy::new(&HierarchyConfig::new(vec![
        LevelConfig::new("L1", 1024, 2, 64),
        LevelConfig::new("L2", 4096, 4, 64),
    ]))
    .expect("a valid hierarchy")
}

fn run(name: &str, variant: Option<&str>, params: KernelParams) -> (MissLog, Kernel) {
    let kernel = Kernel::new(name, variant, params).expect("a valid kernel");
    let mut cache = small_cache();
    let mut log = MissLog::default();
    kernel.generate(|r| {
        cache.access(&r, &mut log);
    });
    (log, kernel)
}

#[test]
fn figure_1_transposed_and_blocked_multiplies_miss_less_than_the_standard_one() {
    // 40×40 doubles: 12.5 KiB per matrix, twelve times the L1. (Like the paper's
    // 12×12 example, N is not a power of two, so rows do not all fall in one set.)
    let params = KernelParams {
        n: 40,
        block: 8,
        ..KernelParams::default()
    };
    let (standard, kernel) = run("matmul", Some("standard"), params);
    let (transposed, _) = run("matmul", Some("transposed"), params);
    let (blocked, _) = run("matmul", Some("blocked"), params);
    let info = kernel.info();
    let region = |name: &str| {
        info.regions
            .iter()
            .find(|(_, r)| r.name == name)
            .map(|(id, _)| id)
            .unwrap()
    };
    let (a, b) = (region("A"), region("B"));
    eprintln!(
        "L1 misses: standard {} (A {}, B {}), transposed {}, blocked {}",
        standard.l1_misses(),
        standard.region(a),
        standard.region(b),
        transposed.l1_misses(),
        blocked.l1_misses()
    );
    assert!(transposed.l1_misses() * 2 < standard.l1_misses());
    assert!(blocked.l1_misses() * 2 < standard.l1_misses());
    assert!(
        standard.region(b) > 4 * standard.region(a),
        "the right-hand matrix misses almost every time, the left-hand one reuses its row"
    );
}

#[test]
fn figure_6_bubble_sorts_late_sweeps_hit_in_l1() {
    // 512 doubles: 4 KiB, four times the L1.
    let params = KernelParams {
        n: 512,
        ..KernelParams::default()
    };
    let (log, _) = run("bubble-sort", None, params);
    let total = log.per_reference.len();
    // The last 2 % of references are the sweeps over fewer than 0.14 × 512 = 72
    // elements (576 bytes), which fit in the 1 KiB L1.
    let tail = total - total / 50;
    // A sweep over the whole array misses once per 8-element line, in about 3
    // references per element (two loads, and the stores of swaps).
    assert!(
        log.miss_rate(0..total / 50) > 0.02,
        "early sweeps stream the array through L1"
    );
    assert_eq!(
        log.miss_rate(tail..total),
        0.0,
        "the late sweeps never miss L1"
    );
    // In between, the shrinking working set first fits in L2: L1 misses served by L2.
    let served_by_l2 = log
        .per_reference
        .iter()
        .filter(|(missed, served)| *missed && *served == 1)
        .count();
    assert!(served_by_l2 > 0);
}

#[test]
fn figure_7_merge_sorts_final_merge_spills_out_of_the_cache() {
    // 2048 doubles: 16 KiB for the array and as much for tmp, far beyond both levels.
    let n = 2048;
    let params = KernelParams {
        n,
        ..KernelParams::default()
    };
    let (log, _) = run("merge-sort", None, params);
    let total = log.per_reference.len();
    let early = log.miss_rate(0..total / 10);
    // The final merge and its copy back are the last ~5n references.
    let last = total - 4 * n as usize;
    let late = log.miss_rate(last..total);
    eprintln!("merge sort L1 miss rate: first tenth {early:.3}, final merge {late:.3}");
    assert!(
        late > 1.5 * early,
        "small merges reuse lines still in L1; the final one cannot"
    );
    let memory_late = log.per_reference[last..]
        .iter()
        .filter(|(_, s)| *s == 2)
        .count();
    assert!(memory_late > 0, "the final merge reaches main memory");
}
