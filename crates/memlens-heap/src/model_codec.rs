//! A compact, versioned binary encoding of a [`HeapModel`] ([`HeapModel::encode`],
//! [`HeapModel::decode`]), so that a model built once can be kept in an on-disk index
//! and read back in milliseconds instead of re-reading the trace. Bytes in, bytes out:
//! no file IO and no compression here (the caller compresses with zstd).
//!
//! Layout: `MLHM`, [`MODEL_CODEC_VERSION`] as a little-endian `u32`, then LEB128
//! varints: the run (start, length), the [`RunStats`] and [`Diagnostics`] counters, and
//! columns (length, values): strings after the implicit empty one (byte length, UTF-8);
//! frames (function, file, line, module, `id − inlined_into` or 0, `frame_kind_code`);
//! stacks (`id − parent`, frame); threads (tid, name); types; marks (time deltas,
//! names); rows (`t_alloc` deltas, size, stack, thread, raw flags; objects, types,
//! data-structure keys: each empty or one per row); the free order (zigzag id deltas)
//! and `t_free` along it (deltas; rows not in it were never freed); the exact instants
//! (deltas); the resize table (row, time deltas, old size, new size, `by_alloc`).
//!
//! Decoding never panics and checks every length against the bytes left before
//! reserving. It validates every reference and order the engine relies on — ids in
//! range, parents and inline targets before their child, times in the run and
//! ascending, `t_alloc ≤ t_free`, rows freed at most once, resize chains that start
//! from the row's size while it is live, `RESIZED` flags that match the resize table,
//! byte and object totals within `i64` — so the engine can use a decoded model safely.

use memlens_vocab::FrameKind;
use memlens_vocab::codec::{DecodeError, Reader, Writer};

use crate::context::{Context, FrameTable, StackTable, StringTable, ThreadTable};
use crate::diagnostics::Diagnostics;
use crate::ids::{AllocId, FrameId, StackId, StringId, ThreadIndex, TypeId};
use crate::model::{HeapModel, Mark, NEVER_FREED, RESIZED, Resizes, RunStats, TimeWindow};

/// The version of the encoding written by [`HeapModel::encode`]. [`HeapModel::decode`]
/// reads only this version; bump it whenever the layout or its meaning changes.
pub const MODEL_CODEC_VERSION: u32 = 2;

/// The first four bytes of every encoded model.
const MAGIC: [u8; 4] = *b"MLHM";

/// The engine sums bytes and objects in `i64`: totals must stay below this.
const MAX_TOTAL: u64 = i64::MAX as u64;

/// The most allocations one row can stand for.
const MAX_OBJECTS: u64 = u32::MAX as u64;

/// Why bytes could not be decoded into a [`HeapModel`]: one sentence naming the byte
/// offset at fault and what was wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ModelDecodeError {
    offset: usize,
    message: String,
    found_version: Option<u32>,
}

impl ModelDecodeError {
    fn new(offset: usize, message: String) -> Self {
        let found_version = None;
        ModelDecodeError {
            offset,
            message,
            found_version,
        }
    }

    /// The byte offset at fault.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The codec version of a model written by another version of memlens (which the
    /// caller rebuilds from its trace); `None` for damaged bytes.
    pub fn found_version(&self) -> Option<u32> {
        self.found_version
    }
}

type Result<T> = std::result::Result<T, DecodeError>;

impl From<DecodeError> for ModelDecodeError {
    fn from(e: DecodeError) -> Self {
        ModelDecodeError::new(e.offset, e.message)
    }
}

/// Writes and reads a struct of `u64` counters, field by field; both sides name every
/// field, so a new counter fails to compile until it is encoded.
macro_rules! counters {
    ($encode:ident, $decode:ident, $ty:ident { $($field:ident),+ $(,)? }) => {
        fn $encode(w: &mut Writer, value: &$ty) {
            let $ty { $($field),+ } = *value;
            $(w.varint($field);)+
        }

        fn $decode(r: &mut Reader<'_>) -> Result<$ty> {
            Ok($ty { $($field: r.varint()?),+ })
        }
    };
}

