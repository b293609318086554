//! `memlens tree`: memory trees at several snapshot times, the heap-evolution lens in
//! the terminal (paper 000: classifiers, pruning, stable order).
//!
//! The engine does the work ([`memory_trees`]); this file parses the arguments, turns
//! the user's times (`1.5s`, `200ms`, `50%`) into trace times, checks them against the
//! run before the events are read, and prints the trees as indented text, as memlens
//! JSON or as AntTracks memory-tree JSON. `--import` reads AntTracks JSON back and
//! prints it the same ways.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use memlens_heap::protocol::{trees_document, trees_from_anttracks_files, trees_to_anttracks_json};
use memlens_heap::{
    Metric, PruneRule, Sampling, SnapshotTimes, SortStrategy, TextOptions, TimeWindow, TreeOptions,
    TreeQuery, Trees, memory_trees, named_times, render_trees,
};

use crate::UsageError;
use crate::heap_args;
use crate::read;
use memlens_ingest::Wanted;

/// The number of evenly spaced snapshot times when none are asked for.
const DEFAULT_POINTS: usize = 5;

/// The most snapshot times one command computes (memory grows with nodes × times).
const MAX_POINTS: usize = 1000;

/// Arguments of `memlens tree`.
#[derive(clap::Args)]
#[command(
    after_help = "Times are trace times since the process started: `1.5s`, `200ms`, \
    `10us`, `500ns`, or `T%` of the run (`50%`). Without `--points`, `--at`, `--marks` or \
    `--peaks`, the trees are taken at 5 evenly spaced points; the last is the end of the run."
)]
pub struct TreeArgs {
    /// The trace to read.
    #[arg(required_unless_present = "import")]
    file: Option<PathBuf>,
    /// Classifiers, outermost level first: site, site-line, closest-user-frame, call-path,
    /// module, thread, size-class, age, lifetime, type, closest-domain-site, data-structure.
    #[arg(long, value_name = "C1,C2,…", default_value = heap_args::DEFAULT_BY)]
    by: String,
    /// Trees at K evenly spaced times, the last at the end of the run [default: 5].
    #[arg(long, value_name = "K", group = "when")]
    points: Option<usize>,
    /// Trees at these times (`1.5s`, `200ms`, `T%` of the run).
    #[arg(long, value_name = "T1,T2,…", value_delimiter = ',', group = "when")]
    at: Vec<String>,
    /// Trees at the marks placed by the program or by `record --mark-every`.
    #[arg(long, group = "when")]
    marks: bool,
    /// Trees at the heap's peaks and dips.
    #[arg(long, group = "when")]
    peaks: bool,
    /// Start of the window that `--points`, `--marks` and `--peaks` look at [default:
    /// the process start].
    #[arg(long, value_name = "T", conflicts_with = "at")]
    from: Option<String>,
    /// End of that window [default: the end of the run].
    #[arg(long, value_name = "T", conflicts_with = "at")]
    to: Option<String>,
    /// What sizes mean for sorting and pruning.
    #[arg(long, default_value = "bytes", value_parser = metric_parser())]
    metric: Metric,
    /// The stable sibling order: by growth, size at the first time, or at the last.
    #[arg(long, default_value = "growth", value_parser = sort_parser())]
    sort: SortStrategy,
    /// Print memlens JSON (same as `--format json`).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Output format; `anttracks` writes AntTracks memory-tree JSON, one tree per time
    /// (a JSON array for several times).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Function-name prefix of the application's own code, for `closest-domain-site`
    /// (repeatable).
    #[arg(long, value_name = "PREFIX")]
    domain: Vec<String>,
    /// Keep every node instead of merging small siblings into `Other` (90 %, at most 9).
    #[arg(long)]
    no_prune: bool,
    /// Print at most this many levels below the root (text only).
    #[arg(long, value_name = "N")]
    depth: Option<usize>,
    /// Read AntTracks memory-tree JSON (one tree, or an array of trees) instead of a
    /// trace; repeat to join files into one series.
    #[arg(long, value_name = "FILE.json", conflicts_with_all = ["file", "by", "when", "from", "to", "domain", "metric", "sort", "no_prune"])]
    import: Vec<PathBuf>,
}

/// How the trees are printed.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Indented text, one tree per time.
    Text,
    /// memlens JSON: `{"classifiers","times_ns","trees":[{"time_ns","root"}]}`.
    Json,
    /// AntTracks memory-tree JSON.
    Anttracks,
}

fn metric_parser() -> impl TypedValueParser<Value = Metric> {
    PossibleValuesParser::new(["bytes", "objects"])
        .map(|name| Metric::from_name(&name).unwrap_or_default())
}

