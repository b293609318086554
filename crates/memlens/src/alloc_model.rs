//! Traces → [`AllocModel`]: the glue behind `memlens render alloc` and `memlens alloc …`
//! between the trace reader, the site namer and the allocation-map engine.
//!
//! Several traces (a parent and its forked children) load into one model: each is a
//! process of its own, and their clocks are aligned on the wall-clock time of each
//! trace's time 0 (`start_unix_ns`), so the earliest process starts the common timeline
//! at 0. A block's site is the first frame of its stack outside allocation wrappers,
//! named once per stack (`function (file:line)`). Allocator latencies (traces recorded
//! with `memlens record --latency`) come with each event from
//! [`load::for_each_event_with_latency`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use memlens_alloc::{
    AllocEvent, AllocModel, AllocModelBuilder, FreeEvent, ProcessId, ProcessInfo, ReallocEvent,
    SiteId,
};
use memlens_trace::{Event, StackId};

use crate::UsageError;
use crate::load::{self, Loaded};
use crate::sites::SiteNamer;

/// Traces read into the allocation-map engine.
pub struct AllocTraces {
    /// The model of all of them.
    pub model: AllocModel,
    /// Each file with the damage met while reading it.
    pub files: Vec<Loaded>,
}

/// Whether a trace comes from the JVMTI agent: its allocations carry types and
/// synthetic object ids instead of addresses.
pub fn is_java_trace(metadata: &memlens_trace::Metadata) -> bool {
    metadata.stacks.has_types()
}

/// Loads `paths` into one model; a Java trace is a usage error.
pub fn load_traces(paths: &[PathBuf]) -> Result<AllocTraces> {
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let file = load::open(path)?;
        if is_java_trace(&file.metadata) {
            return Err(UsageError(format!(
                "{} is a Java trace: the JVM does not reveal object addresses, so the \
                 allocation map cannot draw it (use `memlens tree`, `growth` or `view` for its heap evolution)",
                path.display()
            ))
            .into());
        }
        files.push(file);
    }
    let origin = files
        .iter()
        .filter_map(|f| f.metadata.process.as_ref().map(|p| p.start_unix_ns))
        .min()
        .unwrap_or(0);
    let mut builder = AllocModelBuilder::new();
    let total: u64 = files.iter().map(|f| f.metadata.event_records).sum();
    builder.reserve((total / 2) as usize);
    let mut end = 0u64;
    for f in &mut files {
        let md = &f.metadata;
        let offset = md
            .process
            .as_ref()
            .map_or(0, |p| p.start_unix_ns.saturating_sub(origin));
        let process = builder.add_process(process_info(md, f.trace.path()));
        let mut namer = SiteNamer::new(md);
        let mut sites: HashMap<u32, SiteId> = HashMap::new();
        let bar = load::progress(f);
        let damage = load::for_each_event_with_latency(f, &bar, |event, latency_ns| {
            let at = At {
                process,
                offset,
                latency_ns,
            };
            add_event(&mut builder, md, &mut namer, &mut sites, at, event);
        });
        end = end.max(md.last_time.saturating_add(offset));
        f.damage.extend(damage);
    }
    Ok(AllocTraces {
        model: builder.finish(end),
        files,
    })
}

fn process_info(md: &memlens_trace::Metadata, path: &Path) -> ProcessInfo {
    match &md.process {
        Some(p) => ProcessInfo {
            pid: p.pid,
            ppid: p.ppid,
            name: Path::new(&p.exe)
                .file_name()
                .map_or_else(|| p.exe.clone(), |n| n.to_string_lossy().into_owned()),
        },
        None => ProcessInfo {
            pid: 0,
            ppid: 0,
            name: path.display().to_string(),
        },
    }
}

fn site_of(
    builder: &mut AllocModelBuilder,
    md: &memlens_trace::Metadata,
    namer: &mut SiteNamer,
    sites: &mut HashMap<u32, SiteId>,
    stack: StackId,
) -> SiteId {
    if stack == 0 {
        return SiteId::UNKNOWN;
    }
    if let Some(&s) = sites.get(&stack) {
        return s;
    }
    let label = namer
        .path(md, stack, 1)
        .into_iter()
        .next()
        .unwrap_or_default();
    let s = builder.site(&label);
    sites.insert(stack, s);
    s
}

/// Where an event belongs: its process, its clock offset and its latency.
struct At {
    process: ProcessId,
    offset: u64,
    latency_ns: Option<u32>,
}

fn add_event(
    builder: &mut AllocModelBuilder,
    md: &memlens_trace::Metadata,
    namer: &mut SiteNamer,
    sites: &mut HashMap<u32, SiteId>,
    at: At,
    event: &Event,
) {
    let At {
        process,
        offset,
        latency_ns,
    } = at;
    let thread = builder.thread(process, event.tid(), md.thread_name(event.tid()));
    match *event {
        Event::Alloc {
            t,
            addr,
            size,
            stack,
            ..
        } => {
            let site = site_of(builder, md, namer, sites, stack);
            builder.alloc(AllocEvent {
                t: t + offset,
                thread,
                addr,
                size,
                site,
                latency_ns,
            });
        }
        Event::Free { t, addr, .. } => builder.free(FreeEvent {
            t: t + offset,
            thread,
            addr,
            latency_ns,
        }),
        Event::Realloc {
            t,
            old_addr,
            new_addr,
            size,
            stack,
            ..
        } => {
            let site = site_of(builder, md, namer, sites, stack);
            builder.realloc(ReallocEvent {
                t: t + offset,
                thread,
                old_addr,
                new_addr,
                size,
                site,
                latency_ns,
            });
        }
    }
}

impl AllocTraces {
    /// Prints damage and the model's repairs on stderr; returns 1 when a file is damaged.
    pub fn finish(&self) -> i32 {
        for message in self.model.diagnostics().messages() {
            eprintln!("memlens: note: {message}");
        }
        let mut damaged = false;
        for f in &self.files {
            load::report_damage(f.trace.path(), &f.damage);
            damaged |= !f.damage.is_empty();
        }
        i32::from(damaged)
    }
}
