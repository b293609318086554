//! What a report embeds of the cache lens: the default source under its default
//! hierarchy, as the page (`web/src/cache`) opens it, for a bounded prefix of the
//! references.
//!
//! The page first asks for the sources and the session by source (and size), then
//! names the session by its hierarchy (`levels`, `inclusion`) in every request; the
//! report embeds both spellings' answers. Batches cover the first
//! [`REPORT_REFERENCES`] references in pieces of [`REPORT_BATCH`], with the set
//! contents at each piece's start (where a jump lands) and the statistics at evenly
//! spaced positions (the panel shows the nearest earlier one). Other sources, sizes
//! and hierarchies need a simulation and are left to `memlens view`.

use std::collections::BTreeMap;

use super::{CacheLens, MAX_BATCH, source};
use crate::lens_api::ReportRequest;

/// The most references whose events a report holds: about 80 bytes each under a
/// two-level hierarchy (events and set orders), so some 10 MiB of base64 at most.
pub const REPORT_REFERENCES: usize = 100_000;

/// References per embedded batch.
pub const REPORT_BATCH: usize = 16_384;

/// Statistics embedded over the prefix (besides its start).
const STATS_POINTS: usize = 128;

/// The fewest references between two embedded statistics.
const STATS_MIN_STEP: usize = 64;

const _: () = assert!(REPORT_BATCH <= MAX_BATCH);

/// The report's requests of `lens`; none when its default session cannot be built.
pub(super) fn requests(lens: &CacheLens) -> Vec<ReportRequest> {
    let mut opening = BTreeMap::from([("source".to_owned(), lens.default_source.clone())]);
    if lens.default_source != super::TRACE_SOURCE
        && let Some(&(_, name, _, _)) = source::KERNELS.iter().find(|k| k.0 == lens.default_source)
    {
        let n = lens.default_n.unwrap_or(source::default_size(name));
        opening.insert("n".to_owned(), n.to_string());
    }
    let query = opening.clone().into_iter().collect();
    let Ok(built) = lens.session(&query) else {
        return Vec::new();
    };
    let doc = CacheLens::session_doc(&built);
    // The page's own spelling of the session (`levelsOf` in `lens.ts`).
    let levels: Vec<String> = doc
        .levels
        .iter()
        .map(|l| {
            format!(
                "{}:{}:{}:{}:{}",
                l.name, l.size, l.ways, l.line_size, l.policy
            )
        })
        .collect();
    let mut session = BTreeMap::from([
        ("source".to_owned(), doc.source.clone()),
        ("levels".to_owned(), levels.join(",")),
        ("inclusion".to_owned(), doc.inclusion.to_owned()),
    ]);
    if let Some(n) = doc.n {
        session.insert("n".to_owned(), n.to_string());
    }
    let request = |route: &str, extra: &[(&str, usize)]| {
        let mut query = session.clone();
        query.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        ReportRequest {
            route: route.to_owned(),
            query,
        }
    };

    let prefix = doc.references.min(REPORT_REFERENCES);
    let mut requests = vec![
        ReportRequest::new::<&str, &str>("sources", []),
        ReportRequest {
            route: "session".to_owned(),
            query: opening,
        },
        request("session", &[]),
    ];
    for start in (0..prefix.max(1)).step_by(REPORT_BATCH) {
        let count = REPORT_BATCH.min(prefix - start);
        if count > 0 {
            requests.push(request("batch", &[("start", start), ("count", count)]));
        }
        requests.push(request("state", &[("at", start)]));
    }
    let step = prefix.div_ceil(STATS_POINTS).max(STATS_MIN_STEP);
    let mut stats: Vec<usize> = (0..prefix).step_by(step).collect();
    stats.push(prefix);
    for at in stats {
        requests.push(request("stats", &[("at", at)]));
    }
    requests
}
