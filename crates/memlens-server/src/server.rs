//! The HTTP side: binding, the routes under the token, and the checks every request
//! passes before it reaches a route.
//!
//! The checks are one middleware ([`guard`]) around every route and the fallback, in
//! this order: only `GET` and `HEAD` (405); a URI of at most [`MAX_URI_BYTES`] (414)
//! and no body (413); a `Host` header that names this machine (403, see
//! [`security`](crate::security)); the token as the first path segment (403). It also
//! gives every response its common headers. Under the token, `/` is the page,
//! `api/meta` the viewer's meta document, `api/live` how far a followed trace is read,
//! and `api/<id>/…` goes to the lens with that
//! id ([`LensApi`]) on a blocking thread; anything else is 404. Headers are bounded by
//! hyper's limits. Responses are never cached and never send a referrer, so the token
//! does not leak into other sites' logs.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;

use crate::assets::INDEX_HTML;
use crate::error::{ApiError, ServeError};
use crate::lens_api::{JSON, LensApi, viewer_meta};
use crate::live::LiveStatus;
use crate::protocol::{ErrorWire, to_json};
use crate::run_info::RunInfo;
use crate::security::{HostPolicy, generate_token, token_matches};

/// The longest query string the API reads, in bytes.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;

/// The longest request URI served, in bytes.
pub const MAX_URI_BYTES: usize = MAX_QUERY_BYTES + 1024;

/// The page's content security policy: nothing from outside, requests to us only.
const CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
    img-src data: blob:; font-src data:; connect-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct ViewerConfig {
    /// The address to listen on; loopback unless `allow_remote`.
    pub host: IpAddr,
    /// The port; 0 picks a free one.
    pub port: u16,
    /// The user's explicit consent to listen on a non-loopback address.
    pub allow_remote: bool,
}

struct AppState {
    token: String,
    hosts: HostPolicy,
    /// `api/meta`, serialized once.
    meta: String,
    lenses: Vec<Arc<dyn LensApi>>,
    /// A followed trace's state (`api/live`), when the viewer follows one.
    live: Option<Arc<LiveStatus>>,
}

/// A bound, not yet running viewer.
pub struct Viewer {
    runtime: tokio::runtime::Runtime,
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    url: String,
}

impl Viewer {
    /// Checks the address and binds it. `lenses` are the lenses with data in this
    /// trace, in tab order; each answers under `api/<its id>/`.
    pub fn bind(
        info: RunInfo,
        config: ViewerConfig,
        lenses: Vec<Arc<dyn LensApi>>,
    ) -> Result<Viewer, ServeError> {
        Viewer::bind_with(info, config, lenses, None)
    }

    /// As [`Viewer::bind`], for a trace still being written: `live` says how far it is
    /// read (`api/live`), and the lenses are replaced as it grows.
    pub fn bind_following(
        info: RunInfo,
        config: ViewerConfig,
        lenses: Vec<Arc<dyn LensApi>>,
        live: Arc<LiveStatus>,
    ) -> Result<Viewer, ServeError> {
        Viewer::bind_with(info, config, lenses, Some(live))
    }

    fn bind_with(
        info: RunInfo,
        config: ViewerConfig,
        lenses: Vec<Arc<dyn LensApi>>,
        live: Option<Arc<LiveStatus>>,
    ) -> Result<Viewer, ServeError> {
        if !config.host.is_loopback() && !config.allow_remote {
            return Err(ServeError::NonLoopback { host: config.host });
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("memlens-http")
            .enable_all()
            .build()
            .map_err(ServeError::Io)?;
        let address = SocketAddr::new(config.host, config.port);
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(address))
            .map_err(|source| ServeError::Bind {
                address: address.to_string(),
                source,
            })?;
        let local = listener.local_addr().map_err(ServeError::Io)?;
        let token =
            generate_token().map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))?;
        let shown = if local.ip().is_unspecified() {
            SocketAddr::new(IpAddr::from([127, 0, 0, 1]), local.port())
        } else {
            local
        };
        let url = format!("http://{shown}/{token}/");
        let mut meta = viewer_meta(&info, &lenses, Vec::new());
        meta.live = live.is_some();
        let meta = to_json(&meta);
        let state = Arc::new(AppState {
            token,
            hosts: HostPolicy { bound: local.ip() },
            meta,
            lenses,
            live,
        });
        Ok(Viewer {
            runtime,
            listener,
            state,
            url,
        })
    }

    /// The page's URL, token included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serves until Ctrl-C.
    pub fn run(self) -> Result<(), ServeError> {
        self.run_until(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }

    /// Serves until `shutdown` completes.
    pub fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let app = router(self.state);
        self.runtime
            .block_on(
                axum::serve(self.listener, app)
                    .with_graceful_shutdown(shutdown)
                    .into_future(),
            )
            .map_err(ServeError::Io)
    }
}

