//! `memlens growth`: the groups whose live memory grows over the run (or a window of
//! it, `--from`/`--to`), ranked as leak suspects by the engine ([`growth_suspects`]),
//! as a table or as JSON.
//!
//! The table also shows each suspect's dominant call path, which the engine follows
//! ([`dominant_call_paths`]).

use std::path::PathBuf;

use anyhow::Result;
use memlens_heap::protocol::suspects_document;
use memlens_heap::{
    GrowthQuery, Suspect, dominant_call_paths, format_bytes, format_duration, format_signed_bytes,
    growth_suspects, named_times,
};
use memlens_ingest::Wanted;

use crate::heap_args;
use crate::read::{self, Read};

/// Frames shown per call path.
const CALL_PATH_FRAMES: usize = 6;

/// Arguments of `memlens growth`.
#[derive(clap::Args)]
pub struct GrowthArgs {
    /// The trace to read.
    file: PathBuf,
    /// Classifiers that form the groups, outermost level first (see `memlens tree
    /// --help`); the default suits C, C++ and Rust programs alike.
    #[arg(long, value_name = "C1,C2,…", default_value = heap_args::DEFAULT_BY)]
    by: String,
    /// Start of the window to rank growth over (`1.5s`, `200ms`, `T%` of the run)
    /// [default: the process start].
    #[arg(long, value_name = "T")]
    from: Option<String>,
    /// End of that window; set it before an exit-time teardown that frees everything
    /// [default: the end of the run].
    #[arg(long, value_name = "T")]
    to: Option<String>,
    /// How many suspects to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// Function-name prefix of the application's own code, for `closest-domain-site`
    /// (repeatable).
    #[arg(long, value_name = "PREFIX")]
    domain: Vec<String>,
    /// Print JSON: `{"suspects":[{"key","full_key","growth_bytes","start_bytes",
    /// "end_bytes","score",…}]}`.
    #[arg(long)]
    json: bool,
}

/// Runs `memlens growth`.
pub fn run(args: GrowthArgs) -> Result<i32> {
    let classifiers = heap_args::classifier_chain(&args.by, &args.domain)?;
    let input = read::open(&args.file)?;
    let window = heap_args::window(
        args.from.as_deref(),
        args.to.as_deref(),
        heap_args::run_window(&input),
    )?;
    let trace = read::read(vec![input], Wanted::heap_at(named_times(None, window)));
    let query = GrowthQuery {
        window,
        limit: Some(args.top),
        ..GrowthQuery::new(classifiers)
    };
    let suspects = growth_suspects(trace.heap(), &query).map_err(heap_args::usage)?;
    if args.json {
        let sampling = trace.inputs[0].sampling();
        println!("{}", suspects_document(&suspects, sampling));
    } else {
        let paths = dominant_call_paths(trace.heap(), &query, &suspects, CALL_PATH_FRAMES)
            .map_err(heap_args::usage)?;
        print_table(&trace, &query, &suspects, &paths);
    }
    Ok(trace.finish())
}

/// Prints the ranking as a table, each suspect followed by its group and call path.
fn print_table(trace: &Read, query: &GrowthQuery, suspects: &[Suspect], paths: &[Vec<String>]) {
    let window = query.window.unwrap_or(trace.heap().run());
    println!(
        "{}: leak suspects by {}, from {} to {} ({} samples)",
        trace.path().display(),
        query.classifiers.names().join(" › "),
        format_duration(window.start_ns),
        format_duration(window.end_ns),
        query.samples + 1,
    );
    let sampling = trace.inputs[0].sampling();
    sampling.into_iter().for_each(|s| println!("{}", s.note()));
    if suspects.is_empty() {
        println!("\nno group grows in this window");
        return;
    }
    println!(
        "\n{:>4}  {:>11}  {:>10}  {:>10}  {:>10}  {:>5}  {:>5}  {:>7}  {:>10}",
        "rank", "growth", "start", "end", "at exit", "mono", "R²", "persist", "score"
    );
    for (rank, (s, path)) in suspects.iter().zip(paths).enumerate() {
        println!(
            "{:>4}  {:>11}  {:>10}  {:>10}  {:>10}  {:>5.2}  {:>5.2}  {:>7.2}  {:>10}",
            rank + 1,
            format_signed_bytes(s.growth_bytes),
            format_bytes(s.start_bytes),
            format_bytes(s.end_bytes),
            format_bytes(s.live_at_exit_bytes),
            s.monotonicity,
            s.r_squared,
            s.persistence,
            format_bytes(s.score as u64),
        );
        println!("      group:     {}", s.full_key.join(" › "));
        if !path.is_empty() {
            println!("      call path: {}", path.join(" ← "));
        }
    }
}
