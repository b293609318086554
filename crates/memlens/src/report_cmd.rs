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
    /// The allocation map's window when the whole run does not fit in the memory it
    /// may use (`MEMLENS_ALLOC_MEMORY`), e.g. `10s..20s` or `40%..60%`; without it,
    /// the last stretch that fits.
    #[arg(long, value_name = "A..B")]
    time: Option<String>,
}

/// Runs `memlens report`.
pub fn run(args: ReportArgs) -> Result<i32> {
    heap_args::classifier_chain(&args.by, &[])?;
    memlens_server::check_points(args.points).map_err(crate::UsageError)?;
    let (points, by, time) = (args.points, &args.by, args.time.as_deref());
    let lenses = Lenses::read(&args.file, &[], points, by, time, false, None)?;
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
