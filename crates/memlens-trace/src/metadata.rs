//! [`Metadata`]: everything in the process stream, loaded up front.
//!
//! Metadata is small next to the events (modules, threads, marks, and the
//! interned stacks, whose size is bounded by the number of *unique* stacks),
//! so analyses load it whole and then stream the events.

use std::collections::HashMap;

use crate::decode::{Record, RecordDecoder};
use crate::format::ChunkKind;
use crate::reader::{Damage, TraceFile};
use crate::record::{
    Attached, Contained, HeapWalk, Mapping, Meta, Module, ProcessInfo, StackId, TimeNs, Totals,
    Unmapping,
};

/// The interned call stacks as a prefix tree, in columns.
///
/// Invariant: index 0 is the root (no frame); `parent[i] < i` for every other
/// node, so walking parents always terminates.
///
/// Typed stacks ([`Meta::TypedStack`]) are nodes of their own that copy the
/// parent and frame of the stack they stand for, so every walk sees the same
/// frames; [`StackTable::type_of`] gives their type.
#[derive(Debug, Clone, Default)]
pub struct StackTable {
    parent: Vec<StackId>,
    ip: Vec<u64>,
    /// Type id per node (empty until a typed stack is inserted; 0 = untyped).
    types: Vec<u32>,
    /// Typed stacks whose frames are not copied yet: (id, stack it stands for).
    pending_typed: Vec<(StackId, StackId)>,
    /// Nodes accepted so far (bounds how far ahead an id may jump).
    accepted: usize,
}

/// How far past twice the accepted node count a node id may lie. Writers number
/// nodes densely in order, so an id far ahead only comes from lost chunks (each
/// holds at most about 100 k nodes) or from a hostile file; the bound keeps the
/// table's memory linear in the file's size (ids are `u32`: an unchecked id could
/// ask for 48 GiB).
const MAX_ID_GAP: usize = 1 << 20;

impl StackTable {
    /// An empty table holding only the root.
    pub fn new() -> Self {
        StackTable {
            parent: vec![0],
            ip: vec![0],
            types: Vec::new(),
            pending_typed: Vec::new(),
            accepted: 0,
        }
    }

    /// Adds typed stack `id`: the frames of `stack` with type `type_id`.
    /// Inconsistent nodes are ignored and reported as `false`. The frames are
    /// copied by [`StackTable::resolve_typed`] once every node is known.
    pub fn insert_typed(&mut self, id: StackId, stack: StackId, type_id: u32) -> bool {
        let idx = id as usize;
        if id == 0 || stack >= id || !self.id_in_reach(idx) {
            return false;
        }
        self.accepted += 1;
        if idx >= self.parent.len() {
            self.parent.resize(idx + 1, 0);
            self.ip.resize(idx + 1, 0);
        }
        if idx >= self.types.len() {
            self.types.resize(idx + 1, 0);
        }
        self.types[idx] = type_id;
        self.pending_typed.push((id, stack));
        true
    }

    /// Copies the parent and frame of each typed stack's base stack, in id
    /// order (a base always has a smaller id, so chains resolve). Idempotent.
    pub fn resolve_typed(&mut self) {
        let mut pending = std::mem::take(&mut self.pending_typed);
        pending.sort_unstable();
        for (id, stack) in pending {
            let (id, stack) = (id as usize, stack as usize);
            if stack == 0 {
                // The empty stack with a type: no frame of its own.
                self.parent[id] = 0;
                self.ip[id] = 0;
            } else if stack < self.parent.len() {
                self.parent[id] = self.parent[stack];
                self.ip[id] = self.ip[stack];
            }
        }
    }

    /// The type id of stack `id` (0 when it is not a typed stack).
    pub fn type_of(&self, id: StackId) -> u32 {
        self.types.get(id as usize).copied().unwrap_or(0)
    }

    /// Whether any typed stack was inserted (a Java trace).
    pub fn has_types(&self) -> bool {
        !self.types.is_empty()
    }

    /// Whether node `id` is a typed alias of the empty stack (it has no frame).
    pub fn is_typed_root(&self, id: StackId) -> bool {
        self.type_of(id) != 0 && self.parent(id) == 0 && self.ip(id) == 0
    }

    /// Adds node `id`; out-of-order or inconsistent nodes are ignored and
    /// reported as `false`.
    pub fn insert(&mut self, id: StackId, parent: StackId, ip: u64) -> bool {
        let idx = id as usize;
        if id == 0 || parent >= id || !self.id_in_reach(idx) {
            return false;
        }
        self.accepted += 1;
        if idx >= self.parent.len() {
            self.parent.resize(idx + 1, 0);
            self.ip.resize(idx + 1, 0);
        }
        self.parent[idx] = parent;
        self.ip[idx] = ip;
        true
    }

