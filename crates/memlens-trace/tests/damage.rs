//! Bad input: every kind of damage gets one clear message with the byte
//! offset, and every complete chunk is kept.

mod common;

use memlens_trace::{EventStream, Metadata, TraceFile, format::FILE_HEADER_LEN};
use proptest::prelude::*;

fn write(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mlens");
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

fn events_read(path: &std::path::Path) -> (usize, Vec<memlens_trace::Damage>) {
    let trace = TraceFile::open(path).unwrap();
    let mut stream = EventStream::new(&trace);
    let n = stream.by_ref().count();
    let mut damage = trace.index_damage().to_vec();
    damage.extend(stream.take_damage());
    (n, damage)
}

#[test]
fn empty_file_is_named_as_such() {
    let (_d, path) = write(&[]);
    let e = TraceFile::open(&path).unwrap_err().to_string();
    assert!(e.contains("t.mlens") && e.contains("empty"), "{e}");
}

#[test]
fn foreign_file_is_not_a_trace() {
    let (_d, path) = write(b"#!/bin/sh\necho hello\n");
    let e = TraceFile::open(&path).unwrap_err().to_string();
    assert!(
        e.contains("not a memlens trace") && e.contains("offset 0"),
        "{e}"
    );
}

#[test]
fn newer_version_asks_for_an_upgrade() {
    let mut bytes = common::write_trace(10, 1 << 20, true);
    bytes[8] = 9; // version 9
    bytes[10] = 9; // needs reader 9
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[0..20]);
    let crc = crc.finalize().to_le_bytes();
    bytes[20..24].copy_from_slice(&crc);
    let (_d, path) = write(&bytes);
    let e = TraceFile::open(&path).unwrap_err().to_string();
    assert!(
        e.contains("newer memlens") && e.contains("version 9"),
        "{e}"
    );
}

#[test]
fn newer_compatible_version_with_header_extension_is_read() {
    let bytes = common::write_trace(50, 1 << 20, true);
    // Version 2 file that version-1 readers may read, with 8 extension bytes.
    let mut out = bytes[..FILE_HEADER_LEN].to_vec();
    out[8] = 2;
    out[12..16].copy_from_slice(&((FILE_HEADER_LEN + 8) as u32).to_le_bytes());
    out.extend_from_slice(b"EXTENDED");
    let mut crc = crc32fast::Hasher::new();
    crc.update(&out[0..20]);
    crc.update(&out[FILE_HEADER_LEN..]);
    let crc = crc.finalize().to_le_bytes();
    out[20..24].copy_from_slice(&crc);
    out.extend_from_slice(&bytes[FILE_HEADER_LEN..]);
    let (_d, path) = write(&out);
    let (n, damage) = events_read(&path);
    assert_eq!(n, 50);
    assert!(damage.is_empty());
}

#[test]
fn truncated_file_keeps_every_complete_chunk() {
    let bytes = common::write_trace(3000, 500, true);
    let full = {
        let (_d, path) = write(&bytes);
        events_read(&path).0
    };
    let last_events = {
        let (_d, path) = write(&bytes);
        let t = TraceFile::open(&path).unwrap();
        *t.chunks()
            .iter()
            .rev()
            .find(|c| c.header.kind == memlens_trace::format::ChunkKind::Events)
            .unwrap()
    };
    let cut = last_events.offset as usize + 60;
    let (_d, path) = write(&bytes[..cut]);
    let trace = TraceFile::open(&path).unwrap();
    let last = trace.chunks().last().unwrap();
    let damage = &trace.index_damage()[0];
    assert!(damage.reason.contains("truncated"), "{}", damage.reason);
    // The damage is exactly where the last complete chunk ends.
    let end = last.offset + 48 + u64::from(last.header.stored_len);
    assert_eq!(damage.offset, end);
    let (n, _) = events_read(&path);
    assert!(n < full && n > full * 8 / 10, "{n} of {full}");
}

#[test]
fn flipped_payload_byte_loses_only_its_chunk() {
    let bytes = common::write_trace(3000, 500, true);
    let (_d, path) = write(&bytes);
    let trace = TraceFile::open(&path).unwrap();
    let victim = trace.chunks()[trace.chunks().len() / 2];
    let mut bad = bytes.clone();
    bad[victim.offset as usize + 48 + 3] ^= 0x40;
    let (_d2, bad_path) = write(&bad);
    let (n, damage) = events_read(&bad_path);
    assert_eq!(damage.len(), 1);
    assert_eq!(damage[0].offset, victim.offset);
    assert!(
        damage[0].reason.contains("checksum"),
        "{}",
        damage[0].reason
    );
    assert_eq!(n, 3000 - victim.header.records as usize);
}

#[test]
fn flipped_header_byte_resyncs_on_the_next_chunk() {
    let bytes = common::write_trace(3000, 500, true);
    let (_d, path) = write(&bytes);
    let trace = TraceFile::open(&path).unwrap();
    let victim = trace.chunks()[5];
    let mut bad = bytes.clone();
    bad[victim.offset as usize + 13] ^= 0x01; // stored_len
    let (_d2, bad_path) = write(&bad);
    let damaged = TraceFile::open(&bad_path).unwrap();
    assert_eq!(damaged.index_damage()[0].offset, victim.offset);
    assert_eq!(damaged.chunks().len(), trace.chunks().len() - 1);
    let mut d = Vec::new();
    let md = Metadata::load(&damaged, &mut d);
    assert_eq!(md.process.unwrap().pid, 42);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any prefix of a trace opens (or is refused with a message) and reads
    /// back a prefix-consistent set of events without panicking.
    #[test]
    fn any_prefix_reads_without_panic(cut in 0usize..6000) {
        let bytes = common::write_trace(400, 300, true);
        let cut = cut.min(bytes.len());
        let (_d, path) = write(&bytes[..cut]);
        if let Ok(trace) = TraceFile::open(&path) {
            let n = EventStream::new(&trace).count();
            prop_assert!(n <= 400);
            let mut d = Vec::new();
            let _ = Metadata::load(&trace, &mut d);
        }
    }

    /// Random byte flips never panic the reader.
    #[test]
    fn random_corruption_never_panics(flips in proptest::collection::vec((0usize..4000, any::<u8>()), 1..8)) {
        let mut bytes = common::write_trace(300, 250, true);
        for (at, x) in flips {
            let i = at % bytes.len();
            bytes[i] ^= x;
        }
        let (_d, path) = write(&bytes);
        if let Ok(trace) = TraceFile::open(&path) {
            let _ = EventStream::new(&trace).count();
            let mut d = Vec::new();
            let _ = Metadata::load(&trace, &mut d);
            let mut sink = Vec::new();
            let _ = memlens_trace::dump::dump(&trace, &mut sink);
        }
    }
}
