//! Parquet tables for DuckDB, Spark, pandas or any engine: a directory with one
//! sub-directory per table and, in each, one `<pid>.parquet` file per process, so the
//! exports of many traces (a parent and its `--follow-fork` children in one export,
//! or many exports side by side) read as one table with a glob.
//!
//! | table | one row per | rows in the order of |
//! | --- | --- | --- |
//! | `allocations` | block (allocation or `realloc` result) | death; blocks live at the end last, by address |
//! | `stacks` | frame of an allocating (or freeing) stack | stack id, then position (0 = allocation site) |
//! | `frames` | distinct frame | frame id |
//! | `marks` | mark | time |
//! | `threads` | thread | tid |
//! | `processes` | process (one) | — |
//!
//! The allocations are written as a stream: a block's row is appended when it dies
//! (and the live ones at the end), and every million rows go out as one zstd row group
//! ([`crate::parquet_table`]), so memory is the live set, the unique stacks and one
//! row group, whatever the number of events. `docs/export.md` documents the columns
//! and the queries that reproduce `memlens summary`.

use std::path::Path;

use memlens_alloc::glibc_usable_size;
use memlens_alloc::regions::looks_mmapped;
use memlens_ingest::{Progress, StackSymbols, TraceInput, visit_events};
use memlens_trace::AllocFn;
use memlens_vocab::format_count;
use parquet::data_type::ByteArray;
use rustc_hash::FxHashSet;

use crate::parquet_table::{Cell, Col, Kind, Table};
use crate::{Birth, Block, Death, ExportError, ExportStacks, Lifetimes, Step};

/// The tables, each a sub-directory of the export.
pub const TABLES: [&str; 6] = [
    "allocations",
    "stacks",
    "frames",
    "marks",
    "threads",
    "processes",
];

/// One row per block.
const ALLOCATIONS: &[Col] = &[
    Col::new("pid", Kind::I32),
    Col::new("tid", Kind::I32),
    Col::new("alloc_ns", Kind::I64).delta(),
    Col::new("alloc_seq", Kind::I64).delta(),
    Col::new("free_ns", Kind::I64).nullable().delta(),
    Col::new("free_seq", Kind::I64).nullable().delta(),
    Col::new("free_tid", Kind::I32).nullable(),
    Col::new("address", Kind::I64).plain(),
    Col::new("size", Kind::I64),
    Col::new("usable_size", Kind::I64).nullable(),
    Col::new("stack_id", Kind::I64),
    Col::new("free_stack_id", Kind::I64).nullable(),
    Col::new("alloc_fn", Kind::Str),
    Col::new("free_fn", Kind::Str).nullable(),
];

/// One row per frame of a stack.
const STACKS: &[Col] = &[
    Col::new("pid", Kind::I32),
    Col::new("stack_id", Kind::I64),
    Col::new("position", Kind::I32),
    Col::new("frame_id", Kind::I32),
];

/// One row per distinct frame.
const FRAMES: &[Col] = &[
    Col::new("pid", Kind::I32),
    Col::new("frame_id", Kind::I32),
    Col::new("function", Kind::Str).nullable(),
    Col::new("file", Kind::Str).nullable(),
    Col::new("line", Kind::I32).nullable(),
    Col::new("module", Kind::Str).nullable(),
    Col::new("address", Kind::I64),
    Col::new("module_offset", Kind::I64),
    Col::new("inlined", Kind::Bool),
    Col::new("kind", Kind::Str),
    Col::new("label", Kind::Str),
];

/// One row per mark.
const MARKS: &[Col] = &[
    Col::new("pid", Kind::I32),
    Col::new("t_ns", Kind::I64),
    Col::new("tid", Kind::I32),
    Col::new("name", Kind::Str),
];

/// One row per thread.
const THREADS: &[Col] = &[
    Col::new("pid", Kind::I32),
    Col::new("tid", Kind::I32),
    Col::new("name", Kind::Str).nullable(),
    Col::new("ended_ns", Kind::I64).nullable(),
];

/// One row: the process.
const PROCESSES: &[Col] = &[
    Col::new("pid", Kind::I32),
    Col::new("ppid", Kind::I32).nullable(),
    Col::new("exe", Kind::Str).nullable(),
    Col::new("cmdline", Kind::StrList),
    Col::new("start_unix_ns", Kind::I64).nullable(),
    Col::new("end_ns", Kind::I64),
    Col::new("ended", Kind::Str).nullable(),
    Col::new("complete", Kind::Bool),
    Col::new("events", Kind::I64),
    Col::new("blocks", Kind::I64),
    Col::new("unknown_frees", Kind::I64),
];

