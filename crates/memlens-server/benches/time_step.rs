//! How long the viewer waits for the data of one time-travel step (DESIGN §8: ≤ 50 ms
//! for a 10 M-allocation trace), measured on a generated model through the same
//! [`Engine`] calls the heap lens makes, JSON included.
//!
//! The model is deterministic (xorshift, fixed seed): 10 M allocations by 300
//! functions over 2 000 stacks and 8 threads, sizes log-uniform in 16 B–64 KiB; 85 %
//! of blocks live ~50 µs, 13 % up to 2 s, 2 % are never freed. Printed: the one-time
//! costs (engine start, first series, growth ranking, timeline) and, for steps, the
//! median and worst of (a) a step to a snapshot time and (b) a step to a new time,
//! which adds a time to the probe series with `add_time`, and the upkeep the server
//! does after sending an answer (starting a full probe series afresh).
//!
//! Run: `cargo bench -p memlens-server --bench time_step` (set `MEMLENS_BENCH_ALLOCATIONS`
//! for another size).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use memlens_heap::{
    AllocKind, FrameInfo, HeapModel, HeapModelBuilder, Metric, SortStrategy, StackId,
};
use memlens_server::heap::request::{
    ClassifierList, GrowthRequest, TimelineRequest, TreeRequest, Window,
};
use memlens_server::protocol::to_json;
use memlens_server::{Engine, EngineOptions};

const SPACING_NS: u64 = 1_000;
/// The budget for one step's data.
const BUDGET: Duration = Duration::from_millis(50);

fn main() {
    let allocations: u64 = std::env::var("MEMLENS_BENCH_ALLOCATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let started = Instant::now();
    let model = generate(allocations);
    println!(
        "model: {} allocations built in {:.2?}",
        model.len(),
        started.elapsed()
    );
    let (engine, took) = timed(|| Engine::new(&model, None, EngineOptions::default()));
    let mut engine = engine.expect("default options are valid");
    println!(
        "engine start (snapshot times): {took:.2?}, {} snapshot times",
        engine.snapshots().len()
    );
    for chain in ["site,thread", "thread,call-path"] {
        measure_steps(&mut engine, &model, chain);
    }
}

/// One-time costs and step times for the classifier list `chain`.
fn measure_steps(engine: &mut Engine<'_>, model: &HeapModel, chain: &str) {
    println!("-- by {chain}");
    let by = ClassifierList::parse(chain, Vec::new()).unwrap();
    let request = |times: Vec<u64>| TreeRequest {
        by: by.clone(),
        times,
        metric: Metric::Bytes,
        sort: SortStrategy::AbsoluteGrowth,
        prune: true,
        path: None,
        depth: None,
        window: None,
    };
    let first_request = request(Vec::new());
    let (first, took) = timed(|| engine.tree(&first_request).map(|a| to_json(&a).len()));
    println!(
        "first tree request (builds the series over every snapshot time): {took:.2?}, {} KiB of JSON",
        first.expect("the default tree") / 1024
    );
    let (_, took) = timed(|| {
        engine
            .timeline(TimelineRequest { points: 600 })
            .map(|t| to_json(t).len())
    });
    println!("timeline, 600 buckets: {took:.2?}");
    let (_, took) = timed(|| {
        engine
            .growth(&GrowthRequest {
                by: by.clone(),
                top: 20,
                window: None,
            })
            .map(|g| to_json(&g).len())
    });
    println!("growth ranking: {took:.2?}");

    let snapshot_times: Vec<u64> = engine.snapshots().iter().map(|s| s.time_ns).collect();
    let mut cached = Vec::new();
    let mut nodes = 0;
    for &t in &snapshot_times {
        let step = request(vec![t]);
        let (json, took) = timed(|| to_json(&engine.tree(&step).unwrap()));
        nodes = nodes.max(json.matches("\"key\"").count());
        cached.push(took);
    }
    let end = model.run().end_ns;
    let mut fresh = Vec::new();
    let mut upkeep = Vec::new();
    for i in 0..40u64 {
        // Times between the snapshot points, spread over the run.
        let t = end / 41 * (i + 1) + 12_345;
        let step = request(vec![t]);
        let (_, took) = timed(|| to_json(&engine.tree(&step).unwrap()));
        fresh.push(took);
        // What the server runs after sending each answer, before the next request.
        let (worked, took) = timed(|| engine.maintain().unwrap());
        if worked {
            upkeep.push(took);
        }
    }
    report("step to a snapshot time (cached series)", &mut cached);
    report(
        "step to a new time (add_time + order + prune + JSON)",
        &mut fresh,
    );
    if !upkeep.is_empty() {
        report(
            "upkeep after an answer (probe series started afresh)",
            &mut upkeep,
        );
    }
    println!("largest tree sent: {nodes} nodes");

    // Brushing a window on the timeline: its own snapshot times, growth and order.
    let window = Some(Window {
        from_ns: end / 4,
        to_ns: end / 2,
    });
    let (_, took) = timed(|| {
        let brushed = TreeRequest {
            window,
            ..request(Vec::new())
        };
        to_json(&engine.tree(&brushed).unwrap()).len()
    });
    println!("brush a window: its first tree request (a new series): {took:.2?}");
    let (_, took) = timed(|| {
        let brushed = GrowthRequest {
            by: by.clone(),
            top: 20,
            window,
        };
        to_json(&engine.growth(&brushed).unwrap()).len()
    });
    println!("brush a window: growth ranking within it: {took:.2?}");
}

fn report(what: &str, samples: &mut [Duration]) {
    samples.sort();
    let median = samples[samples.len() / 2];
    let worst = samples[samples.len() - 1];
    println!(
        "{what}: median {median:.2?}, worst {worst:.2?} over {} steps; budget {BUDGET:?} → worst/budget = {:.2}",
        samples.len(),
        worst.as_secs_f64() / BUDGET.as_secs_f64()
    );
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let value = f();
    (value, started.elapsed())
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

fn generate(allocations: u64) -> HeapModel {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut b = HeapModelBuilder::new();
    b.reserve(allocations as usize);
    b.start(0);
    let frames: Vec<_> = (0..300)
        .map(|i| {
            b.add_frame(FrameInfo {
                function: &format!("module{}::function_{i}", i % 3),
                file: "src/lib.rs",
                line: i,
                module: &format!("/usr/lib/libmodule{}.so", i % 3),
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
    // Pending frees: (time, address).
    let mut pending: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
    for i in 0..allocations {
        let t = i * SPACING_NS;
        while let Some(&Reverse((when, addr))) = pending.peek() {
            if when > t {
                break;
            }
            pending.pop();
            b.free(when, 0, addr);
        }
        let addr = 0x1000_0000 + i * 16;
        let size = 16u64 << rng.below(12);
        let size = size + rng.below(size);
        // Sites with a heavy tail: a few stacks allocate most.
        let stack = stacks[(rng.below(2_000) * rng.below(2_000) / 2_000) as usize];
        let tid = 1000 + rng.below(8);
        b.alloc(t, tid, addr, size, stack, AllocKind::Malloc);
        let fate = rng.below(100);
        if fate < 85 {
            pending.push(Reverse((t + 1 + rng.below(100_000), addr)));
        } else if fate < 98 {
            pending.push(Reverse((t + 1 + rng.below(2_000_000_000), addr)));
        }
    }
    let end = allocations * SPACING_NS;
    while let Some(Reverse((when, addr))) = pending.pop() {
        if when < end {
            b.free(when, 0, addr);
        }
    }
    b.end(end)
}
