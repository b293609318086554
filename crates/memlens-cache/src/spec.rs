//! Parsing of the textual level specifications the CLI accepts.
//!
//! `NAME:SIZE:WAYS:LINE[:POLICY]`, e.g. `L1:32K:8:64:lru` or `L2:256KiB:8:64`. Sizes
//! are read by [`memlens_vocab::parse_size`], the one size grammar of memlens: plain
//! bytes or a binary suffix (`K`, `KB`, `KiB`, `M`, `MiB`, `G`, …, all meaning powers
//! of 1024, as cache sizes always do). Policies are `lru` (the default), `fifo`,
//! `random` (optionally `random=SEED`) and `plru`. The parser lives in the library so
//! that the CLI stays glue and the syntax is tested once.

use std::fmt;

use memlens_vocab::parse_size;

use crate::config::{HierarchyConfig, Inclusion, LevelConfig, Replacement, WritePolicy};

/// Why a level specification could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The text at fault.
    pub input: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.input, self.reason)
    }
}

impl std::error::Error for SpecError {}

fn spec_error(input: &str, reason: impl Into<String>) -> SpecError {
    SpecError {
        input: input.to_owned(),
        reason: reason.into(),
    }
}

/// Parses a replacement policy name: `lru`, `fifo`, `random`, `random=SEED`, `plru`.
///
/// `default_seed` is used for a bare `random`.
pub fn parse_replacement(text: &str, default_seed: u64) -> Result<Replacement, SpecError> {
    let lower = text.trim().to_ascii_lowercase();
    match lower.as_str() {
        "lru" => Ok(Replacement::Lru),
        "fifo" => Ok(Replacement::Fifo),
        "plru" | "tree-plru" => Ok(Replacement::TreePlru),
        "random" | "rand" => Ok(Replacement::Random { seed: default_seed }),
        _ => match lower.strip_prefix("random=") {
            Some(seed) => seed
                .parse()
                .map(|seed| Replacement::Random { seed })
                .map_err(|_| spec_error(text, "the random seed must be a whole number")),
            None => Err(spec_error(
                text,
                "unknown replacement policy; use lru, fifo, random or plru",
            )),
        },
    }
}

/// Parses `NAME:SIZE:WAYS:LINE[:POLICY]` into a write-back, write-allocate level.
///
/// The geometry is not validated here; [`crate::Hierarchy::new`] does that and names
/// the level in its error.
pub fn parse_level(text: &str, default_seed: u64) -> Result<LevelConfig, SpecError> {
    let fields: Vec<&str> = text.split(':').collect();
    if !(4..=5).contains(&fields.len()) {
        return Err(spec_error(
            text,
            "expected NAME:SIZE:WAYS:LINE[:POLICY], e.g. L1:32K:8:64:lru",
        ));
    }
    let name = fields[0].trim();
    if name.is_empty() {
        return Err(spec_error(text, "the level name is empty"));
    }
    let size = parse_size(fields[1]).map_err(|e| spec_error(text, e.to_string()))?;
    let ways: u32 = fields[2]
        .trim()
        .parse()
        .map_err(|_| spec_error(text, "WAYS must be a whole number"))?;
    let line_size = parse_size(fields[3])
        .ok()
        .and_then(|l| u32::try_from(l).ok())
        .ok_or_else(|| spec_error(text, "LINE must be a line size in bytes"))?;
    let replacement = match fields.get(4) {
        Some(policy) => {
            parse_replacement(policy, default_seed).map_err(|e| spec_error(text, e.reason))?
        }
        None => Replacement::Lru,
    };
    Ok(LevelConfig {
        name: name.to_owned(),
        size,
        ways,
        line_size,
        replacement,
        write_policy: WritePolicy::WriteBack,
        write_allocate: true,
    })
}

