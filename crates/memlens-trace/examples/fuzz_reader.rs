//! A bounded mutation fuzzer for the trace reader, run by `./test.sh`:
//! builds real traces, damages them in many ways (bit flips, byte runs,
//! truncation, chunk splices, random garbage) and reads each one back through
//! every entry point (index, metadata, time merge, dump, the cache lens's
//! reference blocks). Any panic fails.
//! (`fuzz/` has the coverage-guided cargo-fuzz target for longer runs.)
//!
//! Usage: `cargo run --release -p memlens-trace --example fuzz_reader -- [ITERATIONS]`

use memlens_trace::refs::{RefKind, RefRecord, ReferenceWriter, read_references};
use memlens_trace::{
    AllocFn, ClockSource, Event, EventStream, Mapping, Meta, Metadata, ProcessInfo, TraceFile,
    TraceWriter, Unmapping,
};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seed_trace(rng: &mut Rng) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), rng.below(2) == 0)
        .expect("writer")
        .with_chunk_bytes(64 + rng.below(4000));
    w.meta(&Meta::Process(ProcessInfo {
        pid: 1,
        ppid: 0,
        exe: "/bin/x".into(),
        cmdline: vec!["x".into()],
        start_unix_ns: 0,
        clock: ClockSource::Tsc,
        unwinder: "fp".into(),
        recorder: "fuzz".into(),
    }))
    .expect("meta");
    let mut live: Vec<(u32, u64)> = Vec::new();
    let mut t = 0;
    // Half the seeds carry allocator latencies (the optional columns).
    let latencies = rng.below(2) == 0;
    // Half carry free stacks (one more optional column) and mappings.
    let free_stacks = rng.below(2) == 0;
    for i in 0..(200 + rng.below(3000)) {
        t += rng.below(500) as u64;
        let tid = 1 + rng.below(3) as u32;
        if i % 17 == 0 {
            let ip = rng.next();
            w.meta(&Meta::StackNode {
                id: 1 + (i / 17) as u32,
                parent: (i / 17) as u32,
                ip,
            })
            .expect("meta");
            // Java-style records: a named frame, a type and a typed stack.
            if i % 34 == 0 {
                w.meta(&Meta::FrameName {
                    ip,
                    function: format!("com.example.C.m{i}"),
                    file: "C.java".into(),
                    line: i as u32,
                })
                .expect("meta");
                w.meta(&Meta::TypeName {
                    id: 1 + (i / 34) as u32,
                    name: format!("T{i}[]"),
                })
                .expect("meta");
                w.meta(&Meta::TypedStack {
                    id: 100_000 + i as u32,
                    stack: 1 + (i / 17) as u32,
                    type_id: 1 + (i / 34) as u32,
                })
                .expect("meta");
            }
        }
        if free_stacks && i % 23 == 0 {
            let (addr, len) = (0x7f00_0000_0000 + 4096 * rng.below(1000) as u64, 4096 * 8);
            w.meta(&Meta::Mmap(Mapping {
                t,
                tid,
                addr,
                len,
                prot: 3,
                flags: 0x22,
                file: rng.below(2) == 0,
                remap: rng.below(5) == 0,
                stack: rng.below(50) as u32,
            }))
            .expect("meta");
            w.meta(&Meta::Munmap(Unmapping {
                t: t + 1,
                tid,
                addr: addr + 4096,
                len: 4096 * rng.below(9) as u64,
            }))
            .expect("meta");
        }
        let e = if live.is_empty() || rng.below(3) != 0 {
            let addr = (0x5000_0000 + rng.below(1 << 20) as u64)
                & !(if rng.below(9) == 0 { 0 } else { 15 });
            live.push((tid, addr));
            Event::Alloc {
                t,
                tid,
                addr,
                size: rng.below(70_000) as u64,
                stack: rng.below(50) as u32,
                func: AllocFn::ALL[rng.below(7)],
            }
        } else {
            let (tid, addr) = live.swap_remove(rng.below(live.len()));
            if rng.below(4) == 0 {
                let new_addr = addr + 16 * rng.below(100) as u64;
                live.push((tid, new_addr));
                Event::Realloc {
                    t,
                    tid,
                    old_addr: addr,
                    new_addr,
                    size: rng.below(5000) as u64,
                    stack: 1,
                }
            } else {
                Event::Free {
                    t,
                    tid,
                    addr,
                    stack: if free_stacks { rng.below(50) as u32 } else { 0 },
                }
            }
        };
        if latencies {
            let ns = match rng.below(20) {
                0 => None,
                1 => Some(rng.next() as u32),
                _ => Some(rng.below(300) as u32),
            };
            w.event_with_latency(&e, ns).expect("event");
        } else {
            w.event(&e).expect("event");
        }
    }
    if rng.below(2) == 0 {
        write_references(rng, &mut w);
    }
    w.finish().expect("finish")
}

