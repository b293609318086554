//! One block of references (the body of a `0x92` record, see the parent module):
//! its encoding, and its decoding one reference at a time ([`decode_block`]) or into
//! a slice ([`decode_block_into`], what the cache simulator reads with).
//!
//! Both decoders read the block's header the same way ([`Columns::parse`]). The
//! slice decoder has a fast loop for the usual block — every op byte valid and the
//! ops column as long as the block claims, checked once for the whole block — that
//! reads the columns by index with one-byte varints inline, and otherwise runs the
//! same loop as [`decode_block`]. The results, including where and why a malformed
//! block stops, are the same either way (tested on random and damaged blocks).

use crate::refs::bounds::{RefBounds, Tracked};
use crate::refs::convert::{KIND_SHIFT, LABEL_SHIFT, SIZE_SHIFT};
use crate::refs::{ConvertRef, RefKind, RefRecord};
use crate::varint::{Cursor, put_u64, unzigzag, zigzag};

/// The largest block count a reader accepts (a guard against hostile lengths).
pub(super) const MAX_BLOCK_REFERENCES: u64 = 1 << 22;

/// The op byte's bits beyond the kind: a new label, a new size, a new region.
const NEW_LABEL: u8 = 1 << 2;
const NEW_SIZE: u8 = 1 << 3;
const NEW_REGION: u8 = 1 << 4;
/// The op byte's bits no writer sets.
const UNKNOWN: u8 = !0x1F;

/// The op bits that announce extras, in each byte of a word of eight ops.
const EXTRAS_OF_EIGHT: u64 = u64::from_ne_bytes([NEW_SIZE | NEW_REGION; 8]);

/// The per-label prediction state (32 bytes, so that a table is indexed by a shift).
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(32))]
pub(super) struct Prediction {
    pub(super) addr: u64,
    pub(super) stride: u64,
    /// The label's size, region and own id, packed as [`RefRecord::pack`] packs
    /// them (with kind 0): what a reference of the label has beside its address
    /// and kind.
    packed: u64,
}

/// The mask of the size in [`Prediction::packed`].
const SIZE_BITS: u64 = 0xFFFF << SIZE_SHIFT;

impl Prediction {
    /// The state of `label` at the start of a block.
    const fn of_label(label: u16) -> Prediction {
        Prediction {
            addr: 0,
            stride: 0,
            packed: (label as u64) << LABEL_SHIFT,
        }
    }

    fn next_addr(&self) -> u64 {
        self.addr.wrapping_add(self.stride)
    }

    pub(super) fn size(&self) -> u16 {
        (self.packed >> SIZE_SHIFT) as u16
    }

    pub(super) fn region(&self) -> u16 {
        self.packed as u16
    }

    fn set_size(&mut self, size: u16) {
        self.packed = self.packed & !SIZE_BITS | u64::from(size) << SIZE_SHIFT;
    }

    fn set_region(&mut self, region: u16) {
        self.packed = self.packed & !0xFFFF | u64::from(region);
    }

    /// The fields beside the address of a reference of the label doing `op`,
    /// packed as [`RefRecord::pack`] packs them: bits 50–63 are 0 (`packed` holds
    /// three 16-bit fields in bits 0–47, and the kind is two bits).
    #[inline(always)]
    fn packed_with(&self, op: u8) -> u64 {
        self.packed | u64::from(op & 3) << KIND_SHIFT
    }

    fn advance(&mut self, addr: u64) {
        self.stride = addr.wrapping_sub(self.addr);
        self.addr = addr;
    }
}

/// The states of labels 0 to 127 at the start of a block (what the fast loop starts
/// from when every label of the block is below 128).
const SMALL_TABLE: [Prediction; 128] = {
    let mut table = [Prediction::of_label(0); 128];
    let mut label = 0;
    while label < 128 {
        table[label] = Prediction::of_label(label as u16);
        label += 1;
    }
    table
};

