//! How long the viewer waits for one allocation-map tile (DESIGN §8: a 256×256 tile at
//! any zoom ≤ 50 ms), measured through the same [`AllocLens::answer`] call the server
//! makes for `api/alloc/tile`: the index query, formula (1) with cushions, and PNG
//! encoding. The lens keeps no answers (cache budget 0), so every tile is drawn.
//!
//! The model is deterministic (xorshift, fixed seed): `MEMLENS_BENCH_BLOCKS` blocks
//! (default 10 M) from 4 threads over 300 sites, sizes log-uniform in 16 B–4 KiB, one
//! event every 100 ns; 90 % of blocks live ~50 events, 9 % up to a tenth of the run, 1 %
//! are never freed, and freed addresses are reused LIFO per size class, so blocks pack
//! densely as a real heap's do.
//!
//! Printed: how long the overview (the cell sums behind coarse tiles) takes to prepare,
//! for the first option set (geometry and sums) and for another one (sums only); the
//! first coarse tile of a new option set (its sums prepared by the request, the
//! geometry being built); the first tile after switching to each of three new
//! colourings (size, age, thread: every block's colour is computed first) and the next
//! one; then, per zoom level pair zx/zy (tiles 2^-zx of the run,
//! 2^-zy of the axis), the median and worst wall time of 9 tiles with the prepared option
//! set, the thread's mean CPU time per tile, the ratio to the 50 ms budget, and the
//! baseline: the engine's plain `render` of the same windows (no overview, no PNG), as
//! the median wall time and the speed-up over it. The load average is printed too:
//! the machine may be shared.
//!
//! Run: `cargo bench -p memlens-server --bench alloc_tile`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use memlens_alloc::{
    AllocEvent, AllocModel, AllocModelBuilder, ColorBy, FreeEvent, ProcessInfo, RenderOptions,
    render,
};
use memlens_server::alloc::query::tile_window;
use memlens_server::{AllocLens, LensApi};

const BUDGET: Duration = Duration::from_millis(50);
const CLASSES: [u64; 12] = [16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 2048, 4096];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn generate(blocks: u64) -> AllocModel {
    let mut b = AllocModelBuilder::new();
    b.reserve(blocks as usize);
    let p = b.add_process(ProcessInfo {
        pid: 1,
        ppid: 0,
        name: "bench".to_owned(),
    });
    let threads: Vec<_> = (0..4).map(|i| b.thread(p, 1 + i, "")).collect();
    let sites: Vec<_> = (0..300)
        .map(|i| {
            b.site(&memlens_vocab::Site::at(
                &format!("site_{i}"),
                "bench.c",
                i as u32,
            ))
        })
        .collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Per class: free slots (LIFO) and the next fresh slot.
    let mut free: Vec<Vec<u64>> = vec![Vec::new(); CLASSES.len()];
    let mut next = vec![0u64; CLASSES.len()];
    let base = 0x5555_0000_0000u64;
    let class_span = 1u64 << 32;
    // Pending frees by due event number.
    let mut due: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, usize)>> =
        Default::default();
    let mut t = 0u64;
    let mut event = 0u64;
    for _ in 0..blocks {
        while let Some(&std::cmp::Reverse((when, addr, class))) = due.peek() {
            if when > event {
                break;
            }
            due.pop();
            t += 100;
            event += 1;
            b.free(FreeEvent {
                t,
                thread: threads[(addr as usize >> 4) % 4],
                addr,
                site: memlens_alloc::SiteId::UNKNOWN,
                latency_ns: None,
            });
            free[class].push(addr);
        }
        let r = rng.next();
        let class = (r % CLASSES.len() as u64) as usize;
        let size = CLASSES[class] - (r >> 20) % 8;
        let addr = free[class].pop().unwrap_or_else(|| {
            next[class] += 1;
            base + class as u64 * class_span + (next[class] - 1) * (CLASSES[class] + 16)
        });
        t += 100;
        event += 1;
        let thread = threads[(addr as usize >> 4) % 4];
        b.alloc(AllocEvent {
            t,
            thread,
            addr,
            size,
            site: sites[((r >> 32) % 300) as usize],
            latency_ns: None,
        });
        let life = match (r >> 40) % 100 {
            0 => continue,
            1..=9 => 1 + (r >> 48) % (blocks / 10).max(1),
            _ => 1 + (r >> 48) % 100,
        };
        due.push(std::cmp::Reverse((event + life, addr, class)));
    }
    b.finish(t + 100)
}

/// CPU time of this thread so far, ns (Linux; `None` elsewhere).
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn query(z: (u32, u32), x: u64, y: u64, alpha: &str) -> HashMap<String, String> {
    [
        ("zx", z.0.to_string()),
        ("zy", z.1.to_string()),
        ("x", x.to_string()),
        ("y", y.to_string()),
        ("alpha", alpha.to_owned()),
        ("color", "site".to_owned()),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_owned(), b))
    .collect()
}

fn options(alpha: &str) -> RenderOptions {
    RenderOptions {
        alpha: alpha.parse().unwrap(),
        color_by: ColorBy::Site,
        ..RenderOptions::default()
    }
}

