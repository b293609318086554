//! The HTTP side: binding, the routes under the token, and the checks every request
//! passes before it reaches a route.
//!
//! Every request goes through one handler, in this order: only `GET` and `HEAD`
//! (405); a URI of at most [`MAX_URI_BYTES`] (414) and no body (413); a `Host` header
//! that names this machine (403, see [`security`](crate::security)); the token as the
//! first path segment (403). Under the token, `/` is the page and `api/meta`,
//! `api/timeline`, `api/tree` and `api/growth` are the heap lens's API, and
//! `api/<id>/…` goes to the other lens with that id ([`LensApi`]); anything else is 404.
//! Headers are bounded by hyper's limits. Responses are never cached and never send a
//! referrer, so the token does not leak into other sites' logs.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use memlens_heap::HeapModel;

use crate::assets::INDEX_HTML;
use crate::engine::EngineOptions;
use crate::error::{ApiError, ServeError};
use crate::lens_api::LensApi;
use crate::request::{
    ClassifierList, GrowthRequest, MAX_QUERY_BYTES, TimelineRequest, TreeRequest,
};
use crate::run_info::RunInfo;
use crate::security::{HostPolicy, generate_token, token_matches};
use crate::worker::EngineHandle;

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
    /// The engine's defaults.
    pub engine: EngineOptions,
}

struct AppState {
    token: String,
    hosts: HostPolicy,
    engine: EngineHandle,
    meta: String,
    default_by: String,
    lenses: Vec<Arc<dyn LensApi>>,
}

/// A bound, not yet running viewer.
pub struct Viewer {
    runtime: tokio::runtime::Runtime,
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    url: String,
}

