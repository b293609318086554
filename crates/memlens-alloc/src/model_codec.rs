//! A compact, versioned binary encoding of an [`AllocModel`] ([`AllocModel::encode`],
//! [`AllocModel::decode`]), so that the allocation map read once can be kept in a
//! trace's on-disk index and read back in a fraction of the time the events take.
//! Bytes in, bytes out: no file IO and no compression here (the caller compresses).
//!
//! Layout: `MLAM`, [`ALLOC_CODEC_VERSION`] as a little-endian `u32`, then LEB128
//! varints ([`memlens_vocab::codec`]): the run (start, length), the time origin and
//! whether the model is a window; the repair counters and notes; processes (pid,
//! ppid, name); threads (process, tid, name); sites (label, site, the stack's sites);
//! bins (kind, name, process + 1 or 0, start, length, block count); then the blocks
//! as columns — allocation times (differences: blocks are sorted by allocation time,
//! then address; a window's first ones may start before it), lifetimes, addresses (zigzag differences), requested sizes,
//! reserved − requested, thread, site, freeing site, flags, bin — and their allocator
//! latencies (0 when absent, else 1 and per block `ns + 1` or 0, for the allocation
//! and for the free).
//!
//! What it keeps is the finished model's own data, bins included, so the model read
//! back is the one that was written (the compact axis and the time × address index
//! are rebuilt from them, as when the model was finished). Decoding never panics and
//! validates everything those rely on: ids in range, blocks in order and inside the
//! run, `requested ≤ reserved`, every block inside its bin, bin counts that match.

use std::borrow::Borrow;

use memlens_vocab::codec::{DecodeError, Reader, Result, Writer};
use memlens_vocab::{FrameKind, Site};

use crate::bin::{Bin, BinKind};
use crate::block::{Block, Latency};
use crate::ids::{BinId, ProcessId, SiteId, ThreadId};
use crate::model::{AllocModel, Diagnostics, SiteInfo};
use crate::process::{ProcessInfo, ThreadInfo};

/// The version of the encoding written by [`AllocModel::encode`];
/// [`AllocModel::decode`] reads only this version. Bump it whenever the layout or its
/// meaning changes (how blocks, bins or sizes are found counts as meaning).
pub const ALLOC_CODEC_VERSION: u32 = 1;

/// The first four bytes of every encoded model.
const MAGIC: [u8; 4] = *b"MLAM";

/// Block flags, one bit each.
const FREED: u64 = 1;
const FROM_REALLOC: u64 = 2;
const MAPPING: u64 = 4;

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn encode_site(w: &mut Writer, s: &Site) {
    let Site {
        function,
        file,
        line,
        module,
        address,
        module_offset,
        inlined,
        kind,
    } = s;
    w.string(function);
    w.string(file);
    w.varint(u64::from(*line));
    w.string(module);
    w.varint(*address);
    w.varint(*module_offset);
    w.varint(u64::from(*inlined) | (u64::from(kind.code()) << 1));
}

fn decode_site(r: &mut Reader<'_>) -> Result<Site> {
    let (function, file, line, module) = (r.string()?, r.string()?, r.u32()?, r.string()?);
    let (address, module_offset) = (r.varint()?, r.varint()?);
    let at = r.pos;
    let bits = r.varint()?;
    let kind = u8::try_from(bits >> 1).ok().and_then(FrameKind::from_code);
    let kind = kind.ok_or_else(|| r.invalid(at, format!("frame kind {} is unknown", bits >> 1)))?;
    Ok(Site {
        function,
        file,
        line,
        module,
        address,
        module_offset,
        inlined: bits & 1 != 0,
        kind,
    })
}

fn encode_bin_kind(w: &mut Writer, kind: BinKind) {
    match kind {
        BinKind::MainHeap => w.varint(0),
        BinKind::ThreadArena => w.varint(1),
        BinKind::Mmap => w.varint(2),
        BinKind::Mapping => w.varint(3),
        BinKind::PoolBin { block_size, slots } => {
            w.varint(4);
            w.varint(block_size);
            w.varint(slots);
        }
        BinKind::PoolHeap => w.varint(5),
    }
}

fn decode_bin_kind(r: &mut Reader<'_>) -> Result<BinKind> {
    let at = r.pos;
    Ok(match r.varint()? {
        0 => BinKind::MainHeap,
        1 => BinKind::ThreadArena,
        2 => BinKind::Mmap,
        3 => BinKind::Mapping,
        4 => BinKind::PoolBin {
            block_size: r.varint()?,
            slots: r.varint()?,
        },
        5 => BinKind::PoolHeap,
        other => return Err(r.invalid(at, format!("bin kind {other} is unknown"))),
    })
}

