//! The compact address axis: a process's heap regions lie terabytes apart, so the
//! vertical axis stacks the bins' extents one above the other (in bin order, without
//! the gaps between them). Positions on this axis are what a [`crate::View`]'s
//! address range and [`crate::AllocModel::block_at`] take.

use crate::bin::Bin;
use crate::ids::BinId;

/// One bin's piece of the axis: raw addresses `[raw_start, raw_end)` drawn at
/// `[axis_start, axis_start + raw_end − raw_start)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisSegment {
    /// The bin.
    pub bin: BinId,
    /// First raw address.
    pub raw_start: u64,
    /// One past the last raw address.
    pub raw_end: u64,
    /// Axis position of `raw_start`.
    pub axis_start: u64,
}

/// The stacked axis.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddressAxis {
    segments: Vec<AxisSegment>,
    len: u64,
}

impl AddressAxis {
    /// Stacks `bins` in order, setting each one's `axis_start`.
    pub(crate) fn stack(bins: &mut [Bin]) -> AddressAxis {
        let mut at = 0u64;
        let mut segments = Vec::with_capacity(bins.len());
        for bin in bins.iter_mut() {
            bin.axis_start = at;
            segments.push(AxisSegment {
                bin: bin.id,
                raw_start: bin.start,
                raw_end: bin.end,
                axis_start: at,
            });
            at = at.saturating_add(bin.end - bin.start);
        }
        AddressAxis { segments, len: at }
    }

    /// The axis length: the sum of the bins' extents.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when there are no bins.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The segments, bottom to top.
    pub fn segments(&self) -> &[AxisSegment] {
        &self.segments
    }

    /// The bin and raw address at axis position `y`.
    pub fn to_raw(&self, y: u64) -> Option<(BinId, u64)> {
        let i = self.segments.partition_point(|s| s.axis_start <= y);
        let s = self.segments.get(i.checked_sub(1)?)?;
        let raw = s.raw_start + (y - s.axis_start);
        (raw < s.raw_end).then_some((s.bin, raw))
    }

    /// The axis range covering raw addresses `[lo, hi)`: from the first segment that
    /// overlaps it to the last (clipped to them). `None` when no bin overlaps it.
    /// With several processes, the first process's segments are meant when their
    /// address ranges coincide only if `bins` says so; this takes every overlap.
    pub fn raw_range_to_axis(&self, lo: u64, hi: u64) -> Option<(u64, u64)> {
        let mut out: Option<(u64, u64)> = None;
        for s in &self.segments {
            let a = lo.max(s.raw_start);
            let b = hi.min(s.raw_end);
            if a < b {
                let (ya, yb) = (
                    s.axis_start + (a - s.raw_start),
                    s.axis_start + (b - s.raw_start),
                );
                out = Some(out.map_or((ya, yb), |(x, y)| (x.min(ya), y.max(yb))));
            }
        }
        out
    }
}
