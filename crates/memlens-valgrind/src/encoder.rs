//! The encoder: a [`RecordSink`] that turns the decoded stream into a memlens
//! reference trace. Sites become labels, references get their home region from
//! [`Regions`], and memlens-trace's [`ReferenceWriter`] encodes them, declaring
//! each region and label before its first reference.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use memlens_trace::{RefKind, RefRecord, ReferenceWriter, TraceWriter};

use crate::control_record::ControlRecord;
use crate::decode_error::DecodeError;
use crate::decoder::RecordSink;
use crate::modules::add_module;
use crate::regions::Regions;
use crate::summary::Summary;

/// Why a stream could not be encoded.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The stream broke the protocol.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Reading the stream or writing the trace failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// A declared site: what its references are, and the last region they fell in.
#[derive(Debug, Clone, Copy)]
struct Site {
    kind: RefKind,
    size: u16,
    label: u16,
    // The region cache: [lo, hi) maps to `region` while `generation` holds.
    lo: u64,
    hi: u64,
    region: u16,
    generation: u64,
}

/// Turns the tool's records into trace records.
pub struct TraceEncoder<W: Write> {
    trace: TraceWriter<W>,
    refs: ReferenceWriter,
    /// By site id; `None` for ids not declared.
    sites: Vec<Option<Site>>,
    regions: Regions,
    next_label: u32,
    /// The one label all instruction fetches share.
    fetch_label: Option<u16>,
    main_exe: Option<PathBuf>,
    summary: Summary,
}

impl<W: Write> TraceEncoder<W> {
    /// An encoder writing into `trace`; `main_exe` is the recorded program,
    /// canonical (its globals are named plainly, other objects' with the object's
    /// file name).
    pub fn new(trace: TraceWriter<W>, main_exe: Option<PathBuf>) -> TraceEncoder<W> {
        TraceEncoder {
            trace,
            refs: ReferenceWriter::new(),
            sites: vec![None],
            regions: Regions::new(),
            next_label: 1,
            fetch_label: None,
            main_exe,
            summary: Summary::default(),
        }
    }

    /// What was encoded so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Writes what is buffered and returns the finished trace's sink.
    ///
    /// # Errors
    ///
    /// Writing the trace failed.
    pub fn finish(mut self) -> io::Result<(W, Summary)> {
        self.declare_new_regions()?;
        self.refs.finish(&mut self.trace)?;
        let out = self.trace.finish()?;
        Ok((out, self.summary))
    }

    /// Declares the regions the address map handed out since the last call.
    fn declare_new_regions(&mut self) -> io::Result<()> {
        for r in self.regions.take_new() {
            self.refs
                .region(&mut self.trace, r.id, r.start, r.len, &r.name)?;
            self.summary.regions += 1;
        }
        Ok(())
    }

    fn new_label(&mut self, text: &str) -> io::Result<u16> {
        let Ok(id) = u16::try_from(self.next_label) else {
            self.summary.unlabelled_sites += 1;
            return Ok(0);
        };
        self.next_label += 1;
        self.refs.label(&mut self.trace, id, text)?;
        Ok(id)
    }

    fn site(&mut self, id: u32, kind: RefKind, size: u16, text: &str) -> io::Result<()> {
        let label = match (kind, self.fetch_label) {
            (RefKind::Instruction, Some(shared)) => shared,
            (RefKind::Instruction, None) => {
                let label = self.new_label(text)?;
                self.fetch_label = Some(label);
                label
            }
            _ => self.new_label(text)?,
        };
        let id = id as usize;
        if self.sites.len() <= id {
            self.sites.resize(id + 1, None);
        }
        self.sites[id] = Some(Site {
            kind,
            size,
            label,
            lo: 0,
            hi: 0,
            region: 0,
            generation: 0,
        });
        self.summary.sites += 1;
        Ok(())
    }
}

impl<W: Write> RecordSink for TraceEncoder<W> {
    type Error = EncodeError;

    #[inline]
    fn reference(&mut self, site: u32, address: u64) -> Result<(), EncodeError> {
        let generation = self.regions.generation();
        // The decoder hands on references of declared sites only, and every
        // declared site has its entry.
        let Some(Some(s)) = self.sites.get_mut(site as usize) else {
            return Ok(());
        };
        if address.wrapping_sub(s.lo) >= s.hi.wrapping_sub(s.lo) || s.generation != generation {
            let hit = self.regions.lookup(address);
            (s.lo, s.hi, s.region, s.generation) = (hit.lo, hit.hi, hit.id, generation);
        }
        let record = RefRecord {
            addr: address,
            size: s.size,
            kind: s.kind,
            region: s.region,
            label: s.label,
        };
        if record.kind == RefKind::Instruction {
            self.summary.fetches += 1;
        } else {
            self.summary.data += 1;
        }
        if self.regions.has_new() {
            self.declare_new_regions()?;
        }
        Ok(self.refs.reference(&mut self.trace, record)?)
    }

    fn control(&mut self, record: ControlRecord<'_>) -> Result<(), EncodeError> {
        match record {
            ControlRecord::Site {
                id,
                kind,
                size,
                label,
                ..
            } => self.site(id, kind, size, &label)?,
            ControlRecord::Alloc {
                address,
                size,
                heap_site,
            } => {
                self.regions.alloc(address, size, heap_site);
                self.summary.allocations += 1;
            }
            ControlRecord::Free { address } => self.regions.free(address),
            ControlRecord::HeapSite { id, name, .. } => {
                self.regions.heap_site(id, name.into_owned());
            }
            ControlRecord::Name { address, len, name } => {
                self.regions.name(address, len, name.into_owned());
            }
            ControlRecord::Start | ControlRecord::Stop => self.summary.roi_marks += 1,
            ControlRecord::Stack { lo, hi } => self.regions.stack(lo, hi),
            ControlRecord::Module { bias, path, .. } => add_module(
                &mut self.regions,
                Path::new(&*path),
                bias,
                self.main_exe.as_deref(),
            ),
            ControlRecord::End { why } => self.summary.ended = Some(why.into_owned()),
            // A newer tool's record: skipped.
            ControlRecord::Unknown { .. } => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
