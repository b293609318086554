//! Throughput benchmark of the cache engine (run by `bench/cache/run.sh`).
//!
//! `cache_bench write-trace FILE [REFS]` writes the benchmark trace: the first REFS
//! (default 10,000,000) references of the standard 256×256 double matrix multiply,
//! as 9-byte records (little-endian u64 address, then 0 for a load or 1 for a store),
//! so that `pycachesim_bench.py` replays exactly the same references.
//!
//! `cache_bench run FILE` measures, on that trace and a 2-level LRU hierarchy (L1 32
//! KiB 8-way, L2 256 KiB 8-way, 64-byte lines, non-inclusive, write-back):
//! (a) the statistics-only path, (b) the full event stream consumed, and (c) Lackey
//! text import in MB/s (the trace rendered as Lackey text in memory, with one
//! instruction-fetch line per data line as in real Lackey output). It prints
//! `key value` lines for the script to read.
//!
//! `cache_bench stats FILE` runs (a) once, for whole-process timing with hyperfine.
//!
//! `cache_bench simulation [N [RUNS]]` measures the kernel of `memlens cache
//! simulate`: the [`Simulation`] (statistics per level and region, outcome codes for
//! the windowed miss rates and temperature, window 1000) over the whole N×N matmul
//! stream (N = 256 by default) with its regions and labels, generated in memory (no
//! decoding), then the summary; the best of RUNS (5) runs.

use std::fs;
use std::io::Write;
use std::time::Instant;

use memlens_cache::import::{LackeyOptions, LackeyReader};
use memlens_cache::kernels::{Kernel, KernelParams};
use memlens_cache::{
    AccessKind, Event, EventBuffer, EventSink, Hierarchy, HierarchyConfig, LevelConfig, Outcome,
    Reference, Simulation, Temperature, TemperatureConfig,
};

fn hierarchy() -> Hierarchy {
    Hierarchy::new(&HierarchyConfig::new(vec![
        LevelConfig::new("L1", 32 * 1024, 8, 64),
        LevelConfig::new("L2", 256 * 1024, 8, 64),
    ]))
    .expect("the benchmark hierarchy is valid")
}

fn matmul(n: u64) -> std::io::Result<Kernel> {
    Kernel::new(
        "matmul",
        Some("standard"),
        KernelParams {
            n,
            ..KernelParams::default()
        },
    )
    .map_err(|e| std::io::Error::other(e.to_string()))
}

fn simulation(n: u64, runs: usize) -> std::io::Result<()> {
    let references = matmul(n)?.references();
    let n = references.len() as f64;
    let config = HierarchyConfig::new(vec![
        LevelConfig::new("L1", 32 * 1024, 8, 64),
        LevelConfig::new("L2", 256 * 1024, 8, 64),
    ]);
    let mut l1_misses = 0;
    let (wall, cpu) = best_rates(runs, n, || {
        let mut simulation = Simulation::new(&config, 1000).expect("a valid hierarchy");
        simulation.access_all(&references);
        l1_misses = simulation.summary().levels[0].activity.counters.misses();
    });
    println!("references {}\nl1_misses {l1_misses}", references.len());
    println!("simulation_refs_per_s {wall:.0}\nsimulation_refs_per_cpu_s {cpu:.0}");
    Ok(())
}

fn write_trace(path: &str, count: usize) -> std::io::Result<()> {
    let kernel = matmul(256)?;
    let mut bytes = Vec::with_capacity(count * 9);
    let mut written = 0;
    kernel.generate(|r| {
        if written < count {
            bytes.extend_from_slice(&r.addr.to_le_bytes());
            bytes.push(u8::from(r.kind == AccessKind::Write));
            written += 1;
        }
    });
    fs::write(path, bytes)
}

fn read_trace(path: &str) -> std::io::Result<Vec<Reference>> {
    let bytes = fs::read(path)?;
    Ok(bytes
        .chunks_exact(9)
        .map(|record| {
            let mut addr = [0u8; 8];
            addr.copy_from_slice(&record[..8]);
            let addr = u64::from_le_bytes(addr);
            if record[8] == 1 {
                Reference::write(addr, 8)
            } else {
                Reference::read(addr, 8)
            }
        })
        .collect())
}

/// Consumes the full event stream as a viewer's visitor would: every event is read
/// (folded into a checksum) as it arrives, and the cache temperature is kept.
struct Consumer {
    temperature: Temperature,
    events: u64,
    checksum: u64,
}

impl EventSink for Consumer {
    #[inline]
    fn event(&mut self, event: Event) {
        self.events += 1;
        self.checksum = self.checksum.wrapping_add(match event {
            Event::Probe(p) => u64::from(p.hit) + p.line_addr,
            Event::Fill(f) => u64::from(f.way) + f.line_addr,
            Event::Evict(e) => e.line_addr ^ u64::from(e.dirty),
            Event::Position(p) => u64::from(p.rank) + u64::from(p.set),
        });
    }

    #[inline]
    fn end_reference(&mut self, reference: &Reference, outcome: &Outcome) {
        self.temperature.end_reference(reference, outcome);
    }
}

/// Collects each reference's events into a reusable buffer and then reads them, for
/// consumers that prefer a list to a visitor.
struct BufferedConsumer {
    buffer: EventBuffer,
    checksum: u64,
}

impl EventSink for BufferedConsumer {
    #[inline]
    fn begin_reference(&mut self, reference: &Reference) {
        self.buffer.begin_reference(reference);
    }

