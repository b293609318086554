//! Writing then reading gives back exactly what was written, in time order.

mod common;

use memlens_trace::{Event, EventStream, Metadata, TraceFile, TraceWriter};

fn open(bytes: &[u8]) -> (tempfile::TempDir, TraceFile) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mlens");
    std::fs::write(&path, bytes).unwrap();
    let trace = TraceFile::open(&path).unwrap();
    (dir, trace)
}

#[test]
fn events_come_back_in_time_order() {
    for compress in [false, true] {
        let bytes = common::write_trace(5000, 700, compress);
        let (_dir, trace) = open(&bytes);
        assert!(trace.index_damage().is_empty());
        assert!(trace.chunks().len() > 10, "small chunks make many chunks");
        let got: Vec<Event> = EventStream::new(&trace).collect();
        let mut want = common::events(5000);
        want.sort_by_key(|e| (e.time(), e.tid()));
        assert_eq!(got, want);
    }
}

#[test]
fn metadata_round_trips() {
    let bytes = common::write_trace(100, 1 << 20, true);
    let (_dir, trace) = open(&bytes);
    let mut damage = Vec::new();
    let md = Metadata::load(&trace, &mut damage);
    assert!(damage.is_empty());
    assert_eq!(md.process.as_ref().unwrap().pid, 42);
    assert_eq!(md.modules.len(), 1);
    assert_eq!(md.modules[0].module.build_id, vec![0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(md.stacks.frames(3), vec![0x401200, 0x401100, 0x401000]);
    assert_eq!(md.stacks.frames(4), vec![0x401300, 0x401000]);
    assert_eq!(md.thread_name(9), "worker");
    assert_eq!(md.threads[&9].ended, Some(90_000));
    assert_eq!(md.marks[0].name, "phase 2");
    assert_eq!(md.end.as_ref().unwrap().1, "exit");
    assert_eq!(md.event_records, 100);
}

#[test]
fn compression_makes_regular_events_small() {
    let raw = common::write_trace(20_000, 256 << 10, false);
    let packed = common::write_trace(20_000, 256 << 10, true);
    assert!(
        packed.len() * 2 < raw.len(),
        "{} vs {}",
        packed.len(),
        raw.len()
    );
}

#[test]
fn a_sampled_recording_says_so_and_an_unsampled_one_does_not() {
    use memlens_trace::{Meta, TraceWriter};
    let write = |sampling: Option<u64>| {
        let mut w = TraceWriter::new(Vec::new(), true).unwrap();
        w.meta(&common::process()).unwrap();
        if let Some(mean_interval_bytes) = sampling {
            w.meta(&Meta::Sampling {
                mean_interval_bytes,
            })
            .unwrap();
        }
        w.finish().unwrap()
    };
    for (sampling, want) in [(Some(512 << 10), Some(512 << 10)), (None, None)] {
        let (_dir, trace) = open(&write(sampling));
        let mut damage = Vec::new();
        let md = Metadata::load(&trace, &mut damage);
        assert!(damage.is_empty());
        assert_eq!(md.sample_interval, want);
    }
}

#[test]
fn an_attached_recording_says_it_starts_mid_run() {
    use memlens_trace::{Attached, Meta, TraceWriter};
    let attached = Attached {
        pid: 4242,
        attach_unix_ns: 1_800_000_000_000_000_000,
        process_start_unix_ns: 1_799_999_000_000_000_000,
    };
    for (mark, want) in [(Some(attached), Some(attached)), (None, None)] {
        let mut w = TraceWriter::new(Vec::new(), true).unwrap();
        w.meta(&common::process()).unwrap();
        if let Some(a) = mark {
            w.meta(&Meta::Attached(a)).unwrap();
        }
        let (_dir, trace) = open(&w.finish().unwrap());
        let mut damage = Vec::new();
        let md = Metadata::load(&trace, &mut damage);
        assert!(damage.is_empty());
        assert_eq!(md.attached, want);
    }
}

/// A stream started at a time gives exactly the whole stream's events from that time
/// on, in the same order, ties between threads included, without reading the chunks
/// that end before it.
#[test]
fn a_stream_from_a_time_is_the_rest_of_the_whole_stream() {
    // Three threads whose clocks tie often: times step by 10 every three events.
    let events: Vec<Event> = (0..6000u64)
        .map(|i| Event::Alloc {
            t: 1000 + (i / 3) * 10 + (i % 2) * 10,
            tid: [3, 7, 9][(i % 3) as usize],
            addr: 0x1000 + i * 16,
            size: 16,
            stack: 1,
            func: memlens_trace::AllocFn::Malloc,
        })
        .collect();
    let mut w = TraceWriter::new(Vec::new(), true)
        .unwrap()
        .with_chunk_bytes(700);
    w.meta(&common::process()).unwrap();
    events.iter().for_each(|e| w.event(e).unwrap());
    let (_dir, trace) = open(&w.finish().unwrap());
    let whole: Vec<Event> = EventStream::new(&trace).collect();
    assert_eq!(whole.len(), events.len());
    for from in [0, 1000, 1005, 1010, 11_230, 19_990, 20_000, 20_010, 40_000] {
        let mut stream = EventStream::from_time(&trace, from);
        let rest: Vec<Event> = stream.by_ref().collect();
        let want: Vec<Event> = whole.iter().filter(|e| e.time() >= from).copied().collect();
        assert_eq!(rest, want, "from {from}");
        assert!(stream.damage().is_empty());
        // The chunks that end before the start are not read.
        let read = stream.chunks_done() as usize;
        let ending_after = trace
            .chunks()
            .iter()
            .filter(|c| c.header.kind == memlens_trace::format::ChunkKind::Events)
            .filter(|c| c.header.t_last >= from)
            .count();
        assert_eq!(read, ending_after, "from {from}");
    }
}
