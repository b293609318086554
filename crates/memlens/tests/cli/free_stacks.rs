//! `memlens record --free-stacks --mmap` on a real C program
//! (`tests/alloc_programs/free_stacks.c`): `dump` shows the stack of every free and
//! the program's mmap and munmap; `alloc bins --json` has the mapping bin holding half
//! the mapping after the partial munmap; the viewer's block details name `drop_a` as
//! the function that freed a block `make_a` allocated, and `map_pool` as the site of
//! the mapping. Recorded without the options nothing changes: no free stacks, no
//! mapping records, and the event chunks of an alloc-bench run are exactly what the
//! format's plain encoder writes (ten columns).
//!
//! Needs the recorder library next to `memlens` (`cargo build -p memlens-preload`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use memlens_trace::columns::{BASE_COLUMNS, COLUMNS};
use memlens_trace::format::ChunkKind;
use memlens_trace::{ChunkBuilder, TraceFile};
use serde_json::Value;

use crate::support::viewer::Viewer;
use crate::support::{
    FRAME_POINTER_FLAGS, Lang, alloc_bench_source, clean_command, compile, dump, memlens, record,
    run, test_dir,
};

const PAGE: u64 = 4096;
/// `POOL_PAGES` of free_stacks.c.
const POOL_PAGES: u64 = 64;

/// Compiles free_stacks.c in `dir` and records it with `options`; returns the trace.
fn record_program(dir: &Path, options: &[&str]) -> PathBuf {
    let program = compile(
        dir,
        "free_stacks",
        Lang::C,
        include_str!("../alloc_programs/free_stacks.c"),
        FRAME_POINTER_FLAGS,
    );
    let plain = run(&mut clean_command(&program), "free_stacks alone");
    let mut all = vec!["-q", "-o", "trace.mlens"];
    all.extend_from_slice(options);
    let recorded = record(dir, &all, &[program.to_str().unwrap()], &[]);
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    assert_eq!(recorded.run.stdout, plain.stdout, "the program's output");
    dir.join("trace.mlens")
}

/// The lines of `memlens dump TRACE`.
fn dump_lines(trace: &Path) -> Vec<String> {
    let done = dump(trace);
    assert_eq!(done.code, 0, "{}", done.stderr);
    done.stdout.lines().map(String::from).collect()
}

/// The value of `name=` in a dump line.
fn field(line: &str, name: &str) -> u64 {
    let text = line
        .split(' ')
        .find_map(|w| w.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name}= in {line}"));
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => text.parse().unwrap(),
    }
}

/// The time a dump line starts with.
fn time(line: &str) -> u64 {
    line.split(' ').next().unwrap().parse().unwrap()
}

fn kind<'a>(lines: &'a [String], what: &str) -> Vec<&'a String> {
    let what = format!(" {what} ");
    lines.iter().filter(|l| l.contains(&what)).collect()
}

