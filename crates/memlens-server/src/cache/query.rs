//! The cache lens's query parameters: which source, which hierarchy, which range.
//!
//! Every route names its session in the query, so any request can be answered alone
//! (two tabs with different hierarchies do not disturb each other):
//! `source=trace|<kernel id>`, `n=<problem size>` (kernels only),
//! `levels=NAME:SIZE:WAYS:LINE[:POLICY],…` (first level first; the source's default
//! hierarchy when absent), `inclusion=inclusive|non-inclusive|exclusive`,
//! `write=back|through`, and the cache temperature's `twindow=N` (references averaged
//! over) and `tweights=HIT:MISS,…` (per level, first level first; the engine's
//! standard ones when absent).

use std::collections::HashMap;

use memlens_cache::spec::parse_level;
use memlens_cache::{
    HierarchyConfig, Inclusion, LevelConfig, Replacement, TemperatureConfig, TemperatureWeights,
    WritePolicy,
};

use crate::error::ApiError;

/// The most ways a level of the lens may have (ranks travel as bytes).
pub const MAX_WAYS: u32 = 64;

/// The most lines all levels together may hold (each is a glyph on the page).
pub const MAX_LINES: u64 = 1 << 18;

/// The most levels the editor offers.
pub const MAX_LEVELS: usize = 4;

/// Which references and which hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SessionQuery {
    /// `trace` or a kernel id.
    pub source: String,
    /// A kernel's problem size, when asked for.
    pub n: Option<u64>,
    /// The hierarchy, or `None` for the source's default.
    pub config: Option<HierarchyConfig>,
}

impl SessionQuery {
    pub fn parse(
        query: &HashMap<String, String>,
        default_source: &str,
    ) -> Result<SessionQuery, ApiError> {
        let source = query
            .get("source")
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| default_source.to_owned());
        let n = match query.get("n").map(|s| s.trim()).filter(|s| !s.is_empty()) {
            None => None,
            Some(text) => Some(text.parse::<u64>().map_err(|_| {
                ApiError::bad_request(format!("`n={text}` must be a whole number"))
            })?),
        };
        let config = match query
            .get("levels")
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
        {
            None => None,
            Some(text) => Some(parse_hierarchy(text, query)?),
        };
        Ok(SessionQuery { source, n, config })
    }
}

fn parse_hierarchy(
    text: &str,
    query: &HashMap<String, String>,
) -> Result<HierarchyConfig, ApiError> {
    let write_policy = match query.get("write").map(String::as_str) {
        None | Some("back") | Some("") => WritePolicy::WriteBack,
        Some("through") => WritePolicy::WriteThrough,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "`write={other}` is not a write policy: use back or through"
            )));
        }
    };
    let inclusion = match query.get("inclusion").map(String::as_str) {
        None | Some("non-inclusive") | Some("") => Inclusion::NonInclusive,
        Some("inclusive") => Inclusion::Inclusive,
        Some("exclusive") => Inclusion::Exclusive,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "`inclusion={other}` is not an inclusion mode: use inclusive, non-inclusive or exclusive"
            )));
        }
    };
    let mut levels = Vec::new();
    for spec in text.split(',') {
        let level = parse_level(spec.trim(), 1)
            .map_err(|e| ApiError::bad_request(format!("levels: {e}")))?;
        levels.push(level.with_writes(write_policy, true));
    }
    let config = HierarchyConfig::new(levels).with_inclusion(inclusion);
    check_size(&config)?;
    Ok(config)
}

/// The most references a temperature window may average over.
pub const MAX_TEMPERATURE_WINDOW: usize = 1 << 20;

/// The temperature settings for `levels` levels: the engine's standard ones, with the
/// window (`twindow`) and the per-level hit scores and miss penalties (`tweights`,
/// `HIT:MISS` per level; levels not given keep the standard weights) the query sets.
pub(crate) fn parse_temperature(
    query: &HashMap<String, String>,
    levels: usize,
) -> Result<TemperatureConfig, ApiError> {
    let mut config = TemperatureConfig::standard(levels);
    if let Some(text) = query
        .get("twindow")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        config.window = text
            .parse::<usize>()
            .ok()
            .filter(|w| (1..=MAX_TEMPERATURE_WINDOW).contains(w))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "`twindow={text}` must be a number of references from 1 to {MAX_TEMPERATURE_WINDOW}"
                ))
            })?;
    }
    if let Some(text) = query
        .get("tweights")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
    {
        for (level, pair) in text.split(',').enumerate() {
            let bad = || {
                ApiError::bad_request(format!(
                    "`tweights`: `{pair}` is not HIT:MISS (two numbers from 0 to 100, e.g. 1:2)"
                ))
            };
            let (hit, miss) = pair.trim().split_once(':').ok_or_else(bad)?;
            let number = |t: &str| {
                t.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && (0.0..=100.0).contains(v))
            };
            let weights = TemperatureWeights {
                hit: number(hit).ok_or_else(bad)?,
                miss: number(miss).ok_or_else(bad)?,
            };
            if level >= levels {
                return Err(ApiError::bad_request(format!(
                    "`tweights` gives {} levels; the hierarchy has {levels}",
                    text.split(',').count()
                )));
            }
            config.weights[level] = weights;
        }
    }
    Ok(config)
}

/// The part of a session's key that temperature settings make.
pub(crate) fn temperature_key(config: &TemperatureConfig) -> String {
    let weights: Vec<String> = config
        .weights
        .iter()
        .map(|w| format!("{}:{}", w.hit, w.miss))
        .collect();
    format!("{}|{}", config.window, weights.join(","))
}

