//! The reference chunks of a trace, for the cache lens: the one conversion between the
//! trace's reference records and the simulator's references (both directions), the
//! reading of a whole trace's references with their regions and labels, and the
//! writing of a built-in kernel's reference stream as a trace or as text.

use std::io::{self, Write};

use memlens_cache::kernels::Kernel;
use memlens_cache::{
    AccessKind, LabelId, LabelTable, Reference, ReferenceBounds, RegionId, RegionTable, Simulation,
    TraceInfo,
};
use memlens_trace::{
    ConvertRef, Damage, RefBatch, RefBounds, RefItem, RefKind, RefRecord, ReferenceWriter,
    TraceFile, TraceWriter, read_reference_batches_ahead, read_reference_batches_as,
    read_references,
};

/// The simulator's access kind of a trace reference kind.
pub fn access_kind(kind: RefKind) -> AccessKind {
    match kind {
        RefKind::Read => AccessKind::Read,
        RefKind::Write => AccessKind::Write,
        RefKind::Modify => AccessKind::Modify,
        RefKind::Instruction => AccessKind::Instruction,
    }
}

/// The trace's reference kind of a simulator access kind.
pub fn ref_kind(kind: AccessKind) -> RefKind {
    match kind {
        AccessKind::Read => RefKind::Read,
        AccessKind::Write => RefKind::Write,
        AccessKind::Modify => RefKind::Modify,
        AccessKind::Instruction => RefKind::Instruction,
    }
}

/// A trace record as a simulator reference (region and label kept).
pub fn reference(r: &RefRecord) -> Reference {
    Reference::new(access_kind(r.kind), r.addr, r.size).with(RegionId(r.region), LabelId(r.label))
}

/// Trace records as simulator references, as the block decoder makes them: from
/// the address and the other fields packed in one word ([`RefRecord::pack`]),
/// which packs them as [`Reference::from_packed`] takes them.
#[derive(Clone, Copy, Debug)]
struct ToReference;

impl ConvertRef<Reference> for ToReference {
    fn convert(&self, r: RefRecord) -> Reference {
        reference(&r)
    }

    #[inline(always)]
    unsafe fn convert_packed(&self, addr: u64, packed: u64) -> Reference {
        // SAFETY: the caller's guarantee is this one's.
        unsafe { Reference::from_packed_unchecked(addr, packed) }
    }
}

/// What the trace decoder found a batch of references to keep, as the simulator
/// takes it.
pub fn reference_bounds(bounds: RefBounds) -> ReferenceBounds {
    ReferenceBounds {
        max_region: RegionId(bounds.max_region),
        aligned_size: bounds.aligned_size,
    }
}

/// A simulator reference as a trace record.
pub fn record(r: &Reference) -> RefRecord {
    RefRecord {
        addr: r.addr,
        size: r.size,
        kind: ref_kind(r.kind),
        region: r.region.0,
        label: r.label.0,
    }
}

/// A trace's references, regions and labels, read whole.
pub struct TraceReferences {
    /// The references in order, at most the `limit` asked for.
    pub references: Vec<Reference>,
    /// References past the limit, left out.
    pub dropped: u64,
    /// The named regions and statement labels, with ids equal to the trace's.
    pub info: TraceInfo,
    /// Damaged chunks, skipped.
    pub damage: Vec<Damage>,
}

impl TraceReferences {
    /// Whether the trace has no reference data at all.
    pub fn is_empty(&self) -> bool {
        self.references.is_empty() && self.info.regions.is_empty()
    }
}

/// Reads the reference chunks of `trace`, keeping at most `limit` references.
pub fn read_all(trace: &TraceFile, limit: usize) -> TraceReferences {
    let mut regions: Vec<(u16, u64, u64, String)> = Vec::new();
    let mut labels: Vec<(u16, String)> = Vec::new();
    let mut references = Vec::new();
    let mut dropped = 0u64;
    let damage = read_references(trace, &mut |item| match item {
        RefItem::Region {
            id,
            start,
            len,
            name,
        } => regions.push((id, start, len, name)),
        RefItem::Label { id, text } => labels.push((id, text)),
        RefItem::Reference(r) => {
            if references.len() >= limit {
                dropped += 1;
            } else {
                references.push(reference(&r));
            }
        }
    });
    TraceReferences {
        references,
        dropped,
        info: trace_info(regions, labels),
        damage,
    }
}

