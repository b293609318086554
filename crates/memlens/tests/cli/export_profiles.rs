//! `memlens export --format speedscope|firefox` checked against what the viewers need.
//! The program leaks records from two threads in `leak_records`, allocates scratch blocks
//! in `churn` that `release` frees, and grows an index with `realloc` in `build_index`.
//!
//! - speedscope: the file validates against the JSON schema of speedscope's own npm
//!   package (with Ajv, `tests/export/speedscope/validate.mjs`); the heaviest call path
//!   ends in `leak_records`; the weights add up to the summary's leaked bytes (`--at
//!   end`) and allocated bytes (`--value allocated`); each thread has its profile.
//! - Firefox Profiler: the processed profile's tables are what the profiler reads
//!   (meta versions, a thread whose `nativeAllocations` are bytes with addresses, every
//!   index in range, the functions named); replaying its "Retained Memory" filter leaves
//!   exactly the summary's leaked bytes under `leak_records`; frees carry the `free`
//!   stack when recorded, the `realloc` call for a replaced block, else a frame saying
//!   so; the memory counter ends at the leaked bytes.
//! - Bad input is one sentence and a non-zero status.
//!
//! Needs Node.js and the packages of `tests/export/speedscope` (`npm ci` there; `.ci/run`
//! does it) and the recorder library next to `memlens`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{
    FRAME_POINTER_FLAGS, Lang, Summary, compile, memlens, record, run, summary, test_dir,
};

const PROGRAM: &str = r#"
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct record {
    struct record *next;
    char name[48];
};

static struct record *kept[2];
static struct record **index_of;
static volatile unsigned long checksum;

__attribute__((noinline)) void release(char *p) {
    checksum += (unsigned char)p[8];
    free(p);
}

__attribute__((noinline)) void churn(int n) {
    for (int i = 0; i < n; i++) {
        char *p = malloc(64 + i % 64);
        snprintf(p, 64, "scratch %d", i);
        release(p);
    }
}

__attribute__((noinline)) void leak_records(int which, int n) {
    for (int i = 0; i < n; i++) {
        struct record *r = malloc(sizeof *r);
        snprintf(r->name, sizeof r->name, "record %d", i);
        r->next = kept[which];
        kept[which] = r;
    }
}

__attribute__((noinline)) size_t build_index(void) {
    size_t count = 0, capacity = 0;
    for (int w = 0; w < 2; w++) {
        for (struct record *r = kept[w]; r; r = r->next) {
            if (count == capacity) {
                capacity = capacity * 2 + 16;
                index_of = realloc(index_of, capacity * sizeof *index_of);
            }
            index_of[count++] = r;
        }
    }
    return count;
}

static void *worker(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "leaker");
    churn(500);
    leak_records(1, 1000);
    return NULL;
}

int main(void) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;
    churn(1000);
    leak_records(0, 2000);
    pthread_join(thread, NULL);
    size_t count = build_index();
    printf("%zu records, %c %lu\n", count, index_of[count - 1]->name[0], checksum);
    return 0;
}
"#;

/// The leaking function.
const LEAK: &str = "leak_records";

/// Compiles the program once per test directory and records it with `options`.
fn record_leak(dir: &Path, name: &str, options: &[&str]) -> (PathBuf, Summary) {
    let program = dir.join("leak");
    let program = if program.exists() {
        program
    } else {
        compile(dir, "leak", Lang::C, PROGRAM, FRAME_POINTER_FLAGS)
    };
    let trace = dir.join(name);
    let mut args = vec!["-q", "-o", trace.to_str().unwrap()];
    args.extend_from_slice(options);
    let recorded = record(dir, &args, &[program.to_str().unwrap()], &[]);
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    let s = summary(&trace);
    (trace, s)
}

/// Runs `memlens export TRACE ARGS…`, asserts it succeeded and parses the output file.
fn export(trace: &Path, out: &Path, args: &[&str]) -> Value {
    let done = run(
        memlens()
            .arg("export")
            .arg(trace)
            .args(args)
            .arg("-o")
            .arg(out),
        "memlens export",
    );
    assert_eq!(done.code, 0, "memlens export {args:?}: {}", done.stderr);
    assert!(done.stderr.contains("wrote"), "{}", done.stderr);
    let text = std::fs::read_to_string(out).expect("the export is readable");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", out.display()))
}

