//! The live read against the events themselves: a trace written the way the recorder
//! writes it (two threads, a chunk per thread at every flush), read a few flushes at a
//! time (every other time with the next flush half written), gives at every step the
//! models of exactly the events up to its line (the 6 s run passes the first horizon,
//! 2 s, twice), going on from the last read each time.

use std::cell::RefCell;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;

use memlens_heap::AllocId;
use memlens_trace::{AllocFn, ClockSource, Event, Meta, ProcessInfo, TraceWriter};

use super::*;

/// 100 ms between flushes, as the recorder's default.
const FLUSH: u64 = 100_000_000;

/// The events of a 6 s run of two threads: every millisecond each allocates a block
/// that it frees 20 ms later, except one in fifty, which it keeps (a slow leak).
fn events() -> Vec<Event> {
    let mut out = Vec::new();
    for i in 0..6_000u64 {
        for (tid, skew) in [(1u32, 0u64), (2, 400_000)] {
            let t = i * 1_000_000 + skew;
            let addr = |j: u64| 0x1000_0000 * u64::from(tid) + j * 0x100;
            out.push(Event::Alloc {
                t,
                tid,
                addr: addr(i),
                size: 16 + i % 200,
                stack: 1 + (i % 2) as u32,
                func: AllocFn::Malloc,
            });
            if i >= 20 && (i - 20) % 50 != 7 {
                out.push(Event::Free {
                    t: t + 1,
                    tid,
                    addr: addr(i - 20),
                    stack: 0,
                });
            }
        }
    }
    out.sort_by_key(|e| (e.time(), e.tid()));
    out
}

/// The bytes written so far, seen from outside the writer.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The trace of `events` as the recorder writes it, and the length of the file after
/// each flush.
fn write(events: &[Event]) -> (Vec<u8>, Vec<usize>) {
    let shared = Shared::default();
    let mut w = TraceWriter::new(shared.clone(), true).expect("a writer");
    let meta = [
        Meta::Process(ProcessInfo {
            pid: 0,
            ppid: 0,
            exe: "/bin/growing".into(),
            cmdline: vec!["growing".into()],
            start_unix_ns: 1_700_000_000_000_000_000,
            clock: ClockSource::Tsc,
            unwinder: "fp".into(),
            recorder: "test".into(),
        }),
        Meta::StackNode {
            id: 1,
            parent: 0,
            ip: 0x401000,
        },
        Meta::StackNode {
            id: 2,
            parent: 0,
            ip: 0x402000,
        },
    ];
    for m in &meta {
        w.meta(m).expect("meta");
    }
    let mut flushes = Vec::new();
    let mut next_flush = FLUSH;
    for e in events {
        while e.time() >= next_flush {
            w.flush_chunks().expect("flush");
            flushes.push(shared.0.borrow().len());
            next_flush += FLUSH;
        }
        w.event(e).expect("event");
    }
    w.finish().expect("finish");
    let bytes = shared.0.borrow().clone();
    (bytes, flushes)
}

/// The live bytes at `t` of the events up to `line`, one block at a time.
fn live_bytes(events: &[Event], line: u64, t: u64) -> u64 {
    let mut live = FxHashMap::default();
    for e in events.iter().take_while(|e| e.time() <= line.min(t)) {
        match *e {
            Event::Alloc { addr, size, .. } => {
                live.insert(addr, size);
            }
            Event::Free { addr, .. } => {
                live.remove(&addr);
            }
            Event::Realloc { .. } => unreachable!("none written"),
        }
    }
    live.values().sum()
}

fn open(path: &Path, bytes: &[u8]) -> TraceInput {
    std::fs::write(path, bytes).expect("the trace is written");
    TraceInput::open(path).expect("the trace opens")
}

#[test]
fn a_live_read_holds_the_events_up_to_its_line_and_goes_on_from_there() {
    let events = events();
    let (bytes, flushes) = write(&events);
    let dir = std::env::temp_dir().join(format!("memlens-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join("growing.mlens");
    let wanted = Wanted::growing();
    let mut read: Option<LiveRead> = None;
    let (mut steps, mut maps) = (0, 0);
    // Every third flush, as the viewer reads every 0.7 s.
    for k in (5..flushes.len()).step_by(3) {
        // Every other read finds the next flush half written.
        let next = flushes.get(k + 1).copied().unwrap_or(flushes[k]);
        let len = flushes[k] + (next - flushes[k]) / 2 * (k % 2);
        let input = open(&path, &bytes[..len]);
        match read.as_mut() {
            Some(read) => read.extend(&input),
            None => read = Some(LiveRead::start(&input, &wanted, &crate::NoProgress)),
        }
        steps += 1;
        let Some(read) = read.as_mut() else {
            unreachable!("started")
        };
        assert!(read.damage().is_empty(), "{:?}", read.damage());
        let line = read.fed_to();
        assert!(line > 0, "the line moves past the start");
        let models = read.models(&input);
        let heap = models.heap.expect("a heap model");
        let fed = events.iter().filter(|e| e.time() <= line);
        let allocations = fed.clone().filter(|e| matches!(e, Event::Alloc { .. }));
        let frees = fed.filter(|e| matches!(e, Event::Free { .. }));
        let stats = heap.stats();
        assert_eq!(
            stats.allocations,
            allocations.count() as u64,
            "at {line}, step {steps}"
        );
        assert_eq!(stats.frees, frees.count() as u64, "at {line}");
        assert_eq!(stats.live_at_exit_bytes, live_bytes(&events, line, line));
        // Exact at every instant of the model.
        let instants = heap.exact_instants().expect("a coalesced model").to_vec();
        // At least half the grid over the run so far once it is half the first
        // horizon (2 s); at most every line and each bucket's peak and dip, whatever
        // the run's length.
        let n = instants.len();
        if line >= 1_000_000_000 {
            assert!(n > crate::GRID_LINES as usize / 2, "{n} instants");
        }
        assert!(n <= 3 * crate::GRID_LINES as usize + 3, "{n} instants");
        for &t in instants.iter().step_by(7) {
            let model: u64 = (0..heap.len() as u32)
                .map(AllocId)
                .filter(|&a| heap.is_live_at(a, t))
                .map(|a| heap.size_at(a, t)) // a row's bytes: all its blocks'
                .sum();
            assert_eq!(
                model,
                live_bytes(&events, line, t),
                "live bytes at {t}, line {line}"
            );
        }
        // The allocation map when its snapshot is due (always the first time).
        assert!(maps > 0 || models.alloc.is_some(), "a first allocation map");
        if let Some(alloc) = models.alloc {
            let blocks = events
                .iter()
                .filter(|e| e.time() <= line && matches!(e, Event::Alloc { .. }));
            assert_eq!(alloc.blocks().len(), blocks.count(), "at {line}");
            maps += 1;
        }
    }
    assert!(steps > 15, "{steps} reads");
    // The program has ended: the last read feeds the rest, to the run's end.
    let input = open(&path, &bytes);
    let Some(mut read) = read else {
        unreachable!("started")
    };
    read.finish(&input);
    let models = read.models(&input);
    let heap = models.heap.expect("a heap model");
    let allocations = events.iter().filter(|e| matches!(e, Event::Alloc { .. }));
    assert_eq!(heap.stats().allocations, allocations.count() as u64);
    assert_eq!(heap.run().end_ns, input.run_end_ns());
    let alloc = models
        .alloc
        .expect("the whole run's allocation map, at once");
    assert_eq!(alloc.run().end_ns, input.run_end_ns());
    let _ = std::fs::remove_dir_all(&dir);
}
