//! What can be wrong with the tool's word stream, each case naming the word where
//! it was found (counted from 0 at the start of the stream), so a damaged recording
//! can be looked at with a hex dump.

/// A stream that breaks the protocol of [`crate::protocol`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The stream stopped in the middle of a word.
    #[error("the Valgrind tool's stream is corrupt at word {offset}: it ends inside a word")]
    EndsInsideWord {
        /// The word that is incomplete.
        offset: u64,
    },
    /// The stream stopped before a control record's payload was complete.
    #[error("the Valgrind tool's stream is corrupt at word {offset}: it ends inside a record")]
    EndsInsideRecord {
        /// The record's first word.
        offset: u64,
    },
    /// A control word claims more payload words than any record has.
    #[error(
        "the Valgrind tool's stream is corrupt at word {offset}: a control record claims \
         {words} words"
    )]
    RecordTooLong {
        /// The control word.
        offset: u64,
        /// The payload length it claims.
        words: u64,
    },
    /// A control record's payload is shorter than its type needs.
    #[error(
        "the Valgrind tool's stream is corrupt at word {offset}: a control record of type \
         {record_type} is too short"
    )]
    ShortRecord {
        /// The record's first word.
        offset: u64,
        /// Its type ([`crate::protocol::record_type`]).
        record_type: u8,
    },
    /// A `SITE` record declares an id that cannot be a site (0, or wider than 32 bits).
    #[error("the Valgrind tool's stream is corrupt at word {offset}: a site id is impossible")]
    ImpossibleSite {
        /// The record's first word.
        offset: u64,
        /// The id it declares.
        site: u64,
    },
    /// A `SITE` record names a kind that is not one of [`crate::protocol::kind`].
    #[error(
        "the Valgrind tool's stream is corrupt at word {offset}: a site has the unknown kind \
         {kind}"
    )]
    UnknownKind {
        /// The record's first word.
        offset: u64,
        /// The kind code.
        kind: u64,
    },
    /// A reference names a site no `SITE` record declared before it.
    #[error(
        "the Valgrind tool's stream is corrupt at word {offset}: a reference names the unknown \
         site {site}"
    )]
    UnknownSite {
        /// The reference word (or its `BIGREF` record's first word).
        offset: u64,
        /// The site it names.
        site: u64,
    },
}

impl DecodeError {
    /// The word where the stream went wrong.
    pub fn offset(&self) -> u64 {
        match *self {
            DecodeError::EndsInsideWord { offset }
            | DecodeError::EndsInsideRecord { offset }
            | DecodeError::RecordTooLong { offset, .. }
            | DecodeError::ShortRecord { offset, .. }
            | DecodeError::ImpossibleSite { offset, .. }
            | DecodeError::UnknownKind { offset, .. }
            | DecodeError::UnknownSite { offset, .. } => offset,
        }
    }
}
