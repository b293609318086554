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
use crate::varint::{Cursor, put_str, put_u64, unzigzag, zigzag};
use crate::writer::TraceWriter;

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

/// The largest block count a reader accepts (a guard against hostile lengths).
const MAX_BLOCK_REFERENCES: u64 = 1 << 22;

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

/// The per-label prediction state.
#[derive(Debug, Clone, Copy, Default)]
struct Prediction {
    addr: u64,
    stride: u64,
    size: u16,
    region: u16,
}

impl Prediction {
    fn next_addr(&self) -> u64 {
        self.addr.wrapping_add(self.stride)
    }

    fn advance(&mut self, addr: u64) {
        self.stride = addr.wrapping_sub(self.addr);
        self.addr = addr;
    }
}

fn state(table: &mut Vec<Prediction>, label: u16) -> &mut Prediction {
    let i = usize::from(label);
    if table.len() <= i {
        grow(table, label);
    }
    &mut table[i]
}

/// Makes room in a prediction table for `label` (rare: once per new label).
#[cold]
fn grow(table: &mut Vec<Prediction>, label: u16) {
    table.resize(usize::from(label) + 1, Prediction::default());
}

/// Encodes one block of references (the body of a `0x92` record).
pub fn encode_block(references: &[RefRecord], out: &mut Vec<u8>) {
    let (mut ops, mut labels, mut deltas, mut extras) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut table = Vec::new();
    let mut previous_label = 0u16;
    for r in references {
        let mut op = r.kind as u8;
        if r.label != previous_label {
            op |= 1 << 2;
            put_u64(&mut labels, u64::from(r.label));
            previous_label = r.label;
        }
        let p = state(&mut table, r.label);
        if r.size != p.size {
            op |= 1 << 3;
            put_u64(&mut extras, u64::from(r.size));
            p.size = r.size;
        }
        if r.region != p.region {
            op |= 1 << 4;
            put_u64(&mut extras, u64::from(r.region));
            p.region = r.region;
        }
        put_u64(
            &mut deltas,
            zigzag(r.addr.wrapping_sub(p.next_addr()) as i64),
        );
        p.advance(r.addr);
        ops.push(op);
    }
    put_u64(out, references.len() as u64);
    for column in [&ops, &labels, &deltas, &extras] {
        put_u64(out, column.len() as u64);
        out.extend_from_slice(column);
    }
}

/// Decodes one block body, calling `emit` for each reference in order.
pub fn decode_block(body: &[u8], emit: &mut dyn FnMut(RefRecord)) -> Result<(), &'static str> {
    decode_block_with(body, emit)
}

/// [`decode_block`] with the call to `emit` inlined into the loop.
#[inline]
fn decode_block_with(body: &[u8], mut emit: impl FnMut(RefRecord)) -> Result<(), &'static str> {
    let mut cur = Cursor::new(body);
    let count = cur.u64().ok_or("the block's count is truncated")?;
    if count > MAX_BLOCK_REFERENCES {
        return Err("the block claims too many references");
    }
    fn column<'a>(cur: &mut Cursor<'a>) -> Result<&'a [u8], &'static str> {
        let len = cur.u64().ok_or("a column length is truncated")?;
        let len = usize::try_from(len).map_err(|_| "a column length is impossible")?;
        cur.bytes(len).ok_or("a column is truncated")
    }
    let ops = column(&mut cur)?;
    let mut labels = Cursor::new(column(&mut cur)?);
    let mut deltas = Cursor::new(column(&mut cur)?);
    let mut extras = Cursor::new(column(&mut cur)?);
    let count = count as usize; // At most MAX_BLOCK_REFERENCES.
    // The prediction state per label, grown only when a new label comes (label 0's
    // is there from the start), so the lookup per reference is a plain index.
    let mut table = vec![Prediction::default()];
    let mut label = 0u16;
    for &op in &ops[..count.min(ops.len())] {
        if op >> 5 != 0 {
            return Err("an op byte has unknown bits set");
        }
        if op & (1 << 2) != 0 {
            label = u16::try_from(labels.u64().ok_or("the labels column is short")?)
                .map_err(|_| "a label id is too large")?;
            if usize::from(label) >= table.len() {
                grow(&mut table, label);
            }
        }
        let Some(p) = table.get_mut(usize::from(label)) else {
            unreachable!("the table grows with every new label")
        };
        if op & (1 << 3) != 0 {
            p.size = u16::try_from(extras.u64().ok_or("the extras column is short")?)
                .map_err(|_| "a size is too large")?;
        }
        if op & (1 << 4) != 0 {
            p.region = u16::try_from(extras.u64().ok_or("the extras column is short")?)
                .map_err(|_| "a region id is too large")?;
        }
        let delta = unzigzag(deltas.u64().ok_or("the deltas column is short")?);
        let addr = p.next_addr().wrapping_add(delta as u64);
        p.advance(addr);
        emit(RefRecord {
            addr,
            size: p.size,
            kind: RefKind::from_bits(op),
            region: p.region,
            label,
        });
    }
    if ops.len() < count {
        return Err("the ops column is short");
    }
    Ok(())
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
        RefBatch::References(refs) => refs.iter().for_each(|&r| emit(RefItem::Reference(r))),
    })
}

