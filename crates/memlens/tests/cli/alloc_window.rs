//! The allocation map of a run too large for the memory available: it reads a window
//! of the run instead of leaving the map out, with one sentence saying which. With
//! `MEMLENS_ALLOC_MEMORY` set below what the whole run needs, `render alloc` draws the
//! last stretch that fits, or the `--time` window asked for, holding fewer blocks and
//! a lower peak memory than the whole run; a bad value of the variable is named and
//! the kernel's estimate used. (That the window's blocks are exactly the run's blocks
//! overlapping it is `memlens-alloc`'s `tests/window.rs`.) Such windows (the last
//! stretch, one asked for) are kept in the trace's index and read back from it without
//! the events, into the same pictures, with the whole run's map that the read to the
//! run's end added up; a damaged copy is rebuilt with one note.

use std::path::Path;
use std::time::Duration;

use crate::scale::{Measured, rebuild_notes, run_measured};
use crate::support::trace::memlens;
use crate::support::{FRAME_POINTER_FLAGS, Lang, alloc_bench_source, compile, record, test_dir};

/// The memory the read of a window to the run's end adds for the whole run at a
/// glance, at most (`memlens-alloc`'s `whole_run.rs`: 1,024 columns × 512 rows × 16
/// bytes), which a small run's window does not save: the windows here are compared
/// with the whole run's map plus that.
const WHOLE_RUN_KIB: u64 = 16 * 1024;

/// Runs `memlens render alloc TRACE -o OUT ARGS` with `memory` as the allocation map's memory.
fn render(dir: &Path, args: &[&str], memory: Option<&str>) -> Measured {
    let mut cmd = memlens();
    cmd.current_dir(dir)
        .args(["render", "alloc", "t.mlens", "-o", "out.png"])
        .args(args);
    if let Some(m) = memory {
        cmd.env("MEMLENS_ALLOC_MEMORY", m);
    }
    let done = run_measured(&mut cmd, Duration::from_secs(120), "memlens render alloc");
    assert_eq!(
        done.code, 0,
        "render alloc {args:?} (memory {memory:?}):\n{}",
        done.stderr
    );
    done
}

/// The blocks `render alloc` says it drew.
fn blocks_drawn(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("memlens: wrote "))
        .unwrap_or_else(|| panic!("no `wrote` line:\n{stderr}"));
    let (_, rest) = line.split_once(", ").expect("`(W×H, N blocks …)`");
    rest.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a block count")
}

/// A directory named after `name` holding `t.mlens`, alloc-bench recorded making
/// `calls` calls on one thread; `None` when the shared workload is not there.
fn recorded_bench(name: &str, calls: &str) -> Option<tempfile::TempDir> {
    let (_, source) = alloc_bench_source()?;
    let dir = test_dir(name);
    let bench = compile(
        dir.path(),
        "alloc-bench",
        Lang::C,
        &source,
        FRAME_POINTER_FLAGS,
    );
    let bench = bench.to_str().expect("a UTF-8 path");
    let rec = record(
        dir.path(),
        &["-q", "-o", "t.mlens"],
        &[bench, "1", calls],
        &[],
    );
    assert_eq!(rec.run.code, 0, "{}", rec.run.stderr);
    Some(dir)
}

#[test]
fn a_run_too_large_for_memory_draws_the_window_that_fits() {
    let Some(dir) = recorded_bench("alloc-window", "1000000") else {
        return;
    };

    let whole = render(dir.path(), &[], None);
    let all = blocks_drawn(&whole.stderr);
    assert!(all > 1_000_000, "{}", whole.stderr);
    assert!(!whole.stderr.contains("would need"), "{}", whole.stderr);

    // ~1.1 M blocks need ~225 MB; with 64 MiB the map may use 48: about 17 % of the run.
    let last = render(dir.path(), &[], Some("64M"));
    let some = blocks_drawn(&last.stderr);
    assert!(
        last.stderr.contains(&format!(
            "the allocation map of all {all} blocks would need"
        )) && last.stderr.contains("it shows its last")
            && last.stderr.contains("--time A..B"),
        "{}",
        last.stderr
    );
    assert!(some > 0 && some < all / 3, "{some} of {all} blocks drawn");
    assert!(
        last.peak_rss_kib < whole.peak_rss_kib * 2 / 3 + WHOLE_RUN_KIB,
        "peak RSS {} KiB for the window, {} KiB for the whole run",
        last.peak_rss_kib,
        whole.peak_rss_kib
    );

    // The window asked for, when the whole run does not fit.
    let asked = render(dir.path(), &["--time", "10%..20%"], Some("64M"));
    assert!(
        asked.stderr.contains("it shows the window asked for"),
        "{}",
        asked.stderr
    );
    let in_window = blocks_drawn(&asked.stderr);
    assert!(
        in_window > 0 && in_window < all / 5,
        "{in_window} of {all} blocks drawn"
    );

    // A value that is not a size is named, and the kernel's estimate used.
    let bad = render(dir.path(), &[], Some("lots"));
    assert!(
        bad.stderr.contains("MEMLENS_ALLOC_MEMORY=lots is not used"),
        "{}",
        bad.stderr
    );
    assert_eq!(blocks_drawn(&bad.stderr), all);
}