    /// Whether node index `idx` is within [`MAX_ID_GAP`] of what the accepted
    /// nodes justify.
    fn id_in_reach(&self, idx: usize) -> bool {
        idx <= 2 * self.accepted + MAX_ID_GAP
    }

    /// Number of nodes including the root.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// True when only the root exists.
    pub fn is_empty(&self) -> bool {
        self.parent.len() <= 1
    }

    /// The parent of `id` (the root is its own parent).
    pub fn parent(&self, id: StackId) -> StackId {
        self.parent.get(id as usize).copied().unwrap_or(0)
    }

    /// The frame address of node `id` (0 for the root or unknown ids).
    pub fn ip(&self, id: StackId) -> u64 {
        self.ip.get(id as usize).copied().unwrap_or(0)
    }

    /// The return addresses of stack `id`, innermost (the allocation's
    /// caller) first.
    pub fn frames(&self, mut id: StackId) -> Vec<u64> {
        let mut out = Vec::new();
        if self.is_typed_root(id) {
            return out;
        }
        while id != 0 && (id as usize) < self.parent.len() {
            out.push(self.ip[id as usize]);
            id = self.parent[id as usize];
        }
        out
    }
}

/// The name of a synthetic frame address ([`Meta::FrameName`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameName {
    /// The function.
    pub function: String,
    /// The source file name (empty when unknown).
    pub file: String,
    /// The line (0 when unknown).
    pub line: u32,
}

/// A mark: a named point in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// When.
    pub t: TimeNs,
    /// Who placed it (0 for periodic marks).
    pub tid: u32,
    /// Its name.
    pub name: String,
}

/// A thread seen in the trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its last known name.
    pub name: String,
    /// When it ended, when that was recorded.
    pub ended: Option<TimeNs>,
}

/// A module load with its time window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedModule {
    /// When it was loaded (0 = present at start).
    pub loaded: TimeNs,
    /// When it was unloaded, if it was.
    pub unloaded: Option<TimeNs>,
    /// The module.
    pub module: Module,
}

/// A change of the program's own mappings (`memlens record --mmap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapChange {
    /// A range was mapped.
    Map(Mapping),
    /// A range was unmapped.
    Unmap(Unmapping),
}

impl MapChange {
    /// When it happened, ns.
    pub fn time(&self) -> TimeNs {
        match self {
            MapChange::Map(m) => m.t,
            MapChange::Unmap(u) => u.t,
        }
    }
}

/// The whole process stream.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// Process information (absent only in a badly damaged file).
    pub process: Option<ProcessInfo>,
    /// Every module ever loaded.
    pub modules: Vec<LoadedModule>,
    /// Threads by tid.
    pub threads: HashMap<u32, ThreadInfo>,
    /// The interned stacks.
    pub stacks: StackTable,
    /// Type names by type id (Java traces).
    pub types: HashMap<u32, String>,
    /// Names of synthetic frame addresses (Java traces); they take precedence
    /// over the module map.
    pub frame_names: HashMap<u64, FrameName>,
    /// Marks in time order.
    pub marks: Vec<Mark>,
    /// Warnings from the recorder.
    pub warnings: Vec<(TimeNs, String)>,
    /// How the process ended, if it ended cleanly.
    pub end: Option<(TimeNs, String)>,
    /// The recorder's counts at the end of a clean run ([`Meta::Totals`]).
    pub totals: Option<Totals>,
    /// The allocation wrappers the user declared when recording ([`Meta::Wrapper`]).
    pub wrappers: Vec<String>,
    /// The program's own mappings and unmappings in time order (ties keep the
    /// file's order: an `mremap`'s unmapping comes before its new mapping);
    /// empty unless recorded with `--mmap`.
    pub mappings: Vec<MapChange>,
    /// Time of the last record of any chunk (the run's recorded duration).
    pub last_time: TimeNs,
    /// Number of event records, from the chunk headers.
    pub event_records: u64,
    /// The JVMTI agent's heap walks in time order, each with the data structures
    /// it found ([`Meta::HeapWalk`], [`Meta::Contained`]); empty for other traces.
    pub heap_walks: Vec<HeapWalkRecord>,
    /// The mean sampling interval in bytes of a sampled recording ([`Meta::Sampling`]);
    /// `None` when every allocation was recorded.
    pub sample_interval: Option<u64>,
    /// Set when the trace starts mid-run: the recorder was attached to a running
    /// process ([`Meta::Attached`]); blocks allocated before are unknown.
    pub attached: Option<Attached>,
}

/// One heap walk with the [`Contained`] records that followed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeapWalkRecord {
    /// The walk and its cost.
    pub walk: HeapWalk,
    /// The data structures it found, each with its recorded members.
    pub structures: Vec<Contained>,
}