fn sort_parser() -> impl TypedValueParser<Value = SortStrategy> {
    PossibleValuesParser::new(["growth", "start", "end"])
        .map(|name| SortStrategy::from_name(&name).unwrap_or_default())
}

/// Runs `memlens tree`.
pub fn run(args: TreeArgs) -> Result<i32> {
    let format = if args.json { Format::Json } else { args.format };
    match &args.file {
        _ if !args.import.is_empty() => show_imported(&args, format),
        Some(file) => show_trace(&args, file, format),
        None => Err(UsageError("name a trace file or give `--import FILE.json`".into()).into()),
    }
}

/// Computes and prints the trees of a trace.
fn show_trace(args: &TreeArgs, file: &Path, format: Format) -> Result<i32> {
    // Check every argument before the (possibly long) read of the events.
    let classifiers = heap_args::classifier_chain(&args.by, &args.domain)?;
    let input = read::open(file)?;
    let run = heap_args::run_window(&input);
    let times = snapshot_times(args, run)?;
    let window = heap_args::window(args.from.as_deref(), args.to.as_deref(), run)?;
    let trace = read::read(
        vec![input],
        Wanted::heap_at(named_times(Some(&times), window)),
    );
    let query = TreeQuery {
        classifiers,
        times,
        window,
        options: TreeOptions {
            metric: args.metric,
            sort: args.sort,
            prune: (!args.no_prune).then(PruneRule::default),
        },
    };
    let trees = memory_trees(trace.heap(), &query).map_err(heap_args::usage)?;
    if format == Format::Text {
        println!(
            "{}: memory trees by {} at {} time(s), siblings ordered by {} in {}",
            file.display(),
            chain_text(&trees),
            trees.times_ns.len(),
            trees.sort.name(),
            trees.metric.name(),
        );
    }
    let run = (Some(trace.heap().run()), trace.inputs[0].sampling());
    print(&trees, format, run, args.depth);
    Ok(trace.finish())
}

/// Reads AntTracks JSON and prints it like the trees of a trace.
fn show_imported(args: &TreeArgs, format: Format) -> Result<i32> {
    let trees = import(&args.import)?;
    if format == Format::Text {
        let files: Vec<String> = args
            .import
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        println!(
            "{}: {} imported memory tree(s) by {}",
            files.join(", "),
            trees.trees.len(),
            chain_text(&trees)
        );
    }
    print(&trees, format, (None, None), args.depth);
    Ok(0)
}

/// The classifier names of a series, outermost first: `site › thread`.
fn chain_text(trees: &Trees) -> String {
    let names: Vec<&str> = trees.classifiers.iter().map(|c| c.name.as_str()).collect();
    names.join(" › ")
}

/// Where the snapshot times come from, with explicit times checked against the run.
fn snapshot_times(args: &TreeArgs, run: TimeWindow) -> Result<SnapshotTimes> {
    if args.marks {
        return Ok(SnapshotTimes::Marks);
    }
    if args.peaks {
        return Ok(SnapshotTimes::peaks_and_dips());
    }
    if !args.at.is_empty() {
        let times = args
            .at
            .iter()
            .map(|text| heap_args::parse_time("--at", text, run))
            .collect::<Result<Vec<u64>>>()?;
        return Ok(SnapshotTimes::Explicit(times));
    }
    match args.points.unwrap_or(DEFAULT_POINTS) {
        k @ 1..=MAX_POINTS => Ok(SnapshotTimes::Points(k)),
        k => Err(UsageError(format!(
            "`--points {k}` is out of range: K must be between 1 and {MAX_POINTS}"
        ))
        .into()),
    }
}

/// Reads AntTracks memory-tree JSON files into one series.
fn import(paths: &[PathBuf]) -> Result<Trees> {
    let read = |p: &PathBuf| std::fs::read_to_string(p).map(|t| (p.display().to_string(), t));
    let files = paths
        .iter()
        .map(|p| read(p).with_context(|| format!("cannot read {}", p.display())));
    Ok(trees_from_anttracks_files(
        &files.collect::<Result<Vec<_>>>()?,
    )?)
}

/// Prints `trees` on stdout; `run` gives text output the share of the run of each time,
/// and says when the figures are a sampled trace's estimates.
type RunFacts = (Option<TimeWindow>, Option<Sampling>);
fn print(trees: &Trees, format: Format, (run, sampling): RunFacts, depth: Option<usize>) {
    match format {
        Format::Json => println!("{}", trees_document(trees, sampling)),
        Format::Anttracks => println!("{}", trees_to_anttracks_json(trees)),
        Format::Text => {
            let options = TextOptions {
                max_depth: depth,
                ..TextOptions::default()
            };
            sampling.into_iter().for_each(|s| println!("{}", s.note()));
            print!("{}", render_trees(trees, run, &options));
        }
    }
}
