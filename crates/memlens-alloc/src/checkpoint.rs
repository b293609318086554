//! A checkpoint of an [`AllocModelBuilder`] before its window starts
//! ([`AllocModelBuilder::checkpoint`], [`AllocModelBuilder::resume_at`]): everything
//! the builder has learned from the events fed so far, as bytes, so that a reader of a
//! later window of the same run can go on from there instead of feeding every event
//! from the run's start. Bytes in, bytes out (the caller compresses and stores them).
//!
//! Before the window starts the builder holds only the live set (`before_window.rs`),
//! so a checkpoint is small: the tables (repairs, processes, threads, sites with their
//! call paths), the run's first time and latest block time, the program's mappings
//! (which are blocks from the start) with their live ranges, and the live blocks with
//! their allocator latencies. Fed the same events from the checkpoint on, a resumed
//! builder finishes into exactly the model the builder that took it would have.
//!
//! Layout: `MLAK`, [`ALLOC_CODEC_VERSION`] as a little-endian `u32`, then LEB128 varints
//! ([`memlens_vocab::codec`]): the tables as the model's codec writes them; the first
//! time + 1 (0: none yet), the latest time, whether blocks came out of order; the
//! blocks held (mappings) and their latencies as the model's columns; the live set of
//! heap blocks held (process, address, block); the live mappings (per process: its id
//! and its ranges as start, length, block); the live set before the window (process
//! per block, then the blocks and their latencies as the model's columns). Decoding
//! never panics and checks every id and block index.

use memlens_vocab::codec::{DecodeError, Reader, Result, Writer};

use crate::before_window::BeforeWindow;
use crate::builder::AllocModelBuilder;
use crate::ids::ProcessId;
use crate::model_codec::{
    ALLOC_CODEC_VERSION, decode_blocks, decode_latency, decode_tables, encode_blocks,
    encode_latency, encode_tables,
};

/// The first four bytes of every checkpoint.
const MAGIC: [u8; 4] = *b"MLAK";

impl AllocModelBuilder {
    /// The builder's state as bytes that [`AllocModelBuilder::resume_at`] turns back
    /// into a builder that goes on from here: only before the window of a builder made
    /// with [`AllocModelBuilder::start_at`] has started (`None` otherwise, or when its
    /// blocks came out of allocation order, which several processes may cause). What
    /// the whole run at a glance has added up so far is not kept.
    pub fn checkpoint(&self) -> Option<Vec<u8>> {
        let before = self.before.as_ref()?;
        if !self.blocks.windows(2).all(|w| w[0].t_alloc <= w[1].t_alloc) {
            return None;
        }
        let mut w = Writer { out: Vec::new() };
        w.out.extend_from_slice(&MAGIC);
        w.out.extend_from_slice(&ALLOC_CODEC_VERSION.to_le_bytes());
        let tables = (&self.processes[..], &self.threads[..], &self.sites[..]);
        encode_tables(&mut w, &self.diagnostics, tables);
        w.varint(self.start.map_or(0, |t| t.saturating_add(1)));
        w.varint(self.latest);
        w.varint(u64::from(self.out_of_order));
        encode_blocks(&mut w, &self.blocks);
        let latency = (!self.latency.is_empty()).then(|| {
            let mut latency = self.latency.clone();
            latency.resize(self.blocks.len(), Default::default());
            latency
        });
        encode_latency(&mut w, latency.as_deref());
        let mut live: Vec<_> = self.live.iter().map(|(&(p, a), &i)| (p.0, a, i)).collect();
        live.sort_unstable();
        w.varint(live.len() as u64);
        for (process, addr, index) in live {
            w.varint(u64::from(process));
            w.varint(addr);
            w.varint(u64::from(index));
        }
        let mut mappings: Vec<_> = self.mappings.iter().collect();
        mappings.sort_unstable_by_key(|(p, _)| p.0);
        w.varint(mappings.len() as u64);
        for (process, ranges) in mappings {
            w.varint(u64::from(process.0));
            let ranges: Vec<_> = ranges.iter().collect();
            w.varint(ranges.len() as u64);
            for (start, end, index) in ranges {
                w.varint(start);
                w.varint(end - start);
                w.varint(u64::from(index));
            }
        }
        let entries = before.live_refs();
        w.column(&entries, |_, (p, _, _)| u64::from(p.0));
        let blocks: Vec<_> = entries.iter().map(|&(_, b, _)| b).collect();
        encode_blocks(&mut w, &blocks);
        let latency: Vec<_> = entries.iter().map(|&(_, _, &l)| l).collect();
        let measured = latency.iter().any(|l| *l != Default::default());
        encode_latency(&mut w, measured.then_some(&latency[..]));
        Some(w.out)
    }