/// Reads a column of `blocks.len()` values into the blocks, `value(reader, block)`
/// reading one.
fn fill(
    r: &mut Reader<'_>,
    blocks: &mut [Block],
    column: &str,
    mut value: impl FnMut(&mut Reader<'_>, &mut Block) -> Result<()>,
) -> Result<()> {
    r.length(Some(blocks.len()), column)?;
    blocks.iter_mut().try_for_each(|b| value(r, b))
}

/// A latency as stored: 0 when not measured, else `ns + 1`.
fn latency_code(ns: Option<u32>) -> u64 {
    ns.map_or(0, |ns| u64::from(ns) + 1)
}

fn latency_of(r: &mut Reader<'_>) -> Result<Option<u32>> {
    let at = r.pos;
    match r.varint()? {
        0 => Ok(None),
        code => u32::try_from(code - 1)
            .map(Some)
            .map_err(|_| r.invalid(at, format!("latency {code} does not fit in 32 bits"))),
    }
}

impl AllocModel {
    /// The model as bytes that [`decode`](Self::decode) turns back into the same
    /// model: a versioned header, then every table and column as LEB128 varints. Not
    /// compressed; the caller compresses before storing.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer {
            out: Vec::with_capacity(256 + self.blocks.len() * 12),
        };
        w.out.extend_from_slice(&MAGIC);
        w.out.extend_from_slice(&ALLOC_CODEC_VERSION.to_le_bytes());
        let run = self.run;
        w.varint(run.start_ns);
        w.varint(run.end_ns - run.start_ns);
        w.varint(self.time_origin);
        w.varint(u64::from(self.window));
        let tables = (&self.processes[..], &self.threads[..], &self.sites[..]);
        encode_tables(&mut w, &self.diagnostics, tables);
        w.varint(self.bins.len() as u64);
        for bin in &self.bins {
            encode_bin_kind(&mut w, bin.kind);
            w.string(&bin.name);
            w.varint(bin.process.map_or(0, |p| u64::from(p.0) + 1));
            w.varint(bin.start);
            w.varint(bin.end - bin.start);
            w.varint(bin.blocks);
        }
        encode_blocks(&mut w, &self.blocks);
        w.column(&self.block_bin, |_, bin| u64::from(bin.0));
        encode_latency(&mut w, self.latency.as_deref());
        w.out
    }

    /// The model encoded in `bytes` by [`encode`](Self::encode) of the same
    /// [`ALLOC_CODEC_VERSION`]. Refuses, with a sentence naming the byte offset, bytes
    /// that are truncated, of another version, or that break an invariant the engine
    /// relies on; never panics.
    pub fn decode(bytes: &[u8]) -> Result<AllocModel> {
        let mut r = Reader::new(bytes, "allocation map");
        if r.take(4)? != MAGIC {
            let message = "the bytes at offset 0 are not a memlens allocation map (no \"MLAM\")";
            return Err(DecodeError::new(0, message.to_owned()));
        }
        let version = r.take(4)?;
        let version = u32::from_le_bytes([version[0], version[1], version[2], version[3]]);
        if version != ALLOC_CODEC_VERSION {
            let message = format!(
                "the allocation map at offset 4 has codec version {version}, but this memlens \
                 reads only version {ALLOC_CODEC_VERSION}; rebuild it from the trace"
            );
            return Err(DecodeError::new(4, message));
        }
        r.section = "run";
        let start = r.varint()?;
        let at = r.pos;
        let end = start.checked_add(r.varint()?);
        let end = end.ok_or_else(|| r.invalid(at, "the run ends past 2^64 ns".to_owned()))?;
        let time_origin = r.varint()?;
        let window = r.varint()? != 0;
        let (diagnostics, processes, threads, sites) = decode_tables(&mut r)?;
        r.section = "bins";
        let bins = r.column(None, "bin", |r, i| {
            let kind = decode_bin_kind(r)?;
            let name = r.string()?;
            let process = match r.id(processes.len() + 1, "process (+ 1)")? {
                0 => None,
                p => Some(ProcessId(p - 1)),
            };
            let start = r.varint()?;
            let at = r.pos;
            let end = start.checked_add(r.varint()?);
            let end = end.ok_or_else(|| r.invalid(at, "a bin ends past 2^64".to_owned()))?;
            Ok(Bin {
                id: BinId(i as u32),
                kind,
                name,
                process,
                start,
                end,
                axis_start: 0,
                blocks: r.varint()?,
            })
        })?;
        let blocks = decode_blocks(&mut r, end, threads.len(), sites.len())?;
        let block_bin = r.ids(blocks.len(), bins.len(), "bin", BinId)?;
        let mut counts = vec![0u64; bins.len()];
        for (i, (block, bin)) in blocks.iter().zip(&block_bin).enumerate() {
            let bin = &bins[bin.index()];
            let inside = bin.start <= block.addr
                && block.addr.saturating_add(block.reserved.max(1)) <= bin.end;
            let ordered = i == 0
                || (blocks[i - 1].t_alloc, blocks[i - 1].addr) <= (block.t_alloc, block.addr);
            if !inside || !ordered {
                let problem = match inside {
                    false => format!("block {i} lies outside its bin {}", bin.id.0),
                    true => format!("block {i} is out of order"),
                };
                return Err(r.invalid(r.pos, problem));
            }
            counts[bin.id.index()] += 1;
        }
        if let Some(bin) = bins.iter().zip(&counts).position(|(b, &n)| b.blocks != n) {
            let problem = format!(
                "bin {bin} counts {} blocks, not {}",
                bins[bin].blocks, counts[bin]
            );
            return Err(r.invalid(r.pos, problem));
        }
        let latency = decode_latency(&mut r, blocks.len())?;
        r.finish()?;
        let run = (start, end);
        let mut model = AllocModel::assemble(
            blocks,
            latency,
            threads,
            processes,
            sites,
            diagnostics,
            run,
            bins,
            block_bin,
        );
        model.time_origin = time_origin;
        model.window = window;
        Ok(model)
    }
}

