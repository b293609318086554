//! The plug-in point for lenses other than heap evolution: each one answers its own
//! API under `/TOKEN/api/<id>/…` and appears as a tab when the viewer has its data.
//!
//! The heap lens is built into the server (its engine thread and caches); the cache
//! and allocation-map lenses implement [`LensApi`] in their own modules and are handed
//! to [`Viewer::bind`](crate::Viewer::bind). The server does every check (method,
//! host, token, URI length) before a request reaches a lens, parses the query string,
//! and runs [`LensApi::answer`] on a blocking thread, so a lens may compute for a
//! while (a re-simulation, a rasterized tile) without stalling other requests.

use std::collections::HashMap;

use crate::error::ApiError;
use crate::protocol::LensWire;

/// One answer of a lens: its bytes and their media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiBody {
    /// The `Content-Type` header, e.g. `application/json; charset=utf-8`.
    pub content_type: &'static str,
    /// The body.
    pub bytes: Vec<u8>,
}

impl ApiBody {
    /// A JSON document.
    pub fn json(text: String) -> ApiBody {
        ApiBody {
            content_type: "application/json; charset=utf-8",
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
}
