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
//!
//! The JVMTI agent's heap walks (Java traces) are applied in time order among the
//! events: each names, per recorded object, the data structure holding it by the event
//! address of the structure's head; the feed turns that into the head's type and
//! allocation stack (the `data-structure` classifier's key), keeping the stack of every
//! live object while the trace has walks.
//!
//! A sampled trace (`memlens record --sample`) makes a sampled builder: each
//! allocation counts as the objects it stands for, so the model holds estimates.

use memlens_heap::{AllocKind, FrameId, FrameInfo, HeapModelBuilder, Sampling, StackId, TypeId};
use memlens_heap::{MULTIPLE_DATA_STRUCTURES, NOT_CONTAINED, data_structure_key};
use memlens_trace::{AllocFn, Event, HeapWalkRecord, Metadata};
use rustc_hash::FxHashMap;

use crate::symbols::StackSymbols;

/// How many evenly spaced times the heap model is exact at (besides marks, asked-for
/// times and each bucket's peak and dip): enough for a timeline a screen wide.
pub const GRID_LINES: u64 = 2048;

/// The times the heap model of `md` is built to be exact at: the grid, the marks and
/// `extra`.
fn grid(md: &Metadata, extra: &[u64]) -> Vec<u64> {
    let end = md.last_time;
    let mut grid: Vec<u64> = (0..=GRID_LINES)
        .map(|i| (u128::from(end) * u128::from(i) / u128::from(GRID_LINES)) as u64)
        .collect();
    grid.extend(md.marks.iter().map(|m| m.t));
    grid.extend_from_slice(extra);
    grid
}

/// Feeds one trace's events into a heap model.
#[derive(Clone)]
pub(crate) struct HeapFeed {
    builder: HeapModelBuilder,
    /// The engine type of every stack id (Java traces), empty otherwise.
    types: Vec<TypeId>,
    /// The engine type of every trace type id (Java traces).
    type_ids: FxHashMap<u32, TypeId>,
    /// The heap walks not applied yet, latest first.
    walks: Vec<HeapWalkRecord>,
    /// The trace stack of every live object, kept only when the trace has heap walks.
    live_stacks: FxHashMap<u64, u32>,
    /// The stack ids given to the builder so far (below this), and the engine frame
    /// of every return address met.
    stacks_added: u32,
    innermost: FxHashMap<u64, FrameId>,
}

impl HeapFeed {
    /// A builder with the context of `md` (symbolized through `symbols`), exact at
    /// `extra` times besides its grid.
    pub(crate) fn new(md: &Metadata, symbols: &mut StackSymbols, extra: &[u64]) -> HeapFeed {
        let builder = HeapModelBuilder::coalescing(grid(md, extra));
        HeapFeed::with(builder, md, symbols)
    }

    /// [`HeapFeed::new`] for a trace still being written: its grid is spaced over
    /// `horizon` and coarsens as the run passes it
    /// ([`HeapModelBuilder::coalescing_growing`]); exact at the marks made so far too.
    pub(crate) fn growing(md: &Metadata, symbols: &mut StackSymbols, horizon: u64) -> HeapFeed {
        let marks = md.marks.iter().map(|m| m.t).collect();
        let builder = HeapModelBuilder::coalescing_growing(horizon, GRID_LINES, marks);
        HeapFeed::with(builder, md, symbols)
    }

    fn with(mut builder: HeapModelBuilder, md: &Metadata, symbols: &mut StackSymbols) -> HeapFeed {
        if let Some(sampling) = md.sample_interval.and_then(Sampling::new) {
            builder.sampled(sampling);
        }
        builder.start(0);
        let mut walks = md.heap_walks.clone();
        walks.reverse();
        let mut feed = HeapFeed {
            builder,
            types: Vec::new(),
            type_ids: FxHashMap::default(),
            walks,
            live_stacks: FxHashMap::default(),
            stacks_added: 1,
            innermost: FxHashMap::default(),
        };
        feed.add_context(md, symbols);
        (feed.types, feed.type_ids) = stack_types(&mut feed.builder, md);
        feed
    }

