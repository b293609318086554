//! Hit and miss counts per level equal pycachesim's on random traces and random
//! configurations (geometry, LRU/FIFO, write policies, 1–3 levels).
//!
//! The comparable subset and the counter mapping are documented in
//! `pycachesim_oracle.py`. The test skips, with a message, when `python3` or the
//! `cachesim` module is missing; CI installs pycachesim, so it runs there.

use std::io::Write;
use std::process::{Command, Stdio};

use memlens_cache::{
    AccessKind, Hierarchy, HierarchyConfig, Inclusion, LevelConfig, Reference, Replacement,
    WritePolicy,
};

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

struct Case {
    levels: Vec<LevelConfig>,
    sets: Vec<u64>,
    trace: Vec<Reference>,
}

fn random_case(rng: &mut Rng) -> Case {
    let level_count = 1 + rng.below(3) as usize;
    let mut levels = Vec::new();
    let mut sets = Vec::new();
    let mut line = rng.pick(&[16u32, 32, 64]);
    let mut total = 0;
    for i in 0..level_count {
        if i > 0 && rng.chance(30) {
            line = (line * 2).min(128);
        }
        let level_sets = rng.pick(&[1u64, 2, 3, 4, 6, 8, 16, 32, 64]) * (1 << i);
        let ways = rng.pick(&[1u32, 2, 3, 4, 8, 16]);
        let replacement = if rng.chance(50) {
            Replacement::Lru
        } else {
            Replacement::Fifo
        };
        let (policy, allocate) = if rng.chance(70) {
            (WritePolicy::WriteBack, true)
        } else {
            (WritePolicy::WriteThrough, false)
        };
        let size = level_sets * u64::from(ways) * u64::from(line);
        total += size;
        levels.push(
            LevelConfig::new(format!("L{}", i + 1), size, ways, line)
                .with_replacement(replacement)
                .with_writes(policy, allocate),
        );
        sets.push(level_sets);
    }
    // A working set from half the total capacity to four times it, at a 64-bit base.
    let working_set = (total / 2 + rng.below(total * 4)).max(256);
    let base = 0x7f00_0000_0000 + rng.below(1 << 30) * 64;
    let first_is_lru = levels[0].replacement == Replacement::Lru;
    let mut trace = Vec::new();
    let mut cursor = 0;
    while trace.len() < 12_000 {
        let size = rng.pick(&[1u16, 2, 4, 8, 16]);
        for _ in 0..1 + rng.below(300) {
            cursor = match rng.below(10) {
                0..=6 => (cursor + u64::from(size)) % working_set,
                7 | 8 => rng.below(working_set),
                _ => rng.below(working_set.min(512)),
            };
            let addr = base + cursor;
            if first_is_lru {
                trace.push(Reference::read(addr, size));
                if rng.chance(30) {
                    trace.push(Reference::write(addr, size));
                }
            } else if rng.chance(30) {
                trace.push(Reference::write(addr, size));
            } else {
                trace.push(Reference::read(addr, size));
            }
        }
    }
    Case {
        levels,
        sets,
        trace,
    }
}

fn to_json(cases: &[Case]) -> String {
    let mut json = String::from("{\"cases\":[");
    for (c, case) in cases.iter().enumerate() {
        if c > 0 {
            json.push(',');
        }
        json.push_str("{\"levels\":[");
        for (i, level) in case.levels.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            json.push_str(&format!(
                "{{\"name\":\"{}\",\"sets\":{},\"ways\":{},\"line\":{},\"policy\":\"{}\",\"write_back\":{},\"write_allocate\":{}}}",
                level.name,
                case.sets[i],
                level.ways,
                level.line_size,
                if level.replacement == Replacement::Lru { "LRU" } else { "FIFO" },
                level.write_policy == WritePolicy::WriteBack,
                level.write_allocate
            ));
        }
        json.push_str("],\"trace\":[");
        for (i, r) in case.trace.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            let kind = if r.kind == AccessKind::Read { 'L' } else { 'S' };
            json.push_str(&format!("[\"{kind}\",{},{}]", r.addr, r.size));
        }
        json.push_str("]}");
    }
    json.push_str("]}");
    json
}

fn pycachesim_available() -> bool {
    Command::new("python3")
        .args(["-c", "import cachesim"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn hit_and_miss_counts_equal_pycachesims() {
    if !pycachesim_available() {
        eprintln!("SKIPPED: python3 with pycachesim (`pip install pycachesim`) is not available");
        return;
    }
    let mut rng = Rng(2024);
    let cases: Vec<Case> = (0..60).map(|_| random_case(&mut rng)).collect();

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pycachesim_oracle.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 starts");
    let json = to_json(&cases);
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(json.as_bytes())
        .expect("the script reads the cases");
    let output = child.wait_with_output().expect("the script finishes");
    assert!(output.status.success(), "the oracle script failed");
    let expected: Vec<[u64; 4]> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let n: Vec<u64> = line
                .split_whitespace()
                .map(|f| f.parse().expect("a number"))
                .collect();
            [n[0], n[1], n[2], n[3]]
        })
        .collect();

    let mut compared = 0;
    let mut totals = (0u64, 0u64);
    let mut mismatches = Vec::new();
    for (c, case) in cases.iter().enumerate() {
        let config =
            HierarchyConfig::new(case.levels.clone()).with_inclusion(Inclusion::NonInclusive);
        let mut cache = Hierarchy::new(&config).expect("generated configurations are valid");
        cache.run(&case.trace);
        for (l, level) in case.levels.iter().enumerate() {
            let counters = cache.statistics().level(l);
            let hits = counters.read_hits;
            let misses = counters.read_misses
                + if level.write_allocate {
                    counters.write_misses + counters.writeback_misses
                } else {
                    0
                };
            let row = expected
                .iter()
                .find(|row| row[0] == c as u64 && row[1] == l as u64)
                .expect("the oracle reports every level");
            compared += 1;
            totals.0 += hits;
            totals.1 += misses;
            if (hits, misses) != (row[2], row[3]) {
                mismatches.push(format!(
                    "case {c} level {} {:?}: memlens hits {hits} misses {misses}, pycachesim hits {} misses {}",
                    level.name, level, row[2], row[3]
                ));
            }
        }
    }
    eprintln!(
        "compared {compared} levels of {} random cases with pycachesim: {} hits and {} misses in total, {} mismatches",
        cases.len(),
        totals.0,
        totals.1,
        mismatches.len()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
