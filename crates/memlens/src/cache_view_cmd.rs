//! `memlens cache view`: the cache lens on the built-in kernels, without a trace
//! (`memlens view TRACE` shows a trace's own references); and the reading of a
//! trace's reference chunks into the lens's source, which `memlens view` uses.
//!
//! Glue only: the kernels and the simulator live in `memlens-cache`, the lens's API
//! in `memlens-server`.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use memlens_cache::spec::parse_level;
use memlens_cache::{
    AccessKind, HierarchyConfig, Inclusion, LabelId, LabelTable, Reference, RegionId, RegionTable,
    TraceInfo,
};
use memlens_heap::{HeapModel, HeapModelBuilder};
use memlens_server::cache::MAX_REFERENCES;
use memlens_server::{CacheLens, EngineOptions, ReferenceSource, RunInfo, Viewer};
use memlens_trace::{RefItem, RefKind, TraceFile, read_references};

use crate::UsageError;
use crate::view_cmd::ServeArgs;

/// Arguments of `memlens cache view`.
#[derive(clap::Args)]
#[command(
    after_help = "The page's kernel picker switches between all built-in kernels, and its \
    hierarchy editor re-simulates with other levels. To see a recorded trace's references, \
    run `memlens view TRACE`. The viewer listens on 127.0.0.1 on a random port behind a \
    secret token; press Ctrl-C to stop."
)]
pub struct CacheViewArgs {
    /// The kernel shown first: matmul, bubble-sort, merge-sort, array-init or particles.
    #[arg(long, default_value = "matmul")]
    kernel: String,
    /// Its variant (matmul: standard, transposed or blocked).
    #[arg(long)]
    variant: Option<String>,
    /// Its problem size (matmul: 16 unless given).
    #[arg(long)]
    n: Option<u64>,
    /// The hierarchy shown first, first level first: NAME:SIZE:WAYS:LINE[:POLICY]
    /// (default L1:1K:2:64 and L2:4K:4:64, small enough to watch).
    #[arg(long = "level", value_name = "SPEC")]
    levels: Vec<String>,
    /// How the levels' contents relate.
    #[arg(long, default_value = "non-inclusive", value_parser = ["inclusive", "non-inclusive", "exclusive"])]
    inclusion: String,
    #[command(flatten)]
    serve: ServeArgs,
}

/// Runs `memlens cache view` until Ctrl-C.
pub fn run(args: CacheViewArgs) -> Result<i32> {
    args.serve.check()?;
    let id = CacheLens::kernel_id(&args.kernel, args.variant.as_deref()).map_err(UsageError)?;
    let mut lens = CacheLens::new(None)
        .with_default_source(id, args.n)
        .map_err(|e| UsageError(format!("--n: {e}")))?;
    if !args.levels.is_empty() {
        let mut levels = Vec::new();
        for spec in &args.levels {
            levels.push(parse_level(spec, 1).map_err(|e| UsageError(format!("--level {e}")))?);
        }
        let inclusion = match args.inclusion.as_str() {
            "inclusive" => Inclusion::Inclusive,
            "exclusive" => Inclusion::Exclusive,
            _ => Inclusion::NonInclusive,
        };
        lens = lens
            .with_default_hierarchy(HierarchyConfig::new(levels).with_inclusion(inclusion))
            .map_err(|e| UsageError(format!("--level: {e}")))?;
    }
    let model: &'static HeapModel = Box::leak(Box::new(HeapModelBuilder::new().end(0)));
    let info = RunInfo {
        program: format!("memlens cache view --kernel {id}"),
        pid: None,
        trace_name: "built-in kernels".to_owned(),
    };
    let config = args.serve.config(EngineOptions::default());
    let viewer = Viewer::bind(model, info, config, vec![Arc::new(lens)])?;
    args.serve
        .serve(viewer, &format!("the cache lens ({id})"))?;
    Ok(0)
}

/// Reads the reference chunks of `trace` into the cache lens's source, or `None`
/// when it has none. Damaged chunks are reported on stderr and skipped; a trace
/// longer than the lens holds is cut, with a note.
pub fn trace_source(trace: &TraceFile, path: &Path) -> Option<ReferenceSource> {
    let mut regions: Vec<(u16, u64, u64, String)> = Vec::new();
    let mut labels: Vec<(u16, String)> = Vec::new();
    let mut references = Vec::new();
    let mut dropped = 0u64;
    let damage = read_references(trace, &mut |item| match item {
        RefItem::Region {
            id,
            start,
            len,
            name,
        } => regions.push((id, start, len, name)),
        RefItem::Label { id, text } => labels.push((id, text)),
        RefItem::Reference(r) => {
            if references.len() >= MAX_REFERENCES {
                dropped += 1;
                return;
            }
            let kind = match r.kind {
                RefKind::Read => AccessKind::Read,
                RefKind::Write => AccessKind::Write,
                RefKind::Modify => AccessKind::Modify,
                RefKind::Instruction => AccessKind::Instruction,
            };
            references.push(
                Reference::new(kind, r.addr, r.size).with(RegionId(r.region), LabelId(r.label)),
            );
        }
    });
    for d in &damage {
        eprintln!(
            "memlens: {}: damaged at byte offset {}: {}; the cache lens skips it",
            path.display(),
            d.offset,
            d.reason
        );
    }
    if references.is_empty() && regions.is_empty() {
        return None;
    }
    if dropped > 0 {
        eprintln!(
            "memlens: {}: the cache lens shows the first {MAX_REFERENCES} references; {dropped} more are left out",
            path.display()
        );
    }
    Some(ReferenceSource {
        title: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".to_owned()),
        references: references.into(),
        info: trace_info(regions, labels),
    })
}

/// Tables whose ids equal the trace's: ids are 1-based and dense in the tables, so
/// gaps get placeholder entries and repeated label texts are told apart.
fn trace_info(
    mut regions: Vec<(u16, u64, u64, String)>,
    mut labels: Vec<(u16, String)>,
) -> TraceInfo {
    regions.sort_by_key(|r| r.0);
    labels.sort_by_key(|l| l.0);
    let mut info = TraceInfo::default();
    let mut table = RegionTable::new();
    for (id, start, len, name) in regions {
        while usize::from(id) > table.len() + 1 {
            let n = table.len() + 1;
            table.add(format!("region {n}"), 0, 0);
        }
        if usize::from(id) == table.len() + 1 {
            table.add(name, start, len);
        }
    }
    let mut texts = LabelTable::new();
    for (id, text) in labels {
        while usize::from(id) > texts.len() + 1 {
            let n = texts.len() + 1;
            texts.intern(&format!("label {n}"));
        }
        if usize::from(id) == texts.len() + 1 && texts.intern(&text).map(|l| l.0) != Some(id) {
            texts.intern(&format!("{text} (#{id})"));
        }
    }
    info.regions = table;
    info.labels = texts;
    info
}
