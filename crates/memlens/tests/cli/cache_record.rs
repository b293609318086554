//! `memlens cache record` end to end: real C programs compiled by the test run
//! under the memlens Valgrind tool, checked against Cachegrind (the reference
//! count), against the program's own view of its matrices (named regions), and
//! for heap-site and global regions without any macro; the missing-Valgrind
//! sentence; and damaged recorded traces rejected cleanly by the reader.
//!
//! Needs Valgrind (Debian package `valgrind`), `cc` and `make`. The tool is
//! built once into `CARGO_TARGET_TMPDIR` (`MEMLENS_TOOL_CACHE`) and shared by
//! the tests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memlens_trace::{RefItem, RefKind, RefRecord, TraceFile, read_references};

use crate::support::{Finished, Lang, clean_command, compile, memlens_exe, run, test_dir};

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include")
}

fn tool_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("memlens-tool-cache")
}

fn build(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let source = std::fs::read_to_string(programs_dir().join(format!("{name}.c"))).unwrap();
    let include = format!("-I{}", include_dir().display());
    let mut all = vec!["-g", include.as_str()];
    all.extend_from_slice(flags);
    compile(dir, name, Lang::C, &source, &all)
}

/// `memlens cache record [options] -o OUT -- program args` in `dir`.
fn record(dir: &Path, out: &Path, options: &[&str], program: &Path, args: &[&str]) -> Finished {
    let mut cmd = clean_command(memlens_exe());
    cmd.current_dir(dir)
        .env("MEMLENS_TOOL_CACHE", tool_cache())
        .args(["cache", "record", "--force", "-o"])
        .arg(out)
        .args(options)
        .arg("--")
        .arg(program)
        .args(args);
    run(&mut cmd, "memlens cache record")
}

/// The directory `memlens cache record` built its tool in (for VALGRIND_LIB).
fn tool_lib_dir() -> PathBuf {
    std::fs::read_dir(tool_cache())
        .expect("the tool cache exists after a recording")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("memlens-amd64-linux").is_file())
        .expect("a built memlens tool")
}

/// Everything a trace holds.
struct Trace {
    regions: HashMap<u16, (String, u64, u64)>,
    labels: HashMap<u16, String>,
    refs: Vec<RefRecord>,
}

fn read_trace(path: &Path) -> Trace {
    let trace = TraceFile::open(path).expect("a valid trace");
    let mut t = Trace {
        regions: HashMap::new(),
        labels: HashMap::new(),
        refs: Vec::new(),
    };
    let damage = read_references(&trace, &mut |item| match item {
        RefItem::Region {
            id,
            start,
            len,
            name,
        } => {
            t.regions.insert(id, (name, start, len));
        }
        RefItem::Label { id, text } => {
            t.labels.insert(id, text);
        }
        RefItem::Reference(r) => t.refs.push(r),
    });
    assert!(damage.is_empty(), "{}: {damage:?}", path.display());
    t
}

impl Trace {
    fn region_name(&self, id: u16) -> &str {
        self.regions.get(&id).map_or("(none)", |r| r.0.as_str())
    }

    fn count_in(&self, name: impl Fn(&str) -> bool) -> usize {
        (self.refs.iter())
            .filter(|r| name(self.region_name(r.region)))
            .count()
    }
}

/// Cachegrind's `D refs` and `I refs` for the same program, run the same way.
fn cachegrind(dir: &Path, program: &Path, args: &[&str]) -> (u64, u64) {
    let mut cmd = clean_command("valgrind");
    cmd.current_dir(dir)
        .env("VALGRIND_LIB", tool_lib_dir())
        .args([
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--cachegrind-out-file=/dev/null",
        ])
        .arg(program)
        .args(args);
    let done = run(&mut cmd, "valgrind --tool=cachegrind");
    let number = |key: &str| -> u64 {
        let line = (done.stderr.lines())
            .find(|l| l.contains(key))
            .unwrap_or_else(|| panic!("no `{key}` in Cachegrind's output:\n{}", done.stderr));
        let after = line.split(':').nth(1).expect("a colon");
        let digits: String = (after.split_whitespace().next().unwrap())
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap()
    };
    (number("D   refs:"), number("I   refs:"))
}

