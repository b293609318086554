//! Memory-reference records (chunk kind 3) for the cache lens: named regions,
//! source-statement labels and the references themselves.
//!
//! A reference chunk's payload is a sequence of sized records (tag, varint body
//! length, body, like the process stream), so readers skip what they do not know:
//!
//! ```text
//! 0x90 region    varint id, varint start, varint len, string name
//! 0x91 label     varint id, string text
//! 0x92 block     varint count, then four columns, each a varint byte length
//!                followed by its bytes:
//!                  ops     one byte per reference
//!                  labels  varint label id, for references whose op says so
//!                  deltas  zigzag varint (address − predicted address)
//!                  extras  varint size and/or varint region, when the op says so
//! ```
//!
//! The op byte: bits 0–1 the access kind (0 read, 1 write, 2 modify, 3 instruction
//! fetch); bit 2 set = a new label follows in `labels` (else the previous
//! reference's label); bit 3 set = a new size follows in `extras` (else the label's
//! previous size); bit 4 set = a new region follows in `extras`, after the size
//! (else the label's previous region). Addresses are predicted per label: the
//! label's previous address plus its previous stride, so every strided stream of a
//! loop (`A[i][k]`, `B[k][j]`, …) costs one zero byte per reference before
//! compression, and about nothing after it. All prediction state (per-label last
//! address, stride, size and region, and the previous label, all starting at 0)
//! is reset at the start of every block, so each block, and hence each chunk,
//! decodes on its own. A chunk's `t_first`/`t_last` are the ordinals (0-based
//! positions in the whole trace) of its first and last reference.
//!
//! Regions and labels are written before the references that use them.

use std::io::{self, Write};

use crate::encode::ChunkBuilder;
use crate::format::ChunkKind;
use crate::reader::{Damage, TraceFile};
use crate::varint::{Cursor, put_str, put_u64};
use crate::writer::TraceWriter;

mod block;
mod bounds;
mod convert;

pub use block::{decode_block, encode_block};
pub use bounds::RefBounds;
pub use convert::ConvertRef;

/// Tags of reference-chunk records.
pub mod ref_tag {
    /// A named address range.
    pub const REGION: u8 = 0x90;
    /// A source-statement label.
    pub const LABEL: u8 = 0x91;
    /// A block of references.
    pub const BLOCK: u8 = 0x92;
}

/// The most references in one block (the writer's block size).
pub const BLOCK_REFERENCES: usize = 16 * 1024;

/// The references [`read_reference_batches_as`] gathers before handing them over:
/// a few blocks, so that a consumer's cost per batch is spread over many.
pub const GATHER: usize = 4 * BLOCK_REFERENCES;

/// What a reference does (the op byte's low two bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RefKind {
    /// A load.
    Read = 0,
    /// A store.
    Write = 1,
    /// A load and a store of the same bytes.
    Modify = 2,
    /// An instruction fetch.
    Instruction = 3,
}

impl RefKind {
    fn from_bits(bits: u8) -> RefKind {
        match bits & 3 {
            0 => RefKind::Read,
            1 => RefKind::Write,
            2 => RefKind::Modify,
            _ => RefKind::Instruction,
        }
    }
}

/// One memory reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefRecord {
    /// The first byte touched.
    pub addr: u64,
    /// The number of bytes touched.
    pub size: u16,
    /// What the access does.
    pub kind: RefKind,
    /// The region id (0 = none).
    pub region: u16,
    /// The label id (0 = none).
    pub label: u16,
}

/// One decoded item of a reference stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefItem {
    /// A named address range.
    Region {
        /// Its id (1-based; 0 means "no region").
        id: u16,
        /// The first byte.
        start: u64,
        /// The length in bytes.
        len: u64,
        /// The name.
        name: String,
    },
    /// A source-statement label.
    Label {
        /// Its id (1-based; 0 means "no label").
        id: u16,
        /// The text.
        text: String,
    },
    /// A reference.
    Reference(RefRecord),
}

/// Decodes the payload of a reference chunk, calling `emit` for every item.
/// Returns the payload offset and reason of the first malformed record, if any;
/// items before it have been emitted.
pub fn decode_payload(
    payload: &[u8],
    emit: &mut dyn FnMut(RefItem),
) -> Result<(), (usize, &'static str)> {
    let mut block = Vec::new();
    decode_payload_batches(payload, &mut block, &mut |batch| match batch {
        RefBatch::Item(item) => emit(item),
        RefBatch::References(refs, _) => refs.iter().for_each(|&r| emit(RefItem::Reference(r))),
    })
}

