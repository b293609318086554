//! `memlens dump`: every record of a trace as one line of text, in file order.
//!
//! Chunk boundaries appear as `# chunk …` comment lines so a damaged file can
//! be inspected chunk by chunk; damage appears as `# damage …` lines where it
//! was found. Events recorded with `--latency` end in `latency=<ns>ns`; frees
//! recorded with `--free-stacks` name their stack (`stack=<id>`); mappings
//! recorded with `--mmap` are `mmap` and `munmap` lines.

use std::io::{self, Write};

use crate::decode::{Record, RecordDecoder};
use crate::reader::{Damage, TraceFile};
use crate::record::{Event, Meta};

/// Formats one record as a single line (without the newline).
pub fn format_record(record: &Record) -> String {
    match record {
        Record::Event(Event::Alloc {
            t,
            tid,
            addr,
            size,
            stack,
            func,
        }) => format!(
            "{t} alloc tid={tid} addr={addr:#x} size={size} stack={stack} fn={}",
            func.name()
        ),
        Record::Event(Event::Free {
            t,
            tid,
            addr,
            stack: 0,
        }) => format!("{t} free tid={tid} addr={addr:#x}"),
        Record::Event(Event::Free {
            t,
            tid,
            addr,
            stack,
        }) => format!("{t} free tid={tid} addr={addr:#x} stack={stack}"),
        Record::Event(Event::Realloc {
            t,
            tid,
            old_addr,
            new_addr,
            size,
            stack,
        }) => format!(
            "{t} realloc tid={tid} old={old_addr:#x} new={new_addr:#x} size={size} stack={stack}"
        ),
        Record::Meta(m) => match m {
            Meta::Process(p) => format!(
                "process pid={} ppid={} exe={:?} cmdline={:?} start_unix_ns={} clock={:?} unwind={} recorder={}",
                p.pid, p.ppid, p.exe, p.cmdline, p.start_unix_ns, p.clock, p.unwinder, p.recorder
            ),
            Meta::ModuleLoad { t, module } => {
                let segs: Vec<String> = module
                    .segments
                    .iter()
                    .map(|s| {
                        format!(
                            "{:#x}+{:#x}@{:#x}/{}",
                            s.vaddr, s.memsz, s.file_offset, s.flags
                        )
                    })
                    .collect();
                let id: String = module.build_id.iter().map(|b| format!("{b:02x}")).collect();
                format!(
                    "{t} module-load path={:?} bias={:#x} build_id={} segments=[{}]",
                    module.path,
                    module.load_bias,
                    if id.is_empty() { "-" } else { &id },
                    segs.join(" ")
                )
            }
            Meta::ModuleUnload { t, load_bias, path } => {
                format!("{t} module-unload path={path:?} bias={load_bias:#x}")
            }
            Meta::ThreadName { t, tid, name } => format!("{t} thread tid={tid} name={name:?}"),
            Meta::ThreadEnd { t, tid } => format!("{t} thread-end tid={tid}"),
            Meta::StackNode { id, parent, ip } => {
                format!("stack id={id} parent={parent} ip={ip:#x}")
            }
            Meta::Mark { t, tid, name } => format!("{t} mark tid={tid} name={name:?}"),
            Meta::Warning { t, message } => format!("{t} warning {message:?}"),
            Meta::Clock { t, raw } => format!("{t} clock raw={raw}"),
            Meta::Totals(t) => format!(
                "totals allocations={} frees={} reallocations={} requested={}",
                t.allocations, t.frees, t.reallocations, t.requested_bytes
            ),
            Meta::Wrapper { pattern } => format!("wrapper pattern={pattern:?}"),
            Meta::End { t, how } => format!("{t} end how={how}"),
            Meta::Mmap(m) => format!(
                "{} mmap tid={} addr={:#x} len={} prot={:#x} flags={:#x} {}{} stack={}",
                m.t,
                m.tid,
                m.addr,
                m.len,
                m.prot,
                m.flags,
                if m.file { "file" } else { "anonymous" },
                if m.remap { " remap" } else { "" },
                m.stack
            ),
            Meta::Munmap(u) => format!(
                "{} munmap tid={} addr={:#x} len={}",
                u.t, u.tid, u.addr, u.len
            ),
            Meta::Sampling {
                mean_interval_bytes,
            } => format!("sampling mean_interval_bytes={mean_interval_bytes}"),
            Meta::Attached(a) => format!(
                "attached pid={} attach_unix_ns={} process_start_unix_ns={}",
                a.pid, a.attach_unix_ns, a.process_start_unix_ns
            ),
            Meta::TypeName { id, name } => format!("type id={id} name={name:?}"),
            Meta::FrameName {
                ip,
                function,
                file,
                line,
            } => format!("frame ip={ip:#x} function={function:?} file={file:?} line={line}"),
            Meta::TypedStack { id, stack, type_id } => {
                format!("typed-stack id={id} stack={stack} type={type_id}")
            }
            Meta::HeapWalk(w) => format!(
                "{} heap-walk duration_ns={} pause_ns={} objects={} references={}",
                w.t, w.duration_ns, w.pause_ns, w.objects, w.references
            ),
            Meta::Contained(c) => format!(
                "contained container={:#x} type={} members={}",
                c.container,
                c.container_type,
                c.members.len()
            ),
        },
        Record::Other { tag, body } => format!("record tag={tag:#04x} len={}", body.len()),
    }
}