/// Writes `inputs` as Parquet tables under the directory `out`.
pub fn write(
    inputs: &mut [TraceInput],
    names: &mut [StackSymbols],
    out: &Path,
    progress: &dyn Progress,
) -> Result<String, ExportError> {
    let mut pids = FxHashSet::default();
    for input in inputs.iter() {
        let pid = pid_of(input);
        if !pids.insert(pid) {
            return Err(ExportError::format(
                out,
                format!(
                    "two of the traces are process {pid}; export them to different directories"
                ),
            ));
        }
    }
    prepare(out)?;
    let mut blocks = 0;
    for (input, names) in inputs.iter_mut().zip(names.iter_mut()) {
        blocks += write_process(input, names, out, progress)?;
    }
    let processes = inputs.len();
    Ok(format!(
        "{} tables, {} blocks of {} process{}",
        TABLES.len(),
        format_count(blocks),
        processes,
        if processes == 1 { "" } else { "es" }
    ))
}

/// The process id of `input` (0 when its process record is lost).
fn pid_of(input: &TraceInput) -> u32 {
    input.metadata.process.as_ref().map_or(0, |p| p.pid)
}

/// Makes `out` a directory of empty tables: creates it, or empties the tables of an
/// earlier export there (so a re-recorded trace's old process does not linger);
/// refuses a file or a directory holding anything else.
fn prepare(out: &Path) -> Result<(), ExportError> {
    match std::fs::metadata(out) {
        Ok(meta) if !meta.is_dir() => {
            return Err(ExportError::format(
                out,
                "it is a file, and Parquet is written as a directory of tables",
            ));
        }
        Ok(_) => {
            let entries = std::fs::read_dir(out).map_err(|e| io_error(out, e))?;
            for entry in entries {
                let entry = entry.map_err(|e| io_error(out, e))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if !TABLES.contains(&name.as_str()) || !entry.path().is_dir() {
                    return Err(ExportError::format(
                        out,
                        format!(
                            "it holds `{name}`, which is not a table of a memlens export; \
                             remove it or choose another directory with -o"
                        ),
                    ));
                }
            }
            for table in TABLES {
                remove_tables(&out.join(table))?;
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(out).map_err(|e| io_error(out, e))?;
        }
        Err(e) => return Err(io_error(out, e)),
    }
    for table in TABLES {
        let dir = out.join(table);
        std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
    }
    Ok(())
}

/// Removes the Parquet files (whole or partial) of an earlier export from `dir`.
fn remove_tables(dir: &Path) -> Result<(), ExportError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error(dir, e)),
    };
    for entry in entries {
        let path = entry.map_err(|e| io_error(dir, e))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.ends_with(".parquet") || name.ends_with(".parquet.partial") {
            std::fs::remove_file(&path).map_err(|e| io_error(&path, e))?;
        }
    }
    Ok(())
}

/// The values of the function columns, made once (every row shares them).
struct FnNames {
    alloc: Vec<ByteArray>,
    realloc: ByteArray,
    deaths: [ByteArray; 3],
}

impl FnNames {
    fn new() -> FnNames {
        FnNames {
            alloc: AllocFn::ALL
                .iter()
                .map(|f| ByteArray::from(f.name()))
                .collect(),
            realloc: ByteArray::from(Birth::Realloc.name()),
            deaths: [Death::Free, Death::Realloc, Death::Conflict]
                .map(|d| ByteArray::from(d.name())),
        }
    }

    fn birth(&self, birth: Birth) -> &ByteArray {
        match birth {
            Birth::Alloc(f) => &self.alloc[f as usize],
            Birth::Realloc => &self.realloc,
        }
    }

    fn death(&self, death: Death) -> &ByteArray {
        &self.deaths[match death {
            Death::Free => 0,
            Death::Realloc => 1,
            Death::Conflict => 2,
        }]
    }
}

/// The allocations table of one process being written, and the stacks its rows use.
struct Blocks {
    pid: i32,
    /// A Java trace: addresses are object ids and glibc's sizes do not apply.
    java: bool,
    table: Table,
    names: FnNames,
    stacks: FxHashSet<u32>,
    error: Option<ExportError>,
}

impl Blocks {
    /// Appends the row of `block` (dead, or live at the end); the first error stops
    /// the writing and is kept for the end of the pass.
    fn block(&mut self, b: &Block) {
        if self.error.is_some() {
            return;
        }
        self.stacks.insert(b.stack);
        if b.died_stack != 0 {
            self.stacks.insert(b.died_stack);
        }
        let usable = if self.java {
            Cell::Null
        } else {
            Cell::I64(glibc_usable_size(b.size, looks_mmapped(b.size, b.address)) as i64)
        };
        let opt_i64 = |v: Option<u64>| v.map_or(Cell::Null, |v| Cell::I64(v as i64));
        let row = [
            Cell::I32(self.pid),
            Cell::I32(b.tid as i32),
            Cell::I64(b.born_ns as i64),
            Cell::I64(b.born_seq as i64),
            opt_i64(b.died_ns),
            opt_i64(b.died_seq),
            b.died_tid.map_or(Cell::Null, |t| Cell::I32(t as i32)),
            Cell::I64(b.address as i64),
            Cell::I64(b.size as i64),
            usable,
            Cell::I64(i64::from(b.stack)),
            opt_i64((b.died_stack != 0).then_some(u64::from(b.died_stack))),
            Cell::Bytes(self.names.birth(b.birth)),
            b.death
                .map_or(Cell::Null, |d| Cell::Bytes(self.names.death(d))),
        ];
        if let Err(e) = self.table.row(&row) {
            self.error = Some(e);
        }
    }
}