/// Validates `files` with speedscope's schema, or panics with the validator's words.
fn validate_speedscope(files: &[&Path]) {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/export/speedscope"
    ));
    let installed = dir.join("node_modules/speedscope/dist/release/file-format-schema.json");
    assert!(
        installed.is_file() && dir.join("node_modules/ajv").is_dir(),
        "speedscope's schema and Ajv are not installed in {}: .ci/run installs them \
         (`npm ci` in that directory)",
        dir.display()
    );
    let found = Command::new("node").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "`node` is not installed (.ci/run's image has it)"
    );
    let done = run(
        Command::new("node")
            .arg(dir.join("validate.mjs"))
            .args(files),
        "node validate.mjs",
    );
    assert_eq!(
        done.code, 0,
        "speedscope's schema rejects the export:\n{}{}",
        done.stdout, done.stderr
    );
}

fn u64_at(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The (frames, weights) of a speedscope profile.
fn speedscope_samples(profile: &Value) -> Vec<(Vec<usize>, u64)> {
    let samples = profile["samples"].as_array().expect("samples");
    let weights = profile["weights"].as_array().expect("weights");
    assert_eq!(samples.len(), weights.len(), "one weight per sample");
    samples
        .iter()
        .zip(weights)
        .map(|(s, w)| {
            let frames = s.as_array().expect("a sample is a list of frames");
            let frames = frames.iter().map(|f| u64_at(f) as usize).collect();
            (frames, u64_at(w))
        })
        .collect()
}

#[test]
fn speedscope_files_validate_and_weigh_the_leak() {
    let dir = test_dir("export-speedscope");
    let (trace, s) = record_leak(dir.path(), "leak.mlens", &[]);
    let inuse_path = dir.path().join("inuse.speedscope.json");
    let allocated_path = dir.path().join("allocated.speedscope.json");
    let inuse = export(
        &trace,
        &inuse_path,
        &["--format", "speedscope", "--at", "end"],
    );
    let allocated = export(
        &trace,
        &allocated_path,
        &["--format", "speedscope", "--value", "allocated"],
    );
    validate_speedscope(&[&inuse_path, &allocated_path]);

    let frames = inuse["shared"]["frames"].as_array().expect("frames");
    let name = |f: usize| {
        frames[f]["name"]
            .as_str()
            .expect("a named frame")
            .to_owned()
    };
    let profiles = inuse["profiles"].as_array().expect("profiles");
    assert_eq!(inuse["activeProfileIndex"], 0);
    // All threads first, then one profile per thread (the program has two).
    assert_eq!(
        profiles.len(),
        3,
        "{:?}",
        profiles.iter().map(|p| &p["name"]).collect::<Vec<_>>()
    );
    for p in profiles {
        assert_eq!(p["unit"], "bytes");
    }
    let all = speedscope_samples(&profiles[0]);
    let total: u64 = all.iter().map(|(_, w)| w).sum();
    assert_eq!(total, s.get("leaked_bytes"), "in use at the end = leaked");
    assert_eq!(u64_at(&profiles[0]["endValue"]), total);
    let (heaviest, _) = all.iter().max_by_key(|(_, w)| *w).expect("a sample");
    assert_eq!(
        name(*heaviest.last().unwrap()),
        LEAK,
        "the heaviest path's leaf"
    );
    assert_eq!(name(heaviest[0]), "main", "paths start at the root");
    let per_thread: u64 = profiles[1..]
        .iter()
        .flat_map(speedscope_samples)
        .map(|(_, w)| w)
        .sum();
    assert_eq!(per_thread, total, "the thread profiles split the whole");
    assert!(
        profiles
            .iter()
            .any(|p| p["name"].as_str().unwrap().contains("thread leaker (")),
        "the worker's profile is named after it"
    );
    let leak_frame = frames
        .iter()
        .find(|f| f["name"] == LEAK)
        .expect("the leak's frame");
    assert!(
        leak_frame["file"].as_str().unwrap().ends_with("leak.c"),
        "{leak_frame}"
    );
    assert!(
        leak_frame["line"].as_u64().is_some(),
        "one allocating line: {leak_frame}"
    );

    let all = speedscope_samples(&allocated["profiles"][0]);
    let total: u64 = all.iter().map(|(_, w)| w).sum();
    assert_eq!(total, s.get("allocated_bytes"), "--value allocated");
}

/// The Firefox Profiler's view of one thread: its tables, checked for consistency.
struct FirefoxThread<'a> {
    thread: &'a Value,
}

