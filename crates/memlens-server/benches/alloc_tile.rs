//! How long the viewer waits for one allocation-map tile (DESIGN §8: a 256×256 tile at
//! any zoom ≤ 50 ms), measured through the same [`AllocLens::answer`] call the server
//! makes for `api/alloc/tile`: the index query, formula (1) with cushions, and PNG
//! encoding. Every tile is asked for once with a fresh bias, so nothing comes from the
//! lens's cache.
//!
//! The model is deterministic (xorshift, fixed seed): `MEMLENS_BENCH_BLOCKS` blocks
//! (default 10 M) from 4 threads over 300 sites, sizes log-uniform in 16 B–4 KiB, one
//! event every 100 ns; 90 % of blocks live ~50 events, 9 % up to a tenth of the run, 1 %
//! are never freed, and freed addresses are reused LIFO per size class, so blocks pack
//! densely as a real heap's do.
//!
//! Printed, per zoom level z (tiles 2^-z of the run and of the axis on each side): the
//! median and worst tile time, as a ratio to the 50 ms budget, and the share of it the
//! PNG encoding costs (lens answer vs the engine's `render` of the same window).
//!
//! Run: `cargo bench -p memlens-server --bench alloc_tile`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use memlens_alloc::{
    AllocEvent, AllocModel, AllocModelBuilder, FreeEvent, ProcessInfo, RenderOptions, render,
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
        .map(|i| b.site(&format!("site_{i} (bench.c:{i})")))
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

fn main() {
    let blocks: u64 = std::env::var("MEMLENS_BENCH_BLOCKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let started = Instant::now();
    let lens = AllocLens::new(generate(blocks));
    println!(
        "model: {} blocks in {} bins built in {:.2?}",
        lens.model().blocks().len(),
        lens.model().bins().len(),
        started.elapsed()
    );
    println!(
        "{:>5} {:>10} {:>10} {:>12} {:>10}",
        "zoom", "median", "worst", "÷ 50 ms", "PNG share"
    );
    let mut rng = Rng(42);
    let mut overall = Vec::new();
    for z in [0u32, 2, 4, 6, 8, 10, 12, 16] {
        let mut lens_times = Vec::new();
        let mut engine_times = Vec::new();
        for k in 0..9u64 {
            let n = 1u64 << z;
            let (x, y) = (rng.next() % n, rng.next() % n);
            let alpha = format!("0.{}", 300 + z * 10 + k as u32);
            let q: HashMap<String, String> = [
                ("zx", z.to_string()),
                ("zy", z.to_string()),
                ("x", x.to_string()),
                ("y", y.to_string()),
                ("alpha", alpha.clone()),
                ("color", "site".to_owned()),
            ]
            .into_iter()
            .map(|(a, b)| (a.to_owned(), b))
            .collect();
            let started = Instant::now();
            let body = lens.answer("tile", &q).expect("a tile");
            lens_times.push(started.elapsed());
            assert_eq!(body.content_type, "image/png");
            let view = tile_window(lens.model(), z, z, x, y, 256).unwrap();
            let options = RenderOptions {
                alpha: alpha.parse().unwrap(),
                color_by: memlens_alloc::ColorBy::Site,
                ..RenderOptions::default()
            };
            let started = Instant::now();
            render(lens.model(), &view, &options).unwrap();
            engine_times.push(started.elapsed());
        }
        lens_times.sort();
        engine_times.sort();
        let median = lens_times[lens_times.len() / 2];
        let worst = *lens_times.last().unwrap();
        let engine = engine_times[engine_times.len() / 2];
        let png_share = 1.0 - engine.as_secs_f64() / median.as_secs_f64().max(1e-9);
        println!(
            "{z:>5} {:>10.2?} {:>10.2?} {:>12.2} {:>9.0}%",
            median,
            worst,
            median.as_secs_f64() / BUDGET.as_secs_f64(),
            100.0 * png_share.max(0.0)
        );
        overall.extend(lens_times);
    }
    overall.sort();
    let worst = *overall.last().unwrap();
    println!(
        "all zooms: median {:.2?}, worst {:.2?} = {:.2}× the 50 ms budget",
        overall[overall.len() / 2],
        worst,
        worst.as_secs_f64() / BUDGET.as_secs_f64()
    );
}
