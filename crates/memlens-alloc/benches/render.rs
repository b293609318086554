//! The allocation-map rasterizer on a synthetic 10 M-block model (DESIGN §8: 10 M blocks
//! → 1920×1080 with formula (1) and cushions ≤ 150 ms on one core; a 256×256 tile at any
//! zoom ≤ 50 ms).
//!
//! The model comes from a simulated segregated-fit allocator (deterministic xorshift):
//! 12 size classes of 16 B … 4 KiB, each with its own LIFO slot list in one heap; 90 % of
//! blocks live ~50 events, 9 % up to a tenth of the run, 1 % are never freed; one event
//! every 100 ns. It is built once through the public builder.
//!
//! Named baselines, printed as ratios before divan's table:
//! - `full_frame` against **naive supersampling** (4×4 point samples per pixel, every block
//!   visits each sample it covers: what a renderer without exact coverage or the
//!   difference path does), at the same size and on the same model;
//! - `tile` against a **full scan** (the same rasterizer fed by filtering all 10 M blocks,
//!   i.e. without the time × address index), for tiles at zoom 8, 64 and 512.
//!
//! Each figure is given as the best wall time of several runs and as the thread's mean
//! CPU time per run (from `/proc/thread-self/schedstat` around at least 0.3 s of runs),
//! which a loaded machine's waiting does not inflate; the load average is printed too.
//!
//! Run: `cargo bench -p memlens-alloc --bench render` (see `bench/alloc/README.md`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;
use std::time::Instant;

use memlens_alloc::*;

const BLOCKS: u64 = 10_000_000;
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

/// Runs the allocator simulation; `emit` gets (t, alloc?, class, slot, size).
fn simulate(mut emit: impl FnMut(u64, bool, usize, u64, u64)) -> Vec<u64> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut free_slots: Vec<Vec<u64>> = vec![Vec::new(); CLASSES.len()];
    let mut next = vec![0u64; CLASSES.len()];
    let mut pending: BinaryHeap<Reverse<(u64, usize, u64)>> = BinaryHeap::new();
    for i in 0..BLOCKS {
        let t = i * 100;
        while let Some(&Reverse((tf, c, slot))) = pending.peek() {
            if tf > t {
                break;
            }
            pending.pop();
            emit(tf, false, c, slot, 0);
            free_slots[c].push(slot);
        }
        let r = rng.next();
        let c = ((r >> 8) % 1000) as usize % CLASSES.len();
        let c = if (r >> 20).is_multiple_of(4) {
            c
        } else {
            c % 6
        };
        let size = CLASSES[c] - (r >> 32) % 8;
        let slot = free_slots[c].pop().unwrap_or_else(|| {
            next[c] += 1;
            next[c] - 1
        });
        emit(t, true, c, slot, size);
        let kind = (r >> 40) % 100;
        let life = if kind < 90 {
            100 * (1 + (r >> 48) % 100)
        } else if kind < 99 {
            100 * (1 + (r >> 44) % (BLOCKS / 10))
        } else {
            continue;
        };
        pending.push(Reverse((t + life, c, slot)));
    }
    next
}

fn model() -> &'static AllocModel {
    static MODEL: OnceLock<AllocModel> = OnceLock::new();
    MODEL.get_or_init(|| {
        let started = Instant::now();
        let slots = simulate(|_, _, _, _, _| {});
        let mut base = vec![0x5555_0000_0000u64; CLASSES.len()];
        for c in 1..CLASSES.len() {
            base[c] = base[c - 1] + slots[c - 1] * CLASSES[c - 1] + 4096;
        }
        let mut b = AllocModelBuilder::new();
        b.reserve(BLOCKS as usize);
        let p = b.add_process(ProcessInfo {
            pid: 1,
            ppid: 0,
            name: "synthetic".into(),
        });
        let threads = [
            b.thread(p, 1, "a"),
            b.thread(p, 2, "b"),
            b.thread(p, 3, "c"),
        ];
        simulate(|t, alloc, c, slot, size| {
            let addr = base[c] + slot * CLASSES[c];
            let thread = threads[(slot % 3) as usize];
            if alloc {
                b.alloc(AllocEvent {
                    t,
                    thread,
                    addr,
                    size,
                    site: SiteId::UNKNOWN,
                    latency_ns: None,
                });
            } else {
                b.free(FreeEvent {
                    t,
                    thread,
                    addr,
                    site: SiteId::UNKNOWN,
                    latency_ns: None,
                });
            }
        });
        let m = b.finish(BLOCKS * 100);
        eprintln!(
            "model: {} blocks in {} bins, built in {:.1} s",
            m.blocks().len(),
            m.bins().len(),
            started.elapsed().as_secs_f64()
        );
        m
    })
}

fn options() -> RenderOptions {
    RenderOptions {
        alpha: 0.5,
        cushion: CushionProfile::Plateau,
        color_by: ColorBy::Thread,
        ..RenderOptions::default()
    }
}

/// A 256×256 tile of the whole picture scaled up `zoom` times, around its centre.
fn tile(m: &AllocModel, zoom: u64) -> View {
    let whole = View::whole(m, 1920, 1080);
    let (t0, t1) = (whole.time.start_ns, whole.time.end_ns);
    let (a0, a1) = whole.addr;
    let tw = (t1 - t0) / zoom;
    let aw = (a1 - a0) / zoom;
    let tc = t0 + (t1 - t0) / 2;
    let ac = a0 + (a1 - a0) / 3;
    View {
        time: TimeRange {
            start_ns: tc - tw / 2,
            end_ns: tc + tw / 2,
        },
        addr: (ac - aw / 2, ac + aw / 2),
        width: 256,
        height: 256,
    }
}

