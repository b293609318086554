//! The pool configuration file (`memlens alloc replay --config pool.toml`): the same
//! pool as `--pool SIZE:COUNT,…`, plus the heap's overflow policy, size and alignment.
//!
//! ```toml
//! overflow = "best-fit"      # or "first-fit" (default)
//! heap_size = "1M"           # optional: unbounded by default
//! heap_align = 16            # optional
//! [[bin]]
//! size = 16
//! count = 1024
//! [[bin]]
//! size = "1K"
//! count = 64
//! ```

use crate::error::AllocError;
use crate::pool::{OverflowPolicy, PoolBin, PoolConfig, parse_bytes};

fn toml_bytes(v: &toml::Value) -> Option<u64> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).ok(),
        toml::Value::String(s) => parse_bytes(s),
        _ => None,
    }
}

/// Reads the TOML text of a pool configuration; errors are one sentence.
pub fn from_toml(text: &str) -> Result<PoolConfig, AllocError> {
    parse(text).map_err(AllocError::BadPoolFile)
}

fn parse(text: &str) -> Result<PoolConfig, String> {
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
        out.push(PoolBin {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::OverflowPolicy;

    fn parse_pool_toml(text: &str) -> Result<PoolConfig, String> {
        from_toml(text).map_err(|e| e.to_string())
    }

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
