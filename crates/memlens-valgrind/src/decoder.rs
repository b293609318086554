//! The decoder of the tool's word stream: a state machine that does no IO. Bytes
//! go in, in pieces of any size (a read of a FIFO may end inside a word or a
//! record); references and control records come out, handed to a [`RecordSink`].
//!
//! It keeps only what a piece boundary cuts (at most one unfinished record) and the
//! set of declared sites, so that every reference it hands on names a site that a
//! `SITE` record declared before it.

use crate::control_record::{self, ControlRecord, Unit};
use crate::decode_error::DecodeError;
use crate::protocol::{
    ADDRESS_MASK, MAX_PAYLOAD_WORDS, PAYLOAD_WORDS_MASK, SITE_SHIFT, TYPE_MASK, TYPE_SHIFT,
};

/// Where decoded records go.
///
/// The decoder stops at the first error, the sink's or its own, and returns it; its
/// own errors become the sink's through `From`.
pub trait RecordSink {
    /// What the sink can fail with; it holds the decoder's errors too.
    type Error: From<DecodeError>;

    /// A reference of `site` (declared earlier by a [`ControlRecord::Site`]) to
    /// `address`. This is the hot path: nearly every word is one.
    fn reference(&mut self, site: u32, address: u64) -> Result<(), Self::Error>;

    /// Any control record.
    fn control(&mut self, record: ControlRecord<'_>) -> Result<(), Self::Error>;
}

/// The stream's decoder. Feed it the stream's bytes in order, then call
/// [`Decoder::finish`] at the end of the stream.
///
/// After an error the decoder is done: what it makes of more bytes is unspecified
/// (though it never panics).
#[derive(Debug, Default)]
pub struct Decoder {
    /// The start of a unit (a word, or a control record) that the next bytes
    /// complete. Never a whole unit between calls.
    pending: Vec<u8>,
    /// The words consumed before `pending`: the offset of its first word.
    words_done: u64,
    /// Which site ids were declared, by id.
    declared: Vec<bool>,
}

impl Decoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// The number of whole words decoded so far.
    pub fn words_decoded(&self) -> u64 {
        self.words_done
    }

    /// Decodes `bytes`, the stream's next bytes, handing every record they complete
    /// to `sink`.
    ///
    /// # Errors
    ///
    /// The first protocol error ([`DecodeError`], converted) or sink error.
    pub fn feed<S: RecordSink>(&mut self, mut bytes: &[u8], sink: &mut S) -> Result<(), S::Error> {
        while !self.pending.is_empty() {
            let need = unit_len(&self.pending, self.words_done)?;
            if self.pending.len() < need {
                if bytes.is_empty() {
                    return Ok(());
                }
                let take = (need - self.pending.len()).min(bytes.len());
                self.pending.extend_from_slice(&bytes[..take]);
                bytes = &bytes[take..];
                continue;
            }
            // A whole unit: decode it like any other, then keep the buffer.
            let unit = std::mem::take(&mut self.pending);
            self.decode_units(&unit, sink)?;
            self.pending = unit;
            self.pending.clear();
        }
        let used = self.decode_units(bytes, sink)?;
        self.pending.extend_from_slice(&bytes[used..]);
        Ok(())
    }

    /// Decodes `words`, the stream's next words (for callers that hold words rather
    /// than bytes).
    ///
    /// # Errors
    ///
    /// As [`Decoder::feed`].
    pub fn feed_words<S: RecordSink>(
        &mut self,
        words: &[u64],
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let mut bytes = [0u8; 8 * 512];
        for chunk in words.chunks(512) {
            for (word, out) in chunk.iter().zip(bytes.chunks_exact_mut(8)) {
                out.copy_from_slice(&word.to_le_bytes());
            }
            self.feed(&bytes[..chunk.len() * 8], sink)?;
        }
        Ok(())
    }

    /// Says whether the stream may end here.
    ///
    /// # Errors
    ///
    /// [`DecodeError::EndsInsideWord`] or [`DecodeError::EndsInsideRecord`] when the
    /// bytes fed so far stop inside one.
    pub fn finish(&self) -> Result<(), DecodeError> {
        let whole_words = (self.pending.len() / 8) as u64;
        if !self.pending.len().is_multiple_of(8) {
            Err(DecodeError::EndsInsideWord {
                offset: self.words_done + whole_words,
            })
        } else if !self.pending.is_empty() {
            Err(DecodeError::EndsInsideRecord {
                offset: self.words_done,
            })
        } else {
            Ok(())
        }
    }

    /// Decodes the whole units at the start of `bytes`; returns how many bytes they
    /// took (the rest start a unit that continues in the next piece).
    fn decode_units<S: RecordSink>(
        &mut self,
        bytes: &[u8],
        sink: &mut S,
    ) -> Result<usize, S::Error> {
        let mut at = 0;
        while let Some(word) = bytes[at..].first_chunk::<8>() {
            let word = u64::from_le_bytes(*word);
            let offset = self.words_done + (at / 8) as u64;
            let site = word >> SITE_SHIFT;
            if site != 0 {
                self.reference(site, word & ADDRESS_MASK, offset, sink)?;
                at += 8;
                continue;
            }
            let end = at + unit_len(&bytes[at..], offset)?;
            let Some(payload) = bytes.get(at + 8..end) else {
                break;
            };
            let record = ((word >> TYPE_SHIFT) & TYPE_MASK) as u8;
            match control_record::parse(record, payload, offset)? {
                Unit::Reference { site, address } => self.reference(site, address, offset, sink)?,
                Unit::Control(record) => {
                    if let ControlRecord::Site { id, .. } = record {
                        self.declare(id);
                    }
                    sink.control(record)?;
                }
            }
            at = end;
        }
        self.words_done += (at / 8) as u64;
        Ok(at)
    }

    #[inline]
    fn reference<S: RecordSink>(
        &self,
        site: u64,
        address: u64,
        offset: u64,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let declared = usize::try_from(site)
            .ok()
            .and_then(|i| self.declared.get(i).copied())
            .unwrap_or(false);
        if !declared {
            return Err(DecodeError::UnknownSite { offset, site }.into());
        }
        // Declared ids are at most `MAX_SITE`, which is `u32::MAX`.
        sink.reference(site as u32, address)
    }

    fn declare(&mut self, id: u32) {
        let i = id as usize;
        if self.declared.len() <= i {
            self.declared.resize(i + 1, false);
        }
        self.declared[i] = true;
    }
}

/// The length in bytes of the unit that `start` begins: 8 for a word not yet whole
/// or a reference, the control word and its payload for a control record.
fn unit_len(start: &[u8], offset: u64) -> Result<usize, DecodeError> {
    let Some(word) = start.first_chunk::<8>() else {
        return Ok(8);
    };
    let word = u64::from_le_bytes(*word);
    if word >> SITE_SHIFT != 0 {
        return Ok(8);
    }
    let words = word & PAYLOAD_WORDS_MASK;
    if words > MAX_PAYLOAD_WORDS as u64 {
        return Err(DecodeError::RecordTooLong { offset, words });
    }
    Ok(8 * (1 + words as usize))
}

#[cfg(test)]
mod tests;
