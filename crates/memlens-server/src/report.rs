//! The self-contained report: the web app with the answers its lenses would have asked
//! the server for written into the page, so it works from `file://` with no server.
//!
//! Every lens says which answers its page needs at a bounded level of detail
//! ([`LensApi::report_requests`]); the report asks the lens for each, exactly as the
//! server would, and embeds them under their keys ([`ReportRequest::key`]) next to the
//! viewer's meta document ([`ReportWire`]). JSON answers go in as they are, images and
//! binary columns in base64. An answer a lens cannot give becomes a note on the page.
//!
//! The data goes into a `<script type="application/json">` element. JSON cannot end
//! that element early once every `<` is written as `\u003c`, which is still the same
//! JSON text to `JSON.parse`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::value::RawValue;

use crate::assets::{DATA_ELEMENT, INDEX_HTML, WEB_APP_BUILT};
use crate::lens_api::{ApiBody, LensApi, ReportRequest, viewer_meta};
use crate::protocol::{EmbeddedAnswerWire, ReportWire, to_json};
use crate::run_info::RunInfo;

/// Why a report could not be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportError {
    /// This binary was built without the web app.
    NoWebApp,
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::NoWebApp => f.write_str(
                "this memlens was built without its web app (npm was missing at build time): \
                 install Node.js and npm, then run `cargo build --release` again",
            ),
        }
    }
}

impl std::error::Error for ReportError {}

/// The report page of the run `info` with the answers of `lenses` (in tab order)
/// embedded.
pub fn report_html(info: &RunInfo, lenses: &[Arc<dyn LensApi>]) -> Result<String, ReportError> {
    if !WEB_APP_BUILT || !INDEX_HTML.contains(DATA_ELEMENT) {
        return Err(ReportError::NoWebApp);
    }
    embed(&to_json(&report_document(info, lenses)))
}

/// The data of the report: the viewer's meta and every lens's embedded answers.
pub fn report_document<'a>(info: &'a RunInfo, lenses: &[Arc<dyn LensApi>]) -> ReportWire<'a> {
    let mut answers = BTreeMap::new();
    let mut notes = Vec::new();
    for lens in lenses {
        let descriptor = lens.descriptor();
        for request in lens.report_requests() {
            let key = request.key(descriptor.id);
            match embedded_answer(lens.as_ref(), &request) {
                Ok(answer) => {
                    answers.insert(key, answer);
                }
                Err(reason) => notes.push(format!(
                    "This report lacks an answer of the {} lens ({key}): {reason}.",
                    descriptor.title
                )),
            }
        }
    }
    ReportWire {
        meta: viewer_meta(info, lenses, notes),
        answers,
    }
}

/// The lens's answer to `request`, ready to embed.
fn embedded_answer(
    lens: &dyn LensApi,
    request: &ReportRequest,
) -> Result<EmbeddedAnswerWire, String> {
    let body = lens
        .answer(&request.route, &request.query_map())
        .map_err(|e| e.message)?;
    let is_json = body.is_json();
    let ApiBody {
        content_type,
        bytes,
    } = body;
    if is_json {
        let text = String::from_utf8(bytes).map_err(|e| e.to_string())?;
        let json = RawValue::from_string(text).map_err(|e| e.to_string())?;
        return Ok(EmbeddedAnswerWire {
            content_type,
            json: Some(json),
            base64: None,
        });
    }
    Ok(EmbeddedAnswerWire {
        content_type,
        json: None,
        base64: Some(data_encoding::BASE64.encode(&bytes)),
    })
}

/// The page with `document` (JSON) in its data element.
fn embed(document: &str) -> Result<String, ReportError> {
    if !WEB_APP_BUILT || !INDEX_HTML.contains(DATA_ELEMENT) {
        return Err(ReportError::NoWebApp);
    }
    let data = document.replace('<', "\\u003c");
    let element = format!(r#"<script id="memlens-data" type="application/json">{data}</script>"#);
    Ok(INDEX_HTML.replacen(DATA_ELEMENT, &element, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_close_the_script_element() {
        let document = r#"{"key":"</script><script>alert(1)</script>"}"#;
        if !WEB_APP_BUILT {
            assert_eq!(embed(document), Err(ReportError::NoWebApp));
            return;
        }
        let html = embed(document).unwrap();
        assert!(!html.contains("alert(1)</script>"));
        assert!(html.contains(r#"\u003c/script>\u003cscript>alert(1)"#));
        assert_eq!(html.matches("id=\"memlens-data\"").count(), 1);
    }
}