#[test]
fn data_references_equal_cachegrinds_d_refs_and_fetches_its_i_refs() {
    let dir = test_dir("cache-record-count");
    let program = build(dir.path(), "matmul_plain", &["-O3"]);
    let out = dir.path().join("plain.mlens");
    let done = record(dir.path(), &out, &["--instructions"], &program, &["48"]);
    assert_eq!(done.code, 3, "the program's exit status: {}", done.stderr);
    assert!(done.stdout.trim().parse::<f64>().is_ok(), "{}", done.stdout);
    assert!(done.stderr.contains("references"), "{}", done.stderr);
    let trace = read_trace(&out);
    let data = (trace.refs.iter())
        .filter(|r| r.kind != RefKind::Instruction)
        .count() as u64;
    let fetches = trace.refs.len() as u64 - data;
    let (d_refs, i_refs) = cachegrind(dir.path(), &program, &["48"]);
    assert_eq!(data, d_refs, "data references vs Cachegrind's D refs");
    assert_eq!(
        fetches, i_refs,
        "instruction fetches vs Cachegrind's I refs"
    );
    // SIMD: the -O3 set-up loops and memcpy move 16- or 32-byte vectors.
    assert!(
        trace
            .refs
            .iter()
            .any(|r| r.size >= 16 && r.kind != RefKind::Instruction)
    );
    assert!(trace.refs.iter().any(|r| r.kind == RefKind::Modify));

    // Without --instructions: the same data references and no fetches.
    let out2 = dir.path().join("plain-data.mlens");
    let done = record(dir.path(), &out2, &[], &program, &["48"]);
    assert_eq!(done.code, 3, "{}", done.stderr);
    let trace2 = read_trace(&out2);
    assert_eq!(trace2.refs.len() as u64, d_refs);
    assert!(trace2.refs.iter().all(|r| r.kind != RefKind::Instruction));
    let bytes = std::fs::metadata(&out2).unwrap().len() as f64;
    assert!(
        bytes / (d_refs as f64) < 2.0,
        "{bytes} bytes for {d_refs} references"
    );
}

#[test]
fn named_regions_hold_every_reference_of_the_region_of_interest() {
    let n = 40usize;
    let dir = test_dir("cache-record-regions");
    // The header's own client-request code (no valgrind.h) and valgrind.h's.
    for (tag, flags) in [
        ("own", &["-O2", "-DMEMLENS_NO_VALGRIND_H"][..]),
        ("vg", &["-O2"][..]),
    ] {
        let program = build(dir.path(), "matmul_regions", flags);
        // Natively the macros do nothing.
        let native = run(clean_command(&program).arg("4"), "matmul_regions natively");
        assert_eq!(native.code, 0, "{}", native.stderr);
        let out = dir.path().join(format!("regions-{tag}.mlens"));
        let n_arg = n.to_string();
        let done = record(dir.path(), &out, &["--roi"], &program, &[&n_arg]);
        assert_eq!(done.code, 0, "{}", done.stderr);
        let expected: HashMap<String, (u64, u64)> = (done.stdout.lines())
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (name, addr, len) = (f.next()?, f.next()?, f.next()?);
                Some((
                    name.to_owned(),
                    (u64::from_str_radix(addr, 16).ok()?, len.parse().ok()?),
                ))
            })
            .collect();
        assert_eq!(expected.len(), 3, "{}", done.stdout);
        let trace = read_trace(&out);
        for (name, (start, len)) in &expected {
            assert!(
                trace
                    .regions
                    .values()
                    .any(|r| r == &(name.clone(), *start, *len)),
                "region {name} at {start:#x}+{len} missing: {:?}",
                trace.regions
            );
        }
        for r in &trace.refs {
            let name = trace.region_name(r.region);
            match expected.get(name) {
                Some(&(start, len)) => assert!(
                    r.addr >= start && r.addr + u64::from(r.size) <= start + len,
                    "{r:?} outside {name}"
                ),
                None => assert_eq!(
                    name,
                    "stack",
                    "{r:?} ({}) is outside A, B, C and the stack",
                    trace.labels.get(&r.label).map_or("", String::as_str)
                ),
            }
        }
        let n3 = n * n * n;
        assert_eq!(trace.count_in(|name| name == "A"), n3);
        assert_eq!(trace.count_in(|name| name == "B"), n3);
        assert_eq!(trace.count_in(|name| name == "C"), 2 * n * n);
        assert!(trace.count_in(|name| name == "stack") < 64);
        // Labels name the source line behind each operand.
        let a_ref = trace
            .refs
            .iter()
            .find(|r| trace.region_name(r.region) == "A")
            .unwrap();
        assert!(trace.labels[&a_ref.label].contains("matmul_regions.c:"));

        // The cache lens reports the three regions.
        let sim = run(
            clean_command(memlens_exe())
                .args(["cache", "simulate", "--json", "--level", "L1:4K:4:64"])
                .arg(&out),
            "memlens cache simulate",
        );
        assert_eq!(sim.code, 0, "{}", sim.stderr);
        let json: serde_json::Value = serde_json::from_str(&sim.stdout).unwrap();
        let names: Vec<&str> = (json["regions"].as_array().unwrap().iter())
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        for name in ["A", "B", "C"] {
            assert!(names.contains(&name), "{names:?}");
        }
        assert_eq!(
            json["references"].as_u64().unwrap() as usize,
            trace.refs.len()
        );
    }
}