/// What [`read_reference_batches`] delivers: a region or label, or the references
/// of one block (up to [`BLOCK_REFERENCES`]; [`read_reference_batches_as`] gathers
/// several) at once, as [`RefRecord`]s or, through [`read_reference_batches_as`],
/// already converted to the consumer's own type.
#[derive(Debug)]
pub enum RefBatch<'a, T = RefRecord> {
    /// A region or a label ([`RefItem::Reference`] never comes this way).
    Item(RefItem),
    /// The references of one block (or, gathered, of several), in order, and the
    /// bounds they keep.
    References(&'a [T], RefBounds),
}

/// [`decode_payload`] delivering each block's references as one slice, decoded into
/// `block` (reused): one call per block instead of one per reference.
pub fn decode_payload_batches(
    payload: &[u8],
    block: &mut Vec<RefRecord>,
    emit: &mut dyn FnMut(RefBatch<'_>),
) -> Result<(), (usize, &'static str)> {
    decode_payload_batches_as(payload, block, |r| r, emit)
}

/// [`decode_payload_batches`] converting each reference with `convert` as it is
/// decoded, so a consumer with its own reference type gets its slices without a
/// second pass over the block.
pub fn decode_payload_batches_as<T>(
    payload: &[u8],
    block: &mut Vec<T>,
    convert: impl ConvertRef<T>,
    emit: &mut dyn FnMut(RefBatch<'_, T>),
) -> Result<(), (usize, &'static str)> {
    block.clear();
    let mut bounds = RefBounds::EMPTY;
    decode_payload_gathering(payload, block, &mut bounds, 0, &convert, &mut |gathered| {
        emit(gathered.batch())
    })
}

/// What the gathering decoder hands over: a region or label, or the references it
/// gathered, in a vector the receiver may take (leaving another in its place), which
/// is cleared afterwards.
enum Gathered<'a, T> {
    Item(RefItem),
    References(&'a mut Vec<T>, RefBounds),
}

impl<'a, T> Gathered<'a, T> {
    /// As a [`RefBatch`].
    fn batch(self) -> RefBatch<'a, T> {
        match self {
            Gathered::Item(item) => RefBatch::Item(item),
            Gathered::References(refs, bounds) => RefBatch::References(refs, bounds),
        }
    }
}

/// [`decode_payload_batches_as`] gathering the references of several blocks: they
/// are appended to `block` (and their bounds joined into `bounds`), which is handed
/// to `emit` (and cleared) once it holds `gather` references or more, before any
/// region or label, and before a malformed record is reported; the caller hands
/// over what is left at its end.
fn decode_payload_gathering<T>(
    payload: &[u8],
    block: &mut Vec<T>,
    bounds: &mut RefBounds,
    gather: usize,
    convert: &impl ConvertRef<T>,
    emit: &mut dyn FnMut(Gathered<'_, T>),
) -> Result<(), (usize, &'static str)> {
    let flush =
        |block: &mut Vec<T>, bounds: &mut RefBounds, emit: &mut dyn FnMut(Gathered<'_, T>)| {
            if !block.is_empty() {
                emit(Gathered::References(block, *bounds));
                block.clear();
            }
            *bounds = RefBounds::EMPTY;
        };
    let mut cur = Cursor::new(payload);
    while !cur.is_empty() {
        let at = cur.position();
        let malformed = |reason| (at, reason);
        let Some(tag) = cur.u8() else {
            flush(block, bounds, emit);
            return Err(malformed("truncated record"));
        };
        let body = match cur.u64().map(usize::try_from) {
            None => Err("truncated record length"),
            Some(Err(_)) => Err("impossible record length"),
            Some(Ok(len)) => cur.bytes(len).ok_or("the record runs past the chunk"),
        };
        let body = match body {
            Ok(body) => body,
            Err(reason) => {
                flush(block, bounds, emit);
                return Err(malformed(reason));
            }
        };
        let mut b = Cursor::new(body);
        match tag {
            ref_tag::REGION => {
                flush(block, bounds, emit);
                let id = b.u64().and_then(|v| u16::try_from(v).ok());
                let (start, len, name) = (b.u64(), b.u64(), b.string());
                match (id, start, len, name) {
                    (Some(id), Some(start), Some(len), Some(name)) => {
                        emit(Gathered::Item(RefItem::Region {
                            id,
                            start,
                            len,
                            name,
                        }))
                    }
                    _ => return Err(malformed("malformed region record")),
                }
            }
            ref_tag::LABEL => {
                flush(block, bounds, emit);
                match (b.u64().and_then(|v| u16::try_from(v).ok()), b.string()) {
                    (Some(id), Some(text)) => emit(Gathered::Item(RefItem::Label { id, text })),
                    _ => return Err(malformed("malformed label record")),
                }
            }
            ref_tag::BLOCK => {
                let (found, decoded) = block::decode_block_into(body, block, convert);
                *bounds = bounds.join(found);
                if decoded.is_err() || block.len() >= gather {
                    // The references before a malformed one are delivered too.
                    flush(block, bounds, emit);
                }
                decoded.map_err(malformed)?;
            }
            _ => {} // A record of a newer writer: skipped.
        }
    }
    Ok(())
}

/// Writes regions, labels and references into a trace's reference stream.
///
/// References are buffered and written in blocks of [`BLOCK_REFERENCES`]; call
/// [`ReferenceWriter::finish`] before finishing the [`TraceWriter`].
#[derive(Debug, Default)]
pub struct ReferenceWriter {
    pending: Vec<RefRecord>,
    ordinal: u64,
    body: Vec<u8>,
    record: Vec<u8>,
}

impl ReferenceWriter {
    /// Makes a writer for reference stream 0.
    pub fn new() -> ReferenceWriter {
        ReferenceWriter::default()
    }

    fn push<W: Write>(
        &mut self,
        out: &mut TraceWriter<W>,
        tag: u8,
        first: u64,
        last: u64,
    ) -> io::Result<()> {
        self.record.clear();
        self.record.push(tag);
        put_u64(&mut self.record, self.body.len() as u64);
        self.record.extend_from_slice(&self.body);
        let record = &self.record;
        out.with_stream(ChunkKind::References, 0, |b: &mut ChunkBuilder| {
            b.raw_records(record, 1, first, last);
        })
    }

    /// Names the address range `[start, start + len)` as region `id`.
    pub fn region<W: Write>(
        &mut self,
        out: &mut TraceWriter<W>,
        id: u16,
        start: u64,
        len: u64,
        name: &str,
    ) -> io::Result<()> {
        self.flush(out)?;
        self.body.clear();
        put_u64(&mut self.body, u64::from(id));
        put_u64(&mut self.body, start);
        put_u64(&mut self.body, len);
        put_str(&mut self.body, name);
        self.push(out, ref_tag::REGION, self.ordinal, self.ordinal)
    }

    /// Names label `id`.
    pub fn label<W: Write>(
        &mut self,
        out: &mut TraceWriter<W>,
        id: u16,
        text: &str,
    ) -> io::Result<()> {
        self.flush(out)?;
        self.body.clear();
        put_u64(&mut self.body, u64::from(id));
        put_str(&mut self.body, text);
        self.push(out, ref_tag::LABEL, self.ordinal, self.ordinal)
    }

    /// Adds a reference.
    pub fn reference<W: Write>(
        &mut self,
        out: &mut TraceWriter<W>,
        reference: RefRecord,
    ) -> io::Result<()> {
        self.pending.push(reference);
        if self.pending.len() >= BLOCK_REFERENCES {
            self.flush(out)?;
        }
        Ok(())
    }

    /// Writes the buffered references as a block.
    pub fn flush<W: Write>(&mut self, out: &mut TraceWriter<W>) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.body.clear();
        encode_block(&self.pending, &mut self.body);
        let first = self.ordinal;
        self.ordinal += self.pending.len() as u64;
        self.pending.clear();
        self.push(out, ref_tag::BLOCK, first, self.ordinal - 1)
    }

    /// Writes what is buffered; the stream can continue afterwards.
    pub fn finish<W: Write>(&mut self, out: &mut TraceWriter<W>) -> io::Result<()> {
        self.flush(out)
    }
}

/// Reads every reference chunk of `trace` in file order, calling `emit` for each
/// item. Damaged chunks and malformed records are skipped and returned (with the
/// byte offset of their chunk); everything else is delivered.
pub fn read_references(trace: &TraceFile, emit: &mut dyn FnMut(RefItem)) -> Vec<Damage> {
    read_reference_batches(trace, &mut |batch| match batch {
        RefBatch::Item(item) => emit(item),
        RefBatch::References(refs, _) => refs.iter().for_each(|&r| emit(RefItem::Reference(r))),
    })
}

/// [`read_references`] delivering each block's references as one slice: what a
/// consumer that takes references in bulk (the cache simulator) reads with.
pub fn read_reference_batches(
    trace: &TraceFile,
    emit: &mut dyn FnMut(RefBatch<'_>),
) -> Vec<Damage> {
    read_reference_batches_as(trace, |r| r, emit)
}

/// [`read_reference_batches`] delivering references converted by `convert` (see
/// [`decode_payload_batches_as`]), several blocks at a time (up to [`GATHER`]
/// references, or fewer when a region or label comes between).
pub fn read_reference_batches_as<T>(
    trace: &TraceFile,
    convert: impl ConvertRef<T> + Copy,
    emit: &mut dyn FnMut(RefBatch<'_, T>),
) -> Vec<Damage> {
    read_gathered(trace, convert, &mut |gathered| emit(gathered.batch()))
}

/// [`read_reference_batches_as`] handing over the gathered references' vector.
fn read_gathered<T>(
    trace: &TraceFile,
    convert: impl ConvertRef<T> + Copy,
    emit: &mut dyn FnMut(Gathered<'_, T>),
) -> Vec<Damage> {
    let mut block = Vec::with_capacity(GATHER + BLOCK_REFERENCES);
    let mut bounds = RefBounds::EMPTY;
    let mut damage: Vec<Damage> = trace.index_damage().to_vec();
    let (mut scratch, mut payload) = (Vec::new(), Vec::new());
    // One decompression context for every chunk (the trace's own makes one per
    // chunk), when the file can be opened again.
    let mut reader = trace.chunk_reader().ok();
    for chunk in trace.chunks() {
        if chunk.header.kind != ChunkKind::References {
            continue;
        }
        let read = match &mut reader {
            Some(reader) => reader.read_payload(chunk, &mut scratch, &mut payload),
            None => trace.read_payload(chunk, &mut scratch, &mut payload),
        };
        if let Err(d) = read {
            damage.push(d);
            continue;
        }
        let decoded =
            decode_payload_gathering(&payload, &mut block, &mut bounds, GATHER, &convert, emit);
        if let Err((at, reason)) = decoded {
            damage.push(Damage {
                offset: chunk.offset,
                reason: format!("{reason} at payload offset {at} of the reference chunk"),
                skipped: 0,
            });
        }
    }
    if !block.is_empty() {
        emit(Gathered::References(&mut block, bounds));
    }
    damage.sort_by_key(|d| d.offset);
    damage
}

/// [`read_reference_batches_as`] with the reading and decoding on a thread of its
/// own, a few batches ahead of `emit`, which runs on the caller's thread: a consumer
/// that takes as long as the decoding (the cache simulator) then shares two cores with
/// it. The same items in the same order, and the same damage.
pub fn read_reference_batches_ahead<T: Send>(
    trace: &TraceFile,
    convert: impl ConvertRef<T> + Copy + Send,
    emit: &mut dyn FnMut(RefBatch<'_, T>),
) -> Vec<Damage> {
    /// What the reading thread hands over.
    enum Ahead<T> {
        Item(RefItem),
        References(Vec<T>, RefBounds),
    }
    /// Batches decoded and not yet taken (each up to [`GATHER`] references).
    const AHEAD: usize = 2;
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Ahead<T>>(AHEAD);
    // Taken batches come back to be filled again: no allocation, no copy per batch.
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<T>>();
    for _ in 0..AHEAD + 2 {
        let _ = empty_tx.send(Vec::with_capacity(GATHER + BLOCK_REFERENCES));
    }
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            read_gathered(trace, convert, &mut |gathered| {
                let message = match gathered {
                    Gathered::Item(item) => Ahead::Item(item),
                    Gathered::References(refs, bounds) => {
                        // The full vector goes; an empty one takes its place.
                        let mut owned = empty_rx.try_recv().unwrap_or_default();
                        owned.clear();
                        std::mem::swap(refs, &mut owned);
                        Ahead::References(owned, bounds)
                    }
                };
                // Only a panic in `emit` drops the receiver; the scope then reports it.
                let _ = full_tx.send(message);
            })
        });
        // Ends when the reading thread is done (and drops its sender).
        for message in full_rx {
            match message {
                Ahead::Item(item) => emit(RefBatch::Item(item)),
                Ahead::References(refs, bounds) => {
                    emit(RefBatch::References(&refs, bounds));
                    let _ = empty_tx.send(refs);
                }
            }
        }
        reader
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streaming_kernel(n: u64) -> Vec<RefRecord> {
        // C[i][j] += A[i][k] * B[k][j] for N = n, doubles, like the cache lens kernel.
        let (a, b, c) = (
            0x1000_0000u64,
            0x1000_0000 + n * n * 8,
            0x1000_0000 + 2 * n * n * 8,
        );
        let mut refs = Vec::new();
        let r = |addr, kind, region, label| RefRecord {
            addr,
            size: 8,
            kind,
            region,
            label,
        };
        for i in 0..n {
            for j in 0..n {
                refs.push(r(c + (i * n + j) * 8, RefKind::Read, 3, 3));
                for k in 0..n {
                    refs.push(r(a + (i * n + k) * 8, RefKind::Read, 1, 1));
                    refs.push(r(b + (k * n + j) * 8, RefKind::Read, 2, 2));
                }
                refs.push(r(c + (i * n + j) * 8, RefKind::Write, 3, 4));
            }
        }
        refs
    }

    #[test]
    fn blocks_round_trip_any_references() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut refs = Vec::new();
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            refs.push(RefRecord {
                addr: if x.is_multiple_of(3) { x } else { x % 4096 },
                size: (x >> 20) as u16,
                kind: RefKind::from_bits((x >> 8) as u8),
                region: (x >> 30) as u16 % 4,
                label: (x >> 40) as u16 % 5,
            });
        }
        let mut body = Vec::new();
        encode_block(&refs, &mut body);
        let mut back = Vec::new();
        decode_block(&body, &mut |r| back.push(r)).unwrap();
        assert_eq!(back, refs);
    }

    #[test]
    fn a_trace_file_round_trips_regions_labels_and_references_compactly() {
        let refs = streaming_kernel(48);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("refs.mlens");
        let file = std::fs::File::create(&path).unwrap();
        let mut out = TraceWriter::new(io::BufWriter::new(file), true).unwrap();
        let mut writer = ReferenceWriter::new();
        for (id, name) in [(1, "A"), (2, "B"), (3, "C")] {
            writer
                .region(
                    &mut out,
                    id,
                    0x1000_0000 + u64::from(id - 1) * 48 * 48 * 8,
                    48 * 48 * 8,
                    name,
                )
                .unwrap();
        }
        for (id, text) in [
            (1, "load A[i][k]"),
            (2, "load B[k][j]"),
            (3, "load C[i][j]"),
            (4, "store C[i][j]"),
        ] {
            writer.label(&mut out, id, text).unwrap();
        }
        for r in &refs {
            writer.reference(&mut out, *r).unwrap();
        }
        writer.finish(&mut out).unwrap();
        out.finish().unwrap();

        let trace = TraceFile::open(&path).unwrap();
        let mut items = Vec::new();
        let damage = read_references(&trace, &mut |item| items.push(item));
        assert!(damage.is_empty(), "{damage:?}");
        assert_eq!(
            items[0],
            RefItem::Region {
                id: 1,
                start: 0x1000_0000,
                len: 48 * 48 * 8,
                name: "A".into()
            }
        );
        assert_eq!(
            items[6],
            RefItem::Label {
                id: 4,
                text: "store C[i][j]".into()
            }
        );
        let back: Vec<RefRecord> = items
            .iter()
            .filter_map(|i| match i {
                RefItem::Reference(r) => Some(*r),
                _ => None,
            })
            .collect();
        assert_eq!(back, refs);
        let bytes = std::fs::metadata(&path).unwrap().len() as f64;
        let per_reference = bytes / refs.len() as f64;
        assert!(
            per_reference < 1.0,
            "{per_reference:.3} bytes per reference"
        );
    }

    /// Every item a batch reader delivers, in order, references one by one.
    fn flattened(
        read: impl FnOnce(&mut dyn FnMut(RefBatch<'_>)) -> Vec<Damage>,
    ) -> (Vec<RefItem>, Vec<Damage>) {
        let mut items = Vec::new();
        let damage = read(&mut |batch| match batch {
            RefBatch::Item(item) => items.push(item),
            RefBatch::References(refs, _) => {
                items.extend(refs.iter().map(|&r| RefItem::Reference(r)))
            }
        });
        (items, damage)
    }

    #[test]
    fn reading_ahead_on_a_thread_delivers_what_reading_in_place_does() {
        let refs = streaming_kernel(40);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("refs.mlens");
        let file = std::fs::File::create(&path).unwrap();
        // Small chunks, so that one damaged chunk loses a few blocks.
        let out = TraceWriter::new(io::BufWriter::new(file), true).unwrap();
        let mut out = out.with_chunk_bytes(2000);
        let mut writer = ReferenceWriter::new();
        // Regions and labels between the references, many blocks (and gathers) long.
        for (i, r) in refs.iter().enumerate() {
            if i % 20_000 == 0 {
                let id = (i / 20_000) as u16 + 1;
                writer
                    .region(&mut out, id, 0, 1, &format!("r{id}"))
                    .unwrap();
                writer.label(&mut out, id, &format!("l{id}")).unwrap();
            }
            writer.reference(&mut out, *r).unwrap();
        }
        writer.finish(&mut out).unwrap();
        out.finish().unwrap();
        let whole = std::fs::read(&path).unwrap();
        // And damaged: a payload byte of a chunk in the middle flipped.
        let mut damaged = whole.clone();
        damaged[whole.len() / 2] ^= 0x55;
        for (bytes, sound) in [(whole, true), (damaged, false)] {
            std::fs::write(&path, &bytes).unwrap();
            let trace = TraceFile::open(&path).unwrap();
            let in_place = flattened(|emit| read_reference_batches(&trace, emit));
            let ahead = flattened(|emit| read_reference_batches_ahead(&trace, |r| r, emit));
            assert!(in_place.0.len() > refs.len() / 2);
            assert_eq!(in_place.1.is_empty(), sound, "{:?}", in_place.1);
            assert_eq!(ahead, in_place);
        }
    }

    #[test]
    fn a_short_ops_column_delivers_the_references_before_it_then_fails() {
        let refs = streaming_kernel(4);
        let mut body = Vec::new();
        encode_block(&refs, &mut body);
        // Claim one reference more than the columns hold.
        let mut cur = Cursor::new(&body);
        let count = cur.u64().unwrap();
        let mut claimed = Vec::new();
        put_u64(&mut claimed, count + 1);
        claimed.extend_from_slice(&body[cur.position()..]);
        let mut back = Vec::new();
        let result = decode_block(&claimed, &mut |r| back.push(r));
        assert_eq!(result, Err("the ops column is short"));
        assert_eq!(back, refs);
    }

    #[test]
    fn batches_converted_as_they_are_decoded_equal_the_records() {
        let refs = streaming_kernel(8);
        let mut payload = vec![ref_tag::BLOCK];
        let mut body = Vec::new();
        encode_block(&refs, &mut body);
        put_u64(&mut payload, body.len() as u64);
        payload.extend_from_slice(&body);
        let (mut block, mut back) = (Vec::new(), Vec::new());
        decode_payload_batches_as(
            &payload,
            &mut block,
            |r: RefRecord| (r.addr, r.label),
            &mut |batch| {
                if let RefBatch::References(pairs, _) = batch {
                    back.extend_from_slice(pairs);
                }
            },
        )
        .unwrap();
        let expected: Vec<(u64, u16)> = refs.iter().map(|r| (r.addr, r.label)).collect();
        assert_eq!(back, expected);
    }

    #[test]
    fn damaged_blocks_are_reported_not_panicked_on() {
        let refs = streaming_kernel(8);
        let mut body = Vec::new();
        encode_block(&refs, &mut body);
        for cut in 0..body.len() {
            let _ = decode_block(&body[..cut], &mut |_| {});
            let mut flipped = body.clone();
            flipped[cut] ^= 0x5A;
            let _ = decode_block(&flipped, &mut |_| {});
        }
        let mut payload = vec![ref_tag::BLOCK];
        put_u64(&mut payload, 1 << 40);
        assert!(decode_payload(&payload, &mut |_| {}).is_err());
    }
}
