//! The pool-allocator replay on the command line: the `--pool SIZE:COUNT,…`,
//! `--config FILE.toml`, `--overflow` and `--heap-size` options shared by
//! `memlens render alloc` and `memlens alloc …`, the TOML file's format (see
//! docs/alloc-lens.md), and the traces' model replayed through the pool. The replay
//! itself lives in `memlens-alloc`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use memlens_alloc::{
    AllocError, AllocModel, OverflowPolicy, PoolConfig, ReplayReport, parse_bytes, replay,
};

use crate::UsageError;
use crate::read::{self, Read};
use crate::render_cmd::typed_ends;
use memlens_ingest::{TraceInput, Wanted};

/// Heap policies of the pool replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OverflowArg {
    /// The highest free run that fits.
    FirstFit,
    /// The smallest free run that fits.
    BestFit,
}

/// The pool options shared by the commands that can replay.
#[derive(clap::Args, Clone)]
pub struct PoolArgs {
    /// Replay through a pool of these bins: BLOCK_SIZE:COUNT,… with strictly increasing
    /// sizes, e.g. `16:1024,32:512,64:256`.
    #[arg(long = "pool", value_name = "SIZE:COUNT,…", conflicts_with = "config")]
    pool: Option<String>,
    /// Replay through the pool described by a TOML file (see docs/alloc-lens.md).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// How the pool's heap picks a free run (default first-fit, or the file's `overflow`).
    #[arg(long, value_enum)]
    overflow: Option<OverflowArg>,
    /// The pool heap's size (bytes, `K`, `M`, `G`); unbounded by default.
    #[arg(long, value_name = "BYTES")]
    heap_size: Option<String>,
}

/// An engine error as a usage error (its message already names the value at fault).
pub(crate) fn usage(e: AllocError) -> anyhow::Error {
    UsageError(e.to_string()).into()
}

impl PoolArgs {
    /// Whether a pool was asked for (`--pool` or `--config`).
    pub(crate) fn is_given(&self) -> bool {
        self.pool.is_some() || self.config.is_some()
    }

    /// The pool configuration, if one was asked for.
    fn config(&self) -> Result<Option<PoolConfig>> {
        let mut config = match (&self.pool, &self.config) {
            (Some(spec), _) => PoolConfig::new(
                PoolConfig::parse_bins(spec)
                    .map_err(|e| UsageError(format!("`--pool {spec}`: {e}")))?,
            ),
            (None, Some(path)) => read_pool_toml(path)?,
            (None, None) => {
                if self.overflow.is_some() || self.heap_size.is_some() {
                    return Err(UsageError(
                        "`--overflow` and `--heap-size` need a pool: give `--pool SIZE:COUNT,…` or `--config FILE`"
                            .to_string(),
                    )
                    .into());
                }
                return Ok(None);
            }
        };
        if let Some(o) = self.overflow {
            config.overflow = match o {
                OverflowArg::FirstFit => OverflowPolicy::FirstFit,
                OverflowArg::BestFit => OverflowPolicy::BestFit,
            };
        }
        if let Some(h) = &self.heap_size {
            config.heap_size = Some(parse_bytes(h).ok_or_else(|| {
                UsageError(format!(
                    "`--heap-size {h}` is not a size: write bytes, `64K` or `8M`"
                ))
            })?);
        }
        config.validate().map_err(usage)?;
        Ok(Some(config))
    }
}

/// Reads a pool configuration file (its format: `memlens_alloc::pool_toml`).
pub fn read_pool_toml(path: &Path) -> Result<PoolConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the pool configuration {}", path.display()))?;
    memlens_alloc::pool_toml::from_toml(&text)
        .map_err(|e| UsageError(format!("{}: {e}", path.display())).into())
}

/// The window `--time A..B` names on the allocation map's timeline of `inputs` (an
/// empty end is the run's): the window read when the whole run does not fit in the
/// map's memory.
pub(crate) fn alloc_window(text: &str, inputs: &[TraceInput]) -> Result<(u64, u64)> {
    let run_end = memlens_ingest::timeline_end(inputs);
    let (from, to) = typed_ends(text, run_end)?;
    Ok((from.unwrap_or(0), to.unwrap_or(run_end)))
}

/// The traces read into one allocation-map model, replayed through the pool when one
/// was given.
pub(crate) fn model_for(
    files: &[PathBuf],
    pool: &PoolArgs,
    time: Option<&str>,
) -> Result<(Read, Option<(AllocModel, ReplayReport)>)> {
    let config = pool.config()?;
    let inputs = files
        .iter()
        .map(|f| read::open(f))
        .collect::<Result<Vec<_>>>()?;
    for input in &inputs {
        read::refuse_java(input)?;
    }
    let wanted = Wanted {
        alloc: true,
        alloc_window: time.map(|text| alloc_window(text, &inputs)).transpose()?,
        ..Wanted::default()
    };
    let traces = read::read(inputs, wanted);
    if traces.models.alloc.is_none() {
        anyhow::bail!("{}", traces.models.notes.join("; "));
    }
    let replayed = match config {
        Some(c) => Some(replay(traces.alloc(), &c).map_err(usage)?),
        None => None,
    };
    Ok((traces, replayed))
}
