//! `memlens report`: writes one self-contained HTML file with the viewer and the data it
//! needs (trees of one classifier list at the snapshot times, timeline, suspects), to
//! open from `file://` or share, with no server.

use std::path::PathBuf;

use anyhow::{Context, Result};
use memlens_heap::format_bytes;
use memlens_server::{Engine, EngineOptions, report_html};

use crate::heap_model::{self, HeapTrace};
use crate::view_cmd::{check_points, run_info};

/// Arguments of `memlens report`.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// The trace to report on.
    file: PathBuf,
    /// The HTML file to write.
    #[arg(short, long, value_name = "OUT.html")]
    output: PathBuf,
    /// The classifiers the report's trees group by, outermost level first.
    #[arg(long, value_name = "C1,C2,…", default_value = "site,thread")]
    by: String,
    /// Evenly spaced snapshot times (besides the start, marks, peaks and dips).
    #[arg(long, value_name = "K", default_value_t = 10)]
    points: usize,
}

/// Runs `memlens report`.
pub fn run(args: ReportArgs) -> Result<i32> {
    heap_model::classifier_chain(&args.by, &[])?;
    check_points(args.points)?;
    let trace = HeapTrace::build(crate::load::open(&args.file)?);
    let info = run_info(&trace, &args.file);
    let options = EngineOptions {
        points: args.points,
        default_classifiers: args.by.clone(),
        other_lenses: Vec::new(),
    };
    let document = Engine::new(&trace.model, &info, options)
        .and_then(|mut engine| engine.report_document())
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    let html = report_html(&document)?;
    std::fs::write(&args.output, &html)
        .with_context(|| format!("cannot write the report to {}", args.output.display()))?;
    eprintln!(
        "memlens: wrote {} ({}): open it in a browser",
        args.output.display(),
        format_bytes(html.len() as u64)
    );
    Ok(trace.finish())
}
