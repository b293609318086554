//! Acceptance tests of the allocation-map commands (`memlens render alloc`,
//! `memlens alloc bins|replay|metrics`) on a real multithreaded C program recorded with
//! the real recorder, and their bad-input cases (one sentence, exit status 2).
//!
//! Like the other recorder tests, these need the recorder library next to the binary:
//! run `cargo build --release -p memlens -p memlens-preload` first.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::trace::memlens;
use crate::support::{self, Finished, Lang, compile, record, run};

const ARENA_THREADS: &str = include_str!("../alloc_programs/arena_threads.c");

/// The recorded trace of `arena_threads.c`, shared by the tests (recorded once).
fn trace() -> &'static Path {
    static TRACE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &TRACE
        .get_or_init(|| {
            let dir = support::test_dir("alloc_cli");
            let exe = compile(
                dir.path(),
                "arena_threads",
                Lang::C,
                ARENA_THREADS,
                &["-O1", "-g", "-fno-omit-frame-pointer", "-pthread"],
            );
            let recorded = record(
                dir.path(),
                &["-q", "-o", "arena.mlens", "--force"],
                &[exe.to_str().expect("a UTF-8 temporary path")],
                &[],
            );
            assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
            let path = dir.path().join("arena.mlens");
            (dir, path)
        })
        .1
}

fn memlens_run(args: &[&str]) -> Finished {
    let what = format!("memlens {}", args.join(" "));
    let done = run(memlens().args(args), &what);
    assert!(
        !done.stderr.contains("panicked"),
        "{what} panicked:\n{}",
        done.stderr
    );
    done
}

fn json(args: &[&str]) -> Value {
    let done = memlens_run(args);
    assert_eq!(done.code, 0, "memlens {}: {}", args.join(" "), done.stderr);
    serde_json::from_str(&done.stdout).expect("valid JSON")
}