/// Runs every reference of `trace` through `simulation` (regions named, labels
/// counted), several decoded blocks at a time, which the simulation takes in one
/// tight loop while the next ones are decoded on another thread (when the process
/// may run on more than one CPU: on one, the thread would only take turns with the
/// simulation, so the blocks are decoded in place); returns the damaged chunks,
/// which are skipped.
pub fn simulate(trace: &TraceFile, simulation: &mut Simulation) -> Vec<Damage> {
    let read = match std::thread::available_parallelism().map_or(1, |n| n.get()) {
        1 => read_reference_batches_as,
        _ => read_reference_batches_ahead,
    };
    read(trace, ToReference, &mut |item| match item {
        RefBatch::Item(RefItem::Region { id, name, .. }) => {
            simulation.name_region(RegionId(id), name)
        }
        RefBatch::Item(RefItem::Label { .. }) => simulation.count_label(),
        RefBatch::Item(RefItem::Reference(r)) => simulation.access_all(&[reference(&r)]),
        RefBatch::References(refs, bounds) => {
            simulation.access_all_within(refs, reference_bounds(bounds))
        }
    })
}

/// Tables whose ids equal the trace's: ids are 1-based and dense in the tables, so
/// gaps get placeholder entries and repeated label texts are told apart.
fn trace_info(
    mut regions: Vec<(u16, u64, u64, String)>,
    mut labels: Vec<(u16, String)>,
) -> TraceInfo {
    regions.sort_by_key(|r| r.0);
    labels.sort_by_key(|l| l.0);
    let mut info = TraceInfo::default();
    let mut table = RegionTable::new();
    for (id, start, len, name) in regions {
        while usize::from(id) > table.len() + 1 {
            let n = table.len() + 1;
            table.add(format!("region {n}"), 0, 0);
        }
        if usize::from(id) == table.len() + 1 {
            table.add(name, start, len);
        }
    }
    let mut texts = LabelTable::new();
    for (id, text) in labels {
        while usize::from(id) > texts.len() + 1 {
            let n = texts.len() + 1;
            texts.intern(&format!("label {n}"));
        }
        if usize::from(id) == texts.len() + 1 && texts.intern(&text).map(|l| l.0) != Some(id) {
            texts.intern(&format!("{text} (#{id})"));
        }
    }
    info.regions = table;
    info.labels = texts;
    info
}

/// The text formats a kernel's references can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// Dinero `din` lines.
    Din,
    /// Valgrind Lackey `--trace-mem=yes` lines.
    Lackey,
}

/// Writes `kernel`'s references as a memlens trace (regions and statement labels
/// kept) into `out`; returns how many.
pub fn write_trace<W: Write>(kernel: &Kernel, out: W) -> io::Result<u64> {
    let info = kernel.info();
    let mut trace = TraceWriter::new(out, true)?;
    let mut refs = ReferenceWriter::new();
    for (id, region) in info.regions.iter() {
        refs.region(&mut trace, id.0, region.start, region.len, &region.name)?;
    }
    for (id, text) in info.labels.iter() {
        refs.label(&mut trace, id.0, text)?;
    }
    let count = write_each(kernel, |r| refs.reference(&mut trace, record(r)))?;
    refs.finish(&mut trace)?;
    trace.finish()?.flush()?;
    Ok(count)
}

/// Writes `kernel`'s references as `format` text lines into `out`; returns how many.
pub fn write_text<W: Write>(kernel: &Kernel, mut out: W, format: TextFormat) -> io::Result<u64> {
    let count = write_each(kernel, |r| match format {
        TextFormat::Din => memlens_cache::import::din::write_line(&mut out, r),
        TextFormat::Lackey => memlens_cache::import::lackey::write_line(&mut out, r),
    })?;
    out.flush()?;
    Ok(count)
}

/// Writes every reference of `kernel` until the first error; returns how many.
fn write_each(
    kernel: &Kernel,
    mut write: impl FnMut(&Reference) -> io::Result<()>,
) -> io::Result<u64> {
    let mut written = Ok(0);
    kernel.generate(|r| {
        if let Ok(count) = &mut written {
            match write(&r) {
                Ok(()) => *count += 1,
                Err(e) => written = Err(e),
            }
        }
    });
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_records_round_trip() {
        for kind in [
            AccessKind::Read,
            AccessKind::Write,
            AccessKind::Modify,
            AccessKind::Instruction,
        ] {
            assert_eq!(access_kind(ref_kind(kind)), kind);
            let r = Reference::new(kind, 0x1040, 8).with(RegionId(3), LabelId(7));
            assert_eq!(reference(&record(&r)), r);
            // As the block decoder builds it: from the packed fields.
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            for _ in 0..100 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let r = Reference::new(kind, x, (x >> 40) as u16)
                    .with(RegionId(x as u16), LabelId((x >> 20) as u16));
                let packed = record(&r).pack();
                // SAFETY: `pack` leaves bits 50-63 at 0.
                assert_eq!(unsafe { ToReference.convert_packed(r.addr, packed) }, r);
            }
        }
    }
}