#[test]
fn programs_without_macros_get_heap_site_and_global_regions() {
    let n = 32usize;
    let dir = test_dir("cache-record-sites");
    let program = build(dir.path(), "matmul_plain", &["-O2"]);
    let out = dir.path().join("sites.mlens");
    let done = record(
        dir.path(),
        &out,
        &["--with-ip"],
        &program,
        &[&n.to_string()],
    );
    assert_eq!(done.code, 3, "{}", done.stderr);
    let trace = read_trace(&out);
    let heap: Vec<&String> = (trace.regions.values())
        .map(|r| &r.0)
        .filter(|name| name.starts_with("heap: ") && name.contains("matmul_plain.c:"))
        .collect();
    assert!(
        heap.len() >= 3,
        "three matrices by site: {:?}",
        trace.regions
    );
    // Every load of the multiply (2 n³) falls in a matrix's heap-site region.
    let in_heap =
        trace.count_in(|name| name.starts_with("heap: ") && name.contains("matmul_plain.c:"));
    assert!(
        in_heap >= 2 * n * n * n,
        "{in_heap} references in the matrices"
    );
    assert!(trace.count_in(|name| name == "global: checksum") >= n * n);
    assert!(trace.count_in(|name| name == "stack") > 0);
    // --with-ip: labels start with the instruction address.
    let label = trace
        .labels
        .values()
        .find(|l| l.contains("matmul_plain.c:"))
        .unwrap();
    assert!(label.starts_with("0x"), "{label}");
}

#[test]
fn a_missing_valgrind_is_one_sentence_naming_the_package() {
    let dir = test_dir("cache-record-missing");
    let out = dir.path().join("never.mlens");
    let mut cmd = clean_command(memlens_exe());
    cmd.env("MEMLENS_VALGRIND", "/nonexistent/valgrind")
        .env("MEMLENS_TOOL_CACHE", dir.path().join("cache"))
        .args(["cache", "record", "-o"])
        .arg(&out)
        .args(["--", "true"]);
    let done = run(&mut cmd, "memlens cache record without valgrind");
    assert_eq!(done.code, 1, "{}", done.stderr);
    assert_eq!(done.stderr.trim().lines().count(), 1, "{}", done.stderr);
    assert!(
        done.stderr.contains("install the Debian package valgrind"),
        "{}",
        done.stderr
    );
    assert!(!out.exists());
    // Usage errors stay usage errors.
    let usage = run(
        clean_command(memlens_exe()).args(["cache", "record"]),
        "memlens cache record with no program",
    );
    assert_eq!(usage.code, 2, "{}", usage.stderr);
}

#[test]
fn an_output_that_cannot_be_created_is_one_sentence_not_a_hang() {
    let dir = test_dir("cache-record-bad-output");
    let program = build(dir.path(), "matmul_plain", &["-O1"]);
    let out = dir.path().join("no/such/dir/refs.mlens");
    // Quiet, so that a first use's "building the Valgrind tool" line is not printed.
    let done = record(dir.path(), &out, &["-q"], &program, &["8"]);
    assert_eq!(done.code, 1, "{}", done.stderr);
    assert_eq!(done.stderr.trim().lines().count(), 1, "{}", done.stderr);
    assert!(
        done.stderr.contains("cannot create") && done.stderr.contains("refs.mlens"),
        "{}",
        done.stderr
    );
}

#[test]
fn damaged_recorded_traces_are_rejected_cleanly() {
    let dir = test_dir("cache-record-damage");
    let program = build(dir.path(), "matmul_plain", &["-O2"]);
    let out = dir.path().join("whole.mlens");
    let done = record(dir.path(), &out, &[], &program, &["8"]);
    assert_eq!(done.code, 3, "{}", done.stderr);
    let whole = std::fs::read(&out).unwrap();
    let total = read_trace(&out).refs.len();
    // The byte ranges of the reference chunks (headers and payloads).
    let original = TraceFile::open(&out).unwrap();
    let reference_chunks: Vec<(u64, u64)> = (original.chunks().iter())
        .filter(|c| c.header.kind == memlens_trace::format::ChunkKind::References)
        .map(|c| (c.offset, c.offset + 48 + u64::from(c.header.stored_len)))
        .collect();
    assert!(!reference_chunks.is_empty());
    let in_reference_chunk = |at: usize| {
        (reference_chunks.iter()).any(|&(lo, hi)| (at as u64) >= lo && (at as u64) < hi)
    };
    let damaged = dir.path().join("damaged.mlens");
    let step = (whole.len() / 300).max(1);
    for at in (0..whole.len()).step_by(step) {
        for cut in [false, true] {
            let mut bytes = whole.clone();
            if cut {
                bytes.truncate(at);
            } else {
                bytes[at] ^= 0x5A;
            }
            std::fs::write(&damaged, &bytes).unwrap();
            let Ok(trace) = TraceFile::open(&damaged) else {
                continue; // the header itself is damaged: refused
            };
            let mut refs = 0usize;
            let damage = read_references(&trace, &mut |item| {
                if matches!(item, RefItem::Reference(_)) {
                    refs += 1;
                }
            });
            assert!(
                !damage.is_empty() || refs == total || (cut && refs < total),
                "damage at {at} (cut {cut}) went unnoticed"
            );
            if !cut && in_reference_chunk(at) {
                assert!(!damage.is_empty(), "flipped byte {at} not reported");
            }
        }
    }
}
