//! `memlens diff BASE NEW [--by …] [--top N] [--json]`: two runs compared per group at
//! each run's peak and end (the heap engine's [`diff_runs`]), most changed at the end first.

use std::path::PathBuf;

use anyhow::Result;
use memlens_heap::diff_wire::{diff_to_json, render_diff};
use memlens_ingest::Wanted;

use crate::heap_args;
use crate::read;

/// Arguments of `memlens diff`.
#[derive(clap::Args)]
pub struct DiffArgs {
    /// The run to compare against (heaptrack's and pprof's "base").
    base: PathBuf,
    /// The run to compare.
    new: PathBuf,
    /// Classifiers that form the groups, outermost level first (see `memlens tree --help`).
    #[arg(long, value_name = "C1,C2,…", default_value = heap_args::DEFAULT_BY)]
    by: String,
    /// Function-name prefix of the application's own code, for `closest-domain-site`.
    #[arg(long, value_name = "PREFIX")]
    domain: Vec<String>,
    /// How many groups to list [default: 20 in the table, all in JSON].
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// Print JSON: `{"groups":[{"key","delta_bytes","delta_objects",…}]}` (Δ at the end).
    #[arg(long)]
    json: bool,
}

/// Runs `memlens diff`.
pub fn run(args: DiffArgs) -> Result<i32> {
    let classifiers = heap_args::classifier_chain(&args.by, &args.domain)?;
    let base = read::read(vec![read::open(&args.base)?], Wanted::heap_at(Vec::new()));
    let new = read::read(vec![read::open(&args.new)?], Wanted::heap_at(Vec::new()));
    let diff =
        memlens_heap::diff_runs(base.heap(), new.heap(), &classifiers).map_err(heap_args::usage)?;
    // A sampled run's groups are estimates: say so (on stderr beside JSON).
    for (path, run) in [(&args.base, &base), (&args.new, &new)] {
        if let Some(note) = run.inputs[0].sampling().map(|s| s.note()) {
            let line = format!("{}: {note}", path.display());
            if args.json {
                eprintln!("memlens: note: {line}")
            } else {
                println!("{line}")
            }
        }
    }
    if args.json {
        println!("{}", diff_to_json(&diff, args.top));
    } else {
        println!("{} → {}\n", args.base.display(), args.new.display());
        print!("{}", render_diff(&diff, Some(args.top.unwrap_or(20))));
    }
    Ok(base.finish().max(new.finish()))
}