/// What [`read_reference_batches`] delivers: a region or label, or the references
/// of one block (up to [`BLOCK_REFERENCES`]) at once, as [`RefRecord`]s or, through
/// [`read_reference_batches_as`], already converted to the consumer's own type.
#[derive(Debug)]
pub enum RefBatch<'a, T = RefRecord> {
    /// A region or a label ([`RefItem::Reference`] never comes this way).
    Item(RefItem),
    /// The references of one block, in order.
    References(&'a [T]),
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
    convert: impl Fn(RefRecord) -> T,
    emit: &mut dyn FnMut(RefBatch<'_, T>),
) -> Result<(), (usize, &'static str)> {
    let mut cur = Cursor::new(payload);
    while !cur.is_empty() {
        let at = cur.position();
        let tag = cur.u8().ok_or((at, "truncated record"))?;
        let len = cur.u64().ok_or((at, "truncated record length"))?;
        let len = usize::try_from(len).map_err(|_| (at, "impossible record length"))?;
        let body = cur
            .bytes(len)
            .ok_or((at, "the record runs past the chunk"))?;
        let mut b = Cursor::new(body);
        match tag {
            ref_tag::REGION => {
                let id = b.u64().and_then(|v| u16::try_from(v).ok());
                let (start, len, name) = (b.u64(), b.u64(), b.string());
                match (id, start, len, name) {
                    (Some(id), Some(start), Some(len), Some(name)) => {
                        emit(RefBatch::Item(RefItem::Region {
                            id,
                            start,
                            len,
                            name,
                        }))
                    }
                    _ => return Err((at, "malformed region record")),
                }
            }
            ref_tag::LABEL => match (b.u64().and_then(|v| u16::try_from(v).ok()), b.string()) {
                (Some(id), Some(text)) => emit(RefBatch::Item(RefItem::Label { id, text })),
                _ => return Err((at, "malformed label record")),
            },
            ref_tag::BLOCK => {
                block.clear();
                // Room for the whole block (as many references as it claims, capped
                // as the decoder caps it), written in place: a push per reference
                // would store the length back to memory every time.
                let claimed = Cursor::new(body).u64().unwrap_or(0);
                block.reserve(claimed.min(MAX_BLOCK_REFERENCES) as usize);
                let (spare, mut written) = (block.spare_capacity_mut(), 0);
                let decoded = decode_block_with(body, |r| {
                    if let Some(slot) = spare.get_mut(written) {
                        slot.write(convert(r));
                        written += 1;
                    }
                });
                // SAFETY: the first `written` slots of the spare capacity were
                // initialised just above, in order.
                unsafe { block.set_len(written) };
                // The references before a malformed one are delivered too.
                emit(RefBatch::References(block));
                decoded.map_err(|reason| (at, reason))?;
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
        RefBatch::References(refs) => refs.iter().for_each(|&r| emit(RefItem::Reference(r))),
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
/// [`decode_payload_batches_as`]).
pub fn read_reference_batches_as<T>(
    trace: &TraceFile,
    convert: impl Fn(RefRecord) -> T + Copy,
    emit: &mut dyn FnMut(RefBatch<'_, T>),
) -> Vec<Damage> {
    let mut block = Vec::with_capacity(BLOCK_REFERENCES);
    let mut damage: Vec<Damage> = trace.index_damage().to_vec();
    let (mut scratch, mut payload) = (Vec::new(), Vec::new());
    for chunk in trace.chunks() {
        if chunk.header.kind != ChunkKind::References {
            continue;
        }
        if let Err(d) = trace.read_payload(chunk, &mut scratch, &mut payload) {
            damage.push(d);
            continue;
        }
        if let Err((at, reason)) = decode_payload_batches_as(&payload, &mut block, convert, emit) {
            damage.push(Damage {
                offset: chunk.offset,
                reason: format!("{reason} at payload offset {at} of the reference chunk"),
                skipped: 0,
            });
        }
    }
    damage.sort_by_key(|d| d.offset);
    damage
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
        decode_payload_batches_as(&payload, &mut block, |r| (r.addr, r.label), &mut |batch| {
            if let RefBatch::References(pairs) = batch {
                back.extend_from_slice(pairs);
            }
        })
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
