//! The control records of the tool's stream as Rust values, and how one is read
//! from its payload. Strings borrow the stream's bytes when they are valid UTF-8,
//! so a record costs no allocation.

use std::borrow::Cow;

use memlens_trace::RefKind;

use crate::decode_error::DecodeError;
use crate::protocol::{KIND_MASK, MAX_SITE, SIZE_SHIFT, kind, record_type};

/// One control record of the stream (everything but references: those go to
/// [`RecordSink::reference`](crate::RecordSink::reference), `BIGREF` records too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlRecord<'a> {
    /// A reference site (one operand of one instruction) is declared; references
    /// of `id` follow.
    Site {
        /// The site id, 1..=[`MAX_SITE`].
        id: u32,
        /// The instruction's address.
        ip: u64,
        /// What the site's references do.
        kind: RefKind,
        /// The bytes each reference touches (saturated at 65,535).
        size: u16,
        /// The label text: function, file:line and operand, as the tool wrote it.
        label: Cow<'a, str>,
    },
    /// A heap block became live.
    Alloc {
        /// Its first byte.
        address: u64,
        /// Its size in bytes.
        size: u64,
        /// The heap site that allocated it (declared by [`ControlRecord::HeapSite`]).
        heap_site: u64,
    },
    /// The heap block at `address` was freed.
    Free {
        /// Its first byte.
        address: u64,
    },
    /// A heap site (an allocation call's stack) is named.
    HeapSite {
        /// The heap site id.
        id: u64,
        /// The allocation call's address.
        ip: u64,
        /// The region name for its blocks, `heap: function file:line`.
        name: Cow<'a, str>,
    },
    /// `MEMLENS_NAME_REGION(address, len, name)`.
    Name {
        /// The region's first byte.
        address: u64,
        /// Its length in bytes.
        len: u64,
        /// Its name.
        name: Cow<'a, str>,
    },
    /// `MEMLENS_START()`.
    Start,
    /// `MEMLENS_STOP()`.
    Stop,
    /// A thread's stack, `[lo, hi)`.
    Stack {
        /// The lowest address.
        lo: u64,
        /// One past the highest.
        hi: u64,
    },
    /// An object (the program, a library) is loaded.
    Module {
        /// Its text segment's runtime address.
        text: u64,
        /// Its text segment's size.
        text_size: u64,
        /// Runtime address minus file address.
        bias: u64,
        /// Its file.
        path: Cow<'a, str>,
    },
    /// The last record: why the stream ends (`exit`, `exec`).
    End {
        /// The reason, as the tool wrote it.
        why: Cow<'a, str>,
    },
    /// A record type this memlens does not know (a newer tool's); its payload was
    /// skipped.
    Unknown {
        /// The record type.
        record_type: u8,
    },
}

/// What one control word and its payload stand for.
pub(crate) enum Unit<'a> {
    /// A `BIGREF` record: a reference.
    Reference {
        /// The site, not yet checked against the declared ones.
        site: u64,
        /// The address.
        address: u64,
    },
    /// Any other record.
    Control(ControlRecord<'a>),
}

/// A payload: little-endian words, as bytes.
struct Payload<'a>(&'a [u8]);

impl<'a> Payload<'a> {
    fn word(&self, i: usize) -> Option<u64> {
        let bytes = self.0.get(i * 8..i * 8 + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// The first `N` words.
    fn words<const N: usize>(&self) -> Option<[u64; N]> {
        let mut out = [0; N];
        for (i, word) in out.iter_mut().enumerate() {
            *word = self.word(i)?;
        }
        Some(out)
    }

    /// The string whose length word is word `i`.
    fn string(&self, i: usize) -> Option<Cow<'a, str>> {
        let len = usize::try_from(self.word(i)?).ok()?;
        let start = (i + 1) * 8;
        let padded = len.div_ceil(8).checked_mul(8)?;
        if start.checked_add(padded)? > self.0.len() {
            return None;
        }
        Some(String::from_utf8_lossy(&self.0[start..start + len]))
    }
}

fn kind_of(code: u64) -> Option<RefKind> {
    Some(match u8::try_from(code & KIND_MASK).ok()? {
        kind::READ => RefKind::Read,
        kind::WRITE => RefKind::Write,
        kind::MODIFY => RefKind::Modify,
        kind::FETCH => RefKind::Instruction,
        _ => return None,
    })
}

/// Reads the record of type `record` from `payload`; `offset` is its control word,
/// for errors.
pub(crate) fn parse(record: u8, payload: &[u8], offset: u64) -> Result<Unit<'_>, DecodeError> {
    let p = Payload(payload);
    let short = || DecodeError::ShortRecord {
        offset,
        record_type: record,
    };
    let control = match record {
        record_type::SITE => {
            let [id, ip, kind_size] = p.words().ok_or_else(short)?;
            let label = p.string(3).ok_or_else(short)?;
            let id = u32::try_from(id)
                .ok()
                .filter(|&id| id > 0 && u64::from(id) <= MAX_SITE)
                .ok_or(DecodeError::ImpossibleSite { offset, site: id })?;
            let kind = kind_of(kind_size).ok_or(DecodeError::UnknownKind {
                offset,
                kind: kind_size & KIND_MASK,
            })?;
            let size = u16::try_from(kind_size >> SIZE_SHIFT).unwrap_or(u16::MAX);
            ControlRecord::Site {
                id,
                ip,
                kind,
                size,
                label,
            }
        }
        record_type::BIGREF => {
            let [site, address] = p.words().ok_or_else(short)?;
            return Ok(Unit::Reference { site, address });
        }
        record_type::ALLOC => {
            let [address, size, heap_site] = p.words().ok_or_else(short)?;
            ControlRecord::Alloc {
                address,
                size,
                heap_site,
            }
        }
        record_type::FREE => {
            let [address] = p.words().ok_or_else(short)?;
            ControlRecord::Free { address }
        }
        record_type::HEAPSITE => {
            let [id, ip] = p.words().ok_or_else(short)?;
            let name = p.string(2).ok_or_else(short)?;
            ControlRecord::HeapSite { id, ip, name }
        }
        record_type::NAME => {
            let [address, len] = p.words().ok_or_else(short)?;
            let name = p.string(2).ok_or_else(short)?;
            ControlRecord::Name { address, len, name }
        }
        record_type::START => ControlRecord::Start,
        record_type::STOP => ControlRecord::Stop,
        record_type::STACK => {
            let [lo, hi] = p.words().ok_or_else(short)?;
            ControlRecord::Stack { lo, hi }
        }
        record_type::MODULE => {
            let [text, text_size, bias] = p.words().ok_or_else(short)?;
            let path = p.string(3).ok_or_else(short)?;
            ControlRecord::Module {
                text,
                text_size,
                bias,
                path,
            }
        }
        record_type::END => ControlRecord::End {
            why: p.string(0).ok_or_else(short)?,
        },
        record_type => ControlRecord::Unknown { record_type },
    };
    Ok(Unit::Control(control))
}