    #[inline]
    fn event(&mut self, event: Event) {
        self.buffer.event(event);
    }

    #[inline]
    fn end_reference(&mut self, _reference: &Reference, _outcome: &Outcome) {
        for event in self.buffer.events() {
            if let Event::Fill(f) = event {
                self.checksum = self.checksum.wrapping_add(f.line_addr);
            }
        }
        self.checksum = self
            .checksum
            .wrapping_add(self.buffer.events().len() as u64);
    }
}

/// Returns the CPU time this thread has used, in seconds, where Linux reports it
/// (`/proc/thread-self/schedstat`); on a shared machine it is steadier than wall time.
fn thread_cpu_seconds() -> Option<f64> {
    let text = fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(nanos as f64 / 1e9)
}

/// Times `work` and returns (wall seconds, CPU seconds or wall if unavailable).
fn timed(work: impl FnOnce()) -> (f64, f64) {
    let cpu_start = thread_cpu_seconds();
    let start = Instant::now();
    work();
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, thread_cpu_seconds()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => wall,
    };
    (wall, cpu)
}

fn lackey_text(trace: &[Reference]) -> Vec<u8> {
    let mut text = Vec::with_capacity(trace.len() * 32);
    text.extend_from_slice(b"==1== Lackey, an example Valgrind tool\n");
    for (i, r) in trace.iter().enumerate() {
        let _ = writeln!(text, "I  {:08x},4", 0x10_9150 + (i % 64) * 4);
        let _ = writeln!(
            text,
            " {} {:08x},{}",
            r.kind.lackey_letter(),
            r.addr,
            r.size
        );
    }
    text
}

/// Runs `work` `runs` times and returns the best (wall, CPU) rates of `amount / s`.
fn best_rates(runs: usize, amount: f64, mut work: impl FnMut()) -> (f64, f64) {
    let mut best = (0.0f64, 0.0f64);
    for _ in 0..runs {
        let (wall, cpu) = timed(&mut work);
        best = (best.0.max(amount / wall), best.1.max(amount / cpu));
    }
    best
}

fn run(path: &str) -> std::io::Result<()> {
    let trace = read_trace(path)?;
    let n = trace.len() as f64;
    println!("references {}", trace.len());

    let mut stats_cache = hierarchy();
    let (wall, cpu) = best_rates(5, n, || {
        let mut cache = hierarchy();
        cache.run(&trace);
        stats_cache = cache;
    });
    let stats = stats_cache.statistics();
    let (l1, l2) = (stats.level(0), stats.level(1));
    println!("l1_hits {}\nl1_misses {}", l1.read_hits, l1.misses());
    println!(
        "l2_hits {}\nl2_misses {}",
        l2.read_hits,
        l2.misses() + l2.writeback_misses
    );
    println!("stats_refs_per_s {wall:.0}\nstats_refs_per_cpu_s {cpu:.0}");

    let (mut checksum, mut events) = (0, 0);
    let (wall, cpu) = best_rates(3, n, || {
        let mut cache = hierarchy();
        let mut consumer = Consumer {
            temperature: Temperature::new(&TemperatureConfig::standard(2)),
            events: 0,
            checksum: 0,
        };
        cache.run_with(&trace, &mut consumer);
        checksum = consumer.checksum ^ consumer.temperature.value(0).to_bits();
        events = consumer.events;
    });
    println!("events_refs_per_s {wall:.0}\nevents_refs_per_cpu_s {cpu:.0}");
    println!("events_per_reference {:.2}", events as f64 / n);
    println!("events_checksum {checksum}");
    let (wall, cpu) = best_rates(3, n, || {
        let mut cache = hierarchy();
        let mut consumer = BufferedConsumer {
            buffer: EventBuffer::new(),
            checksum: 0,
        };
        cache.run_with(&trace, &mut consumer);
        checksum = consumer.checksum;
    });
    println!("buffered_events_refs_per_s {wall:.0}\nbuffered_events_refs_per_cpu_s {cpu:.0}");

    let text = lackey_text(&trace);
    let mut parsed = 0;
    let megabytes = text.len() as f64 / 1e6;
    let (wall, cpu) = best_rates(3, megabytes, || {
        let reader = LackeyReader::new(&text[..], LackeyOptions::default());
        parsed = reader.filter(Result::is_ok).count();
    });
    println!("lackey_bytes {}", text.len());
    println!("lackey_refs {parsed}");
    println!("lackey_mb_per_s {wall:.1}\nlackey_mb_per_cpu_s {cpu:.1}");
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("write-trace"), Some(path)) => {
            let count = args
                .get(3)
                .and_then(|c| c.parse().ok())
                .unwrap_or(10_000_000);
            write_trace(path, count)
        }
        (Some("run"), Some(path)) => run(path),
        (Some("simulation"), n) => {
            let n = n.and_then(|n| n.parse().ok()).unwrap_or(256);
            let runs = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(5);
            simulation(n, runs)
        }
        (Some("stats"), Some(path)) => read_trace(path).map(|trace| {
            let mut cache = hierarchy();
            let start = Instant::now();
            cache.run(&trace);
            eprintln!(
                "{:.0} refs/s",
                trace.len() as f64 / start.elapsed().as_secs_f64()
            );
        }),
        _ => {
            eprintln!(
                "usage: cache_bench write-trace FILE [REFS] | run FILE | stats FILE | simulation [N [RUNS]]"
            );
            return std::process::ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cache_bench: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