/// The lens's own limits, on top of what the simulator accepts.
pub(crate) fn check_size(config: &HierarchyConfig) -> Result<(), ApiError> {
    if config.levels.is_empty() || config.levels.len() > MAX_LEVELS {
        return Err(ApiError::bad_request(format!(
            "levels: give 1 to {MAX_LEVELS} cache levels"
        )));
    }
    let mut lines = 0u64;
    for level in &config.levels {
        if level.ways > MAX_WAYS {
            return Err(ApiError::bad_request(format!(
                "levels: {} has {} ways; the lens draws at most {MAX_WAYS} per set",
                level.name, level.ways
            )));
        }
        lines += level.size / u64::from(level.line_size.max(1));
    }
    if lines > MAX_LINES {
        return Err(ApiError::bad_request(format!(
            "levels: the hierarchy holds {lines} lines; the lens draws at most {MAX_LINES}"
        )));
    }
    Ok(())
}

/// The key of a session: equal keys, equal simulations.
pub(crate) fn session_key(source: &str, n: Option<u64>, config: &HierarchyConfig) -> String {
    format!(
        "{source}|{}|{}|{}",
        n.map_or(String::new(), |n| n.to_string()),
        config.inclusion.name(),
        levels_spec(config)
    )
}

/// A hierarchy's levels as the `levels` parameter spells them.
pub(crate) fn levels_spec(config: &HierarchyConfig) -> String {
    config
        .levels
        .iter()
        .map(level_spec)
        .collect::<Vec<_>>()
        .join(",")
}

fn level_spec(level: &LevelConfig) -> String {
    let policy = match level.replacement {
        Replacement::Random { seed } => format!("random={seed}"),
        other => other.name().to_owned(),
    };
    let write = match level.write_policy {
        WritePolicy::WriteBack => "",
        WritePolicy::WriteThrough => "/wt",
    };
    format!(
        "{}:{}:{}:{}:{policy}{write}",
        level.name, level.size, level.ways, level.line_size
    )
}

/// A reference index parameter (`start`, `at`), at most `len`.
pub(crate) fn index(query: &HashMap<String, String>, name: &str) -> Result<usize, ApiError> {
    let Some(text) = query.get(name) else {
        return Err(ApiError::bad_request(format!("`{name}` is missing")));
    };
    text.trim()
        .parse::<usize>()
        .map_err(|_| ApiError::bad_request(format!("`{name}={text}` must be a reference index")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_hierarchy_is_read_from_the_query() {
        let s = SessionQuery::parse(
            &q(&[
                ("source", "matmul-blocked"),
                ("levels", "L1:1K:2:64:lru, L2:8K:4:64:fifo"),
                ("inclusion", "exclusive"),
            ]),
            "trace",
        )
        .unwrap();
        assert_eq!(s.source, "matmul-blocked");
        let config = s.config.unwrap();
        assert_eq!(config.levels.len(), 2);
        assert_eq!(config.levels[1].size, 8192);
        assert_eq!(config.levels[1].replacement, Replacement::Fifo);
        assert_eq!(config.inclusion, Inclusion::Exclusive);
        assert_eq!(
            session_key("x", None, &config),
            "x||exclusive|L1:1024:2:64:lru,L2:8192:4:64:fifo"
        );
    }

    #[test]
    fn bad_parameters_name_themselves() {
        let e = SessionQuery::parse(&q(&[("levels", "L1:1K:2")]), "t").unwrap_err();
        assert!(e.message.starts_with("levels: "), "{}", e.message);
        let e = SessionQuery::parse(&q(&[("levels", "L1:64K:128:64")]), "t").unwrap_err();
        assert!(e.message.contains("128 ways"), "{}", e.message);
        let e = SessionQuery::parse(&q(&[("levels", "L1:64M:8:64")]), "t").unwrap_err();
        assert!(e.message.contains("at most"), "{}", e.message);
        let e = SessionQuery::parse(&q(&[("n", "x")]), "t").unwrap_err();
        assert!(e.message.contains("`n=x`"));
        let e = SessionQuery::parse(&q(&[("levels", "L1:1K:2:64"), ("write", "maybe")]), "t")
            .unwrap_err();
        assert!(e.message.contains("write=maybe"));
        assert!(index(&q(&[("at", "-1")]), "at").is_err());
        assert_eq!(index(&q(&[("at", "12")]), "at").unwrap(), 12);
    }

    #[test]
    fn the_source_defaults() {
        let s = SessionQuery::parse(&q(&[]), "trace").unwrap();
        assert_eq!(s.source, "trace");
        assert_eq!(s.config, None);
    }

    #[test]
    fn temperature_window_and_weights_are_read_from_the_query() {
        let standard = parse_temperature(&q(&[]), 2).unwrap();
        assert_eq!(standard, TemperatureConfig::standard(2));
        let t = parse_temperature(&q(&[("twindow", "64"), ("tweights", "1:4")]), 2).unwrap();
        assert_eq!(t.window, 64);
        assert_eq!(
            t.weights[0],
            TemperatureWeights {
                hit: 1.0,
                miss: 4.0
            }
        );
        assert_eq!(t.weights[1], TemperatureConfig::standard(2).weights[1]);
        assert_ne!(temperature_key(&t), temperature_key(&standard));
        for bad in [
            ("twindow", "0"),
            ("twindow", "x"),
            ("tweights", "1"),
            ("tweights", "1:-2"),
            ("tweights", "1:1,1:1,1:1"),
        ] {
            assert!(parse_temperature(&q(&[bad]), 2).is_err(), "{bad:?}");
        }
    }
}