    /// Applies the heap walks made at or before `t`.
    fn walks_until(&mut self, t: u64) {
        while self.walks.last().is_some_and(|w| w.walk.t <= t) {
            let Some(w) = self.walks.pop() else { break };
            let mut contained: FxHashMap<u64, u64> = FxHashMap::default();
            for s in &w.structures {
                let key = match (s.container, self.live_stacks.get(&s.container)) {
                    (0, _) => MULTIPLE_DATA_STRUCTURES,
                    (1, _) => NOT_CONTAINED,
                    (_, Some(&stack)) => {
                        let ty = self.types.get(stack as usize).copied();
                        data_structure_key(ty.unwrap_or(TypeId::UNKNOWN), StackId(stack))
                    }
                    // A head the agent did not record: its type, at an unknown site.
                    (_, None) => match self.type_ids.get(&s.container_type) {
                        Some(&ty) => data_structure_key(ty, StackId::ROOT),
                        None => NOT_CONTAINED,
                    },
                };
                for &member in &s.members {
                    let slot = contained.entry(member).or_insert(key);
                    if *slot != key {
                        *slot = MULTIPLE_DATA_STRUCTURES;
                    }
                }
            }
            self.builder.heap_walk(w.walk.t, &contained);
        }
    }

    /// Places a mark.
    pub(crate) fn mark(&mut self, t: u64, name: &str) {
        self.walks_until(t);
        self.builder.mark(t, name);
    }

    /// Feeds one event.
    pub(crate) fn event(&mut self, event: &Event) {
        if !self.walks.is_empty() {
            self.walks_until(event.time());
            match *event {
                Event::Alloc { addr, stack, .. } => {
                    self.live_stacks.insert(addr, stack);
                }
                Event::Free { addr, .. } => {
                    self.live_stacks.remove(&addr);
                }
                Event::Realloc { .. } => {}
            }
        }
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

    /// The model of the events so far, its run ending at `end_ns`, the feed going on.
    pub(crate) fn snapshot(&self, end_ns: u64) -> memlens_heap::HeapModel {
        self.clone().finish(end_ns)
    }

    /// The model, its run ending at `end_ns`.
    pub(crate) fn finish(mut self, end_ns: u64) -> memlens_heap::HeapModel {
        let last_walk = self.walks.first().map_or(0, |w| w.walk.t);
        self.walks_until(u64::MAX);
        self.builder.end(end_ns.max(last_walk))
    }
}

impl HeapFeed {
    /// Adds the frames and stacks of `md` not added yet (all of them the first time;
    /// those a trace still being written has defined since, later), and names its
    /// threads.
    pub(crate) fn add_context(&mut self, md: &Metadata, symbols: &mut StackSymbols) {
        let stacks = &md.stacks;
        let nodes = stacks.len() as u32;
        if nodes > self.stacks_added {
            symbols.prepare_all(md);
        }
        let (builder, innermost) = (&mut self.builder, &mut self.innermost);
        for id in self.stacks_added..nodes {
            let ip = stacks.ip(id);
            let frame = match innermost.get(&ip) {
                Some(&f) => f,
                None if ip == 0 => FrameId::UNKNOWN,
                None => {
                    // Frames come innermost first; the engine wants the outer frame of
                    // a chain first, each inlined frame naming the frame it was inlined
                    // into.
                    let mut frame = FrameId::UNKNOWN;
                    for (i, site) in symbols.frames_at(ip).iter().rev().enumerate() {
                        // A frame nothing names is labelled as everywhere else,
                        // `0x… (in module+0x…)`, so each such address is a group of its
                        // own.
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
        self.stacks_added = self.stacks_added.max(nodes);
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
}

/// The engine type of every stack id of a trace with typed stacks (Java traces),
/// empty for other traces, and of every trace type id. Types with the same name share
/// one engine type.
fn stack_types(
    builder: &mut HeapModelBuilder,
    md: &Metadata,
) -> (Vec<TypeId>, FxHashMap<u32, TypeId>) {
    if !md.stacks.has_types() {
        return (Vec::new(), FxHashMap::default());
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
    let types = (0..md.stacks.len() as u32)
        .map(|s| match md.stacks.type_of(s) {
            0 => TypeId::UNKNOWN,
            t => by_id.get(&t).copied().unwrap_or(TypeId::UNKNOWN),
        })
        .collect();
    (types, by_id)
}