/// The model's repair counters and notes, processes (pid, ppid, name), threads
/// (process, tid, name) and sites (label, site, the stack's sites): also the first
/// part of a builder's checkpoint (`checkpoint.rs`).
pub(crate) fn encode_tables(
    w: &mut Writer,
    diagnostics: &Diagnostics,
    (processes, threads, sites): (&[ProcessInfo], &[ThreadInfo], &[SiteInfo]),
) {
    let Diagnostics {
        unknown_frees,
        reused_live_addresses,
        unknown_threads,
        notes,
    } = diagnostics;
    for counter in [unknown_frees, reused_live_addresses, unknown_threads] {
        w.varint(*counter);
    }
    w.varint(notes.len() as u64);
    notes.iter().for_each(|n| w.string(n));
    w.varint(processes.len() as u64);
    for ProcessInfo { pid, ppid, name } in processes {
        w.varint(u64::from(*pid));
        w.varint(u64::from(*ppid));
        w.string(name);
    }
    w.varint(threads.len() as u64);
    for ThreadInfo { process, tid, name } in threads {
        w.varint(u64::from(process.0));
        w.varint(u64::from(*tid));
        w.string(name);
    }
    w.varint(sites.len() as u64);
    for SiteInfo { site, label, stack } in sites {
        w.string(label);
        encode_site(w, site);
        w.varint(stack.len() as u64);
        stack.iter().for_each(|s| encode_site(w, s));
    }
}

/// The tables of a model or checkpoint: repairs, processes, threads, sites.
pub(crate) type Tables = (
    Diagnostics,
    Vec<ProcessInfo>,
    Vec<ThreadInfo>,
    Vec<SiteInfo>,
);

/// The tables [`encode_tables`] wrote, checked: every thread's process and the
/// unknown site (site 0) present.
pub(crate) fn decode_tables(r: &mut Reader<'_>) -> Result<Tables> {
    r.section = "repairs";
    let (unknown_frees, reused_live_addresses, unknown_threads) =
        (r.varint()?, r.varint()?, r.varint()?);
    let notes = r.column(None, "note", |r, _| r.string())?;
    let diagnostics = Diagnostics {
        unknown_frees,
        reused_live_addresses,
        unknown_threads,
        notes,
    };
    r.section = "processes";
    let processes = r.column(None, "process", |r, _| {
        Ok(ProcessInfo {
            pid: r.u32()?,
            ppid: r.u32()?,
            name: r.string()?,
        })
    })?;
    r.section = "threads";
    let threads = r.column(None, "thread", |r, _| {
        Ok(ThreadInfo {
            process: ProcessId(r.id(processes.len(), "process")?),
            tid: r.u32()?,
            name: r.string()?,
        })
    })?;
    r.section = "sites";
    let sites = r.column(None, "site", |r, _| {
        let label = r.string()?;
        let site = decode_site(r)?;
        let stack = r.column(None, "stack frame", |r, _| decode_site(r))?;
        Ok(SiteInfo { site, label, stack })
    })?;
    // Site 0 is the unknown site, which every model has.
    r.check(!sites.is_empty(), r.pos, || {
        "the unknown site is missing".to_owned()
    })?;
    Ok((diagnostics, processes, threads, sites))
}

