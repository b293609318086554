//! A tiny heaptrack oracle: run a program under `heaptrack`, read its
//! interpreted output, and count allocations, deallocations and the exact
//! peak to compare with memlens' summary.
//!
//! heaptrack 1.4 writes `<name>.zst`, a zstd-compressed text file with one
//! record per line. The records this oracle reads (checked against real
//! output of heaptrack 1.4.0, file format version 3, given by `v 10400 3`):
//!
//! ```text
//! s <len hex> <text>           string n (from 1); module paths, function names
//! i <ip hex> <module string> [<function> <file> <line>]…   instruction pointer n (from 1)
//! t <ip index> <parent trace>  trace node n (from 1); parent 0 is the root
//! a <size hex> <trace index>   allocation info n, counted FROM 0 (`+ 0`
//!                              follows the first `a` line)
//! + <info index hex>           an allocation of that info's size
//! - <info index hex>           a deallocation of a block of that info
//! ```
//!
//! heaptrack records a `realloc` as one `-` (of the old block) followed by
//! one `+` (of the new one), so heaptrack's `+` lines equal memlens'
//! `allocations + reallocations` and its `-` lines equal memlens'
//! `frees + reallocations`. Replaying `+`/`-` in file order gives heaptrack's
//! peak, which memlens computes the same way (a realloc releases the old
//! block before it adds the new one).
//!
//! **libstdc++'s start-up allocation.** heaptrack is written in C++, so its
//! preloaded library pulls libstdc++ into every program it runs. libstdc++'s
//! initialisation allocates its emergency exception-handling pool (72704
//! bytes with this machine's libstdc++; freed at exit), called from the
//! dynamic loader before `main`. In a C program that allocation exists only
//! because of heaptrack, so [`LibstdcxxStartup::Drop`] removes it: it is the
//! allocation info whose innermost frame lies in libstdc++ and whose every
//! frame lies in libstdc++ or the loader (`ld-linux`), i.e. made while
//! libstdc++ initialised itself, not by anything the program called. A C++
//! program links libstdc++ itself, so there the allocation is the program's
//! own and [`LibstdcxxStartup::Keep`] keeps it.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use super::clean_command;
use super::run::{Finished, run};
use super::trace::Summary;

/// What to do with allocations libstdc++ makes while it initialises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibstdcxxStartup {
    /// The program does not link libstdc++: they are heaptrack's own.
    Drop,
    /// The program links libstdc++: they are the program's.
    Keep,
}

/// What heaptrack saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaptrackCounts {
    /// `+` lines: allocations, counting each realloc once.
    pub allocations: u64,
    /// `-` lines: deallocations, counting each realloc once.
    pub deallocations: u64,
    /// The largest sum of live bytes, replaying `+`/`-` in order.
    pub peak_bytes: u64,
    /// `+` lines removed as libstdc++ start-up allocations.
    pub dropped: u64,
}

/// One call stack of heaptrack's output and how many `+` lines (allocations,
/// reallocations) it made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaptrackStack {
    /// `+` lines of this stack.
    pub calls: u64,
    /// Its frames' function names, innermost (the allocator's caller) first; for
    /// a frame heaptrack could not name, `?` and the last three hex digits of its
    /// address (which address space randomisation keeps: modules load at page
    /// boundaries). heaptrack's address of a frame is its return address − 1.
    pub functions: Vec<String>,
}

/// A finished heaptrack run.
#[derive(Debug)]
pub struct HeaptrackRun {
    /// The counts from its output.
    pub counts: HeaptrackCounts,
    /// Its call stacks, most calls first.
    pub stacks: Vec<HeaptrackStack>,
    /// The `heaptrack` process (its output includes the program's).
    pub run: Finished,
}

/// Numbers the heaptrack runs of a test binary, so their outputs never clash.
static RUNS: AtomicU32 = AtomicU32::new(0);

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(name).is_file()))
}

