//! A compact, versioned binary encoding of a [`Summary`] with its [`LatencyTable`]
//! ([`encode_summary`], [`decode_summary`]), so that a trace's on-disk index can keep
//! what `memlens summary` computed and the next `summary` reads no event. Bytes in,
//! bytes out: no file IO and no compression here (the caller compresses with zstd).
//!
//! Layout: `MLSU`, [`SUMMARY_CODEC_VERSION`] as a little-endian `u32`, then LEB128
//! varints: the run's counters (allocations, frees, reallocations, allocated bytes,
//! peak bytes, time and blocks, leaked bytes and blocks, temporary allocations,
//! unknown frees, address conflicts, duration); per stack id, its six figures; then
//! the latency table (per function: its name, its histogram's buckets — none or all
//! of them — count, sum as two halves, minimum, maximum).
//!
//! Decoding never panics, checks every length against the bytes left before
//! reserving, and refuses bytes after the end.

use memlens_vocab::codec::{DecodeError, Reader, Writer};

use crate::latency::LatencyTable;
use crate::summary::{StackFigures, Summary};

/// The version of the encoding written by [`encode_summary`]; [`decode_summary`]
/// reads only this version. Bump it whenever the layout or its meaning changes.
pub const SUMMARY_CODEC_VERSION: u32 = 1;

/// The first four bytes of every encoded summary.
const MAGIC: [u8; 4] = *b"MLSU";

/// The bytes of `summary` and `latency`.
pub fn encode_summary(summary: &Summary, latency: &LatencyTable) -> Vec<u8> {
    let mut w = Writer::default();
    w.out.extend_from_slice(&MAGIC);
    w.out
        .extend_from_slice(&SUMMARY_CODEC_VERSION.to_le_bytes());
    // `decode_summary` names every field, so a new one fails to compile until it is
    // coded here too.
    let s = summary;
    for v in [
        s.allocations,
        s.frees,
        s.reallocations,
        s.allocated_bytes,
        s.peak_bytes,
        s.peak_time_ns,
        s.peak_allocations,
        s.leaked_bytes,
        s.leaked_allocations,
        s.temporary,
        s.unknown_frees,
        s.address_conflicts,
        s.duration_ns,
    ] {
        w.varint(v);
    }
    w.varint(s.stacks.len() as u64);
    for f in &s.stacks {
        for v in [
            f.allocations,
            f.bytes,
            f.temporary,
            f.peak_bytes,
            f.leaked_bytes,
            f.leaked_allocations,
        ] {
            w.varint(v);
        }
    }
    latency.encode(&mut w);
    w.out
}

/// The summary and latency table [`encode_summary`] wrote into `bytes`, or why they
/// are not that (one sentence naming the byte offset).
pub fn decode_summary(bytes: &[u8]) -> Result<(Summary, LatencyTable), DecodeError> {
    let mut r = Reader::new(bytes, "summary");
    let magic = r.take(MAGIC.len())?;
    r.check(magic == MAGIC, 0, || "no \"MLSU\"".to_owned())?;
    let version = r.take(4)?;
    let version = u32::from_le_bytes([version[0], version[1], version[2], version[3]]);
    r.check(version == SUMMARY_CODEC_VERSION, 4, || {
        format!(
            "codec version {version}, but this memlens reads only version {SUMMARY_CODEC_VERSION}"
        )
    })?;
    r.section = "counters";
    let mut summary = Summary {
        allocations: r.varint()?,
        frees: r.varint()?,
        reallocations: r.varint()?,
        allocated_bytes: r.varint()?,
        peak_bytes: r.varint()?,
        peak_time_ns: r.varint()?,
        peak_allocations: r.varint()?,
        leaked_bytes: r.varint()?,
        leaked_allocations: r.varint()?,
        temporary: r.varint()?,
        unknown_frees: r.varint()?,
        address_conflicts: r.varint()?,
        duration_ns: r.varint()?,
        stacks: Vec::new(),
    };
    r.section = "stacks";
    summary.stacks = r.column(None, "stack", |r, _| {
        Ok(StackFigures {
            allocations: r.varint()?,
            bytes: r.varint()?,
            temporary: r.varint()?,
            peak_bytes: r.varint()?,
            leaked_bytes: r.varint()?,
            leaked_allocations: r.varint()?,
        })
    })?;
    r.section = "latencies";
    let latency = LatencyTable::decode(&mut r)?;
    r.finish()?;
    Ok((summary, latency))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::SummaryBuilder;

    /// A summary of a few allocations on two stacks, one leaked, with latencies.
    fn sample() -> (Summary, LatencyTable) {
        let mut b = SummaryBuilder::new();
        b.alloc(10, 1, 0x1000, 64, 1);
        b.alloc(20, 2, 0x2000, 4096, 2);
        b.realloc(30, 1, 0x1000, 0x3000, 128, 1);
        b.free(40, 1, 0x3000);
        b.free(45, 1, 0x9999);
        b.end(100);
        let mut latency = LatencyTable::new();
        let malloc = latency.op("malloc");
        latency.op("free");
        for ns in [30, 45, 1_000, 70_000] {
            latency.record(malloc, ns);
        }
        (b.finish(), latency)
    }

    #[test]
    fn a_summary_reads_back_as_written() {
        let (summary, latency) = sample();
        let bytes = encode_summary(&summary, &latency);
        let (back, back_latency) = decode_summary(&bytes).unwrap();
        assert_eq!(back, summary);
        assert_eq!(back_latency.rows(), latency.rows());
        assert_eq!(encode_summary(&back, &back_latency), bytes);
    }

    #[test]
    fn every_prefix_and_any_flipped_byte_is_refused_or_read_without_panic() {
        let (summary, latency) = sample();
        let bytes = encode_summary(&summary, &latency);
        for n in 0..bytes.len() {
            let err = decode_summary(&bytes[..n]).unwrap_err();
            assert!(err.message.contains("offset"), "{err}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_summary(&longer).is_err());
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[i] ^= 1 << bit;
                let _ = decode_summary(&flipped);
            }
        }
        let mut version = bytes;
        version[4] = 9;
        let err = decode_summary(&version).unwrap_err();
        assert!(err.message.contains("codec version 9"), "{err}");
    }
}
