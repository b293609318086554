//! Shared helpers for the trace integration tests: a small synthetic trace, one
//! chunk's columns and a file made of them, and reading events back.

#![allow(dead_code)]

use memlens_trace::chunk::frame_columns;
use memlens_trace::columns::ColumnEncoder;
use memlens_trace::format::ChunkKind;
use memlens_trace::{
    AllocFn, ClockSource, Event, EventStream, Meta, Module, ProcessInfo, Segment, TraceFile,
    TraceWriter,
};

/// The process record every synthetic trace starts with.
pub fn process() -> Meta {
    Meta::Process(ProcessInfo {
        pid: 42,
        ppid: 1,
        exe: "/usr/bin/example".into(),
        cmdline: vec!["example".into(), "--flag".into()],
        start_unix_ns: 1_700_000_000_000_000_000,
        clock: ClockSource::Tsc,
        unwinder: "fp".into(),
        recorder: "test".into(),
    })
}

/// Events of two interleaved threads: allocations, reallocs and frees.
pub fn events(n: u64) -> Vec<Event> {
    let mut out = Vec::new();
    for i in 0..n {
        let tid = if i % 3 == 0 { 7 } else { 9 };
        let t = 1000 + i * 37;
        let addr = 0x5555_0000_0000 + (i % 97) * 0x40 + if i % 11 == 0 { 8 } else { 0 };
        out.push(match i % 4 {
            0 | 1 => Event::Alloc {
                t,
                tid,
                addr,
                size: 8 + i % 300,
                stack: (i % 5) as u32,
                func: AllocFn::ALL[(i % 7) as usize],
            },
            2 => Event::Realloc {
                t,
                tid,
                old_addr: addr,
                new_addr: addr + 0x1000,
                size: 4096 + i,
                stack: 3,
            },
            _ => Event::Free {
                t,
                tid,
                addr,
                stack: 0,
            },
        });
    }
    out
}

/// Metadata records: a module, stacks, threads, a mark.
pub fn metas() -> Vec<Meta> {
    vec![
        Meta::ModuleLoad {
            t: 0,
            module: Module {
                path: "/usr/lib/libexample.so".into(),
                load_bias: 0x7f00_0000_0000,
                segments: vec![Segment {
                    vaddr: 0x1000,
                    memsz: 0x2000,
                    file_offset: 0x1000,
                    flags: 5,
                }],
                build_id: vec![0xde, 0xad, 0xbe, 0xef],
            },
        },
        Meta::StackNode {
            id: 1,
            parent: 0,
            ip: 0x401000,
        },
        Meta::StackNode {
            id: 2,
            parent: 1,
            ip: 0x401100,
        },
        Meta::StackNode {
            id: 3,
            parent: 2,
            ip: 0x401200,
        },
        Meta::StackNode {
            id: 4,
            parent: 1,
            ip: 0x401300,
        },
        Meta::ThreadName {
            t: 5,
            tid: 7,
            name: "main".into(),
        },
        Meta::ThreadName {
            t: 6,
            tid: 9,
            name: "worker".into(),
        },
        Meta::Mark {
            t: 500,
            tid: 7,
            name: "phase 2".into(),
        },
        Meta::ThreadEnd { t: 90_000, tid: 9 },
        Meta::End {
            t: 100_000,
            how: "exit".into(),
        },
    ]
}

/// Writes a trace with `n` events and small chunks (so there are many).
pub fn write_trace(n: u64, chunk_bytes: usize, compress: bool) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), compress)
        .unwrap()
        .with_chunk_bytes(chunk_bytes);
    w.meta(&process()).unwrap();
    for m in metas() {
        w.meta(&m).unwrap();
    }
    for e in events(n) {
        w.event(&e).unwrap();
    }
    w.finish().unwrap()
}

/// `bytes` written to a temporary file and opened; keep the directory alive.
pub fn open(bytes: &[u8]) -> (tempfile::TempDir, TraceFile) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mlens");
    std::fs::write(&path, bytes).unwrap();
    let trace = TraceFile::open(&path).unwrap();
    (dir, trace)
}

/// The events of thread 9 of [`events`].
pub fn thread9(n: u64) -> Vec<Event> {
    events(n).into_iter().filter(|e| e.tid() == 9).collect()
}

/// A whole trace file holding one event chunk made of `columns`.
pub fn file_with_chunk(columns: &[Vec<u8>], events: &[Event]) -> Vec<u8> {
    let mut out = memlens_trace::header::header_bytes().to_vec();
    frame_columns(
        &mut out,
        ChunkKind::Events,
        9,
        events.len() as u32,
        events[0].time(),
        events.last().unwrap().time(),
        columns,
        None,
    );
    out
}

/// Events read through the merge and the damage it reports.
pub fn read_back(bytes: &[u8]) -> (Vec<(Event, Option<u32>)>, Vec<memlens_trace::Damage>) {
    let (_dir, trace) = open(bytes);
    let mut stream = EventStream::new(&trace);
    let mut got = Vec::new();
    while let Some(pair) = stream.next_with_latency() {
        got.push(pair);
    }
    (got, stream.take_damage())
}

/// Encodes `events` with latencies into one chunk's columns.
pub fn encode(events: &[Event], latency: impl Fn(usize) -> Option<u32>) -> Vec<Vec<u8>> {
    let mut enc = ColumnEncoder::default();
    enc.reset(events[0].time());
    for (i, e) in events.iter().enumerate() {
        enc.push_with_latency(e, latency(i));
    }
    enc.columns().to_vec()
}