/// Runs `heaptrack -o DIR/heaptrack.N ARGV` in `dir` with `envs` added, or
/// returns `None` (after saying so) when heaptrack is not installed.
pub fn heaptrack(
    dir: &Path,
    argv: &[&str],
    envs: &[(&str, &str)],
    startup: LibstdcxxStartup,
) -> Option<HeaptrackRun> {
    if !on_path("heaptrack") {
        eprintln!("skipped: heaptrack not installed");
        return None;
    }
    let stem = format!("heaptrack.{}", RUNS.fetch_add(1, Ordering::Relaxed));
    let mut cmd = clean_command("heaptrack");
    cmd.current_dir(dir)
        .arg("-o")
        .arg(dir.join(&stem))
        .args(argv)
        .envs(envs.iter().copied());
    let done = run(&mut cmd, &format!("heaptrack {}", argv.join(" ")));
    let complaint = format!("{}{}", done.stdout, done.stderr);
    assert!(
        !complaint.contains("ERROR:"),
        "heaptrack could not process its own trace:\n{complaint}"
    );
    let output = dir.join(format!("{stem}.zst"));
    let file = std::fs::File::open(&output)
        .unwrap_or_else(|e| panic!("heaptrack wrote no {stem}.zst ({e}):\n{}", done.stderr));
    let bytes = zstd::stream::decode_all(file).expect("heaptrack's output is not zstd");
    let text = String::from_utf8_lossy(&bytes);
    let counts = parse(&text, startup);
    let stacks = parse_stacks(&text);
    Some(HeaptrackRun {
        counts,
        stacks,
        run: done,
    })
}

fn hex(field: Option<&str>) -> usize {
    field
        .and_then(|f| usize::from_str_radix(f, 16).ok())
        .expect("heaptrack's output has a malformed number")
}

/// The records of heaptrack's interpreted text format this oracle reads (see the
/// module docs), in one pass.
struct Records {
    strings: Vec<String>,
    /// Per instruction pointer (from 1): its address, module string and first
    /// function string (0 when unnamed).
    ips: Vec<(u64, usize, usize)>,
    /// Per trace node (from 1): its instruction pointer and parent.
    traces: Vec<(usize, usize)>,
    /// Per allocation info (from 0): its size and trace.
    infos: Vec<(u64, usize)>,
    /// `+` (true) and `-` lines with their info index, in order.
    events: Vec<(bool, usize)>,
}

fn records(text: &str) -> Records {
    let mut version = 0;
    let mut r = Records {
        strings: vec![String::new()],
        ips: vec![(0, 0, 0)],
        traces: vec![(0, 0)],
        infos: Vec::new(),
        events: Vec::new(),
    };
    for line in text.lines() {
        let mut fields = line.split(' ');
        match fields.next() {
            Some("v") => {
                version = fields
                    .nth(1)
                    .map_or(0, |v| usize::from_str_radix(v, 16).unwrap_or(0))
            }
            Some("s") if version >= 3 => r
                .strings
                .push(line.splitn(3, ' ').nth(2).unwrap_or("").into()),
            Some("s") => r.strings.push(line.get(2..).unwrap_or("").into()),
            Some("i") => {
                let ip = hex(fields.next()) as u64;
                let module = hex(fields.next());
                let function = fields.next().map_or(0, |f| hex(Some(f)));
                r.ips.push((ip, module, function));
            }
            Some("t") => r.traces.push((hex(fields.next()), hex(fields.next()))),
            Some("a") => r
                .infos
                .push((hex(fields.next()) as u64, hex(fields.next()))),
            Some("+") => r.events.push((true, hex(fields.next()))),
            Some("-") => r.events.push((false, hex(fields.next()))),
            _ => {}
        }
    }
    r
}