impl Viewer {
    /// Checks the address, binds it, starts the engine and warms its caches in the
    /// background. The model lives as long as the process. `lenses` are the other
    /// lenses with data in this trace, in tab order after heap evolution.
    pub fn bind(
        model: &'static HeapModel,
        info: RunInfo,
        mut config: ViewerConfig,
        lenses: Vec<Arc<dyn LensApi>>,
    ) -> Result<Viewer, ServeError> {
        config.engine.other_lenses = lenses.iter().map(|l| l.descriptor()).collect();
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
        let default_by = config.engine.default_classifiers.clone();
        let engine = EngineHandle::spawn(model, info, config.engine)
            .map_err(|e| ServeError::Io(std::io::Error::other(e.message)))?;
        let meta = runtime
            .block_on(engine.call(|e| e.meta().to_owned()))
            .map_err(|e| ServeError::Io(std::io::Error::other(e.message)))?;
        let warm_by = default_by.clone();
        engine.submit(move |e| {
            // Build what the page asks for first, while the browser starts.
            let Ok(by) = ClassifierList::parse(&warm_by, Vec::new()) else {
                return;
            };
            let _ = e.timeline(TimelineRequest { points: 600 });
            let _ = e.tree(&TreeRequest {
                by: by.clone(),
                times: Vec::new(),
                metric: memlens_heap::Metric::Bytes,
                sort: memlens_heap::SortStrategy::AbsoluteGrowth,
                prune: true,
                path: None,
                depth: None,
            });
            let _ = e.growth(&GrowthRequest { by, top: 20 });
        });
        let token =
            generate_token().map_err(|e| ServeError::Io(std::io::Error::other(e.to_string())))?;
        let shown = if local.ip().is_unspecified() {
            SocketAddr::new(IpAddr::from([127, 0, 0, 1]), local.port())
        } else {
            local
        };
        let url = format!("http://{shown}/{token}/");
        let state = Arc::new(AppState {
            token,
            hosts: HostPolicy { bound: local.ip() },
            engine,
            meta,
            default_by,
            lenses,
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
        let app = Router::new().fallback(handle).with_state(self.state);
        self.runtime
            .block_on(
                axum::serve(self.listener, app)
                    .with_graceful_shutdown(shutdown)
                    .into_future(),
            )
            .map_err(ServeError::Io)
    }
}

async fn handle(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let method = request.method().clone();
    if method != Method::GET && method != Method::HEAD {
        let mut response = text(
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET and HEAD are served",
        );
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let uri = request.uri().clone();
    let uri_len = uri.path().len() + uri.query().map_or(0, |q| q.len() + 1);
    if uri_len > MAX_URI_BYTES {
        return text(StatusCode::URI_TOO_LONG, "the request URI is too long");
    }
    let headers = request.headers();
    let has_body = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0");
    if has_body {
        return text(
            StatusCode::PAYLOAD_TOO_LARGE,
            "requests must not have a body",
        );
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| uri.authority().map(|a| a.as_str()))
        .unwrap_or("");
    if !state.hosts.allows(host) {
        return text(
            StatusCode::FORBIDDEN,
            "this viewer only answers requests addressed to this machine (localhost)",
        );
    }
    let path = uri.path().strip_prefix('/').unwrap_or("");
    let (first, rest) = match path.find('/') {
        Some(i) => (&path[..i], Some(&path[i..])),
        None => (path, None),
    };
    if !token_matches(first, &state.token) {
        return text(
            StatusCode::FORBIDDEN,
            "this URL lacks the viewer's token: open the URL that `memlens view` printed",
        );
    }
    let Some(route) = rest else {
        let mut response = text(StatusCode::PERMANENT_REDIRECT, "");
        if let Ok(location) = HeaderValue::from_str(&format!("/{}/", state.token)) {
            response.headers_mut().insert(header::LOCATION, location);
        }
        return response;
    };
    match route {
        "/" | "/index.html" => page(),
        "/api/meta" => json(StatusCode::OK, state.meta.clone()),
        "/api/timeline" | "/api/tree" | "/api/growth" => api(&state, route, &uri).await,
        _ => match lens_route(&state, route) {
            Some((lens, rest)) => lens_api(lens, rest.to_owned(), &uri).await,
            None => text(StatusCode::NOT_FOUND, "no such page or API endpoint"),
        },
    }
}

/// The lens that answers `route` (`/api/<id>` or `/api/<id>/<rest>`) and its `rest`.
fn lens_route<'r>(state: &AppState, route: &'r str) -> Option<(Arc<dyn LensApi>, &'r str)> {
    let tail = route.strip_prefix("/api/")?;
    let (id, rest) = tail.split_once('/').unwrap_or((tail, ""));
    let lens = state.lenses.iter().find(|l| l.descriptor().id == id)?;
    Some((Arc::clone(lens), rest))
}

async fn lens_api(lens: Arc<dyn LensApi>, rest: String, uri: &axum::http::Uri) -> Response {
    let query = match Query::<HashMap<String, String>>::try_from_uri(uri) {
        Ok(Query(q)) => q,
        Err(_) => {
            return error(ApiError::bad_request(
                "the query string is not valid `name=value&…` text",
            ));
        }
    };
    let answer = tokio::task::spawn_blocking(move || lens.answer(&rest, &query)).await;
    match answer {
        Ok(Ok(body)) => {
            with_common_headers(Response::new(Body::from(body.bytes)), body.content_type)
        }
        Ok(Err(e)) => error(e),
        Err(_) => error(ApiError::internal("the lens stopped while answering")),
    }
}

async fn api(state: &AppState, route: &str, uri: &axum::http::Uri) -> Response {
    let query = match Query::<HashMap<String, String>>::try_from_uri(uri) {
        Ok(Query(q)) => q,
        Err(_) => {
            return error(ApiError::bad_request(
                "the query string is not valid `name=value&…` text",
            ));
        }
    };
    let default_by = state.default_by.as_str();
    let answer = match route {
        "/api/timeline" => match TimelineRequest::from_query(&query) {
            Ok(r) => state.engine.call(move |e| e.timeline(r)).await,
            Err(e) => Err(e),
        },
        "/api/tree" => match TreeRequest::from_query(&query, default_by) {
            Ok(r) => {
                let answer = state.engine.call(move |e| e.tree(&r)).await;
                // After the answer: get ready for the next step.
                state.engine.submit(|e| {
                    let _ = e.maintain();
                });
                answer
            }
            Err(e) => Err(e),
        },
        _ => match GrowthRequest::from_query(&query, default_by) {
            Ok(r) => state.engine.call(move |e| e.growth(&r)).await,
            Err(e) => Err(e),
        },
    };
    match answer.and_then(|inner| inner) {
        Ok(body) => json(StatusCode::OK, body),
        Err(e) => error(e),
    }
}

fn with_common_headers(mut response: Response, content_type: &'static str) -> Response {
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
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

fn page() -> Response {
    let mut response = with_common_headers(
        Response::new(Body::from(INDEX_HTML)),
        "text/html; charset=utf-8",
    );
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

fn json(status: StatusCode, body: String) -> Response {
    let mut response = with_common_headers(
        Response::new(Body::from(body)),
        "application/json; charset=utf-8",
    );
    *response.status_mut() = status;
    response
}

fn error(e: ApiError) -> Response {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json(
        status,
        crate::protocol::to_json(&HashMap::from([("error", e.message)])),
    )
}

fn text(status: StatusCode, message: &'static str) -> Response {
    let mut response = with_common_headers(
        Response::new(Body::from(message)),
        "text/plain; charset=utf-8",
    );
    *response.status_mut() = status;
    response
}