fn state(table: &mut Vec<Prediction>, label: u16) -> &mut Prediction {
    let i = usize::from(label);
    if table.len() <= i {
        grow(table, label);
    }
    &mut table[i]
}

/// Makes room in a prediction table for `label` (rare: once per new label): the
/// new states are zeroed in one fill, then given their labels.
#[cold]
fn grow(table: &mut Vec<Prediction>, label: u16) {
    let start = table.len();
    table.resize(usize::from(label) + 1, Prediction::default());
    for (l, p) in table.iter_mut().enumerate().skip(start) {
        p.packed = (l as u64) << LABEL_SHIFT;
    }
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
            op |= NEW_LABEL;
            put_u64(&mut labels, u64::from(r.label));
            previous_label = r.label;
        }
        let p = state(&mut table, r.label);
        if r.size != p.size() {
            op |= NEW_SIZE;
            put_u64(&mut extras, u64::from(r.size));
            p.set_size(r.size);
        }
        if r.region != p.region() {
            op |= NEW_REGION;
            put_u64(&mut extras, u64::from(r.region));
            p.set_region(r.region);
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

/// A block's count and columns.
struct Columns<'a> {
    count: usize,
    ops: &'a [u8],
    labels: &'a [u8],
    deltas: &'a [u8],
    extras: &'a [u8],
}

impl<'a> Columns<'a> {
    /// Reads a block's header.
    fn parse(body: &'a [u8]) -> Result<Columns<'a>, &'static str> {
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
        Ok(Columns {
            count: count as usize, // At most MAX_BLOCK_REFERENCES.
            ops: column(&mut cur)?,
            labels: column(&mut cur)?,
            deltas: column(&mut cur)?,
            extras: column(&mut cur)?,
        })
    }