/// The blocks as columns: allocation times (differences: the blocks must be sorted
/// by allocation time), lifetimes, addresses (zigzag differences), requested sizes,
/// reserved − requested, thread, site, freeing site and flags.
pub(crate) fn encode_blocks<B: Copy + Borrow<Block>>(w: &mut Writer, blocks: &[B]) {
    // (A window's blocks live at its start keep their earlier allocation times.)
    w.times(blocks.iter().map(|b| b.borrow().t_alloc), 0);
    w.column(blocks, |_, b| b.borrow().t_free - b.borrow().t_alloc);
    w.column(blocks, |i, b| {
        let previous = if i == 0 {
            0
        } else {
            blocks[i - 1].borrow().addr
        };
        zigzag(b.borrow().addr.wrapping_sub(previous) as i64)
    });
    w.column(blocks, |_, b| b.borrow().requested);
    w.column(blocks, |_, b| b.borrow().reserved - b.borrow().requested);
    w.column(blocks, |_, b| u64::from(b.borrow().thread.0));
    w.column(blocks, |_, b| u64::from(b.borrow().site.0));
    w.column(blocks, |_, b| u64::from(b.borrow().free_site.0));
    w.column(blocks, |_, b| {
        let b = b.borrow();
        [
            (b.freed, FREED),
            (b.from_realloc, FROM_REALLOC),
            (b.mapping, MAPPING),
        ]
        .iter()
        .filter(|(set, _)| *set)
        .fold(0, |flags, (_, bit)| flags | bit)
    });
}

/// The blocks [`encode_blocks`] wrote, none ending after `end`, with threads below
/// `threads` and sites below `sites`.
pub(crate) fn decode_blocks(
    r: &mut Reader<'_>,
    end: u64,
    threads: usize,
    sites: usize,
) -> Result<Vec<Block>> {
    r.section = "blocks";
    // Each column fills its field of every block in place: no column is held
    // beside the blocks.
    let mut from = 0;
    let mut blocks = r.column(None, "allocation time", |r, _| {
        Ok(Block {
            t_alloc: r.time(&mut from, end, "allocation time")?,
            t_free: 0,
            addr: 0,
            requested: 0,
            reserved: 0,
            thread: ThreadId(0),
            site: SiteId::UNKNOWN,
            free_site: SiteId::UNKNOWN,
            freed: false,
            from_realloc: false,
            mapping: false,
        })
    })?;
    fill(r, &mut blocks, "lifetime", |r, b| {
        let mut from = b.t_alloc;
        b.t_free = r.time(&mut from, end, "end of a lifetime")?;
        Ok(())
    })?;
    let mut addr = 0u64;
    fill(r, &mut blocks, "address", |r, b| {
        addr = addr.wrapping_add(unzigzag(r.varint()?) as u64);
        b.addr = addr;
        Ok(())
    })?;
    fill(r, &mut blocks, "requested size", |r, b| {
        b.requested = r.varint()?;
        Ok(())
    })?;
    fill(r, &mut blocks, "reserved size", |r, b| {
        let at = r.pos;
        let reserved = b.requested.checked_add(r.varint()?);
        b.reserved =
            reserved.ok_or_else(|| r.invalid(at, "a reserved size exceeds 2^64".to_owned()))?;
        Ok(())
    })?;
    fill(r, &mut blocks, "thread", |r, b| {
        b.thread = ThreadId(r.id(threads, "thread")?);
        Ok(())
    })?;
    fill(r, &mut blocks, "site", |r, b| {
        b.site = SiteId(r.id(sites, "site")?);
        Ok(())
    })?;
    fill(r, &mut blocks, "freeing site", |r, b| {
        b.free_site = SiteId(r.id(sites, "site")?);
        Ok(())
    })?;
    fill(r, &mut blocks, "flags", |r, b| {
        let at = r.pos;
        let f = r.varint()?;
        r.check(f < 8, at, || format!("block flags {f} are unknown"))?;
        (b.freed, b.from_realloc, b.mapping) =
            (f & FREED != 0, f & FROM_REALLOC != 0, f & MAPPING != 0);
        Ok(())
    })?;
    Ok(blocks)
}

/// The blocks' allocator latencies: 0 when there are none, else 1 and per block
/// `ns + 1` or 0, for the allocation and for the free.
pub(crate) fn encode_latency(w: &mut Writer, latency: Option<&[Latency]>) {
    match latency {
        None => w.varint(0),
        Some(latency) => {
            w.varint(1);
            w.column(latency, |_, l| latency_code(l.alloc_ns));
            w.column(latency, |_, l| latency_code(l.free_ns));
        }
    }
}

/// The latencies [`encode_latency`] wrote for `blocks` blocks.
pub(crate) fn decode_latency(r: &mut Reader<'_>, blocks: usize) -> Result<Option<Vec<Latency>>> {
    let n = Some(blocks);
    r.section = "latencies";
    Ok(match r.varint()? {
        0 => None,
        _ => {
            let alloc = r.column(n, "allocation latency", |r, _| latency_of(r))?;
            let free = r.column(n, "free latency", |r, _| latency_of(r))?;
            let latency = alloc.into_iter().zip(free);
            let latency = latency.map(|(alloc_ns, free_ns)| Latency { alloc_ns, free_ns });
            Some(latency.collect())
        }
    })
}
