//! Java programs recorded through the JVMTI agent (`memlens record --java`), read back
//! through the heap-evolution commands, as in the AntTracks paper's case studies:
//! the easyTravel location cache whose key lacks `equals`/`hashCode`, and the Commons
//! HttpClient connection pool that never forgets a host. Plus the agent's promises:
//! the JVM's output and exit status are unchanged, it never hangs at exit, threads are
//! named and garbage collections are marks. And the paper's containing-data-structure
//! classifier, from the agent's heap walks: the easyTravel cache's map ranks first and
//! holds the cached types; objects in two maps are in multiple data structures.
//!
//! The Java sources (`tests/programs/java/`) are compiled with `javac` into a temporary
//! directory. Without a JDK (`java` and `javac` on PATH) every test prints a note and
//! passes without checking anything. The agent must sit next to the `memlens` binary:
//! run `cargo build --release -p memlens-jvmti` (same CARGO_TARGET_DIR) first.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::trace::memlens;
use crate::support::{Finished, clean_command, memlens_exe, run, run_with_timeout, test_dir};

/// Every JVM run here must end well within this (the agent must never hang the exit).
const JVM_LIMIT: Duration = Duration::from_secs(120);

const SOURCES: &[&str] = &[
    "com/example/travel/JourneyService.java",
    "com/example/http/ConnectionManager.java",
    "com/example/exit/ExitCode.java",
    "com/example/shared/TwoIndexes.java",
];

