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
use crate::alloc_model::{AllocTraces, load_traces};

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

/// Reads a pool configuration file:
///
/// ```toml
/// overflow = "best-fit"      # or "first-fit" (default)
/// heap_size = "1M"           # optional: unbounded by default
/// heap_align = 16            # optional
/// [[bin]]
/// size = 16
/// count = 1024
/// [[bin]]
/// size = "1K"
/// count = 64
/// ```
pub fn read_pool_toml(path: &Path) -> Result<PoolConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the pool configuration {}", path.display()))?;
    parse_pool_toml(&text).map_err(|m| UsageError(format!("{}: {m}", path.display())).into())
}

fn toml_bytes(v: &toml::Value) -> Option<u64> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).ok(),
        toml::Value::String(s) => parse_bytes(s),
        _ => None,
    }
}

/// Parses the TOML text of a pool configuration; errors are one sentence.
pub fn parse_pool_toml(text: &str) -> std::result::Result<PoolConfig, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("not valid TOML: {}", e.message()))?;
    for key in table.keys() {
        if !["overflow", "heap_size", "heap_align", "bin"].contains(&key.as_str()) {
            return Err(format!(
                "unknown key `{key}`: the keys are overflow, heap_size, heap_align and [[bin]] tables"
            ));
        }
    }
    let bins = table
        .get("bin")
        .and_then(|b| b.as_array())
        .ok_or("no `[[bin]]` tables: give each bin's `size` and `count`")?;
    let mut out = Vec::new();
    for (i, b) in bins.iter().enumerate() {
        let get = |k: &str| b.get(k).and_then(toml_bytes);
        let (Some(size), Some(count)) = (get("size"), get("count")) else {
            return Err(format!(
                "bin {} needs a `size` (bytes, or \"1K\") and a `count`",
                i + 1
            ));
        };
        out.push(memlens_alloc::PoolBin {
            block_size: size,
            count,
        });
    }
    let mut config = PoolConfig::new(out);
    if let Some(o) = table.get("overflow") {
        config.overflow = match o.as_str() {
            Some("first-fit") => OverflowPolicy::FirstFit,
            Some("best-fit") => OverflowPolicy::BestFit,
            _ => return Err("`overflow` must be \"first-fit\" or \"best-fit\"".to_string()),
        };
    }
    if let Some(h) = table.get("heap_size") {
        config.heap_size = Some(toml_bytes(h).ok_or("`heap_size` must be a size in bytes")?);
    }
    if let Some(a) = table.get("heap_align") {
        config.heap_align = toml_bytes(a).ok_or("`heap_align` must be a number of bytes")?;
    }
    config.validate().map_err(|e| e.to_string())?;
    Ok(config)
}

/// The traces' model, replayed through the pool when one was given.
pub(crate) fn model_for(
    files: &[PathBuf],
    pool: &PoolArgs,
) -> Result<(AllocTraces, Option<(AllocModel, ReplayReport)>)> {
    let config = pool.config()?;
    let traces = load_traces(files)?;
    let replayed = match config {
        Some(c) => Some(replay(&traces.model, &c).map_err(usage)?),
        None => None,
    };
    Ok((traces, replayed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_files_parse_and_bad_ones_say_why() {
        let c = parse_pool_toml(
            "overflow = \"best-fit\"\nheap_size = \"1K\"\n[[bin]]\nsize = 16\ncount = 4\n[[bin]]\nsize = \"1K\"\ncount = 2\n",
        )
        .unwrap();
        assert_eq!(c.overflow, OverflowPolicy::BestFit);
        assert_eq!(c.heap_size, Some(1024));
        assert_eq!(c.bins[1].block_size, 1024);
        let e = parse_pool_toml("[[bin]]\nsize = 32\ncount = 1\n[[bin]]\nsize = 16\ncount = 1\n")
            .unwrap_err();
        assert!(e.contains("must strictly increase"), "{e}");
        assert!(
            parse_pool_toml("bins = 3")
                .unwrap_err()
                .contains("unknown key")
        );
        assert!(
            parse_pool_toml("[[bin]]\nsize = 16\n")
                .unwrap_err()
                .contains("count")
        );
        assert!(parse_pool_toml("not toml [").unwrap_err().contains("TOML"));
    }
}