    /// Decodes every reference, calling `emit` for each, up to the first malformed
    /// one.
    #[inline]
    fn decode(&self, mut emit: impl FnMut(RefRecord)) -> Result<(), &'static str> {
        let mut labels = Cursor::new(self.labels);
        let mut deltas = Cursor::new(self.deltas);
        let mut extras = Cursor::new(self.extras);
        // The prediction state per label, grown only when a new label comes (label
        // 0's is there from the start), so the lookup per reference is a plain index.
        let mut table = vec![Prediction::of_label(0)];
        let mut label = 0u16;
        for &op in &self.ops[..self.count.min(self.ops.len())] {
            if op & UNKNOWN != 0 {
                return Err("an op byte has unknown bits set");
            }
            if op & NEW_LABEL != 0 {
                label = u16::try_from(labels.u64().ok_or("the labels column is short")?)
                    .map_err(|_| "a label id is too large")?;
                if usize::from(label) >= table.len() {
                    grow(&mut table, label);
                }
            }
            let Some(p) = table.get_mut(usize::from(label)) else {
                unreachable!("the table grows with every new label")
            };
            if op & NEW_SIZE != 0 {
                p.set_size(
                    u16::try_from(extras.u64().ok_or("the extras column is short")?)
                        .map_err(|_| "a size is too large")?,
                );
            }
            if op & NEW_REGION != 0 {
                p.set_region(
                    u16::try_from(extras.u64().ok_or("the extras column is short")?)
                        .map_err(|_| "a region id is too large")?,
                );
            }
            let delta = unzigzag(deltas.u64().ok_or("the deltas column is short")?);
            let addr = p.next_addr().wrapping_add(delta as u64);
            p.advance(addr);
            emit(RefRecord {
                addr,
                size: p.size(),
                kind: RefKind::from_bits(op),
                region: p.region(),
                label,
            });
        }
        if self.ops.len() < self.count {
            return Err("the ops column is short");
        }
        Ok(())
    }

    /// Whether [`Columns::decode_clean`] may decode the block: every op valid and
    /// present, and the labels and deltas columns holding at least one complete
    /// varint per op that needs one. Returns whether every label is moreover a
    /// one-byte varint (below 128), for `decode_clean`'s `SMALL`.
    fn clean(&self) -> Option<bool> {
        let ops = self.ops.get(..self.count)?;
        let all = ops.iter().fold(0, |all, &op| all | op);
        let announced = count(ops, |op| op >> 2 & 1);
        // A varint ends with a byte below 0x80: as many of those, as many varints.
        let complete = |column: &[u8]| count(column, |b| !b >> 7);
        if all & UNKNOWN != 0 || complete(self.deltas) < self.count {
            return None;
        }
        match self.labels.get(..announced) {
            Some(labels) if labels.iter().fold(0, |all, &b| all | b) < 0x80 => Some(true),
            _ => (complete(self.labels) >= announced).then_some(false),
        }
    }

    /// [`Columns::decode`] into `out` (whose spare capacity is at least the count)
    /// for a block that [`Columns::clean`] accepted (`SMALL`: as it returned): the
    /// loop reads the ops, labels and deltas without a check. Runs of eight
    /// references whose ops announce no extras and whose deltas are all 0 (the
    /// strided loops of a kernel: eight zero bytes are eight one-byte deltas of 0)
    /// are decoded with one test for the eight. Returns how many references it
    /// wrote, the bounds they keep, and the reason it stopped early. Not inlined:
    /// in a function of its own the loop's registers are allocated for it alone.
    #[inline(never)]
    fn decode_clean<T, const SMALL: bool>(
        &self,
        out: &mut [std::mem::MaybeUninit<T>],
        convert: &impl ConvertRef<T>,
    ) -> (usize, RefBounds, Result<(), &'static str>) {
        let (mut labels, mut deltas) = (Unchecked::new(self.labels), Unchecked::new(self.deltas));
        let (extras, mut at_extra) = (self.extras, 0);
        let mut tracked = Tracked::default();
        let mut small = SMALL_TABLE;
        let mut table = vec![Prediction::of_label(0); if SMALL { 0 } else { 1 }];
        let mut label = 0u16;
        let count = self.count.min(out.len());
        let (ops, out) = (&self.ops[..count], &mut out[..count]);
        let mut at = 0;
        while at < count {
            let eight = ops
                .get(at..at + 8)
                .and_then(|ops| <&[u8; 8]>::try_from(ops).ok());
            if let Some(eight) = eight
                && u64::from_ne_bytes(*eight) & EXTRAS_OF_EIGHT == 0
                && deltas.zeros::<8>()
            {
                let Some(slots) = out.get_mut(at..at + 8) else {
                    unreachable!("`out` is as long as `ops`")
                };
                for (&op, slot) in eight.iter().zip(slots) {
                    // SAFETY: as for one reference below.
                    let p = match unsafe { labelled::<SMALL>(op, &mut labels, &mut label) } {
                        Ok(()) => predicted::<SMALL>(&mut small, &mut table, label),
                        Err(reason) => return (at, tracked.bounds(), Err(reason)),
                    };
                    let addr = p.next_addr();
                    p.addr = addr;
                    // SAFETY: `packed_with` leaves bits 50-63 at 0.
                    slot.write(unsafe { convert.convert_packed(addr, p.packed_with(op)) });
                    at += 1;
                }
                continue;
            }
            let (op, slot) = (ops[at], &mut out[at]);
            // SAFETY: the labels column holds a (one-byte, for `SMALL`) varint for
            // every op announcing a label (`clean`), and each read takes one.
            if let Err(reason) = unsafe { labelled::<SMALL>(op, &mut labels, &mut label) } {
                return (at, tracked.bounds(), Err(reason));
            }
            let p = predicted::<SMALL>(&mut small, &mut table, label);
            if op & (NEW_SIZE | NEW_REGION) != 0 {
                std::hint::cold_path();
                if let Err(reason) = extras_of(op, p, extras, &mut at_extra, &mut tracked) {
                    return (at, tracked.bounds(), Err(reason));
                }
            }
            // SAFETY: the deltas column holds a varint for every op (`clean`), and
            // each read takes one: a byte is left.
            let addr = if unsafe { deltas.zero() } {
                // As predicted (the stride stays): one test for the usual delta.
                let addr = p.next_addr();
                p.addr = addr;
                addr
            } else {
                // SAFETY: as above.
                let delta = unsafe { deltas.next() };
                let Some(delta) = delta else {
                    return (at, tracked.bounds(), Err("the deltas column is short"));
                };
                let addr = p.next_addr().wrapping_add(unzigzag(delta) as u64);
                p.advance(addr);
                tracked.moved(p);
                addr
            };
            // SAFETY: as above.
            slot.write(unsafe { convert.convert_packed(addr, p.packed_with(op)) });
            at += 1;
        }
        (count, tracked.bounds(), Ok(()))
    }
}

