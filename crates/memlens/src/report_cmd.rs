//! `memlens report`: writes one self-contained HTML file with the viewer and the data
//! every lens with data needs at a bounded level of detail (each lens says which of its
//! answers to embed), to open from `file://` or share, with no server.

use std::path::PathBuf;

use anyhow::{Context, Result};
use memlens_heap::format_bytes;
use memlens_server::report_html;

use crate::heap_args;
use crate::view_cmd::Lenses;

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
    heap_args::classifier_chain(&args.by, &[])?;
    memlens_server::check_points(args.points).map_err(crate::UsageError)?;
    let lenses = Lenses::read(&args.file, &[], args.points, &args.by, false, None)?;
    let html = report_html(&lenses.info, &lenses.lenses)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?;
    std::fs::write(&args.output, &html)
        .with_context(|| format!("cannot write the report to {}", args.output.display()))?;
    eprintln!(
        "memlens: wrote {} ({}): open it in a browser",
        args.output.display(),
        format_bytes(html.len() as u64)
    );
    Ok(lenses.read.finish())
}
