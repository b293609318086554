//! Trace → heap-evolution model: the context (frames with their policy kinds, stacks,
//! threads, types) and the events, fed to `memlens-heap`'s builder.
//!
//! Every return address of the stack table becomes a chain of engine frames: the
//! out-of-line function first, then each function inlined into it, so the engine sees
//! inlined calls as frames of their own. Stack nodes keep their trace ids (both sides
//! number them densely from 1, parents first). The run starts at time 0, the process
//! start, so the times users type mean the same as in every other command.
//!
//! The model is coalesced (memory bounded by the live set, not the event count): exact
//! at [`GRID_LINES`] evenly spaced times, at every mark, at the times a command asks for,
//! and at each grid bucket's peak and dip.

use memlens_heap::{AllocKind, FrameId, FrameInfo, HeapModelBuilder, StackId, TypeId};
use memlens_trace::{AllocFn, Event, Metadata};
use rustc_hash::FxHashMap;

use crate::symbols::StackSymbols;

/// How many evenly spaced times the heap model is exact at (besides marks, asked-for
/// times and each bucket's peak and dip): enough for a timeline a screen wide.
pub const GRID_LINES: u64 = 2048;

/// The times the heap model of `md` is built to be exact at: the grid, the marks and
/// `extra`.
pub(crate) fn grid(md: &Metadata, extra: &[u64]) -> Vec<u64> {
    let end = md.last_time;
    let mut grid: Vec<u64> = (0..=GRID_LINES)
        .map(|i| (u128::from(end) * u128::from(i) / u128::from(GRID_LINES)) as u64)
        .collect();
    grid.extend(md.marks.iter().map(|m| m.t));
    grid.extend_from_slice(extra);
    grid
}

/// Feeds one trace's events into a heap model.
pub(crate) struct HeapFeed {
    builder: HeapModelBuilder,
    /// The engine type of every stack id (Java traces), empty otherwise.
    types: Vec<TypeId>,
}

impl HeapFeed {
    /// A builder with the context of `md` (symbolized through `symbols`), exact at
    /// `extra` times besides its grid.
    pub(crate) fn new(md: &Metadata, symbols: &mut StackSymbols, extra: &[u64]) -> HeapFeed {
        let mut builder = HeapModelBuilder::coalescing(grid(md, extra));
        builder.start(0);
        add_context(&mut builder, md, symbols);
        let types = stack_types(&mut builder, md);
        HeapFeed { builder, types }
    }

    /// Places a mark.
    pub(crate) fn mark(&mut self, t: u64, name: &str) {
        self.builder.mark(t, name);
    }

    /// Feeds one event.
    pub(crate) fn event(&mut self, event: &Event) {
        let builder = &mut self.builder;
        match *event {
            Event::Alloc {
                t,
                tid,
                addr,
                size,
                stack,
                func,
            } => {
                let ty = self
                    .types
                    .get(stack as usize)
                    .copied()
                    .unwrap_or(TypeId::UNKNOWN);
                let kind = match func {
                    _ if ty != TypeId::UNKNOWN => AllocKind::New,
                    AllocFn::Malloc => AllocKind::Malloc,
                    AllocFn::Calloc => AllocKind::Calloc,
                    _ => AllocKind::Aligned,
                };
                let id = builder.alloc(t, u64::from(tid), addr, size, StackId(stack), kind);
                if ty != TypeId::UNKNOWN {
                    builder.set_type(id, ty);
                }
            }
            Event::Free { t, tid, addr, .. } => builder.free(t, u64::from(tid), addr),
            Event::Realloc {
                t,
                tid,
                old_addr,
                new_addr,
                size,
                stack,
            } => {
                builder.realloc(t, u64::from(tid), old_addr, new_addr, size, StackId(stack));
            }
        }
    }

    /// The model, its run ending at `end_ns`.
    pub(crate) fn finish(self, end_ns: u64) -> memlens_heap::HeapModel {
        self.builder.end(end_ns)
    }
}

/// Adds the frames, stacks and thread names of `md`.
fn add_context(builder: &mut HeapModelBuilder, md: &Metadata, symbols: &mut StackSymbols) {
    let stacks = &md.stacks;
    let nodes = stacks.len() as u32;
    symbols.prepare_all(md);
    let mut innermost: FxHashMap<u64, FrameId> = FxHashMap::default();
    for id in 1..nodes {
        let ip = stacks.ip(id);
        let frame = match innermost.get(&ip) {
            Some(&f) => f,
            None if ip == 0 => FrameId::UNKNOWN,
            None => {
                // Frames come innermost first; the engine wants the outer frame of a
                // chain first, each inlined frame naming the frame it was inlined into.
                let mut frame = FrameId::UNKNOWN;
                for (i, site) in symbols.frames_at(ip).iter().rev().enumerate() {
                    // A frame nothing names is labelled as everywhere else,
                    // `0x… (in module+0x…)`, so each such address is a group of its own.
                    let unnamed = (!site.is_symbolized()).then(|| site.to_string());
                    frame = builder.add_frame(FrameInfo {
                        function: unnamed.as_deref().unwrap_or(&site.function),
                        file: site.file_name(),
                        line: site.line,
                        module: &site.module,
                        inlined_into: (i > 0).then_some(frame),
                        kind: site.kind,
                    });
                }
                innermost.insert(ip, frame);
                frame
            }
        };
        let added = builder.add_stack(StackId(stacks.parent(id)), frame);
        debug_assert_eq!(added, StackId(id), "stack ids are kept");
    }
    let mut named: Vec<(u32, &str)> = md
        .threads
        .iter()
        .filter(|(_, t)| !t.name.is_empty())
        .map(|(&tid, t)| (tid, t.name.as_str()))
        .collect();
    named.sort_unstable();
    for (tid, name) in named {
        builder.name_thread(u64::from(tid), name);
    }
}

/// The engine type of every stack id of a trace with typed stacks (Java traces),
/// empty for other traces. Types with the same name share one engine type.
fn stack_types(builder: &mut HeapModelBuilder, md: &Metadata) -> Vec<TypeId> {
    if !md.stacks.has_types() {
        return Vec::new();
    }
    let mut by_name: FxHashMap<&str, TypeId> = FxHashMap::default();
    let mut ids: Vec<(&u32, &String)> = md.types.iter().collect();
    ids.sort_unstable();
    let mut by_id: FxHashMap<u32, TypeId> = FxHashMap::default();
    for (&id, name) in ids {
        let ty = *by_name
            .entry(name.as_str())
            .or_insert_with(|| builder.add_type(name));
        by_id.insert(id, ty);
    }
    (0..md.stacks.len() as u32)
        .map(|s| match md.stacks.type_of(s) {
            0 => TypeId::UNKNOWN,
            t => by_id.get(&t).copied().unwrap_or(TypeId::UNKNOWN),
        })
        .collect()
}
