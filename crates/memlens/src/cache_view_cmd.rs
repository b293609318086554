//! `memlens cache view`: the cache lens on the built-in kernels, without a trace
//! (`memlens view TRACE` shows a trace's own references).
//!
//! Glue only: the kernels and the simulator live in `memlens-cache`, the lens's API
//! in `memlens-server`.

use std::sync::Arc;

use anyhow::Result;
use memlens_cache::spec::parse_level;
use memlens_cache::{HierarchyConfig, Inclusion};
use memlens_server::{CacheLens, RunInfo, Viewer};

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
    let id = CacheLens::kernel_id(&args.kernel, args.variant.as_deref())
        .map_err(|e| UsageError(e.to_string()))?;
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
    let info = RunInfo {
        program: format!("memlens cache view --kernel {id}"),
        pid: None,
        trace_name: "built-in kernels".to_owned(),
        sampling: None,
        mid_run: None,
    };
    let viewer = Viewer::bind(info, args.serve.config(), vec![Arc::new(lens)])?;
    args.serve
        .serve(viewer, &format!("the cache lens ({id})"))?;
    Ok(0)
}