fn main() {
    let blocks: u64 = std::env::var("MEMLENS_BENCH_BLOCKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    println!("load average {} at the start", load_average());
    let started = Instant::now();
    let model = generate(blocks);
    println!(
        "model: {} blocks in {} bins built in {:.2?}",
        model.blocks().len(),
        model.bins().len(),
        started.elapsed()
    );
    // The lens starts preparing the default options' overview in the background.
    let lens = AllocLens::with_cache_budget(model, 0);
    let alpha = "0.5";
    let started = Instant::now();
    assert!(lens.model().prepare_overview(&options(alpha)).unwrap());
    println!(
        "overview: first option set (α {alpha}, colour by site) ready after {:.2?} (geometry and sums)",
        started.elapsed()
    );
    let started = Instant::now();
    lens.model().prepare_overview(&options("0.45")).unwrap();
    println!(
        "overview: another option set (α 0.45) ready after {:.2?} (sums only)",
        started.elapsed()
    );
    // A coarse tile with an option set never asked for: the request prepares its sums.
    let started = Instant::now();
    lens.answer("tile", &query((0, 0), 0, 0, "0.55")).unwrap();
    println!(
        "first coarse tile of a new option set (its sums prepared first): {:.2?}",
        started.elapsed()
    );
    while !lens.model().overview_ready(&options("0.55")) {
        std::thread::sleep(Duration::from_millis(10));
    }
    // The first tiles after switching to colourings never asked for: each computes
    // every block's colour first (DESIGN §8: any tile ≤ 100 ms on opening).
    for color in ["size", "age", "thread"] {
        let mut q = query((0, 0), 0, 0, alpha);
        q.insert("color".to_owned(), color.to_owned());
        let started = Instant::now();
        lens.answer("tile", &q).unwrap();
        let first = started.elapsed();
        q.insert("x".to_owned(), "1".to_owned());
        q.insert("zx".to_owned(), "1".to_owned());
        let started = Instant::now();
        lens.answer("tile", &q).unwrap();
        println!(
            "first tile coloured by {color}: {first:.2?} (÷ 100 ms: {:.2}), the next: {:.2?}",
            first.as_secs_f64() / 0.1,
            started.elapsed()
        );
    }
    // Where such a first tile's time goes, on two colourings not used yet: every
    // block's colour (a 1 × 1 picture computes them: its time less that of drawing
    // it again), then drawing the whole run's tile the plain way.
    for color_by in [ColorBy::Waste, ColorBy::Process] {
        let options = RenderOptions {
            color_by,
            ..options(alpha)
        };
        let whole = tile_window(lens.model(), 0, 0, 0, 0, 256).unwrap();
        let dot = memlens_alloc::View {
            width: 1,
            height: 1,
            ..whole
        };
        let started = Instant::now();
        render(lens.model(), &dot, &options).unwrap();
        let first_dot = started.elapsed();
        // The same picture again, the colours known: what drawing it takes.
        let started = Instant::now();
        render(lens.model(), &dot, &options).unwrap();
        let colours = first_dot.saturating_sub(started.elapsed());
        let started = Instant::now();
        render(lens.model(), &whole, &options).unwrap();
        println!(
            "  of which, coloured by {color_by:?}: every block's colour {colours:.2?}, the whole run drawn the plain way {:.2?}",
            started.elapsed()
        );
    }
    println!(
        "{:>7} {:>10} {:>10} {:>9} {:>8} {:>12} {:>9}",
        "zx/zy", "median", "worst", "CPU", "÷ 50 ms", "plain render", "speed-up"
    );
    let mut rng = Rng(42);
    let mut overall = Vec::new();
    let levels: [(u32, u32); 18] = [
        (0, 0),
        (1, 1),
        (2, 2),
        (0, 2),
        (2, 0),
        (3, 3),
        (0, 3),
        (3, 0),
        (0, 4),
        (4, 0),
        (0, 6),
        (0, 9),
        (4, 4),
        (6, 6),
        (8, 8),
        (10, 10),
        (12, 12),
        (16, 16),
    ];
    for (zx, zy) in levels {
        let mut lens_times = Vec::new();
        let mut engine_times = Vec::new();
        let mut cpu = Duration::ZERO;
        for _ in 0..9 {
            let (x, y) = (rng.next() % (1 << zx), rng.next() % (1 << zy));
            let q = query((zx, zy), x, y, alpha);
            let cpu0 = thread_cpu_ns();
            let started = Instant::now();
            let body = lens.answer("tile", &q).expect("a tile");
            lens_times.push(started.elapsed());
            if let (Some(a), Some(b)) = (cpu0, thread_cpu_ns()) {
                cpu += Duration::from_nanos(b - a);
            }
            assert_eq!(body.content_type, "image/png");
            let view = tile_window(lens.model(), zx, zy, x, y, 256).unwrap();
            let started = Instant::now();
            render(lens.model(), &view, &options(alpha)).unwrap();
            engine_times.push(started.elapsed());
        }
        lens_times.sort();
        engine_times.sort();
        let median = lens_times[lens_times.len() / 2];
        let worst = *lens_times.last().unwrap();
        let plain = engine_times[engine_times.len() / 2];
        println!(
            "{:>7} {:>10.2?} {:>10.2?} {:>9.2?} {:>8.2} {:>12.2?} {:>8.1}×",
            format!("{zx}/{zy}"),
            median,
            worst,
            cpu / 9,
            median.as_secs_f64() / BUDGET.as_secs_f64(),
            plain,
            plain.as_secs_f64() / median.as_secs_f64().max(1e-9)
        );
        overall.extend(lens_times);
    }
    overall.sort();
    let worst = *overall.last().unwrap();
    println!(
        "all zooms: median {:.2?}, worst {:.2?} = {:.2}× the 50 ms budget; load average {} at the end",
        overall[overall.len() / 2],
        worst,
        worst.as_secs_f64() / BUDGET.as_secs_f64(),
        load_average()
    );
}
