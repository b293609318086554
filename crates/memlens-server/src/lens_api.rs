//! The plug-in point of the lenses: each one answers its own API under
//! `/TOKEN/api/<id>/…`, appears as a tab, and says which of its answers a report embeds.
//!
//! Every lens — heap evolution, cache, allocation map — implements [`LensApi`] in its
//! own module and is handed to [`Viewer::bind`](crate::Viewer::bind) or
//! [`report_html`](crate::report_html) in tab order; neither knows any lens by name.
//! The server does every check (method, host, token, URI length) before a request
//! reaches a lens, parses the query string, and runs [`LensApi::answer`] on a blocking
//! thread, so a lens may compute for a while (a re-simulation, a rasterized tile)
//! without stalling other requests. A report calls the same [`LensApi::answer`] for each
//! of the lens's [`LensApi::report_requests`] and embeds the answers under
//! [`ReportRequest::key`], which the page's embedded data source looks up.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::error::ApiError;
use crate::protocol::{LensWire, MetaWire, VERSION};
use crate::run_info::RunInfo;

/// One answer of a lens: its bytes and their media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiBody {
    /// The `Content-Type` header, e.g. `application/json; charset=utf-8`.
    pub content_type: &'static str,
    /// The body.
    pub bytes: Vec<u8>,
}

/// The media type of JSON answers.
pub const JSON: &str = "application/json; charset=utf-8";

impl ApiBody {
    /// A JSON document.
    pub fn json(text: String) -> ApiBody {
        ApiBody {
            content_type: JSON,
            bytes: text.into_bytes(),
        }
    }

    /// A PNG image.
    pub fn png(bytes: Vec<u8>) -> ApiBody {
        ApiBody {
            content_type: "image/png",
            bytes,
        }
    }

    /// Raw little-endian binary data the page decodes itself.
    pub fn binary(bytes: Vec<u8>) -> ApiBody {
        ApiBody {
            content_type: "application/octet-stream",
            bytes,
        }
    }

    /// Whether the body is a JSON document.
    pub fn is_json(&self) -> bool {
        self.content_type == JSON
    }
}

/// One request whose answer a report embeds: a route of the lens and its query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRequest {
    /// What follows `api/<id>/`, e.g. `tile`.
    pub route: String,
    /// The query parameters, exactly as the page sends them (the same text: `0.5`, not
    /// `.5`), since the page finds the answer by them.
    pub query: BTreeMap<String, String>,
}

impl ReportRequest {
    /// A request of `route` with `pairs` as its query.
    pub fn new<K: Into<String>, V: Into<String>>(
        route: &str,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> ReportRequest {
        ReportRequest {
            route: route.to_owned(),
            query: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The key of the answer in a report of lens `lens`: `<lens>/<route>`, then `?` and
    /// the query when it has parameters, sorted by name and written as
    /// `application/x-www-form-urlencoded` (what the page's `URLSearchParams` writes).
    pub fn key(&self, lens: &str) -> String {
        let mut key = format!("{lens}/{}", self.route);
        if !self.query.is_empty() {
            key.push('?');
            key.push_str(
                &form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(&self.query)
                    .finish(),
            );
        }
        key
    }

    /// The query as [`LensApi::answer`] takes it.
    pub fn query_map(&self) -> HashMap<String, String> {
        self.query
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// A lens's server side.
pub trait LensApi: Send + Sync + 'static {
    /// Its id (the first path segment after `api/`, and the page's lens registry
    /// key), tab title and the question it answers.
    fn descriptor(&self) -> LensWire;

    /// Answers `GET /TOKEN/api/<id>/<route>?<query>`: `route` is what follows
    /// `<id>/` (may be empty), `query` the decoded query parameters. Errors become
    /// `{"error": "…"}` with the error's status.
    fn answer(&self, route: &str, query: &HashMap<String, String>) -> Result<ApiBody, ApiError>;

    /// The requests whose answers a report embeds: what the lens's page asks for when
    /// it opens, at a bounded level of detail (the page falls back, or says in one
    /// sentence that `memlens view` answers the rest).
    fn report_requests(&self) -> Vec<ReportRequest>;
}

/// The viewer's `api/meta` document for `info` and `lenses` (in tab order).
pub(crate) fn viewer_meta<'a>(
    info: &'a RunInfo,
    lenses: &[Arc<dyn LensApi>],
    notes: Vec<String>,
) -> MetaWire<'a> {
    MetaWire {
        version: VERSION,
        program: &info.program,
        pid: info.pid,
        trace: &info.trace_name,
        lenses: lenses.iter().map(|l| l.descriptor()).collect(),
        notes,
        sampling: info.sampling.map(Into::into),
        mid_run: info.mid_run.as_deref(),
        live: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_keys_sort_and_encode_the_query() {
        let bare = ReportRequest::new::<&str, &str>("meta", []);
        assert_eq!(bare.key("heap"), "heap/meta");
        let tree = ReportRequest::new(
            "tree",
            [("sort", "growth"), ("by", "site,thread"), ("times", "")],
        );
        assert_eq!(
            tree.key("heap"),
            "heap/tree?by=site%2Cthread&sort=growth&times="
        );
        let levels = ReportRequest::new("batch", [("levels", "L1:1024:2:64:lru"), ("n", "a b")]);
        assert_eq!(
            levels.key("cache"),
            "cache/batch?levels=L1%3A1024%3A2%3A64%3Alru&n=a+b"
        );
    }
}
