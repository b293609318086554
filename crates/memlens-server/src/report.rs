//! The self-contained report: the web app with the data it would have asked the
//! server for written into the page, so it works from `file://` with no server.
//!
//! The data goes into a `<script type="application/json">` element. JSON cannot end
//! that element early once every `<` is written as `\u003c`, which is still the same
//! JSON text to `JSON.parse`.

use crate::assets::{DATA_ELEMENT, INDEX_HTML, WEB_APP_BUILT};

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

/// The report page with `document` (a JSON document, see
/// [`Engine::report_document`](crate::Engine::report_document)) embedded.
pub fn report_html(document: &str) -> Result<String, ReportError> {
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
            assert_eq!(report_html(document), Err(ReportError::NoWebApp));
            return;
        }
        let html = report_html(document).unwrap();
        assert!(!html.contains("alert(1)</script>"));
        assert!(html.contains(r#"\u003c/script>\u003cscript>alert(1)"#));
        assert_eq!(html.matches("id=\"memlens-data\"").count(), 1);
    }
}
