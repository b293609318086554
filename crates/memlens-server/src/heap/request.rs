//! The heap lens's requests: typed, validated and bounded, parsed from a query string.
//!
//! Every list has a maximum length and every string a maximum size, so a request cannot
//! make the engine do unbounded work or hold unbounded memory. Parsing does not need
//! the model; the engine checks times against the run and names against the registry.

use std::collections::HashMap;

use memlens_heap::{Metric, SortStrategy, TimeWindow};

use crate::error::ApiError;

/// The most classifiers in one list.
pub const MAX_CLASSIFIERS: usize = 8;
/// The most times one tree request may ask for.
pub const MAX_TIMES: usize = 64;
/// The most keys in a drill-down path.
pub const MAX_PATH_KEYS: usize = 64;
/// The most timeline buckets one request may ask for.
pub const MAX_TIMELINE_POINTS: usize = 4096;
/// The most suspects one growth request may ask for.
pub const MAX_SUSPECTS: usize = 200;

/// A classifier list as the user wrote it, e.g. `site,thread`, with its options.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClassifierList {
    /// The names, outermost level first.
    pub names: Vec<String>,
    /// Function-name prefixes for `closest-domain-site`.
    pub domains: Vec<String>,
}

impl ClassifierList {
    /// Parses a comma list; names are checked against the registry later.
    pub fn parse(list: &str, domains: Vec<String>) -> Result<Self, ApiError> {
        let names: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect();
        if names.is_empty() {
            return Err(ApiError::bad_request("`by` names no classifier"));
        }
        if names.len() > MAX_CLASSIFIERS {
            return Err(ApiError::bad_request(format!(
                "`by` names {} classifiers; at most {MAX_CLASSIFIERS} are allowed",
                names.len()
            )));
        }
        Ok(ClassifierList { names, domains })
    }

    /// The canonical text, `site,thread`, used as a cache key and in responses.
    pub fn text(&self) -> String {
        self.names.join(",")
    }
}

/// A time window the user brushed on the timeline (`from` and `to`, ns): growth, the
/// stable order and the snapshot times are measured within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Window {
    /// First instant.
    pub from_ns: u64,
    /// Last instant, after `from_ns`.
    pub to_ns: u64,
}

impl Window {
    /// As the heap engine's window.
    pub fn time_window(self) -> TimeWindow {
        TimeWindow {
            start_ns: self.from_ns,
            end_ns: self.to_ns,
        }
    }

    /// `from`/`to` (both or neither); `from` before `to`.
    fn parse(query: &Query) -> Result<Option<Window>, ApiError> {
        match (number::<u64>(query, "from")?, number::<u64>(query, "to")?) {
            (None, None) => Ok(None),
            (Some(from_ns), Some(to_ns)) if from_ns < to_ns => Ok(Some(Window { from_ns, to_ns })),
            (Some(from), Some(to)) => Err(ApiError::bad_request(format!(
                "`from={from}` is not before `to={to}`: a window needs a start before its end"
            ))),
            _ => Err(ApiError::bad_request(
                "a window needs both `from` and `to` (ns since the process start)",
            )),
        }
    }
}

/// `GET api/heap/snapshots`: the snapshot times within a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotsRequest {
    /// The window; `None` is the whole run (as `meta` lists).
    pub window: Option<Window>,
}

impl SnapshotsRequest {
    /// Parses `from` and `to`.
    pub fn from_query(query: &Query) -> Result<Self, ApiError> {
        Ok(SnapshotsRequest {
            window: Window::parse(query)?,
        })
    }
}

/// `GET api/heap/tree`: memory trees at some times.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeRequest {
    /// The grouping.
    pub by: ClassifierList,
    /// The times to return trees for; empty means every time of the series.
    pub times: Vec<u64>,
    /// What sizes mean for sorting and pruning.
    pub metric: Metric,
    /// The stable sibling order.
    pub sort: SortStrategy,
    /// Whether to merge small siblings into `Other` (the paper's 90 %, at most 9).
    pub prune: bool,
    /// The drill-down path: when given, each tree's root is the node at this full key,
    /// or its closest ancestor that exists and is not empty.
    pub path: Option<Vec<String>>,
    /// Levels below the (drill-down) root to return; `None` returns all.
    pub depth: Option<usize>,
    /// The window whose snapshot times, growth and order the trees show; `None` is the
    /// whole run. Every time asked for must lie inside it.
    pub window: Option<Window>,
}