/// Width, height and RGBA pixels of a PNG.
fn read_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(path).expect("the PNG exists"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

fn out_dir() -> PathBuf {
    trace().parent().expect("a directory").to_path_buf()
}

#[test]
fn bins_find_the_main_heap_the_thread_arenas_and_the_mmap_chunk() {
    let t = trace().to_str().unwrap();
    let v = json(&["alloc", "bins", t, "--json"]);
    let bins = v["bins"].as_array().unwrap();
    let kinds: Vec<&str> = bins.iter().map(|b| b["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "main-heap").count(),
        1,
        "{kinds:?}"
    );
    assert!(
        kinds.iter().filter(|k| **k == "arena").count() >= 2,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "mmap").count(),
        1,
        "{kinds:?}"
    );
    let mmap = bins.iter().find(|b| b["kind"] == "mmap").unwrap();
    assert_eq!(mmap["blocks"], 1);
    assert!(mmap["capacity_bytes"].as_u64().unwrap() >= 1 << 20);
    let total: u64 = bins.iter().map(|b| b["blocks"].as_u64().unwrap()).sum();
    // 16 + 1 in main, 4 × 3000 in the workers, plus the C runtime's own blocks.
    assert!(total >= 12_017, "{total}");
    let named = bins
        .iter()
        .filter(|b| b["name"].as_str().unwrap().contains("worker-"))
        .count();
    assert!(named >= 2, "arenas are named after their threads: {bins:?}");
}

#[test]
fn render_writes_a_png_of_the_asked_size_and_is_deterministic() {
    let t = trace().to_str().unwrap();
    let dir = out_dir();
    let a = dir.join("a.png");
    let b = dir.join("b.png");
    for (out, color) in [(&a, "thread"), (&b, "thread")] {
        let done = memlens_run(&[
            "render",
            "alloc",
            t,
            "-o",
            out.to_str().unwrap(),
            "--width",
            "320",
            "--height",
            "200",
            "--color-by",
            color,
            "--bin",
            "1,2,3,4",
        ]);
        assert_eq!(done.code, 0, "{}", done.stderr);
        assert!(done.stderr.contains("wrote"), "{}", done.stderr);
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let (w, h, px) = read_png(&a);
    assert_eq!((w, h), (320, 200));
    // Something is drawn: not every pixel is the white background.
    let coloured = px.chunks(4).filter(|p| p[..3] != [255, 255, 255]).count();
    assert!(coloured > 500, "{coloured} coloured pixels");
    // Colouring by size gives a different picture of the same blocks.
    let c = dir.join("c.png");
    let done = memlens_run(&[
        "render",
        "alloc",
        t,
        "-o",
        c.to_str().unwrap(),
        "--width",
        "320",
        "--height",
        "200",
        "--color-by",
        "size",
        "--cushion",
        "parabolic",
        "--alpha",
        "0.3",
        "--bin",
        "1,2,3,4",
        "--bars",
    ]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let (w, h, px2) = read_png(&c);
    assert_eq!(w, 320);
    assert!(h > 200, "the bars are added below the map");
    assert_ne!(px[..], px2[..(320 * 200 * 4) as usize]);
}

#[test]
fn zoomed_windows_render_and_brushing_data_is_consistent() {
    let t = trace().to_str().unwrap();
    let bins = json(&["alloc", "bins", t, "--json"]);
    let arena = bins["bins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["kind"] == "arena")
        .unwrap();
    let (lo, hi) = (
        arena["start"].as_u64().unwrap(),
        arena["end"].as_u64().unwrap(),
    );
    let out = out_dir().join("zoom.png");
    let addr = format!("{lo:#x}..{:#x}", lo + (hi - lo) / 4);
    let done = memlens_run(&[
        "render",
        "alloc",
        t,
        "-o",
        out.to_str().unwrap(),
        "--width",
        "256",
        "--height",
        "256",
        "--time",
        "10%..60%",
        "--addr",
        &addr,
    ]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert_eq!(read_png(&out).0, 256);
}

#[test]
fn replay_reports_overflows_high_water_marks_and_waste() {
    let t = trace().to_str().unwrap();
    let v = json(&[
        "alloc",
        "replay",
        t,
        "--pool",
        "64:64,256:64,1024:16",
        "--json",
    ]);
    let requests = v["requests"].as_u64().unwrap();
    assert!(requests >= 12_017);
    let bins = v["bins"].as_array().unwrap();
    assert_eq!(bins.len(), 3);
    for b in bins {
        assert!(b["high_water"].as_u64().unwrap() <= b["slots"].as_u64().unwrap());
    }
    // Four threads hold 64 blocks each of up to 707 bytes: the 1024-byte bin (16 slots)
    // overflows, and the 1 MiB block is larger than every bin.
    assert!(bins[2]["overflowed"].as_u64().unwrap() > 0, "{v}");
    assert!(v["too_large"].as_u64().unwrap() >= 1);
    let served: u64 = bins.iter().map(|b| b["served"].as_u64().unwrap()).sum();
    assert_eq!(
        served + v["heap_served"].as_u64().unwrap() + v["failed"].as_u64().unwrap(),
        requests
    );
    assert_eq!(v["failed"], 0, "the default heap is unbounded");
    // A best-fit heap and a TOML configuration give the same bins' figures.
    let toml = out_dir().join("pool.toml");
    std::fs::write(
        &toml,
        "overflow = \"best-fit\"\n[[bin]]\nsize = 64\ncount = 64\n[[bin]]\nsize = 256\ncount = 64\n[[bin]]\nsize = \"1K\"\ncount = 16\n",
    )
    .unwrap();
    let w = json(&[
        "alloc",
        "replay",
        t,
        "--config",
        toml.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(w["bins"], v["bins"]);
    // The replayed model draws too.
    let out = out_dir().join("pool.png");
    let done = memlens_run(&[
        "render",
        "alloc",
        t,
        "-o",
        out.to_str().unwrap(),
        "--width",
        "200",
        "--height",
        "100",
        "--pool",
        "64:64,256:64,1024:16",
        "--color-by",
        "waste",
    ]);
    assert_eq!(done.code, 0, "{}", done.stderr);
}

#[test]
fn metrics_sample_occupancy_waste_and_fragmentation() {
    let t = trace().to_str().unwrap();
    let v = json(&[
        "alloc",
        "metrics",
        t,
        "--bin",
        "1",
        "--samples",
        "10",
        "--json",
    ]);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 10);
    let events: u64 = points.iter().map(|p| p["events"].as_u64().unwrap()).sum();
    assert!(events > 1000, "{events}");
    for p in points {
        let occ = p["occupancy"].as_f64().unwrap();
        let frag = p["fragmentation"].as_f64().unwrap();
        assert!(
            (0.0..=1.0).contains(&occ) && (0.0..1.0).contains(&frag),
            "{p}"
        );
        assert!(p["reserved_bytes"].as_u64() >= p["requested_bytes"].as_u64());
    }
    let text = memlens_run(&["alloc", "metrics", t]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains("occupancy"), "{}", text.stdout);
}

/// Runs a command that must fail as a usage error: exit status 2 and one line naming `needle`.
fn usage_error(args: &[&str], needle: &str) {
    let done = memlens_run(args);
    assert_eq!(done.code, 2, "memlens {}: {}", args.join(" "), done.stderr);
    let lines: Vec<&str> = done.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one sentence: {}", done.stderr);
    assert!(lines[0].contains(needle), "{needle} not in {}", lines[0]);
}

#[test]
fn bad_input_is_one_sentence_and_exit_status_2() {
    let t = trace().to_str().unwrap();
    let o = out_dir().join("bad.png");
    let o = o.to_str().unwrap();
    usage_error(
        &["render", "alloc", t, "-o", o, "--alpha", "0"],
        "α must be a number above 0",
    );
    usage_error(
        &["render", "alloc", t, "-o", o, "--alpha", "-1"],
        "α must be a number above 0",
    );
    usage_error(
        &["render", "alloc", t, "-o", o, "--time", "50%..50%"],
        "empty window",
    );
    usage_error(
        &["render", "alloc", t, "-o", o, "--time", "60%..10%"],
        "empty window",
    );
    usage_error(
        &["render", "alloc", t, "-o", o, "--addr", "0x2000..0x1000"],
        "empty window",
    );
    usage_error(
        &["render", "alloc", t, "-o", o, "--addr", "0x10..0x20"],
        "no bin",
    );
    usage_error(
        &["render", "alloc", t, "-o", o, "--bin", "99"],
        "there is no bin 99",
    );
    usage_error(
        &["render", "alloc", t, "-o", o, "--color-by", "latency"],
        "record --latency",
    );
    usage_error(
        &["render", "alloc", t, "-o", o, "--color-by", "colour"],
        "colour",
    );
    usage_error(
        &["alloc", "replay", t, "--pool", "64:8,32:8"],
        "must strictly increase",
    );
    usage_error(&["alloc", "replay", t, "--pool", "64"], "BLOCK_SIZE:COUNT");
    usage_error(&["alloc", "replay", t], "needs a pool");
    let bad_toml = out_dir().join("bad.toml");
    std::fs::write(
        &bad_toml,
        "[[bin]]\nsize = 128\ncount = 4\n[[bin]]\nsize = 64\ncount = 4\n",
    )
    .unwrap();
    usage_error(
        &["alloc", "replay", t, "--config", bad_toml.to_str().unwrap()],
        "bad.toml",
    );
    usage_error(
        &["alloc", "metrics", t, "--bin", "42"],
        "there is no bin 42",
    );
    // A missing file is a failure (1), not a usage error.
    let done = memlens_run(&["alloc", "bins", "/nonexistent/x.mlens"]);
    assert_eq!(done.code, 1, "{}", done.stderr);
}
