//! The records of typed (Java) traces: type names, frame names and typed stacks
//! survive a round trip, typed stacks have exactly their base stack's frames, and
//! malformed typed stacks are damage, not panics.

use memlens_trace::{
    AllocFn, ChunkBuilder, ClockSource, Event, Meta, Metadata, ProcessInfo, Record, RecordDecoder,
    SYNTHETIC_FRAME_BASE, TraceFile, TraceWriter, format::ChunkKind,
};

fn process() -> Meta {
    Meta::Process(ProcessInfo {
        pid: 1,
        ppid: 0,
        exe: "/usr/bin/java".into(),
        cmdline: vec!["java".into()],
        start_unix_ns: 0,
        clock: ClockSource::Monotonic,
        unwinder: "jvmti".into(),
        recorder: "test".into(),
    })
}

#[test]
fn typed_records_round_trip_and_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("java.mlens");
    let mut w = TraceWriter::new(std::fs::File::create(&path).unwrap(), true).unwrap();
    w.meta(&process()).unwrap();
    let main = SYNTHETIC_FRAME_BASE;
    let put = SYNTHETIC_FRAME_BASE + 1;
    // The typed stack comes first in the file: readers resolve it once all is loaded.
    let records = [
        Meta::TypedStack {
            id: 3,
            stack: 2,
            type_id: 1,
        },
        Meta::TypedStack {
            id: 4,
            stack: 0,
            type_id: 1,
        },
        Meta::TypeName {
            id: 1,
            name: "java.util.HashMap$Node".into(),
        },
        Meta::FrameName {
            ip: main,
            function: "com.example.App.main".into(),
            file: "App.java".into(),
            line: 12,
        },
        Meta::FrameName {
            ip: put,
            function: "java.util.HashMap.put".into(),
            file: String::new(),
            line: 0,
        },
        Meta::StackNode {
            id: 1,
            parent: 0,
            ip: main,
        },
        Meta::StackNode {
            id: 2,
            parent: 1,
            ip: put,
        },
    ];
    for m in &records {
        w.meta(m).unwrap();
    }
    w.event(&Event::Alloc {
        t: 5,
        tid: 7,
        addr: 0x10,
        size: 32,
        stack: 3,
        func: AllocFn::Malloc,
    })
    .unwrap();
    w.finish().unwrap();

    let trace = TraceFile::open(&path).unwrap();
    let mut damage = Vec::new();
    let md = Metadata::load(&trace, &mut damage);
    assert!(damage.is_empty(), "{damage:?}");
    assert_eq!(md.stacks.frames(3), vec![put, main]);
    assert_eq!(md.stacks.frames(3), md.stacks.frames(2));
    assert_eq!(md.stacks.type_of(3), 1);
    assert_eq!(md.stacks.type_of(2), 0);
    assert_eq!(md.type_name(3), Some("java.util.HashMap$Node"));
    assert_eq!(md.type_name(2), None);
    assert!(
        md.stacks.frames(4).is_empty(),
        "a typed empty stack has no frame"
    );
    assert!(md.stacks.has_types());
    let name = &md.frame_names[&main];
    assert_eq!(
        (name.function.as_str(), name.file.as_str(), name.line),
        ("com.example.App.main", "App.java", 12)
    );

    // Every record decodes back to itself.
    let mut dump = Vec::new();
    memlens_trace::dump::dump(&trace, &mut dump).unwrap();
    let dump = String::from_utf8(dump).unwrap();
    assert!(dump.contains("typed-stack id=3 stack=2 type=1"), "{dump}");
    assert!(
        dump.contains("type id=1 name=\"java.util.HashMap$Node\""),
        "{dump}"
    );
    assert!(
        dump.contains("function=\"com.example.App.main\" file=\"App.java\" line=12"),
        "{dump}"
    );
}

#[test]
fn a_typed_stack_naming_itself_or_a_later_stack_is_damage() {
    for body in [
        vec![5u8, 0, 1], // id 5, back 0: names itself
        vec![2u8, 3, 1], // id 2, back 3: before the root
        vec![2u8],       // truncated
    ] {
        let mut b = ChunkBuilder::new(ChunkKind::Process, 0);
        b.sized(memlens_trace::format::tag::TYPED_STACK, &body);
        let mut out = Vec::new();
        b.finish(&mut out, None);
        let head: &[u8; memlens_trace::format::CHUNK_HEADER_LEN] = out
            [..memlens_trace::format::CHUNK_HEADER_LEN]
            .try_into()
            .unwrap();
        let header = memlens_trace::chunk::ChunkHeader::parse(head).unwrap();
        let payload = &out[memlens_trace::format::CHUNK_HEADER_LEN..];
        let records: Vec<_> = RecordDecoder::new(&header, payload).collect();
        assert!(
            matches!(records.as_slice(), [Err(_)]),
            "{body:?} gave {records:?}"
        );
        assert!(!records.iter().any(|r| matches!(r, Ok(Record::Meta(_)))));
    }
}

#[test]
fn heap_walks_and_their_structures_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("walks.mlens");
    let mut w = TraceWriter::new(std::fs::File::create(&path).unwrap(), true).unwrap();
    w.meta(&process()).unwrap();
    let walk = memlens_trace::HeapWalk {
        t: 1_000,
        duration_ns: 250,
        pause_ns: 200,
        objects: 40,
        references: 90,
    };
    let map = memlens_trace::Contained {
        container: 0x100,
        container_type: 2,
        members: vec![0x100, 0x110, 0x4000],
    };
    let multiple = memlens_trace::Contained {
        container: 0,
        container_type: 0,
        members: vec![0x20],
    };
    // A contained record before any walk belongs to none and is ignored.
    w.meta(&Meta::Contained(multiple.clone())).unwrap();
    w.meta(&Meta::HeapWalk(walk)).unwrap();
    w.meta(&Meta::Contained(map.clone())).unwrap();
    w.meta(&Meta::Contained(multiple.clone())).unwrap();
    w.finish().unwrap();
    let trace = TraceFile::open(&path).unwrap();
    let mut damage = Vec::new();
    let md = Metadata::load(&trace, &mut damage);
    assert!(damage.is_empty(), "{damage:?}");
    assert_eq!(md.heap_walks.len(), 1);
    assert_eq!(md.heap_walks[0].walk, walk);
    assert_eq!(md.heap_walks[0].structures, vec![map, multiple]);
}