/// Parses a whole hierarchy as `memlens cache simulate` takes it: the level specs,
/// first level first, each with the same write policy and allocation rule, and the
/// inclusion (`inclusive`, `exclusive`, anything else non-inclusive).
pub fn parse_hierarchy(
    levels: &[String],
    default_seed: u64,
    write_policy: WritePolicy,
    write_allocate: bool,
    inclusion: &str,
) -> Result<HierarchyConfig, SpecError> {
    let levels = levels
        .iter()
        .map(|spec| Ok(parse_level(spec, default_seed)?.with_writes(write_policy, write_allocate)))
        .collect::<Result<Vec<_>, SpecError>>()?;
    let inclusion = match inclusion {
        "inclusive" => Inclusion::Inclusive,
        "exclusive" => Inclusion::Exclusive,
        _ => Inclusion::NonInclusive,
    };
    Ok(HierarchyConfig::new(levels).with_inclusion(inclusion))
}

/// Parses the access size of `din` lines without a size field: a size from 1 to
/// 65535 bytes in the shared size grammar.
pub fn parse_access_size(text: &str) -> Result<u16, SpecError> {
    parse_size(text)
        .ok()
        .and_then(|s| u16::try_from(s).ok())
        .filter(|&s| s > 0)
        .ok_or_else(|| spec_error(text, "must be a size from 1 to 65535 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_sizes_take_the_shared_size_grammar() {
        let size = |spec: &str| parse_level(spec, 1).map(|level| level.size);
        assert_eq!(size("L1:4096:8:64"), Ok(4096));
        assert_eq!(size("L1:32K:8:64"), Ok(32 * 1024));
        assert_eq!(size("L1:256KiB:8:64"), Ok(256 * 1024));
        assert_eq!(size("L1:8M:8:64"), Ok(8 << 20));
        assert_eq!(size("L1:1gb:8:64"), Ok(1 << 30));
        for bad in [
            "L1:K:8:64",
            "L1:12Q:8:64",
            "L1:99999999999999999999:8:64",
            "L1:20000000000T:8:64",
        ] {
            let error = parse_level(bad, 1).unwrap_err();
            assert_eq!(error.input, bad);
            assert!(
                error.reason.contains('`'),
                "the reason names the size: {error}"
            );
        }
        assert_eq!(parse_level("L1:64:1:1K", 1).map(|l| l.line_size), Ok(1024));
    }

    #[test]
    fn hierarchies_and_access_sizes_parse() {
        let specs = ["L1:32K:8:64".to_string(), "L2:1M:16:64:fifo".to_string()];
        let h = parse_hierarchy(&specs, 1, WritePolicy::WriteThrough, false, "exclusive").unwrap();
        assert_eq!(h.levels.len(), 2);
        assert_eq!(h.inclusion, Inclusion::Exclusive);
        assert!(!h.levels[1].write_allocate);
        assert_eq!(h.levels[0].write_policy, WritePolicy::WriteThrough);
        assert!(parse_hierarchy(&["L1:x".into()], 1, WritePolicy::WriteBack, true, "").is_err());
        assert_eq!(parse_access_size("4"), Ok(4));
        assert_eq!(parse_access_size("1K"), Ok(1024));
        for bad in ["0", "64K", "x"] {
            assert_eq!(parse_access_size(bad).unwrap_err().input, bad);
        }
    }

    #[test]
    fn level_specs_parse_with_and_without_a_policy() {
        let l1 = parse_level("L1:32K:8:64:lru", 1).unwrap();
        assert_eq!(
            (l1.name.as_str(), l1.size, l1.ways, l1.line_size),
            ("L1", 32768, 8, 64)
        );
        assert_eq!(l1.replacement, Replacement::Lru);
        let l2 = parse_level("L2:256K:8:64", 1).unwrap();
        assert_eq!(l2.replacement, Replacement::Lru);
        assert_eq!(
            parse_level("L3:1M:16:64:random", 7).unwrap().replacement,
            Replacement::Random { seed: 7 }
        );
        assert_eq!(
            parse_level("L3:1M:16:64:random=9", 7).unwrap().replacement,
            Replacement::Random { seed: 9 }
        );
        assert_eq!(
            parse_level("L3:1M:16:64:PLRU", 7).unwrap().replacement,
            Replacement::TreePlru
        );
        for bad in [
            "L1:32K:8",
            "L1:32K:x:64",
            ":32K:8:64",
            "L1:32K:8:64:mru",
            "L1:?:8:64",
        ] {
            assert!(parse_level(bad, 1).is_err(), "{bad}");
        }
    }
}