/// `GET api/heap/growth`: leak suspects.
#[derive(Debug, Clone, PartialEq)]
pub struct GrowthRequest {
    /// The grouping.
    pub by: ClassifierList,
    /// How many suspects to return.
    pub top: usize,
    /// The window growth is measured over; `None` is the whole run.
    pub window: Option<Window>,
}

/// The most stacks one stacks request may ask for.
pub const MAX_STACKS: usize = 20;
/// Frames returned per stack.
pub const STACK_FRAMES: usize = 64;

/// `GET api/heap/stacks`: the call stacks behind one node at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct StacksRequest {
    /// The grouping.
    pub by: ClassifierList,
    /// The node's full key.
    pub path: Vec<String>,
    /// The instant, ns since the process started.
    pub time_ns: u64,
    /// How many stacks to return.
    pub top: usize,
}

/// `GET api/heap/timeline`: the heap over the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimelineRequest {
    /// The number of buckets.
    pub points: usize,
}

/// A parsed query string: `name → value`, each name at most once.
pub type Query = HashMap<String, String>;

fn domains(query: &Query) -> Vec<String> {
    query
        .get("domain")
        .map(|d| {
            d.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn classifier_list(query: &Query, default: &str) -> Result<ClassifierList, ApiError> {
    let by = query.get("by").map_or(default, String::as_str);
    ClassifierList::parse(by, domains(query))
}

fn number<T: std::str::FromStr>(query: &Query, name: &str) -> Result<Option<T>, ApiError> {
    query
        .get(name)
        .map(|v| {
            v.trim().parse::<T>().map_err(|_| {
                ApiError::bad_request(format!("`{name}={v}` is not a non-negative integer"))
            })
        })
        .transpose()
}

impl TreeRequest {
    /// Parses `by`, `times`, `metric`, `sort`, `prune`, `path` (a JSON array of keys),
    /// `depth`, `from` and `to`.
    pub fn from_query(query: &Query, default_by: &str) -> Result<Self, ApiError> {
        let by = classifier_list(query, default_by)?;
        let times = match query.get("times").map(|t| t.trim()) {
            None | Some("") => Vec::new(),
            Some(list) => list
                .split(',')
                .map(|t| {
                    t.trim().parse::<u64>().map_err(|_| {
                        ApiError::bad_request(format!(
                            "`times` holds `{t}`, which is not a time in nanoseconds"
                        ))
                    })
                })
                .collect::<Result<Vec<u64>, ApiError>>()?,
        };
        if times.len() > MAX_TIMES {
            return Err(ApiError::bad_request(format!(
                "`times` lists {} times; at most {MAX_TIMES} are allowed",
                times.len()
            )));
        }
        let metric = match query.get("metric") {
            None => Metric::Bytes,
            Some(m) => Metric::from_name(m).ok_or_else(|| {
                ApiError::bad_request(format!("`metric={m}` is not `bytes` or `objects`"))
            })?,
        };
        let sort = match query.get("sort") {
            None => SortStrategy::AbsoluteGrowth,
            Some(s) => SortStrategy::from_name(s).ok_or_else(|| {
                ApiError::bad_request(format!("`sort={s}` is not `growth`, `start` or `end`"))
            })?,
        };
        let prune = match query.get("prune").map(String::as_str) {
            None | Some("1") | Some("true") => true,
            Some("0") | Some("false") => false,
            Some(p) => {
                return Err(ApiError::bad_request(format!(
                    "`prune={p}` is not `true` or `false`"
                )));
            }
        };
        let path = query.get("path").map(|json| path_keys(json)).transpose()?;
        Ok(TreeRequest {
            by,
            times,
            metric,
            sort,
            prune,
            path,
            depth: number(query, "depth")?,
            window: Window::parse(query)?,
        })
    }
}

impl StacksRequest {
    /// Parses `by`, `path` (a JSON array of keys), `time` (ns) and `top` (default 3).
    pub fn from_query(query: &Query, default_by: &str) -> Result<Self, ApiError> {
        let path = match query.get("path") {
            None => Vec::new(),
            Some(json) => path_keys(json)?,
        };
        let time_ns = number(query, "time")?.ok_or_else(|| {
            ApiError::bad_request("`time` (ns since the process start) is missing")
        })?;
        let top: usize = number(query, "top")?.unwrap_or(3);
        if top == 0 || top > MAX_STACKS {
            return Err(ApiError::bad_request(format!(
                "`top={top}` is not between 1 and {MAX_STACKS}"
            )));
        }
        Ok(StacksRequest {
            by: classifier_list(query, default_by)?,
            path,
            time_ns,
            top,
        })
    }
}

/// A drill-down path: a JSON array of at most [`MAX_PATH_KEYS`] key strings.
fn path_keys(json: &str) -> Result<Vec<String>, ApiError> {
    let keys: Vec<String> = serde_json::from_str(json)
        .map_err(|_| ApiError::bad_request("`path` is not a JSON array of key strings"))?;
    if keys.len() > MAX_PATH_KEYS {
        return Err(ApiError::bad_request(format!(
            "`path` has {} keys; at most {MAX_PATH_KEYS} are allowed",
            keys.len()
        )));
    }
    Ok(keys)
}

impl GrowthRequest {
    /// Parses `by`, `top` (default 20), `from` and `to`.
    pub fn from_query(query: &Query, default_by: &str) -> Result<Self, ApiError> {
        let top = number(query, "top")?.unwrap_or(20usize);
        if top == 0 || top > MAX_SUSPECTS {
            return Err(ApiError::bad_request(format!(
                "`top={top}` must be between 1 and {MAX_SUSPECTS}"
            )));
        }
        Ok(GrowthRequest {
            by: classifier_list(query, default_by)?,
            top,
            window: Window::parse(query)?,
        })
    }
}

impl TimelineRequest {
    /// Parses `points` (default 600).
    pub fn from_query(query: &Query) -> Result<Self, ApiError> {
        let points = number(query, "points")?.unwrap_or(600usize);
        if points == 0 || points > MAX_TIMELINE_POINTS {
            return Err(ApiError::bad_request(format!(
                "`points={points}` must be between 1 and {MAX_TIMELINE_POINTS}"
            )));
        }
        Ok(TimelineRequest { points })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> Query {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn tree_request_defaults_and_fields() {
        let r = TreeRequest::from_query(&query(&[]), "site,thread").unwrap();
        assert_eq!(r.by.names, vec!["site", "thread"]);
        assert!(r.times.is_empty() && r.prune && r.path.is_none());
        let r = TreeRequest::from_query(
            &query(&[
                ("by", "thread, site"),
                ("times", "5,10"),
                ("metric", "objects"),
                ("sort", "end"),
                ("path", r#"["a, b","c"]"#),
                ("depth", "2"),
                ("prune", "false"),
            ]),
            "site",
        )
        .unwrap();
        assert_eq!(r.by.text(), "thread,site");
        assert_eq!(r.times, vec![5, 10]);
        assert_eq!((r.metric, r.sort), (Metric::Objects, SortStrategy::EndSize));
        assert_eq!(r.path, Some(vec!["a, b".to_owned(), "c".to_owned()]));
        assert_eq!((r.depth, r.prune), (Some(2), false));
    }

    #[test]
    fn bad_values_are_one_sentence_errors() {
        for (k, v) in [
            ("times", "x"),
            ("metric", "size"),
            ("sort", "largest"),
            ("path", "[1"),
            ("depth", "-1"),
            ("by", " , "),
        ] {
            let e = TreeRequest::from_query(&query(&[(k, v)]), "site").unwrap_err();
            assert_eq!(e.status, 400, "{k}={v}");
            assert!(e.message.contains(k), "{k}: {}", e.message);
        }
        let many = vec!["1"; MAX_TIMES + 1].join(",");
        assert!(TreeRequest::from_query(&query(&[("times", &many)]), "site").is_err());
        assert!(GrowthRequest::from_query(&query(&[("top", "0")]), "site").is_err());
        assert!(TimelineRequest::from_query(&query(&[("points", "100000")])).is_err());
    }

    #[test]
    fn windows_need_both_ends_in_order() {
        let r = GrowthRequest::from_query(&query(&[("from", "10"), ("to", "20")]), "site").unwrap();
        assert_eq!(
            r.window,
            Some(Window {
                from_ns: 10,
                to_ns: 20
            })
        );
        assert_eq!(
            TreeRequest::from_query(&query(&[]), "site").unwrap().window,
            None
        );
        for pairs in [
            &[("from", "10")][..],
            &[("from", "20"), ("to", "10")],
            &[("to", "x")],
        ] {
            let e = TreeRequest::from_query(&query(pairs), "site").unwrap_err();
            assert_eq!(e.status, 400, "{pairs:?}");
        }
        let e = SnapshotsRequest::from_query(&query(&[("from", "5"), ("to", "5")])).unwrap_err();
        assert!(e.message.contains("before"), "{}", e.message);
    }
}
