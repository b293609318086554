//! The decoder on streams built by hand: every record type, pieces cut anywhere,
//! and each kind of damage reported at its word.

use super::*;
use crate::protocol::{kind, record_type as rec};
use crate::test_stream::TestStream;

/// Writes down everything it is handed, one line each.
#[derive(Default)]
struct Lines(Vec<String>);

impl RecordSink for Lines {
    type Error = DecodeError;

    fn reference(&mut self, site: u32, address: u64) -> Result<(), DecodeError> {
        self.0.push(format!("ref {site} {address:#x}"));
        Ok(())
    }

    fn control(&mut self, record: ControlRecord<'_>) -> Result<(), DecodeError> {
        self.0.push(format!("{record:?}"));
        Ok(())
    }
}

/// Decodes `bytes` in pieces of `piece` bytes.
fn decode(bytes: &[u8], piece: usize) -> Result<Vec<String>, DecodeError> {
    let mut decoder = Decoder::new();
    let mut lines = Lines::default();
    for chunk in bytes.chunks(piece) {
        decoder.feed(chunk, &mut lines)?;
    }
    decoder.finish()?;
    Ok(lines.0)
}

fn every_record() -> TestStream {
    let mut s = TestStream::default();
    s.control(
        rec::SITE,
        &[1, 0x401000, u64::from(kind::READ) | 8 << 8],
        Some("main m.c:9 load"),
    )
    .control(
        rec::SITE,
        &[70_000, 0x401004, u64::from(kind::MODIFY) | 4 << 8],
        Some("f"),
    )
    .control(rec::HEAPSITE, &[7, 0x401100], Some("heap: main m.c:5"))
    .control(rec::ALLOC, &[0x10000, 0x100, 7], None)
    .reference(1, 0x10008)
    .control(rec::NAME, &[0x20000, 0x80], Some("A"))
    .control(rec::START, &[], None)
    .control(rec::BIGREF, &[70_000, 0x1234_5678_9abc_def0], None)
    .control(rec::STOP, &[], None)
    .control(rec::FREE, &[0x10000], None)
    .control(rec::STACK, &[0x7000, 0x8000, 1], None)
    .control(rec::MODULE, &[0x401000, 0x2000, 0], Some("/usr/bin/m"))
    .control(200, &[1, 2, 3], None)
    .control(rec::END, &[], Some("exit"));
    s
}

#[test]
fn every_record_type_decodes_to_its_fields() {
    let lines = decode(&every_record().bytes(), 4096).unwrap();
    let expected = [
        r#"Site { id: 1, ip: 4198400, kind: Read, size: 8, label: "main m.c:9 load" }"#,
        r#"Site { id: 70000, ip: 4198404, kind: Modify, size: 4, label: "f" }"#,
        r#"HeapSite { id: 7, ip: 4198656, name: "heap: main m.c:5" }"#,
        "Alloc { address: 65536, size: 256, heap_site: 7 }",
        "ref 1 0x10008",
        r#"Name { address: 131072, len: 128, name: "A" }"#,
        "Start",
        "ref 70000 0x123456789abcdef0",
        "Stop",
        "Free { address: 65536 }",
        "Stack { lo: 28672, hi: 32768 }",
        r#"Module { text: 4198400, text_size: 8192, bias: 0, path: "/usr/bin/m" }"#,
        "Unknown { record_type: 200 }",
        r#"End { why: "exit" }"#,
    ];
    assert_eq!(lines, expected);
}

#[test]
fn pieces_cut_anywhere_give_the_same_records() {
    let bytes = every_record().bytes();
    let whole = decode(&bytes, bytes.len()).unwrap();
    for piece in [1, 3, 7, 8, 9, 13, 64] {
        assert_eq!(decode(&bytes, piece).unwrap(), whole, "pieces of {piece}");
    }
    let mut decoder = Decoder::new();
    let mut lines = Lines::default();
    decoder
        .feed_words(&every_record().words, &mut lines)
        .unwrap();
    decoder.finish().unwrap();
    assert_eq!(lines.0, whole);
    assert_eq!(decoder.words_decoded(), every_record().words.len() as u64);
}

#[test]
fn damage_is_reported_at_its_word() {
    let site = |s: &mut TestStream| {
        s.control(rec::SITE, &[1, 0, 8 << 8], Some("x"));
    };
    // Site record: control word, 3 words, length word, 1 text word = 6 words.
    let cases: Vec<(TestStream, Option<usize>, DecodeError)> = vec![
        (
            {
                let mut s = TestStream::default();
                site(&mut s);
                s.reference(2, 0x1000);
                s
            },
            None,
            DecodeError::UnknownSite { offset: 6, site: 2 },
        ),
        (
            {
                let mut s = TestStream::default();
                site(&mut s);
                s.control(rec::BIGREF, &[1 << 40, 0], None);
                s
            },
            None,
            DecodeError::UnknownSite {
                offset: 6,
                site: 1 << 40,
            },
        ),
        (
            {
                let mut s = TestStream::default();
                site(&mut s);
                s.reference(1, 0x1000);
                s
            },
            Some(3),
            DecodeError::EndsInsideWord { offset: 6 },
        ),
        (
            {
                let mut s = TestStream::default();
                site(&mut s);
                s
            },
            Some(8),
            DecodeError::EndsInsideRecord { offset: 0 },
        ),
        (
            {
                let mut s = TestStream::default();
                s.words.push(u64::from(rec::NAME) << 40 | 1 << 20);
                s
            },
            None,
            DecodeError::RecordTooLong {
                offset: 0,
                words: 1 << 20,
            },
        ),
        (
            {
                let mut s = TestStream::default();
                s.reference(0, 0).control(rec::SITE, &[1, 0, 0], None);
                s
            },
            None,
            DecodeError::ShortRecord {
                offset: 1,
                record_type: rec::SITE,
            },
        ),
        (
            {
                let mut s = TestStream::default();
                s.control(rec::SITE, &[0, 0, 0], Some("x"));
                s
            },
            None,
            DecodeError::ImpossibleSite { offset: 0, site: 0 },
        ),
        (
            {
                let mut s = TestStream::default();
                s.control(rec::SITE, &[1, 0, 9], Some("x"));
                s
            },
            None,
            DecodeError::UnknownKind { offset: 0, kind: 9 },
        ),
    ];
    for (stream, cut, expected) in cases {
        let mut bytes = stream.bytes();
        if let Some(cut) = cut {
            bytes.truncate(bytes.len() - cut);
        }
        for piece in [1, 5, 4096] {
            let error = decode(&bytes, piece).unwrap_err();
            assert_eq!(error, expected, "pieces of {piece}");
            assert!(
                error
                    .to_string()
                    .contains(&format!("at word {}", error.offset()))
            );
        }
    }
}

#[test]
fn an_empty_stream_is_fine_and_a_lone_byte_is_not() {
    assert_eq!(decode(&[], 8).unwrap(), Vec::<String>::new());
    assert_eq!(
        decode(&[1], 8).unwrap_err(),
        DecodeError::EndsInsideWord { offset: 0 }
    );
}