/// Reads the label that `op` announces, if it does, into `label` (for the fast
/// loop, [`Columns::decode_clean`]).
///
/// # Safety
///
/// When `op` announces a label, the labels column holds a varint (a one-byte one
/// for `SMALL`).
#[inline(always)]
unsafe fn labelled<const SMALL: bool>(
    op: u8,
    labels: &mut Unchecked,
    label: &mut u16,
) -> Result<(), &'static str> {
    if op & NEW_LABEL == 0 {
        return Ok(());
    }
    if SMALL {
        // SAFETY: the caller's guarantee.
        *label = u16::from(unsafe { labels.byte() });
        return Ok(());
    }
    // SAFETY: the caller's guarantee.
    match unsafe { labels.next() }.map(u16::try_from) {
        Some(Ok(id)) => {
            *label = id;
            Ok(())
        }
        None => Err("the labels column is short"),
        Some(Err(_)) => Err("a label id is too large"),
    }
}

/// The prediction state of `label`: in `small` for `SMALL` (where every label is
/// below 128), else in `table`, grown for a new label.
#[inline(always)]
fn predicted<'a, const SMALL: bool>(
    small: &'a mut [Prediction; 128],
    table: &'a mut Vec<Prediction>,
    label: u16,
) -> &'a mut Prediction {
    if SMALL {
        // `SMALL` labels are one byte below 0x80 (`clean`), or 0: the mask only
        // lets the compiler drop the bounds check.
        &mut small[usize::from(label) & 0x7F]
    } else {
        let label = usize::from(label);
        if table.len() <= label {
            grow(table, label as u16);
        }
        let Some(p) = table.get_mut(label) else {
            unreachable!("the table grows with every new label")
        };
        p
    }
}

/// The sum of `one(b)` (0 or 1) over `bytes`, in byte-wide vector adds.
fn count(bytes: &[u8], one: impl Fn(u8) -> u8) -> usize {
    // 224 bytes, seven of 32: the vector loop has no scalar tail per chunk, and a
    // byte counter takes at most 224 ones.
    let chunks = bytes.chunks(224);
    chunks
        .map(|chunk| usize::from(chunk.iter().fold(0u8, |n, &b| n + one(b))))
        .sum()
}

/// A column read from its start, with no check per read.
struct Unchecked {
    at: *const u8,
    end: *const u8,
}

impl Unchecked {
    fn new(column: &[u8]) -> Unchecked {
        let std::ops::Range { start, end } = column.as_ptr_range();
        Unchecked { at: start, end }
    }

    /// Reads the next byte.
    ///
    /// # Safety
    ///
    /// A byte is left in the column.
    #[inline(always)]
    unsafe fn byte(&mut self) -> u8 {
        // SAFETY: the caller's guarantee.
        unsafe {
            let byte = *self.at;
            self.at = self.at.add(1);
            byte
        }
    }

    /// Reads the next byte if it is 0 (a one-byte varint of 0), and says whether it
    /// was.
    ///
    /// # Safety
    ///
    /// A byte is left in the column.
    #[inline(always)]
    unsafe fn zero(&mut self) -> bool {
        // SAFETY: the caller's guarantee.
        if unsafe { *self.at } != 0 {
            return false;
        }
        // SAFETY: the byte just read is in the column.
        self.at = unsafe { self.at.add(1) };
        true
    }

