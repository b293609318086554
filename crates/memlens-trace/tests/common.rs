//! Shared helpers for the trace integration tests: a small synthetic trace.

#![allow(dead_code)]

use memlens_trace::{AllocFn, ClockSource, Event, Meta, Module, ProcessInfo, Segment, TraceWriter};

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
            _ => Event::Free { t, tid, addr },
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