/// Baseline: the tile's blocks found by scanning every block.
fn full_scan_tile(m: &AllocModel, v: &View) -> Coverage {
    let mut r = Rasterizer::new(v.width, v.height, 0.5, 3, CushionProfile::Plateau);
    let (t0, t1) = (v.time.start_ns, v.time.end_ns);
    let (a0, a1) = v.addr;
    let sx = f64::from(v.width) / (t1 - t0) as f64;
    let sy = f64::from(v.height) / (a1 - a0) as f64;
    for (i, b) in m.blocks().iter().enumerate() {
        let y0 = m.axis_position(BlockId(i as u32));
        let y1 = y0 + b.reserved;
        if b.t_alloc < t1 && b.t_free > t0 && y0 < a1 && y1 > a0 {
            let c = categorical_color(b.thread.0);
            r.add(
                (b.t_alloc as f64 - t0 as f64) * sx,
                (b.t_free as f64 - t0 as f64) * sx,
                (y0 as f64 - a0 as f64) * sy,
                (y1 as f64 - a0 as f64) * sy,
                &c,
            );
        }
    }
    r.finish()
}

/// Baseline: naive supersampling, 4×4 point samples per pixel.
fn supersample(m: &AllocModel, v: &View) -> Vec<f32> {
    const S: usize = 4;
    let (w, h) = (v.width as usize * S, v.height as usize * S);
    let mut hits = vec![0f32; w * h];
    let (t0, t1) = (v.time.start_ns as f64, v.time.end_ns as f64);
    let (a0, a1) = (v.addr.0 as f64, v.addr.1 as f64);
    let sx = w as f64 / (t1 - t0);
    let sy = h as f64 / (a1 - a0);
    for (i, b) in m.blocks().iter().enumerate() {
        let y0 = m.axis_position(BlockId(i as u32)) as f64;
        let x0 = ((b.t_alloc as f64 - t0) * sx - 0.5).ceil().max(0.0) as usize;
        let x1 = (((b.t_free as f64 - t0) * sx - 0.5).ceil().max(0.0) as usize).min(w);
        let r0 = ((y0 - a0) * sy - 0.5).ceil().max(0.0) as usize;
        let r1 = ((((y0 + b.reserved as f64) - a0) * sy - 0.5).ceil().max(0.0) as usize).min(h);
        for r in r0..r1 {
            for x in x0..x1 {
                hits[r * w + x] += 1.0;
            }
        }
    }
    hits
}

/// CPU time of this thread so far, ns (Linux; `None` elsewhere). The kernel updates
/// it at scheduler ticks, so it is only read around batches of runs.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Calls `f` at least `runs` times and for at least 0.3 s: the best wall time and the
/// mean CPU time per call, ms (CPU as NaN when unknown).
fn time<T>(f: impl Fn() -> T, runs: usize) -> (f64, f64) {
    let mut wall = f64::MAX;
    let started = Instant::now();
    let cpu0 = thread_cpu_ns();
    let mut n = 0;
    while n < runs || started.elapsed().as_secs_f64() < 0.3 {
        let s = Instant::now();
        std::hint::black_box(f());
        wall = wall.min(s.elapsed().as_secs_f64() * 1e3);
        n += 1;
    }
    let cpu = match (cpu0, thread_cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e6 / n as f64,
        _ => f64::NAN,
    };
    (wall, cpu)
}

fn main() {
    let m = model();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!(
        "load average: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let whole = View::whole(m, 1920, 1080);
    let o = options();
    // The first frame computes the colour attribute once per model: not timed.
    render(m, &whole, &o).unwrap();
    let (ours, ours_cpu) = time(|| render(m, &whole, &o).unwrap(), 7);
    let (naive, naive_cpu) = time(|| supersample(m, &whole), 1);
    eprintln!(
        "full frame 1920×1080, {} blocks, α 0.5, plateau cushions: {ours:.1} ms wall, \
         {ours_cpu:.1} ms CPU (naive 4×4 supersampling {naive:.1} ms wall, {naive_cpu:.1} ms CPU: \
         {:.1}× faster in CPU time)",
        m.blocks().len(),
        naive_cpu / ours_cpu
    );
    for zoom in [8, 64, 512] {
        let v = tile(m, zoom);
        let (ours, ours_cpu) = time(|| render(m, &v, &o).unwrap(), 7);
        let (scan, scan_cpu) = time(|| full_scan_tile(m, &v), 3);
        eprintln!(
            "tile 256×256 at zoom {zoom}: {ours:.2} ms wall, {ours_cpu:.2} ms CPU \
             (full scan {scan:.1} ms wall, {scan_cpu:.1} ms CPU: {:.0}× faster in CPU time)",
            scan_cpu / ours_cpu
        );
    }
    divan::main();
}

#[divan::bench(sample_count = 5)]
fn full_frame(bencher: divan::Bencher) {
    let m = model();
    let v = View::whole(m, 1920, 1080);
    let o = options();
    bencher.bench(|| render(m, &v, &o).unwrap());
}

#[divan::bench(args = [8, 64, 512], sample_count = 10)]
fn tile_256(bencher: divan::Bencher, zoom: u64) {
    let m = model();
    let v = tile(m, zoom);
    let o = options();
    bencher.bench(|| render(m, &v, &o).unwrap());
}