    /// Reads the next `N` bytes if they are all 0 (`N` one-byte varints of 0), and
    /// says whether they were (and were there).
    #[inline(always)]
    fn zeros<const N: usize>(&mut self) -> bool {
        // SAFETY: `at` and `end` bound what is left of the column.
        let left = unsafe { self.end.offset_from_unsigned(self.at) };
        // SAFETY: `N` bytes are left; `[u8; N]` has alignment 1.
        if left < N || unsafe { *self.at.cast::<[u8; N]>() } != [0; N] {
            return false;
        }
        // SAFETY: the `N` bytes just read are in the column.
        self.at = unsafe { self.at.add(N) };
        true
    }

    /// Reads the next varint as [`varint`] does.
    ///
    /// # Safety
    ///
    /// A byte below 0x80 (the end of a varint) is left in the column.
    #[inline(always)]
    unsafe fn next(&mut self) -> Option<u64> {
        // SAFETY: the column is not empty (a byte below 0x80 is left).
        let first = unsafe { *self.at };
        if first < 0x80 {
            // SAFETY: the byte just read is in the column.
            self.at = unsafe { self.at.add(1) };
            return Some(u64::from(first));
        }
        std::hint::cold_path();
        // SAFETY: `at` and `end` bound what is left of the column.
        let rest =
            unsafe { std::slice::from_raw_parts(self.at, self.end.offset_from_unsigned(self.at)) };
        let mut read = 0;
        let value = varint(rest, &mut read);
        // SAFETY: `varint` read `read` bytes of `rest`.
        self.at = unsafe { self.at.add(read) };
        value
    }
}