impl Metadata {
    /// Decodes every process chunk of `trace`; damage is appended to `damage`.
    pub fn load(trace: &TraceFile, damage: &mut Vec<Damage>) -> Metadata {
        let mut md = Metadata {
            stacks: StackTable::new(),
            ..Metadata::default()
        };
        let mut scratch = Vec::new();
        let mut payload = Vec::new();
        for chunk in trace.chunks() {
            md.last_time = md.last_time.max(chunk.header.t_last);
            if chunk.header.kind == ChunkKind::Events {
                md.event_records += u64::from(chunk.header.records);
                md.threads.entry(chunk.header.stream).or_default();
                continue;
            }
            if chunk.header.kind != ChunkKind::Process {
                continue;
            }
            if let Err(d) = trace.read_payload(chunk, &mut scratch, &mut payload) {
                damage.push(d);
                continue;
            }
            for record in RecordDecoder::new(&chunk.header, &payload) {
                match record {
                    Ok(Record::Meta(m)) => md.apply(m),
                    Ok(_) => {}
                    Err(e) => damage.push(Damage {
                        offset: chunk.offset,
                        reason: format!("{} at payload offset {} of the chunk", e.reason, e.offset),
                        skipped: 0,
                    }),
                }
            }
        }
        md.marks.sort_by_key(|m| m.t);
        md.heap_walks.sort_by_key(|w| w.walk.t);
        md.mappings.sort_by_key(MapChange::time);
        md.stacks.resolve_typed();
        md
    }

    fn apply(&mut self, m: Meta) {
        match m {
            Meta::Process(p) => self.process = Some(p),
            Meta::ModuleLoad { t, module } => self.modules.push(LoadedModule {
                loaded: t,
                unloaded: None,
                module,
            }),
            Meta::ModuleUnload { t, load_bias, path } => {
                if let Some(m) = self.modules.iter_mut().rev().find(|m| {
                    m.unloaded.is_none() && m.module.load_bias == load_bias && m.module.path == path
                }) {
                    m.unloaded = Some(t);
                }
            }
            Meta::ThreadName { tid, name, .. } => self.threads.entry(tid).or_default().name = name,
            Meta::ThreadEnd { t, tid } => self.threads.entry(tid).or_default().ended = Some(t),
            Meta::StackNode { id, parent, ip } => {
                self.stacks.insert(id, parent, ip);
            }
            Meta::Mark { t, tid, name } => self.marks.push(Mark { t, tid, name }),
            Meta::Warning { t, message } => self.warnings.push((t, message)),
            Meta::Clock { .. } => {}
            Meta::Sampling {
                mean_interval_bytes,
            } => self.sample_interval = Some(mean_interval_bytes).filter(|&r| r > 0),
            Meta::Attached(a) => self.attached = Some(a),
            Meta::Totals(totals) => self.totals = Some(totals),
            Meta::Wrapper { pattern } => self.wrappers.push(pattern),
            Meta::Mmap(m) => self.mappings.push(MapChange::Map(m)),
            Meta::Munmap(u) => self.mappings.push(MapChange::Unmap(u)),
            Meta::End { t, how } => self.end = Some((t, how)),
            Meta::TypeName { id, name } => {
                self.types.insert(id, name);
            }
            Meta::FrameName {
                ip,
                function,
                file,
                line,
            } => {
                self.frame_names.insert(
                    ip,
                    FrameName {
                        function,
                        file,
                        line,
                    },
                );
            }
            Meta::TypedStack { id, stack, type_id } => {
                self.stacks.insert_typed(id, stack, type_id);
            }
            Meta::HeapWalk(walk) => self.heap_walks.push(HeapWalkRecord {
                walk,
                structures: Vec::new(),
            }),
            // Members found before any walk record belong to no walk: ignored.
            Meta::Contained(c) => {
                if let Some(w) = self.heap_walks.last_mut() {
                    w.structures.push(c);
                }
            }
        }
    }

    /// The type name of stack `id` when it is a typed stack with a named type.
    pub fn type_name(&self, id: StackId) -> Option<&str> {
        match self.stacks.type_of(id) {
            0 => None,
            ty => self.types.get(&ty).map(String::as_str),
        }
    }

    /// The name of thread `tid`, or an empty string.
    pub fn thread_name(&self, tid: u32) -> &str {
        self.threads
            .get(&tid)
            .map(|t| t.name.as_str())
            .unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_far_ahead_of_the_table_are_refused() {
        let mut t = StackTable::new();
        assert!(t.insert(1, 0, 0x10));
        // A gap as left by a few lost chunks is fine.
        assert!(t.insert(500_000, 1, 0x20));
        // An id no writer could have reached yet is refused, not allocated.
        assert!(!t.insert(u32::MAX, 1, 0x30));
        assert!(!t.insert_typed(u32::MAX - 1, 1, 7));
        assert!(t.len() <= 500_001);
        // Dense ids keep working after a refusal.
        assert!(t.insert(500_001, 500_000, 0x40));
        assert_eq!(t.parent(500_001), 500_000);
    }
}