/// The routes under the token, every one (and the fallback) behind [`guard`].
fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/{token}", get(add_slash))
        .route("/{token}/", get(page))
        .route("/{token}/index.html", get(page))
        .route("/{token}/api/meta", get(meta))
        .route("/{token}/api/live", get(live))
        .route("/{token}/api/{lens}", get(lens_root))
        .route("/{token}/api/{lens}/{*route}", get(lens_route))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(Arc::clone(&state), guard))
        .with_state(state)
}

/// The checks every request passes, in order, then the common headers of every answer.
async fn guard(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let mut response = match refusal(&state, &request) {
        Some(refused) => refused,
        None => next.run(request).await,
    };
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// Why `request` is refused, if it is: the first check it fails.
fn refusal(state: &AppState, request: &Request) -> Option<Response> {
    let method = request.method();
    if method != Method::GET && method != Method::HEAD {
        let mut response = text(
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET and HEAD are served",
        );
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Some(response);
    }
    let uri = request.uri();
    let uri_len = uri.path().len() + uri.query().map_or(0, |q| q.len() + 1);
    if uri_len > MAX_URI_BYTES {
        return Some(text(
            StatusCode::URI_TOO_LONG,
            "the request URI is too long",
        ));
    }
    let headers = request.headers();
    let has_body = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0");
    if has_body {
        return Some(text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "requests must not have a body",
        ));
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| uri.authority().map(|a| a.as_str()))
        .unwrap_or("");
    if !state.hosts.allows(host) {
        return Some(text(
            StatusCode::FORBIDDEN,
            "this viewer only answers requests addressed to this machine (localhost)",
        ));
    }
    let path = uri.path().strip_prefix('/').unwrap_or("");
    let first = path.split('/').next().unwrap_or("");
    if !token_matches(first, &state.token) {
        return Some(text(
            StatusCode::FORBIDDEN,
            "this URL lacks the viewer's token: open the URL that `memlens view` printed",
        ));
    }
    None
}

/// `/TOKEN` → `/TOKEN/`, where the page's relative URLs resolve under the token.
async fn add_slash(State(state): State<Arc<AppState>>) -> Response {
    let mut response = text(StatusCode::PERMANENT_REDIRECT, "");
    if let Ok(location) = HeaderValue::from_str(&format!("/{}/", state.token)) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

async fn page() -> Response {
    let mut response = body(StatusCode::OK, "text/html; charset=utf-8", INDEX_HTML);
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

async fn meta(State(state): State<Arc<AppState>>) -> Response {
    body(StatusCode::OK, JSON, state.meta.clone())
}

/// `api/live`: how far a followed trace is read (404 when the viewer follows none).
async fn live(State(state): State<Arc<AppState>>) -> Response {
    match &state.live {
        Some(live) => body(StatusCode::OK, JSON, to_json(&live.wire())),
        None => text(
            StatusCode::NOT_FOUND,
            "this viewer follows no trace being written",
        ),
    }
}

async fn not_found() -> Response {
    text(StatusCode::NOT_FOUND, "no such page or API endpoint")
}

/// `api/<id>`: the lens's empty route.
async fn lens_root(
    State(state): State<Arc<AppState>>,
    Path((_, lens)): Path<(String, String)>,
    uri: Uri,
) -> Response {
    dispatch(&state, &lens, String::new(), &uri).await
}

/// `api/<id>/<route>`.
async fn lens_route(
    State(state): State<Arc<AppState>>,
    Path((_, lens, route)): Path<(String, String, String)>,
    uri: Uri,
) -> Response {
    dispatch(&state, &lens, route, &uri).await
}

/// Answers `route` of lens `id` on a blocking thread.
async fn dispatch(state: &AppState, id: &str, route: String, uri: &Uri) -> Response {
    let Some(lens) = state.lenses.iter().find(|l| l.descriptor().id == id) else {
        return not_found().await;
    };
    let query = match Query::<HashMap<String, String>>::try_from_uri(uri) {
        Ok(Query(q)) => q,
        Err(_) => {
            return error(ApiError::bad_request(
                "the query string is not valid `name=value&…` text",
            ));
        }
    };
    let lens = Arc::clone(lens);
    let answer = tokio::task::spawn_blocking(move || lens.answer(&route, &query)).await;
    match answer {
        Ok(Ok(answer)) => body(StatusCode::OK, answer.content_type, answer.bytes),
        Ok(Err(e)) => error(e),
        Err(_) => error(ApiError::internal("the lens stopped while answering")),
    }
}

fn body(status: StatusCode, content_type: &'static str, bytes: impl Into<Body>) -> Response {
    let mut response = Response::new(bytes.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn error(e: ApiError) -> Response {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    body(status, JSON, to_json(&ErrorWire { error: e.message }))
}

fn text(status: StatusCode, message: &'static str) -> Response {
    body(status, "text/plain; charset=utf-8", message)
}
