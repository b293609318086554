//! Allocator latencies (`memlens record --latency`): the optional latency
//! columns of event chunks round-trip through the writer, the time merge and
//! the dump; chunks without latencies are unchanged; readers that know only
//! the first ten columns still read chunks with latencies; damaged latency
//! columns are reported as damage with the events before them kept.

mod common;

use memlens_trace::columns::{
    BASE_COLUMNS, ColumnDecoder, ColumnEncoder, LATENCY_COLUMNS, MAX_LATENCY_NS, col,
};
use memlens_trace::varint::put_u64;
use memlens_trace::{Event, EventStream, TraceWriter};

/// A latency for event `i`: mostly tens of ns, a few long, some unmeasured.
fn latency_of(i: usize) -> Option<u32> {
    match i % 50 {
        0 => None,
        1 => Some(2_500_000 + i as u32),
        7 => Some(0),
        _ => Some(12 + (i as u32 * 7919) % 180),
    }
}

fn trace_with_latencies(events: &[Event], chunk_bytes: usize, compress: bool) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), compress)
        .unwrap()
        .with_chunk_bytes(chunk_bytes);
    w.meta(&common::process()).unwrap();
    for (i, e) in events.iter().enumerate() {
        w.event_with_latency(e, latency_of(i)).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn latencies_come_back_with_their_events_in_time_order() {
    let events = common::events(6000);
    for compress in [false, true] {
        let bytes = trace_with_latencies(&events, 900, compress);
        let (_dir, trace) = common::open(&bytes);
        assert!(trace.chunks().len() > 10, "small chunks make many chunks");
        let mut want: Vec<(Event, Option<u32>)> = events
            .iter()
            .enumerate()
            .map(|(i, e)| (*e, latency_of(i)))
            .collect();
        want.sort_by_key(|(e, _)| (e.time(), e.tid()));
        let mut stream = EventStream::new(&trace);
        let mut got = Vec::new();
        while let Some(pair) = stream.next_with_latency() {
            assert_eq!(stream.latency_ns(), pair.1);
            got.push(pair);
        }
        assert!(stream.take_damage().is_empty());
        assert_eq!(got, want);
    }
}

#[test]
fn dump_prints_latencies_when_present() {
    let events = common::events(40);
    let bytes = trace_with_latencies(&events, 1 << 20, true);
    let (_dir, trace) = common::open(&bytes);
    let mut out = Vec::new();
    memlens_trace::dump::dump(&trace, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" alloc ") || l.contains(" free ") || l.contains(" realloc "))
        .collect();
    assert_eq!(lines.len(), 40);
    let with = lines.iter().filter(|l| l.contains(" latency=")).count();
    assert_eq!(with, 39, "event 0 has no measured latency:\n{text}");
    assert!(text.contains(&format!("latency={}ns", latency_of(5).unwrap())));
    let plain = common::write_trace(40, 1 << 20, true);
    let (_dir2, trace) = common::open(&plain);
    let mut out = Vec::new();
    memlens_trace::dump::dump(&trace, &mut out).unwrap();
    assert!(!String::from_utf8(out).unwrap().contains("latency="));
}

#[test]
fn traces_without_latencies_are_unchanged() {
    // Writing "not measured" explicitly gives the same bytes as the plain
    // writer, and the chunks keep the ten columns of version 1.
    let events = common::events(3000);
    let plain = common::write_trace(3000, 700, true);
    let mut w = TraceWriter::new(Vec::new(), true)
        .unwrap()
        .with_chunk_bytes(700);
    w.meta(&common::process()).unwrap();
    for m in common::metas() {
        w.meta(&m).unwrap();
    }
    for e in &events {
        w.event_with_latency(e, None).unwrap();
    }
    assert_eq!(w.finish().unwrap(), plain);
    let mut enc = ColumnEncoder::default();
    enc.reset(0);
    for e in &events[..100] {
        enc.push(e);
    }
    assert!(!enc.has_latency());
    assert_eq!(enc.columns().len(), BASE_COLUMNS);
    let (_dir, trace) = common::open(&plain);
    let mut stream = EventStream::new(&trace);
    let mut n = 0;
    while let Some((_, latency)) = stream.next_with_latency() {
        assert_eq!(latency, None);
        n += 1;
    }
    assert_eq!(n, 3000);
}