/// Counts heaptrack's interpreted text format (see the module docs).
pub fn parse(text: &str, startup: LibstdcxxStartup) -> HeaptrackCounts {
    let Records {
        strings,
        ips,
        traces,
        infos,
        events,
    } = records(text);
    let ip_modules: Vec<usize> = ips.iter().map(|ip| ip.1).collect();
    let module_of_frame = |trace: usize| -> &str {
        let ip = traces.get(trace).map_or(0, |t| t.0);
        let module = ip_modules.get(ip).copied().unwrap_or(0);
        strings.get(module).map_or("", String::as_str)
    };
    let is_startup = |info: usize| -> bool {
        let mut trace = infos[info].1;
        if !module_of_frame(trace).contains("libstdc++") {
            return false;
        }
        while trace != 0 && trace < traces.len() {
            let module = module_of_frame(trace);
            if !(module.contains("libstdc++") || module.contains("/ld-linux")) {
                return false;
            }
            trace = traces[trace].1;
        }
        true
    };
    let dropped_infos: Vec<bool> = (0..infos.len())
        .map(|i| startup == LibstdcxxStartup::Drop && is_startup(i))
        .collect();
    let mut counts = HeaptrackCounts {
        allocations: 0,
        deallocations: 0,
        peak_bytes: 0,
        dropped: 0,
    };
    let mut live: u64 = 0;
    for (is_alloc, info) in events {
        let size = infos
            .get(info)
            .expect("`+`/`-` names a defined allocation info")
            .0;
        if dropped_infos[info] {
            counts.dropped += u64::from(is_alloc);
            continue;
        }
        if is_alloc {
            counts.allocations += 1;
            live += size;
            counts.peak_bytes = counts.peak_bytes.max(live);
        } else {
            counts.deallocations += 1;
            live -= size;
        }
    }
    counts
}

/// heaptrack's call stacks with their `+` counts, most first. An `i` line is
/// `i <ip> <module> [<function> <file> <line>]…`; the first function (0 when
/// unknown) names the frame.
pub fn parse_stacks(text: &str) -> Vec<HeaptrackStack> {
    let r = records(text);
    let mut calls: std::collections::HashMap<usize, u64> = Default::default();
    for &(is_alloc, info) in &r.events {
        if is_alloc {
            *calls.entry(r.infos[info].1).or_default() += 1;
        }
    }
    let mut stacks: Vec<HeaptrackStack> = calls
        .into_iter()
        .map(|(mut trace, calls)| {
            let mut functions = Vec::new();
            while trace != 0 && trace < r.traces.len() {
                let (ip, _, function) = r.ips.get(r.traces[trace].0).copied().unwrap_or_default();
                functions.push(if function != 0 {
                    r.strings[function].clone()
                } else {
                    format!("?{:03x}", ip & 0xfff)
                });
                trace = r.traces[trace].1;
            }
            HeaptrackStack { calls, functions }
        })
        .collect();
    stacks.sort_by_key(|s| std::cmp::Reverse(s.calls));
    stacks
}

/// How closely the peaks must agree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Peak {
    /// To the byte (deterministic single-threaded programs).
    Exact,
    /// Within this fraction of heaptrack's peak.
    Within(f64),
    /// Not compared (the program's allocation sizes vary between runs).
    Ignored,
}

impl Peak {
    /// True when memlens' peak `ours` agrees with heaptrack's `theirs`.
    pub fn agrees(self, ours: u64, theirs: u64) -> bool {
        match self {
            Peak::Exact => ours == theirs,
            Peak::Within(fraction) => ours.abs_diff(theirs) as f64 <= theirs as f64 * fraction,
            Peak::Ignored => true,
        }
    }
}

/// Asserts that memlens' summary counts what heaptrack counted (see the
/// module docs for the mapping), printing both for the record.
pub fn assert_counts_match(what: &str, ours: &Summary, theirs: &HeaptrackCounts) {
    let (allocations, frees, reallocations) = (
        ours.get("allocations"),
        ours.get("frees"),
        ours.get("reallocations"),
    );
    eprintln!(
        "{what}: memlens allocations={allocations} frees={frees} reallocations={reallocations} \
         peak={} (heaptrack terms: +{} -{}); heaptrack +{} -{} peak={} \
         ({} libstdc++ start-up allocations removed)",
        ours.get("peak_bytes"),
        allocations + reallocations,
        frees + reallocations,
        theirs.allocations,
        theirs.deallocations,
        theirs.peak_bytes,
        theirs.dropped
    );
    assert_eq!(
        allocations + reallocations,
        theirs.allocations,
        "{what}: allocations + reallocations differ from heaptrack's `+` records"
    );
    assert_eq!(
        frees + reallocations,
        theirs.deallocations,
        "{what}: frees + reallocations differ from heaptrack's `-` records"
    );
}
