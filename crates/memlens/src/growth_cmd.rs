//! `memlens growth`: the groups whose live memory grows over the run (or a window of
//! it, `--from`/`--to`), ranked as leak suspects by the engine ([`growth_suspects`]),
//! as a table or as JSON.
//!
//! The table also shows each suspect's dominant call path. The engine gives it: the
//! same classifiers followed by `call-path`, as unpruned trees at the window's start
//! and end, ordered by growth; below each suspect we follow the child that grew most. Only
//! the blocks live at those two times are classified, so this costs far less than the
//! ranking itself.

use std::path::PathBuf;

use anyhow::Result;
use memlens_heap::protocol::suspects_to_json;
use memlens_heap::{
    GrowthQuery, HeapModel, Node, SnapshotTimes, SortStrategy, Suspect, TreeOptions, TreeQuery,
    format_bytes, format_duration, format_signed_bytes, growth_suspects, memory_trees,
};

use crate::heap_model::{self, HeapTrace};

/// Frames shown per call path.
const CALL_PATH_FRAMES: usize = 6;

/// Arguments of `memlens growth`.
#[derive(clap::Args)]
pub struct GrowthArgs {
    /// The trace to read.
    file: PathBuf,
    /// Classifiers that form the groups, outermost level first (see `memlens tree
    /// --help`); the default suits C, C++ and Rust programs alike.
    #[arg(long, value_name = "C1,C2,…", default_value = "closest-user-frame")]
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
    let classifiers = heap_model::classifier_chain(&args.by, &args.domain)?;
    let loaded = crate::load::open(&args.file)?;
    let window = heap_model::window(
        args.from.as_deref(),
        args.to.as_deref(),
        heap_model::run_window(&loaded.metadata),
    )?;
    let trace = HeapTrace::build(loaded);
    let query = GrowthQuery {
        window,
        limit: Some(args.top),
        ..GrowthQuery::new(classifiers)
    };
    let suspects = growth_suspects(&trace.model, &query).map_err(heap_model::usage)?;
    if args.json {
        println!("{}", suspects_to_json(&suspects));
    } else {
        let paths = call_paths(&trace.model, &query, &suspects)?;
        print_table(&trace, &query, &suspects, &paths);
    }
    Ok(trace.finish())
}

/// The dominant call path of each suspect, innermost frame first, from the first frame
/// outside the allocator and the runtime libraries out to the last such frame.
fn call_paths(
    model: &HeapModel,
    query: &GrowthQuery,
    suspects: &[Suspect],
) -> Result<Vec<Vec<String>>> {
    if suspects.is_empty() {
        return Ok(Vec::new());
    }
    let classifiers = &query.classifiers;
    let names = classifiers.names().join(",");
    let with_paths = heap_model::classifier_chain(
        &format!("{names},call-path"),
        &classifiers.options().domain_prefixes,
    )?;
    let window = query.window.unwrap_or(model.run());
    let tree_query = TreeQuery {
        classifiers: with_paths,
        times: SnapshotTimes::Explicit(vec![window.start_ns, window.end_ns]),
        window: None,
        options: TreeOptions {
            sort: SortStrategy::AbsoluteGrowth,
            prune: None,
            ..TreeOptions::default()
        },
    };
    let trees = memory_trees(model, &tree_query).map_err(heap_model::usage)?;
    let Some(last) = trees.trees.last() else {
        return Ok(vec![Vec::new(); suspects.len()]);
    };
    let filter = &classifiers.options().user_frames;
    let is_user = |f: &String| f != "_start" && filter.is_user_frame(f, "");
    Ok(suspects
        .iter()
        .map(|s| {
            let mut frames = Vec::new();
            let mut node: Option<&Node> = last.root.find(&s.full_key);
            // Children are ordered by growth, largest first.
            while let Some(child) = node
                .and_then(|n| n.children.first())
                .filter(|c| c.growth_bytes > 0)
            {
                frames.push(child.key.clone());
                node = Some(child);
            }
            // Outermost first so far: drop the runtime's frames around `main`, then
            // turn the path round and drop the allocator's frames at the inner end.
            let outer_user = frames.iter().position(is_user).unwrap_or(0);
            frames.drain(..outer_user);
            frames.reverse();
            let inner_user = frames.iter().position(is_user).unwrap_or(0);
            frames.drain(..inner_user);
            frames.truncate(CALL_PATH_FRAMES);
            frames
        })
        .collect())
}

/// Prints the ranking as a table, each suspect followed by its group and call path.
fn print_table(
    trace: &HeapTrace,
    query: &GrowthQuery,
    suspects: &[Suspect],
    paths: &[Vec<String>],
) {
    let window = query.window.unwrap_or(trace.model.run());
    println!(
        "{}: leak suspects by {}, from {} to {} ({} samples)",
        trace.path().display(),
        query.classifiers.names().join(" › "),
        format_duration(window.start_ns),
        format_duration(window.end_ns),
        query.samples + 1,
    );
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
