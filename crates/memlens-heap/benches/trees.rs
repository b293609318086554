//! Memory trees on a synthetic 10 M-allocation model (DESIGN §8: 10 M allocations, 50
//! times, 3 classifier levels in ≤ 1 s; one more time point ≤ 50 ms).
//!
//! The model is generated deterministically (xorshift, fixed seed) and built once through
//! the public builder; building it is measured separately (`build_model`). Two shapes:
//!
//! - `churn`: 85 % of blocks live ~50 µs, 13 % up to 2 s, 2 % are never freed, 1 % are
//!   reallocated once — a typical allocation-heavy program;
//! - `long_lived`: every block lives up to the whole run, so almost every allocation is
//!   live at many snapshots and must be classified (the worst case for the one pass).
//!
//! The named baseline is `baseline_k_separate_passes`: the same 50 trees, each from its
//! own pass over the allocations, i.e. O(N·K) instead of O(N·levels + nodes·K).
//!
//! Run: `cargo bench -p memlens-heap --bench trees` (see `bench/heap/README.md`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

use memlens_heap::*;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

const ALLOCATIONS: u64 = 10_000_000;
const SPACING_NS: u64 = 1_000;
const TIMES: usize = 50;
const CHAIN: &str = "site,thread,size-class";

fn main() {
    for shape in [Shape::Churn, Shape::LongLived] {
        let m = model(shape);
        let chain = parse_classifiers(CHAIN, ClassifierOptions::default()).unwrap();
        let times = SnapshotTimes::Points(TIMES).resolve(m, None).unwrap();
        let series = TreeSeries::compute(m, &chain, &times).unwrap();
        let trees = series.trees(&TreeOptions::default());
        let mut kept = 0;
        trees.trees[0].root.walk(&mut |_| kept += 1);
        eprintln!(
            "{shape:?}: {} allocations, {} resized, peak {}, union tree {} nodes ({} after pruning), value arrays {}",
            m.len(),
            m.stats().reallocations,
            format_bytes(m.stats().peak_bytes),
            series.node_count(),
            kept,
            format_bytes(series.node_count() as u64 * TIMES as u64 * 16),
        );
    }
    divan::main();
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Churn,
    LongLived,
}

fn model(shape: Shape) -> &'static HeapModel {
    static CHURN: OnceLock<HeapModel> = OnceLock::new();
    static LONG: OnceLock<HeapModel> = OnceLock::new();
    let cell = if shape == Shape::Churn { &CHURN } else { &LONG };
    cell.get_or_init(|| generate(shape, ALLOCATIONS))
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Generates and builds the synthetic model: 300 functions in 3 modules, 2 000 stacks of
/// depth 3–10, 8 threads, sizes log-uniform in 16 B–64 KiB.
fn generate(shape: Shape, allocations: u64) -> HeapModel {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut b = HeapModelBuilder::new();
    b.reserve(allocations as usize);
    b.start(0);
    let names: Vec<String> = (0..300)
        .map(|i| format!("module{}::function_{i}", i % 3))
        .collect();
    let frames: Vec<FrameId> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let module = format!("/usr/lib/libmodule{}.so", i % 3);
            b.add_frame(FrameInfo {
                function: name,
                file: "src/lib.rs",
                line: i as u32,
                module: &module,
                inlined_into: None,
                kind: memlens_vocab::FrameKind::User,
            })
        })
        .collect();
    let stacks: Vec<StackId> = (0..2_000)
        .map(|_| {
            let mut node = StackId::ROOT;
            for _ in 0..3 + rng.below(8) {
                node = b.add_stack(node, frames[rng.below(frames.len() as u64) as usize]);
            }
            node
        })
        .collect();
    for tid in 0..8 {
        b.name_thread(1000 + tid, &format!("worker-{tid}"));
    }
    let end = allocations * SPACING_NS;
    // Pending frees and reallocs: (time, address, new size or 0 for a free).
    let mut pending: BinaryHeap<Reverse<(u64, u64, u64)>> = BinaryHeap::new();
    for i in 0..allocations {
        let t = i * SPACING_NS;
        while let Some(&Reverse((due, addr, new_size))) = pending.peek() {
            if due > t {
                break;
            }
            pending.pop();
            if new_size == 0 {
                b.free(due, 1000, addr);
            } else {
                b.realloc(due, 1000, addr, addr, new_size, StackId::ROOT);
            }
        }
        let addr = 0x10_0000 + i * 16;
        let size = 16u64 << rng.below(13);
        let size = size + rng.below(size);
        let stack = stacks[rng.below(stacks.len() as u64) as usize];
        b.alloc(t, 1000 + rng.below(8), addr, size, stack, AllocKind::Malloc);
        let roll = rng.below(100);
        let lifetime = match shape {
            Shape::LongLived => Some(1 + rng.below(end)),
            Shape::Churn if roll < 85 => Some(1 + rng.below(100_000)),
            Shape::Churn if roll < 98 => Some(1 + rng.below(2_000_000_000)),
            Shape::Churn => None,
        };
        if let Some(lifetime) = lifetime.filter(|l| t + l < end) {
            if rng.below(100) == 0 {
                pending.push(Reverse((t + lifetime / 2, addr, size * 2)));
            }
            pending.push(Reverse((t + lifetime, addr, 0)));
        }
    }
    while let Some(Reverse((due, addr, new_size))) = pending.pop() {
        if new_size == 0 {
            b.free(due, 1000, addr);
        } else {
            b.realloc(due, 1000, addr, addr, new_size, StackId::ROOT);
        }
    }
    b.end(end)
}

