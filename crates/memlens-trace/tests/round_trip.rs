//! Writing then reading gives back exactly what was written, in time order.

mod common;

use memlens_trace::{Event, EventStream, Metadata, TraceFile};

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