counters! {
    encode_stats, decode_stats, RunStats {
        allocations, frees, reallocations, peak_bytes, peak_time_ns, peak_objects,
        live_at_exit_bytes, live_at_exit_objects,
    }
}

counters! {
    encode_diagnostics, decode_diagnostics, Diagnostics {
        unknown_frees, reused_live_addresses, unknown_reallocs, out_of_order_events,
        invalid_stack_refs, invalid_table_refs,
    }
}

impl HeapModel {
    /// The model as bytes that [`decode`](Self::decode) turns back into an equal model:
    /// a versioned header, then every table and column as LEB128 varints, times as
    /// differences. Not compressed; the caller compresses before storing.
    pub fn encode(&self) -> Vec<u8> {
        // `decode` names every field, so a new one fails to compile until it is coded.
        let (run, t_free, free_order) = (self.run, &self.t_free, &self.free_order);
        let out = Vec::with_capacity(256 + self.len() * 12);
        let mut w = Writer { out };
        w.out.extend_from_slice(&MAGIC);
        w.out.extend_from_slice(&MODEL_CODEC_VERSION.to_le_bytes());
        w.varint(run.start_ns);
        w.varint(run.end_ns.wrapping_sub(run.start_ns));
        encode_stats(&mut w, &self.stats);
        encode_diagnostics(&mut w, &self.diagnostics);
        encode_context(&mut w, &self.context);
        w.times(self.marks.iter().map(|m| m.t_ns), run.start_ns);
        w.column(&self.marks, |_, m| u64::from(m.name.0));
        w.times(self.t_alloc.iter().copied(), run.start_ns);
        w.column(&self.size, |_, s| s);
        w.column(&self.stack, |_, s| u64::from(s.0));
        w.column(&self.thread, |_, t| u64::from(t.0));
        w.varint(self.flags.len() as u64);
        w.out.extend_from_slice(&self.flags);
        w.column(&self.objects, |_, n| u64::from(n));
        w.column(&self.types, |_, t| u64::from(t.0));
        w.column(&self.containers, |_, c| c);
        w.varint(t_free.len() as u64);
        w.column(free_order, |i, a| {
            let previous = i.checked_sub(1).map_or(0, |p| free_order[p].0);
            let step = i64::from(a.0) - i64::from(previous);
            ((step << 1) ^ (step >> 63)) as u64
        });
        let freed = free_order.iter().map(|a| t_free.get(a.index()).copied());
        w.times(freed.map(|t| t.unwrap_or(NEVER_FREED)), run.start_ns);
        w.times(self.instants.iter().copied(), 0);
        let resizes = &self.resizes;
        w.column(&resizes.alloc, |_, a| u64::from(a.0));
        w.times(resizes.t_ns.iter().copied(), run.start_ns);
        w.column(&resizes.old_size, |_, s| s);
        w.column(&resizes.new_size, |_, s| s);
        w.column(&resizes.by_alloc, |_, i| u64::from(i));
        w.out
    }

