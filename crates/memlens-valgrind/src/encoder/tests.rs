//! The encoder behind the stream reader, on streams built by hand and read back
//! from the trace it writes.

use std::io::{self, Read};

use memlens_trace::{RefItem, TraceFile, read_references};

use super::*;
use crate::decoder::Decoder;
use crate::protocol::record_type as rec;
use crate::stream_reader::read_stream;
use crate::test_stream::TestStream;

/// Delivers a stream in reads of `.1` bytes, cutting words and records anywhere.
struct Pieces<'a>(&'a [u8], usize);

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.len().min(self.1).min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// Encodes `stream` read in pieces of `piece` bytes; returns what the trace holds.
fn encode(
    stream: &TestStream,
    piece: usize,
    main_exe: Option<PathBuf>,
) -> Result<(Vec<RefItem>, Summary), EncodeError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mlens");
    let file = std::fs::File::create(&path).unwrap();
    let trace = TraceWriter::new(io::BufWriter::new(file), true).unwrap();
    let mut encoder = TraceEncoder::new(trace, main_exe);
    let bytes = stream.bytes();
    let mut reads = 0;
    read_stream(
        Pieces(&bytes, piece),
        &mut Decoder::new(),
        &mut encoder,
        &mut |_| reads += 1,
    )?;
    assert!(reads >= bytes.len() / piece);
    let (mut out, summary) = encoder.finish()?;
    out.flush()?;
    let trace = TraceFile::open(&path).unwrap();
    let mut items = Vec::new();
    assert!(read_references(&trace, &mut |i| items.push(i)).is_empty());
    Ok((items, summary))
}

fn references(items: &[RefItem]) -> Vec<RefRecord> {
    (items.iter())
        .filter_map(|i| match i {
            RefItem::Reference(r) => Some(*r),
            _ => None,
        })
        .collect()
}

fn regions(items: &[RefItem]) -> Vec<(u16, String)> {
    (items.iter())
        .filter_map(|i| match i {
            RefItem::Region { id, name, .. } => Some((*id, name.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn references_get_labels_regions_and_kinds_in_any_read_pieces() {
    let mut s = TestStream::default();
    s.control(rec::SITE, &[1, 0x401000, 8 << 8], Some("main m.c:9 load"))
        .control(
            rec::SITE,
            &[2, 0x401004, 1 | 8 << 8],
            Some("main m.c:9 store"),
        )
        .control(rec::HEAPSITE, &[7, 0x401100], Some("heap: main m.c:5"))
        .control(rec::ALLOC, &[0x10000, 0x100, 7], None)
        .control(rec::NAME, &[0x20000, 0x80], Some("A"));
    for i in 0..100u64 {
        s.reference(1, 0x10000 + i * 8 % 0x100)
            .reference(2, 0x20000 + i * 8 % 0x80);
    }
    s.control(rec::FREE, &[0x10000], None)
        .reference(1, 0x10000)
        .control(rec::BIGREF, &[2, 0x1234_5678_9abc], None)
        .control(rec::END, &[], Some("exit"));
    for piece in [1, 3, 8, 13, 4096] {
        let (items, summary) = encode(&s, piece, None).unwrap();
        assert_eq!(summary.data, 202);
        assert_eq!(summary.regions, 2);
        assert_eq!(summary.ended.as_deref(), Some("exit"));
        let refs = references(&items);
        assert_eq!(refs.len(), 202);
        assert_eq!(
            regions(&items),
            [(1, "A".into()), (2, "heap: main m.c:5".into())]
        );
        assert!(refs[..200].iter().all(|r| r.size == 8));
        assert_eq!(
            (refs[0].kind, refs[0].region, refs[0].label),
            (RefKind::Read, 2, 1)
        );
        assert_eq!(
            (refs[1].kind, refs[1].region, refs[1].label),
            (RefKind::Write, 1, 2)
        );
        assert_eq!(refs[200].region, 0, "freed block");
        assert_eq!(refs[201].addr, 0x1234_5678_9abc);
    }
}

#[test]
fn instruction_fetches_share_one_label() {
    let mut s = TestStream::default();
    s.control(
        rec::SITE,
        &[1, 0x401000, 3 | 1 << 8],
        Some("instruction fetch"),
    )
    .control(
        rec::SITE,
        &[2, 0x401001, 3 | 4 << 8],
        Some("instruction fetch"),
    )
    .reference(1, 0x401000)
    .reference(2, 0x401001);
    let (items, summary) = encode(&s, 4096, None).unwrap();
    assert_eq!(
        (summary.fetches, summary.sites, summary.ended),
        (2, 2, None)
    );
    let refs = references(&items);
    assert_eq!(refs[0].label, refs[1].label);
    assert_eq!((refs[0].size, refs[1].size), (1, 4));
}

/// A variable of this test binary for the module test to find.
#[unsafe(no_mangle)]
#[used]
static MEMLENS_VALGRIND_TEST_TABLE: [u64; 4] = [1, 2, 3, 4];

#[test]
fn a_module_record_names_its_data_symbols() {
    let exe = std::env::current_exe().unwrap().canonicalize().unwrap();
    let in_file = (memlens_symbols::data_symbols(&exe)
        .unwrap()
        .symbols
        .into_iter())
    .find(|s| s.name == "MEMLENS_VALGRIND_TEST_TABLE")
    .unwrap()
    .address;
    let runtime = std::ptr::addr_of!(MEMLENS_VALGRIND_TEST_TABLE) as u64;
    let mut s = TestStream::default();
    s.control(rec::SITE, &[1, 0, 8 << 8], Some("load"))
        .control(
            rec::MODULE,
            &[0, 0, runtime.wrapping_sub(in_file)],
            Some(&exe.to_string_lossy()),
        )
        .reference(1, runtime + 8);
    let file = exe.file_name().unwrap().to_string_lossy().into_owned();
    for (main_exe, name) in [
        (
            Some(exe.clone()),
            "global: MEMLENS_VALGRIND_TEST_TABLE".to_owned(),
        ),
        (
            None,
            format!("global: MEMLENS_VALGRIND_TEST_TABLE ({file})"),
        ),
    ] {
        let (items, _) = encode(&s, 4096, main_exe).unwrap();
        assert_eq!(regions(&items), [(1, name)]);
    }
}

#[test]
fn corrupt_streams_are_errors_not_panics() {
    let mut unknown_site = TestStream::default();
    unknown_site.reference(5, 0x1000);
    let mut no_text = TestStream::default();
    no_text.control(rec::SITE, &[1, 0, 0], None);
    for stream in [unknown_site, no_text] {
        assert!(matches!(
            encode(&stream, 4096, None),
            Err(EncodeError::Decode(_))
        ));
    }
    let trace = TraceWriter::new(Vec::new(), false).unwrap();
    let mut encoder = TraceEncoder::new(trace, None);
    let error = read_stream(
        &[1u8, 2, 3][..],
        &mut Decoder::new(),
        &mut encoder,
        &mut |_| {},
    );
    assert!(matches!(
        error,
        Err(EncodeError::Decode(DecodeError::EndsInsideWord {
            offset: 0
        }))
    ));
}