/// Whether `java` and `javac` run; prints why the test is skipped when not.
fn have_jdk() -> bool {
    let works = |tool: &str| {
        Command::new(tool)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works("java") && works("javac") {
        true
    } else {
        eprintln!("skipped: no JDK (`java` and `javac` on PATH); install default-jdk-headless");
        false
    }
}

/// The agent next to `memlens`; fails with the command that builds it.
fn agent_library() -> PathBuf {
    let lib = memlens_exe()
        .parent()
        .expect("the memlens executable has a directory")
        .join("libmemlens_jvmti.so");
    assert!(
        lib.is_file(),
        "the Java agent {} is missing: run `cargo build --release -p memlens-jvmti` \
         (with the same CARGO_TARGET_DIR) before these tests",
        lib.display()
    );
    lib
}

/// Compiles the test programs into `dir/classes`.
fn compile_java(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/java");
    let classes = dir.join("classes");
    let mut cmd = Command::new("javac");
    cmd.arg("-d").arg(&classes);
    for s in SOURCES {
        cmd.arg(root.join(s));
    }
    let done = run(&mut cmd, "javac");
    assert_eq!(done.code, 0, "javac failed:\n{}", done.stderr);
    classes
}

/// Runs `memlens record --java OPTIONS -o NAME -- java -cp CLASSES ARGV` in `dir`.
fn record_java(dir: &Path, options: &[&str], name: &str, argv: &[&str]) -> (Finished, PathBuf) {
    agent_library();
    let classes = dir.join("classes");
    let mut cmd = memlens();
    cmd.current_dir(dir)
        .args(["record", "--java", "-q", "--force", "-o", name])
        .args(options)
        .args(["--", "java", "-Xmx256m", "-cp"])
        .arg(&classes)
        .args(argv);
    let done = run_with_timeout(&mut cmd, JVM_LIMIT, &format!("record --java {name}"));
    assert!(
        !done.stderr.contains("panicked"),
        "the recording panicked:\n{}",
        done.stderr
    );
    (done, dir.join(name))
}

/// Runs `memlens ARGS`, requiring success.
fn memlens_ok(args: &[&str]) -> String {
    let what = format!("memlens {}", args.join(" "));
    let done = run(memlens().args(args), &what);
    assert_eq!(done.code, 0, "{what} failed:\n{}", done.stderr);
    done.stdout
}

/// The growth suspects as (full key, growth bytes), best first.
fn suspects(trace: &Path, by: &str, extra: &[&str]) -> Vec<(Vec<String>, i64)> {
    let path = trace.to_str().expect("UTF-8 path");
    let mut args = vec!["growth", path, "--by", by, "--json", "--top", "10"];
    args.extend_from_slice(extra);
    let json: Value = serde_json::from_str(&memlens_ok(&args)).expect("growth --json is JSON");
    json["suspects"]
        .as_array()
        .expect("a suspects array")
        .iter()
        .map(|s| {
            let key = s["full_key"]
                .as_array()
                .expect("a full key")
                .iter()
                .map(|k| k.as_str().unwrap_or_default().to_owned())
                .collect();
            (key, s["growth_bytes"].as_i64().unwrap_or(0))
        })
        .collect()
}

#[test]
fn easytravel_leak_ranks_the_map_entries_and_their_types_first() {
    if !have_jdk() {
        return;
    }
    let dir = test_dir("java-easytravel");
    compile_java(dir.path());
    let (done, trace) = record_java(
        dir.path(),
        &[],
        "leak.mlens",
        &["com.example.travel.JourneyService", "6", "2000"],
    );
    assert_eq!(done.code, 0, "the program failed:\n{}", done.stderr);
    let found = suspects(
        &trace,
        "type,closest-domain-site",
        &["--domain", "com.example"],
    );
    let text = format!("{found:#?}");
    assert!(found.len() >= 3, "too few suspects: {text}");
    // Everything the cache holds was allocated on behalf of the journey service.
    let held = [
        "java.util.HashMap$Node",
        "com.example.travel.JourneyService$QueryKey",
        "com.example.travel.JourneyService$Location",
        "java.util.Date",
        "java.util.ArrayList",
        "java.lang.Object[]",
    ];
    for (key, growth) in &found[..3] {
        assert!(
            held.contains(&key[0].as_str()),
            "a top suspect is not held by the cache: {key:?}\n{text}"
        );
        assert!(
            key[1].starts_with("com.example.travel.JourneyService"),
            "a top suspect has no journey-service domain site: {key:?}\n{text}"
        );
        assert!(*growth > 0, "{text}");
    }
    // The map's entries are among the first, attributed to the method that puts them
    // (HashMap.newNode itself is not domain code).
    let entries = found
        .iter()
        .position(|(k, _)| {
            k[0] == "java.util.HashMap$Node"
                && k[1] == "com.example.travel.JourneyService.findLocations"
        })
        .unwrap_or_else(|| panic!("no HashMap$Node suspect under findLocations: {text}"));
    assert!(entries < 4, "the map entries rank {entries}: {text}");
    // The per-search scratch buffers die young: never a suspect near the top.
    assert!(
        !found[..5.min(found.len())]
            .iter()
            .any(|(k, _)| k[0] == "byte[]" && k[1].ends_with(".search")),
        "garbage ranks as a leak: {text}"
    );

    // The other heap commands read the Java trace too.
    let path = trace.to_str().expect("UTF-8 path");
    let tree = memlens_ok(&["tree", path, "--by", "type,site", "--points", "3", "--json"]);
    assert!(tree.contains("java.util.HashMap$Node"), "{tree}");
    // The site is past the Java platform's frames (`HashMap.newNode` is runtime code
    // to the frame policy): the method that put the entry.
    assert!(
        tree.contains(r#""full_key":["java.util.HashMap$Node","com.example.travel.JourneyService.findLocations"]"#),
        "{tree}"
    );
    assert!(!tree.contains("java.util.HashMap.newNode"), "{tree}");
    let summary = memlens_ok(&["summary", path]);
    assert!(
        summary.contains("com.example.travel.JourneyService"),
        "{summary}"
    );
    let html = dir.path().join("leak.html");
    memlens_ok(&["report", path, "-o", html.to_str().expect("UTF-8 path")]);
    assert!(html.is_file());
    // Object ids are not addresses: the allocation map refuses in one sentence.
    let png = dir.path().join("leak.png");
    let map = run(
        memlens().args([
            "render",
            "alloc",
            path,
            "-o",
            png.to_str().expect("UTF-8 path"),
        ]),
        "memlens render alloc on a Java trace",
    );
    assert_eq!(map.code, 2, "{}", map.stderr);
    assert!(map.stderr.contains("is a Java trace"), "{}", map.stderr);
    assert_eq!(map.stderr.trim().lines().count(), 1, "{}", map.stderr);
    assert!(!png.exists());
}

#[test]
fn httpclient_pool_allocation_site_ranks_first() {
    if !have_jdk() {
        return;
    }
    let dir = test_dir("java-httpclient");
    compile_java(dir.path());
    let (done, trace) = record_java(
        dir.path(),
        &[],
        "pool.mlens",
        &["com.example.http.ConnectionManager", "6", "1500"],
    );
    assert_eq!(done.code, 0, "the program failed:\n{}", done.stderr);
    let by_site = suspects(&trace, "site", &[]);
    let text = format!("{by_site:#?}");
    let (top, growth) = by_site
        .first()
        .unwrap_or_else(|| panic!("no suspect: {text}"));
    assert!(
        top[0].starts_with("com.example.http.ConnectionManager.getHostPool")
            || top[0].starts_with("com.example.http.ConnectionManager$HostConnectionPool.<init>"),
        "the top site is not the pool's: {text}"
    );
    assert!(*growth > 0, "{text}");
    // The released connections (4 KiB buffers) come and go: never a growth suspect.
    assert!(
        !by_site
            .iter()
            .take(3)
            .any(|(k, _)| k[0].contains("Connection.<init>") && !k[0].contains("Pool")),
        "released connections rank as a leak: {text}"
    );
    // The default grouping skips the Java platform's frames (HashMap.newNode): the
    // method that fills the map, getHostPool, ranks first, as in the paper.
    let default = suspects(&trace, "closest-user-frame", &[]);
    assert_eq!(
        default.first().map(|(k, _)| k[0].as_str()),
        Some("com.example.http.ConnectionManager.getHostPool"),
        "{default:#?}"
    );
    // By type then site: the pools are allocated in getHostPool.
    let by_type = suspects(&trace, "type,site", &[]);
    let text = format!("{by_type:#?}");
    assert!(
        by_type.iter().any(|(k, g)| k[0]
            == "com.example.http.ConnectionManager$HostConnectionPool"
            && k[1] == "com.example.http.ConnectionManager.getHostPool"
            && *g > 0),
        "no growing HostConnectionPool group allocated in getHostPool: {text}"
    );
}

#[test]
fn output_exit_status_threads_and_gc_marks() {
    if !have_jdk() {
        return;
    }
    let dir = test_dir("java-exit");
    let classes = compile_java(dir.path());
    let mut plain = clean_command("java");
    plain
        .current_dir(dir.path())
        .arg("-cp")
        .arg(&classes)
        .arg("com.example.exit.ExitCode");
    let unprofiled = run_with_timeout(&mut plain, JVM_LIMIT, "java ExitCode");
    assert_eq!(unprofiled.code, 3, "{}", unprofiled.stderr);
    let (recorded, trace) = record_java(
        dir.path(),
        &[],
        "exit.mlens",
        &["com.example.exit.ExitCode"],
    );
    assert_eq!(
        recorded.code, 3,
        "the exit status changed:\n{}",
        recorded.stderr
    );
    assert_eq!(recorded.stdout, unprofiled.stdout, "the output changed");
    assert!(recorded.stderr.contains("to stderr"), "{}", recorded.stderr);
    assert!(recorded.elapsed < JVM_LIMIT, "the JVM did not exit in time");
    let dump = memlens_ok(&["dump", trace.to_str().expect("UTF-8 path")]);
    for needle in [
        "name=\"memlens-worker\"",
        "name=\"main\"",
        "mark tid=0 name=\"GC 1 start\"",
        "mark tid=0 name=\"GC 1 end\"",
        "type id=",
        "name=\"int[]\"",
        "function=\"com.example.exit.ExitCode.main\" file=\"ExitCode.java\"",
        "typed-stack id=",
        " end how=exit",
    ] {
        assert!(dump.contains(needle), "the dump lacks {needle}");
    }
    assert!(dump.contains(" free tid="), "no object death was recorded");
    // The worker's arrays are attributed to the worker thread's stream.
    let worker_tid = dump
        .lines()
        .find_map(|l| {
            let rest = l.split(" thread tid=").nth(1)?;
            let (tid, name) = rest.split_once(' ')?;
            (name == "name=\"memlens-worker\"").then(|| tid.to_owned())
        })
        .expect("the worker thread is named");
    let worker_allocs = dump
        .lines()
        .filter(|l| l.contains(&format!(" alloc tid={worker_tid} ")))
        .count();
    assert!(
        worker_allocs >= 200,
        "the worker made {worker_allocs} allocations"
    );
    let by_thread = memlens_ok(&[
        "growth",
        trace.to_str().expect("UTF-8 path"),
        "--by",
        "thread",
        "--top",
        "50",
    ]);
    assert!(
        by_thread.contains(&format!("memlens-worker (tid {worker_tid})")),
        "{by_thread}"
    );

    // Sampled mode records far fewer allocations and says so.
    let (sampled, strace) = record_java(
        dir.path(),
        &["--sample", "64K"],
        "sampled.mlens",
        &["com.example.exit.ExitCode"],
    );
    assert_eq!(sampled.code, 3, "{}", sampled.stderr);
    let sdump = memlens_ok(&["dump", strace.to_str().expect("UTF-8 path")]);
    let allocs = |d: &str| d.lines().filter(|l| l.contains(" alloc tid=")).count();
    assert!(
        allocs(&sdump) < allocs(&dump),
        "sampling recorded {} allocations, the full mode {}",
        allocs(&sdump),
        allocs(&dump)
    );
    assert!(
        sdump.contains("sampling mean_interval_bytes=65536"),
        "no sampling record"
    );
    let summary = memlens_ok(&["summary", strace.to_str().expect("UTF-8 path")]);
    assert!(
        summary.contains("bytes and counts are unbiased estimates"),
        "{summary}"
    );
}

#[test]
fn a_wrapper_script_is_recorded_through_java_tool_options() {
    if !have_jdk() {
        return;
    }
    let dir = test_dir("java-wrapper");
    let classes = compile_java(dir.path());
    let script = dir.path().join("run-app");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n# starts the JVM the way launch scripts do\nexec java -cp '{}' com.example.exit.ExitCode\n",
            classes.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    agent_library();
    let mut cmd = memlens();
    cmd.current_dir(dir.path())
        .args(["record", "--java", "-q", "-o", "wrapped.mlens", "--"])
        .arg(&script);
    let done = run_with_timeout(&mut cmd, JVM_LIMIT, "record --java -- run-app");
    assert_eq!(done.code, 3, "{}", done.stderr);
    assert!(
        done.stdout.contains("hello from java: 1200"),
        "{}",
        done.stdout
    );
    let trace = dir.path().join("wrapped.mlens");
    assert!(trace.is_file(), "no wrapped.mlens: {}", done.stderr);
    let dump = memlens_ok(&["dump", trace.to_str().expect("UTF-8 path")]);
    assert!(dump.contains("name=\"memlens-worker\""));
}

/// The children of the node at the end of a `tree --json` whose key starts with
/// `prefix`, as (key, bytes).
fn children_at_end(tree: &str, prefix: &str) -> Vec<(String, u64)> {
    let json: Value = serde_json::from_str(tree).expect("tree --json is JSON");
    let trees = json["trees"].as_array().expect("a trees array");
    let root = &trees.last().expect("at least one tree")["root"];
    let node = root["children"]
        .as_array()
        .expect("children")
        .iter()
        .find(|c| c["key"].as_str().is_some_and(|k| k.starts_with(prefix)))
        .unwrap_or_else(|| panic!("no group `{prefix}…` at the end: {tree}"));
    let mut out = Vec::new();
    let mut stack = vec![node];
    // Children pruned into "Other" count too.
    while let Some(n) = stack.pop() {
        for c in n["children"].as_array().into_iter().flatten() {
            let key = c["key"].as_str().unwrap_or_default().to_owned();
            if key == "Other" {
                stack.push(c);
            } else {
                out.push((key, c["bytes"].as_u64().unwrap_or(0)));
            }
        }
    }
    out
}

#[test]
fn easytravel_cache_map_is_the_growing_data_structure() {
    if !have_jdk() {
        return;
    }
    let dir = test_dir("java-data-structure");
    compile_java(dir.path());
    let (done, trace) = record_java(
        dir.path(),
        &["--java-heap-walks", "all"],
        "walks.mlens",
        &["com.example.travel.JourneyService", "6", "2000"],
    );
    assert_eq!(
        done.code, 0,
        "the program failed:
{}",
        done.stderr
    );
    let path = trace.to_str().expect("UTF-8 path");
    let dump = memlens_ok(&["dump", path]);
    let walks = dump.lines().filter(|l| l.contains(" heap-walk ")).count();
    assert!(
        walks >= 6,
        "{walks} heap walks for 6 System.gc() calls and the end"
    );
    // The map that caches the searches grows the most, from nothing.
    let cache = "java.util.HashMap (allocated in com.example.travel.JourneyService.<init>)";
    let found = suspects(&trace, "data-structure", &[]);
    let text = format!("{found:#?}");
    let (top, growth) = found
        .first()
        .unwrap_or_else(|| panic!("no suspect: {text}"));
    assert_eq!(top[0], cache, "{text}");
    assert!(*growth > 1 << 20, "{text}");
    // At the end the map holds the cached types: entries, keys, result lists, locations.
    let tree = memlens_ok(&[
        "tree",
        path,
        "--by",
        "data-structure,type",
        "--points",
        "3",
        "--json",
    ]);
    let held = children_at_end(&tree, cache);
    for ty in [
        "java.util.HashMap$Node",
        "com.example.travel.JourneyService$QueryKey",
        "com.example.travel.JourneyService$Location",
        "java.util.ArrayList",
        "java.lang.Object[]",
    ] {
        assert!(
            held.iter().any(|(k, bytes)| k == ty && *bytes > 0),
            "the cache holds no {ty}: {held:?}"
        );
    }
    // The per-search scratch buffers are garbage, in no data structure.
    assert!(!held.iter().any(|(k, _)| k == "byte[]"), "{held:?}");
    // Combined with site, and in the report.
    let by_site = suspects(&trace, "data-structure,type,site", &[]);
    assert!(
        by_site.iter().take(6).any(|(k, _)| k.len() == 3
            && k[0] == cache
            && k[1] == "com.example.travel.JourneyService$Location"
            && k[2].starts_with("com.example.travel.JourneyService")),
        "{by_site:#?}"
    );
    let html = dir.path().join("walks.html");
    let report = html.to_str().expect("UTF-8 path");
    memlens_ok(&["report", path, "-o", report, "--by", "data-structure,type"]);
    let page = std::fs::read_to_string(&html).expect("the report was written");
    assert!(page.contains("java.util.HashMap (allocated in com.example.travel.JourneyService."));

    // By default the agent walks at most once a second, and once at the end.
    let (done, trace) = record_java(
        dir.path(),
        &[],
        "default.mlens",
        &["com.example.travel.JourneyService", "2", "500"],
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let dump = memlens_ok(&["dump", trace.to_str().expect("UTF-8 path")]);
    let walks = dump.lines().filter(|l| l.contains(" heap-walk ")).count();
    let seconds = done.elapsed.as_secs() as usize;
    assert!(
        (1..=seconds + 2).contains(&walks),
        "{walks} walks in {seconds} s"
    );
}

#[test]
fn objects_in_two_maps_are_in_multiple_data_structures() {
    if !have_jdk() {
        return;
    }
    let dir = test_dir("java-two-maps");
    compile_java(dir.path());
    let (done, trace) = record_java(
        dir.path(),
        &["--java-heap-walks", "all"],
        "two.mlens",
        &["com.example.shared.TwoIndexes", "5000"],
    );
    assert_eq!(
        done.code, 0,
        "the program failed:
{}",
        done.stderr
    );
    let path = trace.to_str().expect("UTF-8 path");
    // Before the end (when main has returned and nothing is reachable any more).
    let tree = memlens_ok(&[
        "tree",
        path,
        "--by",
        "data-structure,type",
        "--at",
        "95%",
        "--json",
    ]);
    let multiple = children_at_end(&tree, "Contained in multiple data structures");
    let customers = multiple
        .iter()
        .find(|(k, _)| k == "com.example.shared.TwoIndexes$Customer")
        .unwrap_or_else(|| panic!("no customers in multiple structures: {multiple:?}"));
    assert!(customers.1 >= 5000 * 16, "{customers:?}");
    // Each map keeps its own entries and keys.
    let tree_map = children_at_end(
        &tree,
        "java.util.TreeMap (allocated in com.example.shared.TwoIndexes.main)",
    );
    assert!(
        tree_map.iter().any(|(k, _)| k == "java.util.TreeMap$Entry"),
        "{tree_map:?}"
    );
    assert!(
        tree_map.iter().any(|(k, _)| k == "java.lang.String"),
        "{tree_map:?}"
    );
    assert!(
        !tree_map.iter().any(|(k, _)| k.ends_with("$Customer")),
        "{tree_map:?}"
    );
    let hash_map = children_at_end(
        &tree,
        "java.util.HashMap (allocated in com.example.shared.TwoIndexes.main)",
    );
    assert!(
        hash_map.iter().any(|(k, _)| k == "java.util.HashMap$Node"),
        "{hash_map:?}"
    );

    // Without walks the classifier has nothing to say, and says so by its groups.
    let (done, trace) = record_java(
        dir.path(),
        &["--java-heap-walks", "none"],
        "none.mlens",
        &["com.example.shared.TwoIndexes", "500"],
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let path = trace.to_str().expect("UTF-8 path");
    assert!(!memlens_ok(&["dump", path]).contains(" heap-walk "));
    let tree = memlens_ok(&["tree", path, "--by", "data-structure", "--at", "100%"]);
    assert!(tree.contains("Not contained in a data structure"), "{tree}");
    assert!(!tree.contains("(allocated in"), "{tree}");
}

#[test]
fn java_options_need_java_and_are_checked() {
    let done = run(
        memlens().args(["record", "--java-depth", "5", "--", "true"]),
        "record --java-depth without --java",
    );
    assert_eq!(done.code, 2, "{}", done.stderr);
    let done = run(
        memlens().args([
            "record",
            "--java",
            "--java-depth",
            "5000",
            "--",
            "java",
            "-version",
        ]),
        "record --java --java-depth 5000",
    );
    assert_eq!(done.code, 2, "{}", done.stderr);
    assert!(done.stderr.contains("--java-depth 5000"), "{}", done.stderr);
    let done = run(
        memlens().args(["record", "--java-heap-walks", "all", "--", "true"]),
        "record --java-heap-walks without --java",
    );
    assert_eq!(done.code, 2, "{}", done.stderr);
    for (option, value, message) in [
        (
            "--java-heap-walks",
            "often",
            "--java-heap-walks often: expected",
        ),
        (
            "--java-data-structure",
            "a,b",
            "--java-data-structure a,b: expected",
        ),
    ] {
        let done = run(
            memlens().args(["record", "--java", option, value, "--", "java", "-version"]),
            &format!("record --java {option} {value}"),
        );
        assert_eq!(done.code, 2, "{}", done.stderr);
        assert!(done.stderr.contains(message), "{}", done.stderr);
    }
}