/// Writes a cache-lens reference stream: strided and random addresses, named
/// regions and labels, every kind and size, small and large label ids.
fn write_references(rng: &mut Rng, w: &mut TraceWriter<Vec<u8>>) {
    const KINDS: [RefKind; 4] = [
        RefKind::Read,
        RefKind::Write,
        RefKind::Modify,
        RefKind::Instruction,
    ];
    let mut refs = ReferenceWriter::new();
    let (mut addr, mut label, mut region) = (0x1000u64, 0u16, 0u16);
    for i in 0..(100 + rng.below(40_000)) {
        if i % 5000 == 0 {
            region += 1;
            let start = 0x1000 * u64::from(region);
            refs.region(w, region, start, 0x1000, &format!("r{region}"))
                .expect("region");
            label = if rng.below(2) == 0 {
                rng.below(100) as u16
            } else {
                rng.next() as u16
            };
            refs.label(w, label, &format!("l{label}")).expect("label");
        }
        addr = match rng.below(8) {
            0 => rng.next(),
            _ => addr.wrapping_add(8),
        };
        let record = RefRecord {
            addr,
            size: [1, 4, 8, 64, 300][rng.below(5)],
            kind: KINDS[rng.below(4)],
            region,
            label,
        };
        refs.reference(w, record).expect("reference");
    }
    refs.finish(w).expect("references");
}

fn mutate(rng: &mut Rng, mut b: Vec<u8>) -> Vec<u8> {
    for _ in 0..1 + rng.below(4) {
        if b.is_empty() {
            break;
        }
        match rng.below(6) {
            0 => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(b.len());
                let n = rng.below(32).min(b.len() - i);
                let v = rng.next() as u8;
                b[i..i + n].iter_mut().for_each(|x| *x = v);
            }
            2 => b.truncate(rng.below(b.len())),
            3 => {
                let i = rng.below(b.len());
                let j = rng.below(b.len());
                let n = rng.below(200).min(b.len() - i.max(j));
                let chunk: Vec<u8> = b[j..j + n].to_vec();
                b.splice(i..i, chunk);
            }
            4 => {
                let i = rng.below(b.len());
                let extra: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
                b.splice(i..i, extra);
            }
            _ => {
                // Damage a payload byte right after a chunk header.
                if let Some(p) = b.windows(4).position(|w| w == b"MLCK") {
                    let i = (p + 48 + rng.below(64)).min(b.len() - 1);
                    b[i] = rng.next() as u8;
                }
            }
        }
    }
    b
}

fn read_all(path: &std::path::Path) {
    if let Ok(trace) = TraceFile::open(path) {
        let mut damage = Vec::new();
        let _ = Metadata::load(&trace, &mut damage);
        let mut stream = EventStream::new(&trace);
        while let Some((_, latency)) = stream.next_with_latency() {
            assert!(latency.is_none_or(|ns| ns <= memlens_trace::columns::MAX_LATENCY_NS));
        }
        let _ = stream.take_damage();
        let mut sink = std::io::sink();
        let _ = memlens_trace::dump::dump(&trace, &mut sink);
        // Through the block decoder the simulator uses (its unchecked loop is
        // compared with the checked one on damaged blocks in `refs/block.rs`).
        let _ = read_references(&trace, &mut |_| {});
    }
}

fn main() {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    let dir = std::env::temp_dir().join(format!("memlens-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("case.mlens");
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut seed = seed_trace(&mut rng);
    for i in 0..iterations {
        if i % 200 == 0 {
            seed = seed_trace(&mut rng);
        }
        let case = mutate(&mut rng, seed.clone());
        std::fs::write(&path, &case).expect("write case");
        let result = std::panic::catch_unwind(|| read_all(&path));
        if result.is_err() {
            let keep = dir.join(format!("crash-{i}.mlens"));
            std::fs::write(&keep, &case).ok();
            eprintln!(
                "fuzz_reader: the reader panicked; input kept at {}",
                keep.display()
            );
            std::process::exit(1);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    println!("fuzz_reader: {iterations} damaged traces read without a panic");
}
