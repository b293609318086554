//! Trace → [`HeapModel`]: the glue that `memlens tree` and `memlens growth` share
//! between the trace reader, the symbolizer and the heap-evolution engine.
//!
//! Every unique return address of the trace's stack table is symbolized once, in one
//! [`Symbolizer::symbolize_all`] batch (parallel across modules), and becomes a chain
//! of engine frames: the out-of-line function first, then each function inlined into
//! it, so the engine sees inlined calls as frames of their own. Stack nodes keep their
//! trace ids (both sides number them densely from 1, parents first). The events then
//! stream through [`HeapModelBuilder`] in time order, with the marks merged in, under
//! the progress bar of [`load`]. The run starts at time 0, the process start, so the
//! times users type (`1.5s`, `50%`) mean the same as in every other command.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use memlens_heap::{
    AllocKind, ClassifierChain, ClassifierOptions, FrameId, FrameInfo, HeapError, HeapModel,
    HeapModelBuilder, StackId, TimeWindow, parse_classifiers,
};
use memlens_symbols::{ModuleInfo, Segment, Symbolizer, SymbolizerOptions};
use memlens_trace::{AllocFn, Event, Metadata};

use crate::UsageError;
use crate::load::{self, Loaded};

/// A trace read into the heap engine's model.
pub struct HeapTrace {
    /// The opened file, with all damage met while reading it.
    pub loaded: Loaded,
    /// Every allocation's lifetime, with symbolized stacks and named threads.
    pub model: HeapModel,
    /// Problems the symbolizer met (missing files, rebuilt binaries), one sentence each.
    symbol_notes: Vec<String>,
}

impl HeapTrace {
    /// Opens `path` and builds its model; an unreadable or foreign file is an error.
    pub fn open(path: &Path) -> Result<HeapTrace> {
        Ok(HeapTrace::build(load::open(path)?))
    }

    /// Builds the model of an opened trace: symbolizes its stacks, then streams its
    /// events through the builder.
    pub fn build(mut loaded: Loaded) -> HeapTrace {
        let md = &loaded.metadata;
        let mut builder = HeapModelBuilder::new();
        builder.start(0);
        builder.reserve((md.event_records / 2) as usize);
        let symbol_notes = add_context(&mut builder, md);
        let bar = load::progress(&loaded);
        let mut marks = md.marks.iter().peekable();
        let damage = load::for_each_event(&loaded, &bar, |event| {
            while let Some(mark) = marks.next_if(|m| m.t <= event.time()) {
                builder.mark(mark.t, &mark.name);
            }
            add_event(&mut builder, event);
        });
        for mark in marks {
            builder.mark(mark.t, &mark.name);
        }
        let model = builder.end(md.last_time);
        loaded.damage.extend(damage);
        HeapTrace {
            loaded,
            model,
            symbol_notes,
        }
    }

    /// The trace's path.
    pub fn path(&self) -> PathBuf {
        self.loaded.trace.path().to_path_buf()
    }

    /// Prints what went wrong while reading (damage, unnamed frames, repaired events) on
    /// stderr and returns the exit status: 1 when the file is damaged, else 0.
    pub fn finish(&self) -> i32 {
        let path = self.path();
        for note in &self.symbol_notes {
            eprintln!("memlens: warning: {note}");
        }
        for message in self.model.diagnostics().messages() {
            eprintln!("memlens: note: {}: {message}", path.display());
        }
        load::report_damage(&path, &self.loaded.damage);
        i32::from(!self.loaded.damage.is_empty())
    }
}

/// The run as the model sees it, known from the metadata alone: from the process
/// start (time 0) to the last record of the trace. Lets a command check the times it
/// was given before it reads the events.
pub fn run_window(md: &Metadata) -> TimeWindow {
    TimeWindow {
        start_ns: 0,
        end_ns: md.last_time,
    }
}

/// Parses a `--by` list with the `--domain` prefixes; a bad list is a usage error whose
/// message lists the valid classifier names.
pub fn classifier_chain(by: &str, domains: &[String]) -> Result<ClassifierChain> {
    let options = ClassifierOptions {
        domain_prefixes: domains.to_vec(),
        ..ClassifierOptions::default()
    };
    parse_classifiers(by, options).map_err(usage)
}

/// A query error of the engine (a time outside the run, no marks, …) as a usage error:
/// its message is already one sentence naming the argument at fault.
pub fn usage(error: HeapError) -> anyhow::Error {
    UsageError(error.to_string()).into()
}

/// The symbolizer for a trace's module map. Modules loaded later (`dlopen`) come later
/// in the list and take precedence where they overlap older ones.
pub fn symbolizer_for(md: &Metadata) -> Symbolizer {
    let modules = md
        .modules
        .iter()
        .map(|m| ModuleInfo {
            path: m.module.path.clone(),
            load_bias: m.module.load_bias,
            segments: m
                .module
                .segments
                .iter()
                .map(|s| Segment {
                    vaddr: s.vaddr,
                    memsz: s.memsz,
                    file_offset: s.file_offset,
                    flags: s.flags,
                })
                .collect(),
            build_id: (!m.module.build_id.is_empty()).then(|| m.module.build_id.clone()),
        })
        .collect();
    let options = SymbolizerOptions {
        main_executable: md.process.as_ref().map(|p| PathBuf::from(&p.exe)),
        ..SymbolizerOptions::default()
    };
    Symbolizer::new(modules, options)
}

/// Adds the frames, stacks and thread names of `md`; returns the symbolizer's notes.
fn add_context(builder: &mut HeapModelBuilder, md: &Metadata) -> Vec<String> {
    let stacks = &md.stacks;
    let nodes = stacks.len() as u32;
    let mut addresses: Vec<u64> = (1..nodes).map(|id| stacks.ip(id)).collect();
    addresses.sort_unstable();
    addresses.dedup();
    // Id 0 marks a node the stack table never defined; it has no address to look up.
    addresses.retain(|&a| a != 0);
    let mut symbolizer = symbolizer_for(md);
    let mut innermost: HashMap<u64, FrameId> = HashMap::with_capacity(addresses.len());
    for symbolized in symbolizer.symbolize_all(&addresses) {
        // Frames come innermost first; the engine wants the outer frame of a chain
        // first, each inlined frame naming the frame it was inlined into.
        let mut frame = FrameId::UNKNOWN;
        for (i, f) in symbolized.frames.iter().rev().enumerate() {
            frame = builder.add_frame(FrameInfo {
                function: f.function.as_deref().unwrap_or(""),
                file: f.file_name().unwrap_or(""),
                line: f.line.unwrap_or(0),
                module: f.module.map_or("", |m| symbolizer.module_name(m)),
                inlined_into: (i > 0).then_some(frame),
            });
        }
        innermost.insert(symbolized.address, frame);
    }
    for id in 1..nodes {
        let frame = innermost
            .get(&stacks.ip(id))
            .copied()
            .unwrap_or(FrameId::UNKNOWN);
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
    symbolizer
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Feeds one trace event to the builder.
fn add_event(builder: &mut HeapModelBuilder, event: &Event) {
    match *event {
        Event::Alloc {
            t,
            tid,
            addr,
            size,
            stack,
            func,
        } => {
            let kind = match func {
                AllocFn::Malloc => AllocKind::Malloc,
                AllocFn::Calloc => AllocKind::Calloc,
                _ => AllocKind::Aligned,
            };
            builder.alloc(t, u64::from(tid), addr, size, StackId(stack), kind);
        }
        Event::Free { t, tid, addr } => builder.free(t, u64::from(tid), addr),
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