/// Formats one item of a reference stream as a single line.
pub fn format_ref_item(item: &crate::refs::RefItem) -> String {
    use crate::refs::RefItem;
    match item {
        RefItem::Region {
            id,
            start,
            len,
            name,
        } => format!("region id={id} start={start:#x} len={len} name={name:?}"),
        RefItem::Label { id, text } => format!("label id={id} text={text:?}"),
        RefItem::Reference(r) => format!(
            "ref {:?} addr={:#x} size={} region={} label={}",
            r.kind, r.addr, r.size, r.region, r.label
        ),
    }
}

/// Writes every record of `trace` to `out`; returns the number of records
/// and every damaged place met (also written as `# damage` lines).
pub fn dump(trace: &TraceFile, out: &mut dyn Write) -> io::Result<(u64, Vec<Damage>)> {
    let mut records = 0u64;
    let mut damaged: Vec<Damage> = Vec::new();
    let mut scratch = Vec::new();
    let mut payload = Vec::new();
    let mut index_damage = trace.index_damage().iter().peekable();
    for chunk in trace.chunks() {
        while let Some(d) = index_damage.next_if(|d| d.offset < chunk.offset) {
            writeln!(out, "# damage at {d}; skipped {} bytes", d.skipped)?;
            damaged.push(d.clone());
        }
        let h = &chunk.header;
        writeln!(
            out,
            "# chunk offset={} kind={:?} stream={} records={} stored={} raw={} codec={:?} t={}..{}",
            chunk.offset,
            h.kind,
            h.stream,
            h.records,
            h.stored_len,
            h.raw_len,
            h.codec,
            h.t_first,
            h.t_last
        )?;
        if let Err(d) = trace.read_payload(chunk, &mut scratch, &mut payload) {
            writeln!(out, "# damage at {d}")?;
            damaged.push(d);
            continue;
        }
        if h.kind == crate::format::ChunkKind::References {
            let mut lines = Vec::new();
            let result = crate::refs::decode_payload(&payload, &mut |item| {
                lines.push(format_ref_item(&item));
            });
            for line in &lines {
                writeln!(out, "{line}")?;
            }
            records += lines.len() as u64;
            if let Err((at, reason)) = result {
                let d = Damage {
                    offset: chunk.offset,
                    reason: format!("{reason} at payload offset {at} of the chunk"),
                    skipped: 0,
                };
                writeln!(out, "# damage at {d}")?;
                damaged.push(d);
            }
            continue;
        }
        let mut decoder = RecordDecoder::new(h, &payload);
        while let Some(record) = decoder.next() {
            match record {
                Ok(r) => {
                    match decoder.latency_ns() {
                        Some(ns) => writeln!(out, "{} latency={ns}ns", format_record(&r))?,
                        None => writeln!(out, "{}", format_record(&r))?,
                    }
                    records += 1;
                }
                Err(e) => {
                    let d = Damage {
                        offset: chunk.offset,
                        reason: format!("{} at payload offset {} of the chunk", e.reason, e.offset),
                        skipped: 0,
                    };
                    writeln!(out, "# damage at {d}")?;
                    damaged.push(d);
                }
            }
        }
    }
    for d in index_damage {
        writeln!(out, "# damage at {d}; skipped {} bytes", d.skipped)?;
        damaged.push(d.clone());
    }
    Ok((records, damaged))
}