    /// The model encoded in `bytes` by [`encode`](Self::encode) of the same
    /// [`MODEL_CODEC_VERSION`]. Refuses, with a sentence naming the byte offset, bytes
    /// that are truncated, of another version, or that break any invariant the engine
    /// relies on; never panics.
    pub fn decode(bytes: &[u8]) -> std::result::Result<HeapModel, ModelDecodeError> {
        let section = "header";
        let mut r = Reader {
            bytes,
            pos: 0,
            section,
            what: "model",
        };
        match bytes.get(..MAGIC.len()) {
            Some(magic) if magic == MAGIC => r.pos = MAGIC.len(),
            None if MAGIC.starts_with(bytes) => return Err(r.truncated().into()),
            _ => {
                let message = "the bytes at offset 0 are not a memlens heap model (no \"MLHM\")";
                return Err(ModelDecodeError::new(0, message.to_owned()));
            }
        }
        let found = match *r.take(4)? {
            [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
            _ => return Err(r.truncated().into()),
        };
        if found != MODEL_CODEC_VERSION {
            let message = format!(
                "the heap model at offset 4 has codec version {found}, but this memlens reads only version {MODEL_CODEC_VERSION}; rebuild it from the trace"
            );
            let found_version = Some(found);
            return Err(ModelDecodeError {
                offset: 4,
                message,
                found_version,
            });
        }
        r.section = "run window";
        let start_ns = r.varint()?;
        let mut end_ns = start_ns;
        r.time(&mut end_ns, u64::MAX, "run's end")?;
        let run = TimeWindow { start_ns, end_ns };
        r.section = "run counters";
        let (stats, diagnostics) = (decode_stats(&mut r)?, decode_diagnostics(&mut r)?);
        let context = decode_context(&mut r)?;
        let ns = context.strings.len();

        r.section = "marks";
        let mut from = start_ns;
        let times = r.column(None, "mark", |r, _| r.time(&mut from, end_ns, "mark time"))?;
        let names = r.ids(times.len(), ns, "string", StringId)?;
        let marks = (times.into_iter().zip(names))
            .map(|(t_ns, name)| Mark { t_ns, name })
            .collect();

        r.section = "allocation columns";
        let mut from = start_ns;
        let t_alloc = r.column(None, "row", |r, _| {
            r.time(&mut from, end_ns, "allocation time")
        })?;
        let n = t_alloc.len();
        let mut total = 0u64;
        let size = r.column(Some(n), "size", |r, _| {
            r.counted(&mut total, MAX_TOTAL, "sizes")
        })?;
        let stack = r.ids(n, context.stacks.len(), "stack", StackId)?;
        let thread = r.ids(n, context.threads.len(), "thread", ThreadIndex)?;
        r.length(Some(n), "flags")?;
        let flags_at = r.pos;
        let flags = r.take(n)?.to_vec();
        let mut objects_total = 0u64;
        let objects = r.column(None, "objects", |r, _| {
            let at = r.pos;
            match r.counted(&mut objects_total, MAX_TOTAL, "object counts")? {
                count @ 1..=MAX_OBJECTS => Ok(count as u32),
                _ => Err(r.invalid(at, "a row stands for 0 or over 2^32 objects".to_owned())),
            }
        })?;
        let at = r.pos;
        let types = r.column(None, "type", |r, _| {
            r.id(context.types.len(), "type").map(TypeId)
        })?;
        let containers = r.column(None, "data structure", |r, _| r.varint())?;
        let names = ["object counts", "types", "data structures"];
        for (len, what) in [objects.len(), types.len(), containers.len()]
            .into_iter()
            .zip(names)
        {
            let problem = || format!("there are {len} {what} for {n} rows");
            r.check(len == 0 || len == n, at, problem)?;
        }

        r.section = "free order";
        r.length(Some(n), "t_free")?;
        // Until the times are read, 0 marks a row already in the free order.
        let mut t_free = vec![NEVER_FREED; n];
        let mut previous = 0i64;
        let free_order = r.column(None, "freed row", |r, _| {
            let at = r.pos;
            let step = r.varint()?;
            let step = (step >> 1) as i64 ^ -((step & 1) as i64);
            match previous.checked_add(step).map(usize::try_from) {
                Some(Ok(a)) if a < n && t_free[a] == NEVER_FREED => {
                    t_free[a] = 0;
                    previous = a as i64;
                    Ok(AllocId(a as u32))
                }
                Some(Ok(a)) if a < n => Err(r.invalid(at, format!("row {a} is freed twice"))),
                _ => Err(r.invalid(at, format!("a freed row does not exist (there are {n})"))),
            }
        })?;
        let mut from = start_ns;
        r.column(Some(free_order.len()), "free time", |r, i| {
            let at = r.pos;
            let t = r.time(&mut from, end_ns, "free time")?;
            let a = free_order[i].index();
            let problem = || format!("row {a} is freed before it is allocated");
            r.check(t >= t_alloc[a], at, problem)?;
            t_free[a] = t;
            Ok(())
        })?;

        r.section = "exact instants";
        let mut from = 0;
        let instants = r.column(None, "instant", |r, _| {
            r.time(&mut from, u64::MAX, "instant")
        })?;

        r.section = "resize table";
        let alloc = r.column(None, "resize", |r, _| r.id(n, "row").map(AllocId))?;
        let m = alloc.len();
        let mut from = start_ns;
        let t_ns = r.column(Some(m), "resize time", |r, i| {
            let at = r.pos;
            let t = r.time(&mut from, end_ns, "resize time")?;
            let a = alloc[i].index();
            let problem = || format!("row {a} is resized while it is not live");
            r.check(t_alloc[a] <= t && t <= t_free[a], at, problem)?;
            Ok(t)
        })?;
        let old_size = r.column(Some(m), "old size", |r, _| r.varint())?;
        let new_size = r.column(Some(m), "new size", |r, _| {
            r.counted(&mut total, MAX_TOTAL, "sizes")
        })?;
        let mut resized = vec![false; n];
        let mut last: Option<(AllocId, u32)> = None;
        let mut current = 0u64;
        let by_alloc = r.column(Some(m), "by-allocation", |r, _| {
            let at = r.pos;
            let i = r.id(m, "resize")?;
            let (a, k) = (alloc[i as usize], i as usize);
            let sorted = last.is_none_or(|key| key < (a, i));
            let problem = || "the index is not sorted by row, then time".to_owned();
            r.check(sorted, at, problem)?;
            if last.is_none_or(|(b, _)| b != a) {
                current = size[a.index()];
            }
            let (row, old) = (a.0, old_size[k]);
            let problem =
                || format!("resize {i} of row {row} starts from {old} bytes, not {current}");
            r.check(old == current, at, problem)?;
            (current, last) = (new_size[k], Some((a, i)));
            resized[a.index()] = true;
            Ok(i)
        })?;
        if let Some(a) = (0..n).find(|&a| (flags[a] & RESIZED != 0) != resized[a]) {
            r.section = "allocation columns";
            let problem = format!("row {a}'s resized flag disagrees with the resize table");
            return Err(r.invalid(flags_at + a, problem).into());
        }
        if r.pos != bytes.len() {
            let (at, extra) = (r.pos, bytes.len() - r.pos);
            let message =
                format!("the heap model ends at offset {at}, but {extra} more bytes follow");
            return Err(ModelDecodeError::new(at, message));
        }
        let resizes = Resizes {
            alloc,
            t_ns,
            old_size,
            new_size,
            by_alloc,
        };
        Ok(HeapModel {
            run,
            t_alloc,
            t_free,
            size,
            stack,
            thread,
            flags,
            types,
            containers,
            resizes,
            free_order,
            objects,
            instants,
            marks,
            context,
            diagnostics,
            stats,
        })
    }
}

fn encode_context(w: &mut Writer, cx: &Context) {
    let strings = &cx.strings;
    w.varint(strings.len().saturating_sub(1) as u64);
    for i in 1..strings.len() {
        let s = strings.get(StringId(i as u32));
        w.varint(s.len() as u64);
        w.out.extend_from_slice(s.as_bytes());
    }
    let frames = &cx.frames;
    w.column(&frames.function, |_, s| u64::from(s.0));
    w.column(&frames.file, |_, s| u64::from(s.0));
    w.column(&frames.line, |_, l| u64::from(l));
    w.column(&frames.module, |_, s| u64::from(s.0));
    w.column(&frames.inlined_into, |i, outer| {
        outer.map_or(0, |f| (i as u64).wrapping_sub(u64::from(f.0)))
    });
    w.varint(frames.kind.len() as u64);
    w.out
        .extend(frames.kind.iter().map(|&k| FrameKind::code(k)));
    w.column(&cx.stacks.parent, |i, p| {
        (i as u64).wrapping_sub(u64::from(p.0))
    });
    w.column(&cx.stacks.frame, |_, f| u64::from(f.0));
    w.column(&cx.threads.tid, |_, t| t);
    w.column(&cx.threads.name, |_, s| u64::from(s.0));
    w.column(&cx.types, |_, s| u64::from(s.0));
}

fn decode_context(r: &mut Reader<'_>) -> Result<Context> {
    r.section = "string table";
    let mut strings = StringTable::default();
    r.column(None, "string", |r, i| {
        let at = r.pos;
        let len = r.length(None, "string byte")?;
        let text = std::str::from_utf8(r.take(len)?)
            .map_err(|_| r.invalid(at, format!("string {} is not valid UTF-8", i + 1)))?;
        let new = strings.intern(text).index() == i + 1;
        let problem = || format!("string {} repeats an earlier one", i + 1);
        r.check(new, at, problem)
    })?;
    let ns = strings.len();

    r.section = "frame table";
    let at = r.pos;
    let function = r.column(None, "frame", |r, _| r.id(ns, "string").map(StringId))?;
    let n = function.len();
    r.check(n > 0, at, || "frame 0 is missing".to_owned())?;
    let file = r.ids(n, ns, "string", StringId)?;
    let line = r.column(Some(n), "line", |r, _| r.u32())?;
    let module = r.ids(n, ns, "string", StringId)?;
    let inlined_into = r.column(Some(n), "inlined-into", |r, i| {
        let at = r.pos;
        match r.varint()? {
            0 => Ok(None),
            d if d <= i as u64 => Ok(Some(FrameId((i as u64 - d) as u32))),
            _ => Err(r.invalid(at, format!("frame {i} is inlined into a later frame"))),
        }
    })?;
    let kind = r.column(Some(n), "kind", |r, i| {
        let at = r.pos;
        let code = r.byte()?;
        let problem = || format!("frame {i} has the unknown kind code {code}");
        FrameKind::from_code(code).ok_or_else(|| r.invalid(at, problem()))
    })?;
    let frames = FrameTable {
        function,
        file,
        line,
        module,
        inlined_into,
        kind,
    };

    r.section = "stack table";
    let at = r.pos;
    let parent = r.column(None, "stack", |r, i| {
        let at = r.pos;
        match r.varint()? {
            0 if i == 0 => Ok(StackId::ROOT),
            d if i > 0 && (1..=i as u64).contains(&d) => Ok(StackId((i as u64 - d) as u32)),
            _ if i == 0 => Err(r.invalid(at, "the root stack is not its own parent".to_owned())),
            _ => Err(r.invalid(at, format!("stack {i}'s parent does not precede it"))),
        }
    })?;
    r.check(!parent.is_empty(), at, || "stack 0 is missing".to_owned())?;
    let frame = r.ids(parent.len(), frames.len(), "frame", FrameId)?;
    let stacks = StackTable { parent, frame };

    r.section = "thread table";
    let mut threads = ThreadTable::default();
    r.column(None, "thread", |r, i| {
        let at = r.pos;
        let tid = r.varint()?;
        let new = threads.index_of(tid).index() == i;
        r.check(new, at, || format!("thread {i} repeats the id {tid}"))
    })?;
    threads.name = r.ids(threads.len(), ns, "string", StringId)?;

    r.section = "type table";
    let at = r.pos;
    let types = r.column(None, "type", |r, _| r.id(ns, "string").map(StringId))?;
    r.check(!types.is_empty(), at, || "type 0 is missing".to_owned())?;
    Ok(Context {
        strings,
        frames,
        stacks,
        threads,
        types,
    })
}

#[cfg(test)]
mod tests;