fn setup(shape: Shape) -> (&'static HeapModel, ClassifierChain, Vec<u64>) {
    let m = model(shape);
    let chain = parse_classifiers(CHAIN, ClassifierOptions::default()).unwrap();
    let times = SnapshotTimes::Points(TIMES).resolve(m, None).unwrap();
    (m, chain, times)
}

/// All 50 unpruned trees in one pass (the ≤ 1 s target).
#[divan::bench(args = [Shape::Churn, Shape::LongLived], sample_count = 5, sample_size = 1)]
fn one_pass_50_times(bencher: divan::Bencher, shape: Shape) {
    let (m, chain, times) = setup(shape);
    bencher.bench(|| TreeSeries::compute(m, &chain, &times).unwrap().node_count());
}

/// One pass plus meta-tree ordering and pruning into output trees.
#[divan::bench(args = [Shape::Churn, Shape::LongLived], sample_count = 5, sample_size = 1)]
fn one_pass_and_pruned_output(bencher: divan::Bencher, shape: Shape) {
    let (m, chain, times) = setup(shape);
    bencher.bench(|| {
        TreeSeries::compute(m, &chain, &times)
            .unwrap()
            .trees(&TreeOptions::default())
            .trees
            .len()
    });
}

/// Baseline: the same 50 trees, each computed by its own pass over the allocations
/// (O(N·K)), as a tool without the difference arrays would.
#[divan::bench(args = [Shape::Churn, Shape::LongLived], sample_count = 1, sample_size = 1)]
fn baseline_k_separate_passes(bencher: divan::Bencher, shape: Shape) {
    let (m, chain, times) = setup(shape);
    bencher.bench(|| {
        times
            .iter()
            .map(|&t| TreeSeries::compute(m, &chain, &[t]).unwrap().node_count())
            .sum::<usize>()
    });
}

/// The same 50 trees as one tree plus 49 viewer steps (`add_time`, which replays only
/// the events between neighbouring snapshots).
#[divan::bench(args = [Shape::Churn, Shape::LongLived], sample_count = 3, sample_size = 1)]
fn first_tree_plus_49_steps(bencher: divan::Bencher, shape: Shape) {
    let (m, chain, times) = setup(shape);
    bencher.bench(|| {
        let mut series = TreeSeries::compute(m, &chain, &times[..1]).unwrap();
        for &t in &times[1..] {
            series.add_time(t).unwrap();
        }
        series.node_count()
    });
}

/// A viewer step: one more time point for an already-built series (≤ 50 ms target).
/// The series is rebuilt outside the timed region for every sample.
#[divan::bench(args = [Shape::Churn, Shape::LongLived], sample_count = 5, sample_size = 1)]
fn add_one_time(bencher: divan::Bencher, shape: Shape) {
    let (m, chain, times) = setup(shape);
    let new_time = (times[24] + times[25]) / 2;
    bencher
        .with_inputs(|| TreeSeries::compute(m, &chain, &times).unwrap())
        .bench_local_values(|mut series| {
            series.add_time(new_time).unwrap();
            // Returned so that dropping the series is not timed.
            series
        });
}

/// Building the model from 10 M allocation events through the public builder.
#[divan::bench(sample_count = 1, sample_size = 1)]
fn build_model() -> usize {
    generate(Shape::Churn, ALLOCATIONS).len()
}

/// Heap timeline at 1 000 points over the whole run.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn timeline_1000_points() -> usize {
    model(Shape::Churn)
        .timeline(Resolution::Points(1_000), None)
        .unwrap()
        .buckets
        .len()
}
