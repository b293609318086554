//! The word protocol between the memlens Valgrind tool and memlens, defined once on
//! the Rust side: the layout of a word, the control record types and the reference
//! kinds. The C side is `tools/valgrind/ml_tool.h` (constants) and `ml_stream.c`
//! (layout); a test in `protocol/header_tests.rs` parses the header and fails when
//! the two disagree, so they cannot drift apart.
//!
//! The stream is a sequence of little-endian 64-bit words:
//!
//! ```text
//!  63            48 47                                               0
//! ┌────────────────┬──────────────────────────────────────────────────┐
//! │ site 1..=FFFE  │ address                                          │  a reference
//! └────────────────┴──────────────────────────────────────────────────┘
//!  63            48 47      40 39      32 31                         0
//! ┌────────────────┬──────────┬──────────┬────────────────────────────┐
//! │ 0              │ type     │ (unused) │ n: payload words           │  a control record,
//! └────────────────┴──────────┴──────────┴────────────────────────────┘  then n words
//! ```
//!
//! A reference takes its kind, size and label from the `SITE` record that declared
//! its site. A string in a payload is a word holding its length in bytes, then the
//! bytes, zero-padded to whole words.

/// Where the site id of a reference word starts (its top 16 bits).
pub const SITE_SHIFT: u32 = 48;

/// The address bits of a reference word (`ML_ADDR_MASK`). Addresses wider than this
/// come in [`record_type::BIGREF`] records.
pub const ADDRESS_MASK: u64 = (1 << SITE_SHIFT) - 1;

/// The largest site id that fits a reference word (`ML_MAX_COMPACT_SITE`); larger ids
/// come in [`record_type::BIGREF`] records.
pub const MAX_COMPACT_SITE: u64 = 0xFFFE;

/// The largest site id the tool can declare: its site counter is 32 bits wide.
pub const MAX_SITE: u64 = u32::MAX as u64;

/// Where the record type of a control word starts.
pub const TYPE_SHIFT: u32 = 40;

/// The record type bits of a control word, after the shift.
pub const TYPE_MASK: u64 = 0xFF;

/// The payload length bits of a control word (the number of words that follow).
pub const PAYLOAD_WORDS_MASK: u64 = 0xFFFF_FFFF;

/// The longest payload memlens accepts. The tool's records are far shorter (its
/// buffer holds 131,072 words and a record must fit half of it); a longer claim
/// means a corrupt stream, not a record to wait for.
pub const MAX_PAYLOAD_WORDS: usize = 1 << 16;

/// Where the size of a site starts in the `SITE` record's `kind | size << 8` word.
pub const SIZE_SHIFT: u32 = 8;

/// The kind bits of the `SITE` record's `kind | size << 8` word.
pub const KIND_MASK: u64 = 0xFF;

/// The kinds of a site (`ML_READ` …), the reference kinds of the memlens format.
pub mod kind {
    /// A load (`ML_READ`).
    pub const READ: u8 = 0;
    /// A store (`ML_WRITE`).
    pub const WRITE: u8 = 1;
    /// A load and a store of the same bytes by one instruction (`ML_MODIFY`).
    pub const MODIFY: u8 = 2;
    /// An instruction fetch (`ML_FETCH`).
    pub const FETCH: u8 = 3;
}

/// The control record types (`ML_REC_…`), with their payloads.
pub mod record_type {
    /// Site id, instruction address, `kind | size << 8`, label string.
    pub const SITE: u8 = 1;
    /// Address, size, heap site id: a heap block became live.
    pub const ALLOC: u8 = 2;
    /// Address: a heap block was freed.
    pub const FREE: u8 = 3;
    /// Heap site id, instruction address, name string.
    pub const HEAPSITE: u8 = 4;
    /// Address, length, name string: `MEMLENS_NAME_REGION`.
    pub const NAME: u8 = 5;
    /// No payload: `MEMLENS_START`.
    pub const START: u8 = 6;
    /// No payload: `MEMLENS_STOP`.
    pub const STOP: u8 = 7;
    /// Lowest address, one past the highest, thread id: a thread's stack.
    pub const STACK: u8 = 8;
    /// Text address, text size, load bias, path string: a loaded object.
    pub const MODULE: u8 = 9;
    /// Why string (`exit`, `exec`): the last record of a stream.
    pub const END: u8 = 10;
    /// Site id, address: a reference whose site id or address is too wide for a
    /// reference word.
    pub const BIGREF: u8 = 11;
}

// The layout holds together, checked when this file compiles.
const _: () = assert!(MAX_COMPACT_SITE < 1 << (64 - SITE_SHIFT));
const _: () = assert!(MAX_SITE < 1 << SITE_SHIFT);
const _: () = assert!(kind::FETCH as u64 <= KIND_MASK);
const _: () = assert!(record_type::BIGREF as u64 <= TYPE_MASK);

#[cfg(test)]
mod header_tests;