impl FirefoxThread<'_> {
    fn column(&self, table: &str, column: &str) -> Vec<Value> {
        let t = &self.thread[table];
        let values = t[column]
            .as_array()
            .unwrap_or_else(|| panic!("{table}.{column} is missing"))
            .clone();
        assert_eq!(
            values.len() as u64,
            u64_at(&t["length"]),
            "{table}.{column}"
        );
        values
    }

    /// The function names of stack `stack`, leaf first.
    fn stack_names(&self, stack: usize) -> Vec<String> {
        let prefix = self.column("stackTable", "prefix");
        let frame = self.column("stackTable", "frame");
        let func = self.column("frameTable", "func");
        let name = self.column("funcTable", "name");
        let strings = self.thread["stringArray"].as_array().expect("stringArray");
        let mut names = Vec::new();
        let mut at = Some(stack);
        while let Some(s) = at {
            let f = u64_at(&frame[s]) as usize;
            let n = u64_at(&name[u64_at(&func[f]) as usize]) as usize;
            names.push(strings[n].as_str().expect("a string").to_owned());
            at = prefix[s].as_u64().map(|p| {
                assert!((p as usize) < s, "a prefix comes before its stack");
                p as usize
            });
        }
        names
    }

    /// Asserts that every index of the stack, frame and function tables is in range.
    fn check_indexes(&self) {
        let frames = self.column("frameTable", "func").len();
        let funcs = self.column("funcTable", "name").len();
        let strings = self.thread["stringArray"]
            .as_array()
            .expect("stringArray")
            .len();
        for f in self.column("stackTable", "frame") {
            assert!(
                (u64_at(&f) as usize) < frames,
                "stack frame {f} out of range"
            );
        }
        for f in self.column("frameTable", "func") {
            assert!((u64_at(&f) as usize) < funcs, "frame func {f} out of range");
        }
        for n in self.column("funcTable", "name") {
            assert!(
                (u64_at(&n) as usize) < strings,
                "func name {n} out of range"
            );
        }
    }
}

/// One native allocation sample: time (ms), bytes (negative for a free), address and
/// the names of its stack, leaf first.
struct Sample {
    time: f64,
    bytes: i64,
    address: u64,
    stack: Vec<String>,
}

/// The samples of the thread with native allocations, after checking their table.
fn firefox_samples(profile: &Value) -> Vec<Sample> {
    let meta = &profile["meta"];
    assert!(meta["version"].is_number(), "meta.version");
    assert!(
        meta["preprocessedProfileVersion"].is_number(),
        "meta.preprocessedProfileVersion"
    );
    assert!(
        meta["startTime"].as_f64().unwrap() > 1.0e12,
        "startTime is wall-clock ms"
    );
    let threads = profile["threads"].as_array().expect("threads");
    let carriers: Vec<&Value> = threads
        .iter()
        .filter(|t| t.get("nativeAllocations").is_some())
        .collect();
    assert_eq!(carriers.len(), 1, "one thread carries the allocations");
    let thread = FirefoxThread {
        thread: carriers[0],
    };
    thread.check_indexes();
    let table = &thread.thread["nativeAllocations"];
    assert_eq!(table["weightType"], "bytes");
    let stacks = thread.column("nativeAllocations", "stack");
    let stack_count = thread.column("stackTable", "frame").len();
    let time = thread.column("nativeAllocations", "time");
    let weight = thread.column("nativeAllocations", "weight");
    let address = thread.column("nativeAllocations", "memoryAddress");
    thread.column("nativeAllocations", "threadId");
    let mut last = 0.0;
    (0..stacks.len())
        .map(|i| {
            let stack = u64_at(&stacks[i]) as usize;
            assert!(stack < stack_count, "allocation stack {stack} out of range");
            let t = time[i].as_f64().expect("a time");
            assert!(t >= last, "samples in time order");
            last = t;
            Sample {
                time: t,
                bytes: weight[i].as_i64().expect("signed bytes"),
                address: u64_at(&address[i]),
                stack: thread.stack_names(stack),
            }
        })
        .collect()
}

/// The samples the profiler's "Retained Memory" view keeps: allocations whose address
/// was not freed afterwards (its matching, replayed).
fn retained(samples: &[Sample]) -> Vec<&Sample> {
    let mut live: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for (i, s) in samples.iter().enumerate() {
        if s.bytes >= 0 {
            live.insert(s.address, i);
        } else {
            assert!(
                live.remove(&s.address).is_some(),
                "a free of {:#x} matches an earlier allocation",
                s.address
            );
        }
    }
    let mut kept: Vec<usize> = live.into_values().collect();
    kept.sort_unstable();
    kept.into_iter().map(|i| &samples[i]).collect()
}