/// A run idle for 1.5 s that then allocates 600,000 blocks in a fraction of a second:
/// the window that fits is placed by where the blocks are (the event chunks' times
/// and counts), so it holds about the share of them the memory allows, not the whole
/// burst that the run's mean allocation rate would put in its last stretch.
#[test]
fn a_run_that_allocates_in_a_burst_gets_the_stretch_that_fits() {
    let dir = test_dir("alloc-burst");
    let source = include_str!("../alloc_programs/burst.c");
    let burst = compile(dir.path(), "burst", Lang::C, source, FRAME_POINTER_FLAGS);
    let burst = burst.to_str().expect("a UTF-8 path");
    let rec = record(
        dir.path(),
        &["-q", "-o", "t.mlens"],
        &[burst, "600000"],
        &[],
    );
    assert_eq!(rec.run.code, 0, "{}", rec.run.stderr);

    let whole = render(dir.path(), &[], None);
    let all = blocks_drawn(&whole.stderr);
    assert!(all > 600_000, "{}", whole.stderr);
    // ~600 k blocks need ~120 MB; 40 MiB leaves 32 for the window: about a quarter of
    // the blocks, in well under a tenth of the run (the mean rate would take its last
    // 28 %: the whole burst).
    let last = render(dir.path(), &[], Some("40M"));
    let some = blocks_drawn(&last.stderr);
    assert!(
        some > all / 10 && some < all / 2,
        "{some} of {all} blocks drawn:\n{}",
        last.stderr
    );
    let share: f64 = last
        .stderr
        .split("it shows its last ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|share| share.parse().ok())
        .unwrap_or_else(|| panic!("no share of the run:\n{}", last.stderr));
    assert!(share < 10.0, "{share} % of the run:\n{}", last.stderr);
    // The sentence says what share of the blocks that is, the time saying little here.
    assert!(last.stderr.contains(" % of its blocks)"), "{}", last.stderr);
    assert!(
        last.peak_rss_kib < whole.peak_rss_kib * 2 / 3 + WHOLE_RUN_KIB,
        "peak RSS {} KiB for the window, {} KiB for the whole run",
        last.peak_rss_kib,
        whole.peak_rss_kib
    );
}

/// The offset of a byte in the middle of the first event chunk's payload of `trace`
/// (from `memlens dump`'s `# chunk offset=… kind=Events … stored=…` lines).
fn inside_an_event_chunk(trace: &Path) -> usize {
    let dump = crate::support::trace::dump(trace);
    let line = dump
        .stdout
        .lines()
        .find(|l| l.starts_with("# chunk ") && l.contains("kind=Events"))
        .unwrap_or_else(|| panic!("no event chunk in the dump:\n{}", dump.stderr));
    let field = |name: &str| -> usize {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    field("offset=") + field("stored=") / 2
}

#[test]
fn a_window_is_kept_in_the_index_and_read_back_without_the_events() {
    let Some(dir) = recorded_bench("alloc-window-index", "600000") else {
        return;
    };
    let (trace, index) = (dir.path().join("t.mlens"), dir.path().join("t.mlens.mlidx"));

    // The whole run's map is not kept: it would be larger than a quarter of the trace.
    render(dir.path(), &[], None);
    assert!(!index.exists(), "the whole run's map was kept in an index");

    // A window of it is, and the next command draws the same picture from it.
    let first = render(dir.path(), &[], Some("8M"));
    let picture = std::fs::read(dir.path().join("out.png")).expect("a picture");
    let kept = std::fs::read(&index).expect("the window was kept in an index");
    let part = kept.windows(4).position(|w| w == b"AMAP");
    let part = part.expect("the index has an allocation-map part");
    // (A quarter of the trace for the maps, an eighth for the checkpoints its reading
    // took on the way to the window.)
    let trace_len = std::fs::metadata(&trace).expect("the trace").len();
    assert!(
        (kept.len() as u64) < trace_len / 4 + trace_len / 8 + 100,
        "the index takes {} bytes of {trace_len}",
        kept.len()
    );

    // Another window asked for is kept beside it.
    let asked = ["--time", "10%..13%"];
    let first_asked = render(dir.path(), &asked, Some("8M"));
    let asked_picture = std::fs::read(dir.path().join("out.png")).expect("a picture");
    let both = std::fs::read(&index).expect("the index");
    let parts = both.windows(4).filter(|w| w == b"AMAP").count();
    assert!(parts >= 2, "{parts} allocation-map parts kept");

    // Damage the events (not the chunk headers the index is keyed by): a map read from
    // the events would say so; those read from the index are the pictures drawn before.
    let mut bytes = std::fs::read(&trace).expect("the trace");
    let at = inside_an_event_chunk(&trace);
    bytes[at..at + 64].iter_mut().for_each(|b| *b ^= 0x5a);
    std::fs::write(&trace, &bytes).expect("cannot write the trace");
    for (args, first, picture) in [
        (&[][..], &first, &picture),
        (&asked[..], &first_asked, &asked_picture),
    ] {
        let again = render(dir.path(), args, Some("8M"));
        assert_eq!(
            &std::fs::read(dir.path().join("out.png")).expect("a picture"),
            picture,
            "the map {args:?} read from the index differs"
        );
        assert_eq!(again.stderr, first.stderr, "reading the index says more");
    }
    assert_eq!(
        std::fs::read(&index).expect("the index"),
        both,
        "reading rewrote the index"
    );
    bytes[at..at + 64].iter_mut().for_each(|b| *b ^= 0x5a);
    std::fs::write(&trace, &bytes).expect("cannot restore the trace");

    // A damaged allocation-map part, or whole-run part (kept after it: the window
    // reaches the run's end), is rebuilt, with one note, into the same picture.
    let whole = kept.windows(4).position(|w| w == b"WRUN");
    let whole = whole.expect("the window to the run's end keeps the whole run's map");
    // (The checkpoints its reading took come after it.)
    let checkpoints = kept.windows(4).position(|w| w == b"CKPT");
    let checkpoints = checkpoints.expect("the reading took checkpoints");
    assert!(part < whole && whole < checkpoints, "the parts' order");
    for ((from, to), what) in [
        ((part, whole), "its allocation map"),
        ((whole, checkpoints), "its whole-run map"),
    ] {
        let mut damaged = kept.clone();
        let middle = from + (to - from) / 2;
        damaged[middle..middle + 16]
            .iter_mut()
            .for_each(|b| *b ^= 0xa5);
        std::fs::write(&index, &damaged).expect("cannot write the index");
        let rebuilt = render(dir.path(), &[], Some("8M"));
        let notes = rebuild_notes(&rebuilt.stderr);
        assert!(
            notes.len() == 1 && notes[0].contains(&format!("is damaged ({what}")),
            "{}",
            rebuilt.stderr
        );
        assert_eq!(
            std::fs::read(dir.path().join("out.png")).expect("a picture"),
            picture
        );
        assert_eq!(
            std::fs::read(&index).expect("the index"),
            kept,
            "not rewritten whole"
        );
    }
}

#[test]
fn a_window_goes_on_from_a_checkpoint_kept_in_the_index() {
    let Some(dir) = recorded_bench("alloc-window-checkpoint", "600000") else {
        return;
    };
    let (trace, index) = (dir.path().join("t.mlens"), dir.path().join("t.mlens.mlidx"));
    let picture = || std::fs::read(dir.path().join("out.png")).expect("a picture");

    // The default window's reading goes through the run before it, taking checkpoints.
    render(dir.path(), &[], Some("8M"));
    let kept = std::fs::read(&index).expect("the window was kept in an index");
    let checkpoints = kept.windows(4).filter(|w| w == b"CKPT").count();
    assert!(
        (16..32).contains(&checkpoints),
        "{checkpoints} checkpoints kept"
    );
    assert!(
        (kept.len() as u64) < std::fs::metadata(&trace).expect("the trace").len() / 2,
        "the index takes {} bytes",
        kept.len()
    );

    // Another window goes on from the latest checkpoint before it, into the picture a
    // reading from the run's start draws.
    let asked = ["--time", "70%..72%"];
    let resumed = render(dir.path(), &asked, Some("8M"));
    let resumed_picture = picture();
    std::fs::remove_file(&index).expect("cannot remove the index");
    let from_start = render(dir.path(), &asked, Some("8M"));
    assert_eq!(
        picture(),
        resumed_picture,
        "resumed and read from the start"
    );
    assert_eq!(resumed.stderr, from_start.stderr);

    // It reads no event before the checkpoint: damage in the first event chunk (not in
    // the chunk headers the index is keyed by) goes unseen.
    std::fs::write(&index, &kept).expect("cannot write the index");
    let mut bytes = std::fs::read(&trace).expect("the trace");
    let at = inside_an_event_chunk(&trace);
    bytes[at..at + 64].iter_mut().for_each(|b| *b ^= 0x5a);
    std::fs::write(&trace, &bytes).expect("cannot write the trace");
    let unseen = render(dir.path(), &asked, Some("8M"));
    assert_eq!(unseen.stderr, resumed.stderr, "the damage was read");
    assert_eq!(picture(), resumed_picture);
    bytes[at..at + 64].iter_mut().for_each(|b| *b ^= 0x5a);
    std::fs::write(&trace, &bytes).expect("cannot restore the trace");

    // A damaged checkpoint is not trusted: one note, and the same picture.
    let first = kept
        .windows(4)
        .position(|w| w == b"CKPT")
        .expect("a checkpoint");
    let mut damaged = kept.clone();
    damaged[first + 60..first + 76]
        .iter_mut()
        .for_each(|b| *b ^= 0xa5);
    std::fs::write(&index, &damaged).expect("cannot write the index");
    let rebuilt = render(dir.path(), &asked, Some("8M"));
    let notes = rebuild_notes(&rebuilt.stderr);
    assert!(
        notes.len() == 1 && notes[0].contains("is damaged ("),
        "{}",
        rebuilt.stderr
    );
    assert_eq!(picture(), resumed_picture);
}