fn bins(trace: &Path) -> Vec<Value> {
    let done = run(
        memlens().args(["alloc", "bins", "--json"]).arg(trace),
        "memlens alloc bins --json",
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let doc: Value = serde_json::from_str(&done.stdout).unwrap();
    doc["bins"].as_array().unwrap().clone()
}

#[test]
fn free_stacks_and_mappings_reach_dump_bins_and_the_viewer() {
    let dir = test_dir("free-stacks");
    let trace = record_program(dir.path(), &["--free-stacks", "--mmap"]);
    let lines = dump_lines(&trace);

    // 64 blocks of make_a, each freed with a stack: drop_a's, the same for all.
    let allocs: Vec<&String> = kind(&lines, "alloc")
        .into_iter()
        .filter(|l| (100..=604).contains(&field(l, "size")) && field(l, "size") % 8 == 4)
        .collect();
    assert_eq!(allocs.len(), 64, "{lines:#?}");
    let frees = kind(&lines, "free");
    let freed: Vec<&&String> = frees
        .iter()
        .filter(|l| allocs.iter().any(|a| field(a, "addr") == field(l, "addr")))
        .collect();
    assert_eq!(freed.len(), 64);
    let stacks: Vec<u64> = freed.iter().map(|l| field(l, "stack")).collect();
    assert!(stacks[0] != 0 && stacks.iter().all(|&s| s == stacks[0]));
    assert!(stacks[0] != field(allocs[0], "stack"), "freed elsewhere");

    // One anonymous mapping and the munmap of its upper half.
    let maps = kind(&lines, "mmap");
    assert_eq!(maps.len(), 1, "{maps:?}");
    let map = maps[0];
    assert!(
        map.contains(" anonymous ") && !map.contains("remap"),
        "{map}"
    );
    assert_eq!(field(map, "len"), POOL_PAGES * PAGE);
    assert_eq!(field(map, "prot"), 3);
    let base = field(map, "addr");
    let unmaps = kind(&lines, "munmap");
    assert_eq!(unmaps.len(), 1, "{unmaps:?}");
    assert_eq!(field(unmaps[0], "addr"), base + POOL_PAGES / 2 * PAGE);
    assert_eq!(field(unmaps[0], "len"), POOL_PAGES / 2 * PAGE);

    // The mapping bin: the whole mapping's extent, half of it mapped at the end.
    let bins = bins(&trace);
    let mapping = bins
        .iter()
        .find(|b| b["kind"] == "mapping")
        .unwrap_or_else(|| panic!("no mapping bin: {bins:#?}"));
    assert_eq!(mapping["name"], "mappings");
    assert_eq!(mapping["start"], base);
    assert_eq!(mapping["capacity_bytes"], POOL_PAGES * PAGE);
    assert_eq!(mapping["blocks"], 2, "the mapping, then the half left");
    assert_eq!(mapping["live_bytes_at_end"], POOL_PAGES / 2 * PAGE);

    // The summary's one line about mappings.
    let done = run(memlens().arg("summary").arg(&trace), "memlens summary");
    assert!(
        done.stdout
            .contains("mapped by the program itself (mmap): 256 KiB at the peak"),
        "{}",
        done.stdout
    );

    // The viewer's block details.
    let heap = bins.iter().find(|b| b["kind"] == "main-heap").unwrap();
    let y_of = |bin: &Value, addr: u64| {
        bin["axis_start"].as_u64().unwrap() + addr - bin["start"].as_u64().unwrap()
    };
    let view = Viewer::start(&trace, &[]);
    let block = block_at(&view, time(allocs[0]), y_of(heap, field(allocs[0], "addr")));
    assert_eq!(block["function"], "make_a", "{block:#}");
    assert_eq!(block["free_function"], "drop_a", "{block:#}");
    let location = block["free_location"].as_str().unwrap();
    assert!(location.starts_with("free_stacks.c:"), "{location}");
    assert_eq!(block["mapping"], false);
    let pooled = block_at(&view, time(map) + 1, y_of(mapping, base + PAGE));
    assert_eq!(pooled["function"], "map_pool", "{pooled:#}");
    assert_eq!(pooled["mapping"], true);
    assert_eq!(pooled["reserved"], POOL_PAGES * PAGE);
    assert_eq!(pooled["free_function"], "", "munmap records no stack");
}

#[test]
fn without_the_options_nothing_changes() {
    let dir = test_dir("free-stacks-off");
    let trace = record_program(dir.path(), &[]);
    let lines = dump_lines(&trace);
    assert!(!kind(&lines, "free").is_empty());
    assert!(
        kind(&lines, "free").iter().all(|l| !l.contains("stack=")),
        "no free stacks"
    );
    assert!(kind(&lines, "mmap").is_empty() && kind(&lines, "munmap").is_empty());
    assert!(bins(&trace).iter().all(|b| b["kind"] != "mapping"));

    // An alloc-bench run: every event chunk is exactly what the plain encoder
    // writes for its events, ten columns; with --free-stacks, thirteen (ten in a
    // chunk that holds no free).
    let Some((_, source)) = alloc_bench_source() else {
        return;
    };
    let bench = compile(dir.path(), "bench", Lang::C, &source, FRAME_POINTER_FLAGS);
    for (options, columns) in [(&[][..], BASE_COLUMNS), (&["--free-stacks"][..], COLUMNS)] {
        let out = dir.path().join(format!("bench{columns}.mlens"));
        let mut all = vec!["-q", "-o", out.to_str().unwrap()];
        all.extend_from_slice(options);
        let recorded = record(
            dir.path(),
            &all,
            &[bench.to_str().unwrap(), "2", "30000"],
            &[],
        );
        assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
        let (bytes, events) = check_event_chunks(&out, columns);
        eprintln!(
            "alloc-bench {options:?}: {events} events, {:.2} bytes per event",
            bytes as f64 / events as f64
        );
    }
}

/// Checks that the event chunks of `trace` have `columns` columns (or ten, when
/// they hold no free) and, with ten, that the format's encoder writes the same bytes
/// for their events; returns the event chunks' bytes and events.
fn check_event_chunks(trace: &Path, columns: usize) -> (u64, u64) {
    let file = TraceFile::open(trace).unwrap();
    let bytes = std::fs::read(trace).unwrap();
    let mut compressor = memlens_trace::chunk::compressor().unwrap();
    let (mut scratch, mut payload) = (Vec::new(), Vec::new());
    let (mut total, mut events, mut with_columns) = (0u64, 0u64, 0);
    for chunk in file.chunks() {
        let h = &chunk.header;
        if h.kind != ChunkKind::Events {
            continue;
        }
        file.read_payload(chunk, &mut scratch, &mut payload)
            .unwrap();
        let n = usize::from(payload[0]);
        assert!(
            n == columns || n == BASE_COLUMNS,
            "{n} columns at {}",
            chunk.offset
        );
        with_columns += usize::from(n == columns);
        let start = chunk.offset as usize;
        let stored = &bytes[start..start + 48 + h.stored_len as usize];
        total += stored.len() as u64;
        events += u64::from(h.records);
        if n != BASE_COLUMNS {
            continue;
        }
        let mut decoded = Vec::new();
        memlens_trace::decode::decode_events(h, &payload, &mut decoded).unwrap();
        let mut builder = ChunkBuilder::new(ChunkKind::Events, h.stream);
        for e in &decoded {
            builder.event(e);
        }
        let mut framed = Vec::new();
        builder.finish(&mut framed, Some(&mut compressor));
        assert!(
            framed == stored,
            "chunk at {} re-encodes differently",
            chunk.offset
        );
    }
    assert!(events > 0 && with_columns > 0);
    (total, events)
}

/// The block the viewer `view` draws at `t` ns and axis position `y` (waits for the
/// map to be read).
fn block_at(view: &Viewer, t: u64, y: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    let body = loop {
        let (code, body) = view.get(&format!("api/alloc/block?t={t}&y={y}"));
        if code == 200 {
            break body;
        }
        assert_eq!(code, 503, "{body}");
        assert!(Instant::now() < deadline, "the allocation map was not read");
        std::thread::sleep(Duration::from_millis(50));
    };
    let json = &body[body.find('{').unwrap()..=body.rfind('}').unwrap()];
    let doc: Value = serde_json::from_str(json).unwrap();
    assert!(doc["block"].is_object(), "no block at t={t} y={y}: {doc}");
    doc["block"].clone()
}