#[test]
fn firefox_profiles_hold_every_allocation_and_free_with_their_stacks() {
    let dir = test_dir("export-firefox");
    let (trace, s) = record_leak(dir.path(), "free-stacks.mlens", &["--free-stacks"]);
    let out = dir.path().join("leak.firefox.json");
    let profile = export(&trace, &out, &["--format", "firefox"]);
    let samples = firefox_samples(&profile);
    let births = samples.iter().filter(|x| x.bytes >= 0).count() as u64;
    let deaths = samples.len() as u64 - births;
    assert_eq!(births, s.get("allocations") + s.get("reallocations"));
    assert_eq!(deaths, s.get("frees") + s.get("reallocations"));

    let kept = retained(&samples);
    let kept_bytes: i64 = kept.iter().map(|x| x.bytes).sum();
    assert_eq!(
        kept_bytes as u64,
        s.get("leaked_bytes"),
        "retained = leaked"
    );
    let mut by_leaf: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
    for x in &kept {
        *by_leaf.entry(x.stack[0].as_str()).or_default() += x.bytes;
    }
    let heaviest = by_leaf
        .iter()
        .max_by_key(|(_, b)| **b)
        .expect("retained bytes");
    assert_eq!(*heaviest.0, LEAK, "retained memory by leaf: {by_leaf:?}");
    // Two threads: stacks start at a frame naming their thread.
    assert!(
        kept.iter()
            .any(|x| x.stack.last().unwrap().starts_with("thread leaker (")),
        "the worker's thread frame"
    );
    assert!(
        kept.iter()
            .all(|x| x.stack.last().unwrap().starts_with("thread "))
    );
    // Frees: the free stack (`release`), and the realloc call for replaced blocks.
    let mut freed_in: BTreeMap<&str, usize> = BTreeMap::new();
    for x in samples.iter().filter(|x| x.bytes < 0) {
        *freed_in.entry(x.stack[0].as_str()).or_default() += 1;
    }
    let leaves: Vec<&str> = freed_in.keys().copied().collect();
    assert_eq!(
        leaves,
        ["build_index", "release"],
        "free leaves and their counts: {freed_in:?}"
    );
    let end_ms = profile["threads"][0]["processShutdownTime"]
        .as_f64()
        .expect("end");
    assert!(samples.last().unwrap().time <= end_ms + 1e-6);

    // The memory track ends at what was never freed.
    let counters = profile["counters"].as_array().expect("counters");
    let memory = counters
        .iter()
        .find(|c| c["category"] == "Memory")
        .expect("a memory counter");
    let counts = memory["samples"]["count"]
        .as_array()
        .expect("counter counts");
    assert!(counts.len() >= 2, "{memory}");
    let live: f64 = counts.iter().map(|c| c.as_f64().unwrap()).sum();
    assert_eq!(
        live as u64,
        s.get("leaked_bytes"),
        "the counter's last value"
    );
    let deltas = memory["samples"]["timeDeltas"]
        .as_array()
        .expect("time deltas");
    assert!(
        deltas.iter().all(|d| d.as_f64().unwrap() >= 0.0),
        "counter in time order"
    );

    // Without free stacks, a free's stack says so instead of naming the allocation.
    let (plain, _) = record_leak(dir.path(), "plain.mlens", &[]);
    let out = dir.path().join("plain.firefox.json");
    let samples = firefox_samples(&export(&plain, &out, &["--format", "firefox"]));
    let released: Vec<&Sample> = samples
        .iter()
        .filter(|x| x.bytes < 0 && x.stack[0] != "build_index")
        .collect();
    assert!(!released.is_empty());
    for x in released {
        assert!(
            x.stack[0].contains("free stack not recorded"),
            "{:?}",
            x.stack
        );
    }
}

/// Runs `memlens export ARGS…`, expecting one sentence and a failure.
fn refused(args: &[&std::ffi::OsStr]) -> String {
    let done = run(memlens().arg("export").args(args), "memlens export");
    assert_ne!(done.code, 0, "memlens export {args:?} succeeded");
    assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
    let text = done.stderr.trim();
    assert_eq!(text.lines().count(), 1, "one sentence: {text}");
    text.to_owned()
}

#[test]
fn unwritable_outputs_are_one_sentence() {
    let dir = test_dir("export-profiles-bad");
    let (trace, _) = record_leak(dir.path(), "leak.mlens", &[]);
    let out = dir.path().join("missing").join("out.json");
    for format in ["speedscope", "firefox"] {
        let text = refused(&[
            trace.as_os_str(),
            "--format".as_ref(),
            format.as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert!(
            text.starts_with("memlens: cannot write") && text.contains(out.to_str().unwrap()),
            "{format}: {text}"
        );
    }
}