fn decode(
    columns: &[Vec<u8>],
    records: usize,
    t_first: u64,
) -> Vec<Result<(Event, Option<u32>), usize>> {
    let cols: Vec<&[u8]> = columns.iter().map(Vec::as_slice).collect();
    let mut d = ColumnDecoder::new(cols, records as u32, 9, t_first);
    let mut out = Vec::new();
    while let Some(r) = d.next() {
        out.push(r.map(|e| (e, d.latency_ns())));
    }
    out
}

#[test]
fn first_latency_in_the_middle_of_a_chunk_marks_the_earlier_events_unmeasured() {
    let events = common::thread9(60);
    let cols = common::encode(&events, |i| (i >= 17).then_some(100 + i as u32));
    assert_eq!(cols.len(), LATENCY_COLUMNS);
    let got = decode(&cols, events.len(), events[0].time());
    assert_eq!(got.len(), events.len());
    for (i, r) in got.into_iter().enumerate() {
        let (e, latency) = r.unwrap();
        assert_eq!(e, events[i]);
        assert_eq!(latency, (i >= 17).then_some(100 + i as u32), "event {i}");
    }
}

#[test]
fn latencies_beyond_the_limit_are_stored_as_the_limit() {
    let events = common::thread9(8);
    let cols = common::encode(&events, |_| Some(u32::MAX));
    for r in decode(&cols, events.len(), events[0].time()) {
        assert_eq!(r.unwrap().1, Some(MAX_LATENCY_NS));
    }
}

#[test]
fn readers_of_ten_columns_read_chunks_with_latencies() {
    // An older reader passes only the columns it knows; it must decode the
    // same events (the latency columns are simply not read).
    let events = common::thread9(300);
    let cols = common::encode(&events, |i| Some(i as u32));
    let old: Vec<Vec<u8>> = cols[..BASE_COLUMNS].to_vec();
    let got = decode(&old, events.len(), events[0].time());
    let got: Vec<Event> = got.into_iter().map(|r| r.unwrap().0).collect();
    assert_eq!(got, events);
}

#[test]
fn damaged_latency_columns_are_reported_and_earlier_events_kept() {
    let events = common::thread9(400);
    // Latencies below 127 ns: one byte each in the columns.
    let cols = common::encode(&events, |i| Some(20 + (i % 50) as u32));
    let frees: Vec<usize> = (0..events.len())
        .filter(|&i| matches!(events[i], Event::Free { .. }))
        .collect();
    assert!(frees.len() > 20);

    // A latency column cut short: the free whose latency is missing is
    // where decoding stops.
    let mut short = cols.clone();
    short[col::LAT_FREE].truncate(10);
    let (got, damage) = common::read_back(&common::file_with_chunk(&short, &events));
    assert_eq!(got.len(), frees[10], "every event before the 11th free");
    assert_eq!(got[3], (events[3], Some(23)));
    assert_eq!(damage.len(), 1);
    assert!(
        damage[0].reason.contains("does not decode"),
        "{}",
        damage[0].reason
    );
    assert_eq!(
        damage[0].offset, 24,
        "the chunk right after the file header"
    );

    // Only one of the two latency columns: the free column counts as empty.
    let (got, damage) =
        common::read_back(&common::file_with_chunk(&cols[..=col::LAT_ALLOC], &events));
    assert_eq!(got.len(), frees[0]);
    assert_eq!(damage.len(), 1);

    // A value that is not a 32-bit latency.
    let mut huge = cols.clone();
    let mut column = Vec::new();
    put_u64(&mut column, u64::from(u32::MAX) + 1);
    column.extend_from_slice(&huge[col::LAT_ALLOC][1..]);
    huge[col::LAT_ALLOC] = column;
    let (got, damage) = common::read_back(&common::file_with_chunk(&huge, &events));
    assert!(got.is_empty(), "the first allocation is the bad one");
    assert_eq!(damage.len(), 1);

    // Intact columns through the same path read back completely.
    let (got, damage) = common::read_back(&common::file_with_chunk(&cols, &events));
    assert!(damage.is_empty());
    assert_eq!(got.len(), events.len());
}