    /// The builder whose [`checkpoint`](Self::checkpoint) `bytes` are (of the same
    /// [`ALLOC_CODEC_VERSION`]), its window starting at `window_start`, which must not
    /// be before the events it was fed. Refuses, with a sentence naming the byte
    /// offset, bytes that are truncated, of another version, or that name a process,
    /// thread, site or block that is not there; never panics.
    pub fn resume_at(bytes: &[u8], window_start: u64) -> Result<AllocModelBuilder> {
        let mut r = Reader::new(bytes, "allocation-map checkpoint");
        if r.take(4)? != MAGIC {
            let message =
                "the bytes at offset 0 are not an allocation-map checkpoint (no \"MLAK\")";
            return Err(DecodeError::new(0, message.to_owned()));
        }
        let version = r.take(4)?;
        let version = u32::from_le_bytes([version[0], version[1], version[2], version[3]]);
        if version != ALLOC_CODEC_VERSION {
            let message = format!(
                "the checkpoint at offset 4 has codec version {version}, but this memlens \
                 reads only version {ALLOC_CODEC_VERSION}"
            );
            return Err(DecodeError::new(4, message));
        }
        let (diagnostics, processes, threads, sites) = decode_tables(&mut r)?;
        r.section = "times";
        let start = r.varint()?.checked_sub(1);
        let latest = r.varint()?;
        let out_of_order = r.varint()? != 0;
        let (t, s) = (threads.len(), sites.len());
        let blocks = decode_blocks(&mut r, u64::MAX, t, s)?;
        let latency = decode_latency(&mut r, blocks.len())?.unwrap_or_default();
        r.section = "live blocks";
        let n = blocks.len();
        let live = r.column(None, "live block", |r, _| {
            let process = ProcessId(r.id(processes.len(), "process")?);
            let addr = r.varint()?;
            Ok(((process, addr), r.id(n, "block")?))
        })?;
        r.section = "mappings";
        let mappings = r.column(None, "process's mappings", |r, _| {
            let process = ProcessId(r.id(processes.len(), "process")?);
            let mut ranges = crate::mapped::LiveRanges::default();
            r.column(None, "mapping", |r, _| {
                let start = r.varint()?;
                let at = r.pos;
                let end = start.checked_add(r.varint()?);
                let end = end.ok_or_else(|| r.invalid(at, "a mapping ends past 2^64".into()))?;
                ranges.insert(start, end, r.id(n, "block")?);
                Ok(())
            })?;
            Ok((process, ranges))
        })?;
        r.section = "live set before the window";
        let owners = r.column(None, "owner", |r, _| {
            Ok(ProcessId(r.id(processes.len(), "process")?))
        })?;
        let before = decode_blocks(&mut r, u64::MAX, t, s)?;
        r.check(before.len() == owners.len(), r.pos, || {
            format!("{} live blocks for {} owners", before.len(), owners.len())
        })?;
        let before_latency = decode_latency(&mut r, before.len())?;
        let before_latency =
            before_latency.unwrap_or_else(|| vec![Default::default(); before.len()]);
        r.finish()?;
        let entries = owners.into_iter().zip(before).zip(before_latency);
        let entries = entries.map(|((p, b), l)| (p, b, l)).collect();
        let mut builder = AllocModelBuilder::new();
        builder.thread_ids = threads
            .iter()
            .enumerate()
            .map(|(i, t)| ((t.process, t.tid), crate::ids::ThreadId(i as u32)))
            .collect();
        builder.site_ids = sites
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, s)| (s.label.clone(), crate::ids::SiteId(i as u32)))
            .collect();
        builder.processes = processes;
        builder.threads = threads;
        builder.sites = sites;
        builder.blocks = blocks;
        builder.latency = latency;
        builder.live = live.into_iter().collect();
        builder.mappings = mappings.into_iter().collect();
        builder.diagnostics = diagnostics;
        builder.start = start;
        builder.latest = latest;
        builder.out_of_order = out_of_order;
        builder.before = Some(BeforeWindow::with_live(window_start, entries));
        builder.window_start = Some(window_start);
        Ok(builder)
    }
}