/// Writes the six tables of one process; returns its number of blocks.
fn write_process(
    input: &mut TraceInput,
    names: &mut StackSymbols,
    out: &Path,
    progress: &dyn Progress,
) -> Result<u64, ExportError> {
    let pid = pid_of(input);
    let file = |table: &str| out.join(table).join(format!("{pid}.parquet"));
    let mut blocks = Blocks {
        pid: pid as i32,
        java: input.is_java(),
        table: Table::create(&file("allocations"), "allocations", ALLOCATIONS)?,
        names: FnNames::new(),
        stacks: FxHashSet::default(),
        error: None,
    };
    let mut life = Lifetimes::new();
    visit_events(input, progress, |event| {
        life.event(event, &mut |step| {
            if let Step::Died(b) = step {
                blocks.block(b);
            }
        });
    });
    let unknown_frees = life.unknown_frees;
    life.finish(|b| blocks.block(b));
    if let Some(e) = blocks.error {
        return Err(e);
    }
    let rows = blocks.table.finish()?;

    let md = &input.metadata;
    let mut stacks = ExportStacks::new();
    let mut ids: Vec<u32> = blocks.stacks.into_iter().collect();
    ids.sort_unstable();
    let mut table = Table::create(&file("stacks"), "stacks", STACKS)?;
    for id in ids {
        for (position, &frame) in stacks.path(md, names, id).iter().enumerate() {
            table.row(&[
                Cell::I32(pid as i32),
                Cell::I64(i64::from(id)),
                Cell::I32(position as i32),
                Cell::I32(frame as i32),
            ])?;
        }
    }
    table.finish()?;

    let mut table = Table::create(&file("frames"), "frames", FRAMES)?;
    for (id, site) in stacks.frames().iter().enumerate() {
        let label = site.to_string();
        table.row(&[
            Cell::I32(pid as i32),
            Cell::I32(id as i32),
            text(&site.function),
            text(&site.file),
            if site.line == 0 {
                Cell::Null
            } else {
                Cell::I32(site.line as i32)
            },
            text(&site.module),
            Cell::I64(site.address as i64),
            Cell::I64(site.module_offset as i64),
            Cell::Bool(site.inlined),
            Cell::Str(site.kind.name()),
            Cell::Str(&label),
        ])?;
    }
    table.finish()?;

    let mut table = Table::create(&file("marks"), "marks", MARKS)?;
    for mark in &md.marks {
        table.row(&[
            Cell::I32(pid as i32),
            Cell::I64(mark.t as i64),
            Cell::I32(mark.tid as i32),
            Cell::Str(&mark.name),
        ])?;
    }
    table.finish()?;

    let mut table = Table::create(&file("threads"), "threads", THREADS)?;
    let mut threads: Vec<_> = md.threads.iter().collect();
    threads.sort_unstable_by_key(|(tid, _)| **tid);
    for (tid, thread) in threads {
        table.row(&[
            Cell::I32(pid as i32),
            Cell::I32(*tid as i32),
            text(&thread.name),
            thread.ended.map_or(Cell::Null, |t| Cell::I64(t as i64)),
        ])?;
    }
    table.finish()?;

    let mut table = Table::create(&file("processes"), "processes", PROCESSES)?;
    let process = md.process.as_ref();
    let no_args: &[String] = &[];
    table.row(&[
        Cell::I32(pid as i32),
        process.map_or(Cell::Null, |p| Cell::I32(p.ppid as i32)),
        process.map_or(Cell::Null, |p| text(&p.exe)),
        Cell::List(process.map_or(no_args, |p| &p.cmdline)),
        process.map_or(Cell::Null, |p| Cell::I64(p.start_unix_ns as i64)),
        Cell::I64(input.run_end_ns() as i64),
        md.end
            .as_ref()
            .map_or(Cell::Null, |(_, how)| Cell::Str(how)),
        Cell::Bool(md.end.is_some() && input.damage.is_empty()),
        Cell::I64(md.event_records as i64),
        Cell::I64(rows as i64),
        Cell::I64(unknown_frees as i64),
    ])?;
    table.finish()?;
    Ok(rows)
}

/// The error of a failed file operation on `path`: one sentence, the system's reason
/// given once.
pub(crate) fn io_error(path: &Path, e: std::io::Error) -> ExportError {
    ExportError::format(path, e)
}

/// `s`, or NULL when it is empty (an unknown name).
fn text(s: &str) -> Cell<'_> {
    if s.is_empty() {
        Cell::Null
    } else {
        Cell::Str(s)
    }
}