/// Reads the varint at `*at` in `column`, moving `at` past it, as [`Cursor::u64`]
/// does (at most 10 bytes, no overflow), with no call: loops stay free of calls,
/// which would cost them registers.
#[inline(always)]
fn varint(column: &[u8], at: &mut usize) -> Option<u64> {
    let first = *column.get(*at)?;
    if first < 0x80 {
        *at += 1;
        return Some(u64::from(first));
    }
    let (mut value, mut shift, mut next) = (u64::from(first & 0x7F), 7, *at + 1);
    loop {
        let b = *column.get(next)?;
        if shift == 63 && b > 1 {
            return None; // would overflow 64 bits
        }
        value |= u64::from(b & 0x7F) << shift;
        next += 1;
        if b < 0x80 {
            *at = next;
            return Some(value);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Reads the new size and/or region that `op` announces into `p`, and tracks them.
#[inline(always)]
fn extras_of(
    op: u8,
    p: &mut Prediction,
    extras: &[u8],
    at: &mut usize,
    tracked: &mut Tracked,
) -> Result<(), &'static str> {
    if op & NEW_SIZE != 0 {
        let size = varint(extras, at).ok_or("the extras column is short")?;
        p.set_size(u16::try_from(size).map_err(|_| "a size is too large")?);
        tracked.sized(p);
    }
    if op & NEW_REGION != 0 {
        let region = varint(extras, at).ok_or("the extras column is short")?;
        p.set_region(u16::try_from(region).map_err(|_| "a region id is too large")?);
        tracked.region(p);
    }
    Ok(())
}

/// Decodes one block body, calling `emit` for each reference in order; on a
/// malformed block, the references before the malformed one are emitted and the
/// reason returned.
pub fn decode_block(body: &[u8], emit: &mut dyn FnMut(RefRecord)) -> Result<(), &'static str> {
    Columns::parse(body)?.decode(emit)
}

/// [`decode_block`] appended to `out`, converting each reference with `convert`:
/// `out` gains what [`decode_block`] would emit, converted. Returns the bounds
/// those references keep (what the fast loop found, or
/// [`RefBounds::UNKNOWN`]), and why the block stopped early.
pub(super) fn decode_block_into<T>(
    body: &[u8],
    out: &mut Vec<T>,
    convert: &impl ConvertRef<T>,
) -> (RefBounds, Result<(), &'static str>) {
    let columns = match Columns::parse(body) {
        Ok(columns) => columns,
        Err(reason) => return (RefBounds::UNKNOWN, Err(reason)),
    };
    out.reserve(columns.count);
    let start = out.len();
    let spare = out.spare_capacity_mut();
    let (written, bounds, result) = match columns.clean() {
        Some(true) => columns.decode_clean::<T, true>(spare, convert),
        Some(false) => columns.decode_clean::<T, false>(spare, convert),
        None => {
            let mut written = 0;
            let result = columns.decode(|r| {
                if let Some(slot) = spare.get_mut(written) {
                    slot.write(convert.convert(r));
                    written += 1;
                }
            });
            (written, RefBounds::UNKNOWN, result)
        }
    };
    // SAFETY: the first `written` slots of the spare capacity, after the `start`
    // initialised ones, were initialised in order just above.
    unsafe { out.set_len(start + written) };
    (bounds, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random references: labels, sizes, regions and kinds change often, addresses
    /// jump (multi-byte deltas) or stride; labels stay below 128 for even seeds.
    fn random_references(seed: u64, count: usize) -> Vec<RefRecord> {
        let labels = if seed.is_multiple_of(2) {
            [1, 2, 3, 100, 0]
        } else {
            [1, 2, 3, 200, 0]
        };
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut strided = 0x1000u64;
        (0..count)
            .map(|_| {
                let r = next();
                strided += 8;
                RefRecord {
                    addr: if r % 5 == 0 { r } else { strided },
                    size: [8, 8, 8, 4, 300][(r >> 8) as usize % 5],
                    kind: RefKind::from_bits((r >> 16) as u8),
                    region: [1, 1, 2, 0, 700][(r >> 24) as usize % 5],
                    label: labels[(r >> 32) as usize % 5],
                }
            })
            .collect()
    }

    /// A kernel's references: four labels in turn, each striding (so that most
    /// deltas are 0 and come in runs), jumping back now and then, with a new size
    /// or region rarely; labels above 127 for odd seeds.
    fn strided_references(seed: u64, count: usize) -> Vec<RefRecord> {
        let base = if seed.is_multiple_of(2) { 1 } else { 300 };
        let mut x = seed;
        let mut addrs = [0x10_0000u64, 0x20_0000, 0x30_0000, 0x40_0000];
        (0..count)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let l = i % 4;
                addrs[l] = match x % 97 {
                    0 => addrs[l] - 4096,
                    _ => addrs[l] + 8 * (l as u64 + 1),
                };
                RefRecord {
                    addr: addrs[l],
                    size: if x.is_multiple_of(499) { 4 } else { 8 },
                    kind: RefKind::from_bits((i / 4) as u8),
                    region: if x.is_multiple_of(701) {
                        9
                    } else {
                        l as u16 + 1
                    },
                    label: base + l as u16,
                }
            })
            .collect()
    }

    /// What the general decoder emits and returns, then what the slice decoder
    /// appends and returns.
    type Both = (
        Vec<RefRecord>,
        Result<(), &'static str>,
        Vec<RefRecord>,
        Result<(), &'static str>,
    );

    fn both(body: &[u8]) -> Both {
        let mut emitted = Vec::new();
        let general = decode_block(body, &mut |r| emitted.push(r));
        // Appended after what is there.
        let mut sliced = vec![RefRecord {
            addr: 1,
            size: 1,
            kind: RefKind::Read,
            region: 1,
            label: 1,
        }];
        let (_, fast) = decode_block_into(body, &mut sliced, &|r| r);
        assert_eq!(sliced.remove(0).addr, 1);
        (emitted, general, sliced, fast)
    }

    /// Asserts that both decoders give back `refs` from their block, and the same
    /// as each other when the block is cut, or has a byte flipped, every `step`
    /// bytes.
    fn assert_both_decode(refs: &[RefRecord], step: usize, seed: u64) {
        let mut body = Vec::new();
        encode_block(refs, &mut body);
        let (emitted, general, sliced, fast) = both(&body);
        assert_eq!((&emitted[..], general), (refs, Ok(())));
        assert_eq!((sliced, fast), (emitted, general));
        for cut in (0..body.len()).step_by(step) {
            let (emitted, general, sliced, fast) = both(&body[..cut]);
            assert_eq!((sliced, fast), (emitted, general), "cut at {cut}");
            let mut flipped = body.clone();
            flipped[cut] ^= 0x80 | (seed as u8);
            let (emitted, general, sliced, fast) = both(&flipped);
            assert_eq!((sliced, fast), (emitted, general), "flipped at {cut}");
        }
    }

    #[test]
    fn runs_of_predicted_references_decode_as_one_at_a_time() {
        for seed in 1..9 {
            assert_both_decode(&strided_references(seed, 5000), 61, seed);
        }
    }

    /// The bounds of `references`, found one by one.
    fn bounds_of(references: &[RefRecord]) -> RefBounds {
        let aligned = references.iter().all(|r| {
            let size = u64::from(r.size.max(1));
            size.is_power_of_two() && r.addr.is_multiple_of(size)
        });
        let max_size = references.iter().map(|r| r.size).max().unwrap_or(0);
        RefBounds {
            max_region: references.iter().map(|r| r.region).max().unwrap_or(0),
            aligned_size: if aligned { max_size.max(1) } else { 0 },
        }
    }

    #[test]
    fn counts_of_bytes_equal_a_plain_count_at_every_length() {
        let bytes: Vec<u8> = (0..40_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in [
            0, 1, 31, 32, 33, 255, 8159, 8160, 8161, 16_320, 16_500, 40_000,
        ] {
            let bytes = &bytes[..len];
            let plain = bytes.iter().filter(|&&b| b < 0x80).count();
            assert_eq!(count(bytes, |b| !b >> 7), plain, "{len}");
            assert_eq!(count(&vec![0xFF; len], |b| b & 1), len, "{len} ones");
        }
    }

    #[test]
    fn the_bounds_found_on_the_way_are_the_references_own() {
        for seed in 1..9 {
            for odd in [0, 4] {
                // Aligned kernels, then one label off by four bytes.
                let mut refs = strided_references(seed, 3000);
                refs.iter_mut()
                    .skip(1)
                    .step_by(4)
                    .for_each(|r| r.addr += odd);
                let mut body = Vec::new();
                encode_block(&refs, &mut body);
                let mut out = Vec::new();
                let (found, result) = decode_block_into(&body, &mut out, &|r| r);
                assert_eq!((out.len(), result), (refs.len(), Ok(())));
                assert_eq!(found, bounds_of(&refs), "seed {seed}, odd {odd}");
                assert_eq!(found.aligned_size == 0, odd != 0);
            }
            // Random blocks: the bounds found hold, cut or damaged as they may be.
            let refs = random_references(seed, 3000);
            let mut body = Vec::new();
            encode_block(&refs, &mut body);
            for cut in (0..body.len()).step_by(89) {
                let mut flipped = body.clone();
                flipped[cut] ^= 0x40 | (seed as u8);
                for body in [&body[..cut], &flipped[..]] {
                    let mut out = Vec::new();
                    let (found, _) = decode_block_into(body, &mut out, &|r| r);
                    let own = bounds_of(&out);
                    assert!(found.max_region >= own.max_region, "cut {cut}");
                    assert!(found.aligned_size == 0 || found.aligned_size >= own.aligned_size);
                    assert!(
                        found.aligned_size == 0 || own.aligned_size != 0,
                        "cut {cut}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_slice_decoder_equals_the_general_one_on_any_block() {
        for seed in 1..20 {
            assert_both_decode(&random_references(seed, 3000), 97, seed);
        }
    }
}
