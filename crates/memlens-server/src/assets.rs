//! The web app, embedded in the binary: one self-contained `index.html` (scripts and
//! styles inlined) that `build.rs` builds from `web/` with Vite, or a one-sentence page
//! saying how to get it when npm was not available at build time.
//!
//! The same page serves the live viewer and, with data injected, the report.

/// The page.
pub const INDEX_HTML: &str = include_str!(concat!(env!("OUT_DIR"), "/web/index.html"));

/// Whether [`INDEX_HTML`] is the real web app (not the placeholder page).
pub const WEB_APP_BUILT: bool = matches!(env!("MEMLENS_WEB_APP").as_bytes(), b"built");

/// The element in [`INDEX_HTML`] that a report fills with its data.
pub const DATA_ELEMENT: &str = r#"<script id="memlens-data" type="application/json">null</script>"#;
