//! MCP over streamable HTTP, for one Signpost shared by many agents.
//!
//! rmcp's `StreamableHttpService` does the protocol; this module adds what an
//! operator needs around it:
//! - one [`Session`] (and so one history) per MCP session, a bounded number
//!   of them, idle sessions expired;
//! - DNS-rebinding defences: `Host` must be an allowed host (loopback by
//!   default) and a present `Origin` must be an allowed origin (loopback
//!   origins by default);
//! - an optional bearer token, compared in constant time, on every MCP
//!   request (the health endpoint excepted);
//! - a request body limit; `GET /healthz` for load balancers; `GET /metrics`
//!   for Prometheus (behind the token too, when one is set);
//! - graceful shutdown: stop accepting, let in-flight tool calls finish,
//!   then close the sessions.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use crate::server::Handler;
use crate::service::Signpost;

/// The MCP endpoint path.
pub const MCP_PATH: &str = "/mcp";
/// The health endpoint path.
pub const HEALTH_PATH: &str = "/healthz";
/// The Prometheus endpoint path.
pub const METRICS_PATH: &str = "/metrics";
/// Promotes the canary (POST).
pub const CANARY_PROMOTE_PATH: &str = "/admin/canary/promote";
/// Drops the canary (POST).
pub const CANARY_DROP_PATH: &str = "/admin/canary/drop";
/// The content type of the OpenMetrics text `prometheus-client` writes.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// How long answers of drained calls get to reach their clients before the
/// sessions are closed.
const RESPONSE_GRACE: Duration = Duration::from_millis(250);
/// Longest wait for in-flight tool calls at shutdown.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(30);
/// How long a request's body may take to arrive: a client that stops half
/// way holds its connection no longer.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connections may stay open once the drain is over (a client
/// that never finished its request) before the server exits anyway.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// How the HTTP server runs.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// A bearer token every MCP request must carry, if set.
    pub token: Option<String>,
    /// Extra allowed `Host` values (loopback names are always allowed).
    pub allowed_hosts: Vec<String>,
    /// Extra allowed `Origin` values (loopback origins are always allowed).
    pub allowed_origins: Vec<String>,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Most concurrent MCP sessions.
    pub max_sessions: usize,
    /// Sessions idle this long are closed.
    pub session_idle: Duration,
    /// A connection whose request headers are not all read within this
    /// is closed (a client that stops half-way holds nothing).
    pub header_timeout: Duration,
}

#[derive(Clone)]
struct Guard {
    hosts: Arc<Vec<String>>,
    max_body_bytes: usize,
    token_digest: Option<[u8; 32]>,
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    /// `initialize` requests let through whose session may not exist yet:
    /// counted against the cap with the sessions, so concurrent requests
    /// cannot open more than it allows.
    opening: Arc<std::sync::atomic::AtomicUsize>,
    signpost: Arc<Signpost>,
}

/// A place under the session cap held by one `initialize` until its
/// request is answered (its session then counts itself).
struct Opening(Arc<std::sync::atomic::AtomicUsize>);

impl Opening {
    /// Holds a place; with how many others were held before it.
    fn hold(opening: &Arc<std::sync::atomic::AtomicUsize>) -> (Opening, usize) {
        let before = opening.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        (Opening(opening.clone()), before)
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Loopback names and the operator's `--allowed-host` values.
fn allowed_hosts(extra: &[String]) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"].iter().map(|s| (*s).to_owned()).collect();
    hosts.extend(extra.iter().cloned());
    hosts
}

/// Whether the request's `Host` (with or without its port) is allowed: the
/// DNS-rebinding defence rmcp applies to `/mcp`, for the other endpoints.
fn host_allowed(headers: &axum::http::HeaderMap, hosts: &[String]) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else { return false };
    let bare = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !name.ends_with(':') => name,
        _ => host,
    };
    hosts.iter().any(|h| h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(bare))
}

fn digest(s: &[u8]) -> [u8; 32] {
    Sha256::digest(s).into()
}

/// Builds the router: `/mcp` (MCP) and `/healthz`.
pub fn router(signpost: Arc<Signpost>, opts: &HttpOptions, cancel: CancellationToken) -> Router {
    let hosts = allowed_hosts(&opts.allowed_hosts);
    let mut origins: Vec<String> =
        ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"].iter().map(|s| (*s).to_owned()).collect();
    origins.extend(opts.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(opts.max_body_bytes)
        .with_cancellation_token(cancel);
    let mut session_config = SessionConfig::default();
    session_config.keep_alive = Some(opts.session_idle);
    let mut manager = LocalSessionManager::default();
    manager.session_config = session_config;
    let sessions = Arc::new(manager);
    let factory = {
        let signpost = signpost.clone();
        move || Ok(Handler::new(signpost.clone()))
    };
    let mcp = StreamableHttpService::new(factory, sessions.clone(), config);
    let guard = Guard {
        hosts: Arc::new(hosts),
        max_body_bytes: opts.max_body_bytes,
        token_digest: opts.token.as_deref().map(|t| digest(t.as_bytes())),
        sessions,
        max_sessions: opts.max_sessions,
        opening: Arc::default(),
        signpost,
    };
    Router::new()
        .route(HEALTH_PATH, axum::routing::get(health))
        .route(METRICS_PATH, axum::routing::get(metrics))
        .route(CANARY_PROMOTE_PATH, axum::routing::post(promote_canary))
        .route(CANARY_DROP_PATH, axum::routing::post(drop_canary))
        // The one path: `/mcp/…` is not another door past the checks
        // below (the session cap, the JSON-RPC parse) onto the same service.
        .route_service(MCP_PATH, mcp)
        .layer(middleware::from_fn_with_state(guard.clone(), check))
        .with_state(guard)
}

async fn health(State(guard): State<Guard>) -> Response {
    let policy = guard.signpost.policy();
    let sessions = guard.sessions.sessions.read().await.len();
    let body = json!({
        "status": "ok",
        "policy": {"name": policy.identity().name, "version": policy.identity().version},
        "sessions": sessions,
        "in_flight": guard.signpost.in_flight(),
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}

async fn promote_canary(State(guard): State<Guard>, headers: axum::http::HeaderMap) -> Response {
    canary_decision(&guard, &headers, true)
}

async fn drop_canary(State(guard): State<Guard>, headers: axum::http::HeaderMap) -> Response {
    canary_decision(&guard, &headers, false)
}

/// The admin endpoints answer only with a bearer token configured (the
/// token check ran before), and only tools (`signpost canary`, curl), never
/// web pages: a request with an `Origin` (what browsers add to cross-site
/// requests) is refused, whatever the token.
fn canary_decision(guard: &Guard, headers: &axum::http::HeaderMap, promote: bool) -> Response {
    if guard.token_digest.is_none() {
        return refuse(
            StatusCode::FORBIDDEN,
            "the admin endpoints need a bearer token (--token-file or SIGNPOST_TOKEN); \
             without one, send the server SIGUSR1 (promote) or SIGUSR2 (drop)",
        );
    }
    if headers.contains_key(header::ORIGIN) {
        return refuse(StatusCode::FORBIDDEN, "admin endpoints do not answer browsers (a request with an Origin)");
    }
    let (live, trials) = (guard.signpost.live(), guard.signpost.trials());
    let done = if promote { trials.promote_canary(live) } else { trials.drop_canary(live) };
    if !done {
        return refuse(StatusCode::CONFLICT, "there is no canary (start one with --canary FILE)");
    }
    let policy = guard.signpost.policy();
    let body = json!({
        "done": if promote { "promoted" } else { "dropped" },
        "live": {"name": policy.identity().name, "version": policy.identity().version, "sha256": policy.identity().sha256},
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}

async fn metrics(State(guard): State<Guard>) -> Response {
    exposition(&guard.signpost)
}

fn exposition(signpost: &Signpost) -> Response {
    match signpost.prometheus() {
        Some(text) => ([(header::CONTENT_TYPE, OPENMETRICS)], text).into_response(),
        None => (StatusCode::NOT_FOUND, "metrics are off (--no-metrics)\n").into_response(),
    }
}

/// Serves `GET /metrics` alone at `addr` (for stdio mode: `--metrics`),
/// with the same bearer token as MCP over HTTP when one is set, until the
/// process ends.
pub async fn serve_metrics(
    signpost: Arc<Signpost>,
    addr: SocketAddr,
    token: Option<String>,
    extra_hosts: &[String],
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let hosts = Arc::new(allowed_hosts(extra_hosts));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("--metrics {addr}: cannot listen: {e}"))?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && token.is_none() {
        tracing::warn!(%addr, "serving metrics beyond loopback without a bearer token");
    }
    let digest = token.as_deref().map(|t| digest(t.as_bytes()));
    let app = Router::new().route(
        METRICS_PATH,
        axum::routing::get(move |headers: axum::http::HeaderMap| {
            let (signpost, hosts) = (signpost.clone(), hosts.clone());
            async move {
                if !host_allowed(&headers, &hosts) {
                    return refuse(StatusCode::FORBIDDEN, "Host not allowed (--allowed-host adds one)");
                }
                if let Some(expected) = &digest
                    && !bearer_matches(&headers, expected)
                {
                    return refuse(
                        StatusCode::UNAUTHORIZED,
                        "missing or wrong bearer token (Authorization: Bearer <token>)",
                    );
                }
                exposition(&signpost)
            }
        }),
    );
    eprintln!("signpost: metrics at http://{addr}{METRICS_PATH}");
    Ok(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the metrics endpoint stopped");
        }
    }))
}

fn bearer_matches(headers: &axum::http::HeaderMap, expected: &[u8; 32]) -> bool {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| digest(t.trim().as_bytes()));
    // Both sides are SHA-256 digests: equal length, compared in constant time.
    presented.is_some_and(|p| bool::from(p.ct_eq(expected)))
}

/// JSON-RPC error codes used at the HTTP edge.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;

fn refuse(status: StatusCode, message: &str) -> Response {
    refuse_with(status, INVALID_REQUEST, message)
}

fn refuse_with(status: StatusCode, code: i32, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    let mut response = (status, axum::Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// Token and session-count checks in front of the MCP endpoint.
async fn check(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path == HEALTH_PATH {
        return next.run(request).await;
    }
    if path != MCP_PATH && !host_allowed(request.headers(), &guard.hosts) {
        return refuse(StatusCode::FORBIDDEN, "Host not allowed (--allowed-host adds one)");
    }
    if let Some(expected) = &guard.token_digest
        && !bearer_matches(request.headers(), expected)
    {
        return refuse(StatusCode::UNAUTHORIZED, "missing or wrong bearer token (Authorization: Bearer <token>)");
    }
    if request.method() != axum::http::Method::POST || request.uri().path() != MCP_PATH {
        return next.run(request).await;
    }
    let opens_session = !request.headers().contains_key("mcp-session-id");
    // Read the body once, bounded, and answer what is not JSON-RPC with the
    // proper JSON-RPC error before it reaches the protocol layer.
    let (parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, guard.max_body_bytes)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("request body larger than {} bytes", guard.max_body_bytes),
            );
        }
        Err(_) => {
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                &format!("request body not received within {} s", BODY_TIMEOUT.as_secs()),
            );
        }
    };
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Err(e) => return refuse_with(StatusCode::BAD_REQUEST, PARSE_ERROR, &format!("parse error: {e}")),
        // Only `initialize` opens a session: the cap leaves sessionless
        // (2026-07-28) requests alone.
        // The place is held before the sessions are counted, and until the
        // session exists: an `initialize` is refused when the sessions and
        // the places held before it fill the cap.
        Ok(message @ serde_json::Value::Object(_)) if opens_session && message["method"] == "initialize" => {
            let (place, before) = Opening::hold(&guard.opening);
            if guard.sessions.sessions.read().await.len() + before >= guard.max_sessions {
                return refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("too many MCP sessions (at most {}); close one or retry later", guard.max_sessions),
                );
            }
            let response = next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await;
            drop(place);
            return response;
        }
        Ok(serde_json::Value::Object(_)) => {}
        Ok(_) => {
            return refuse(StatusCode::BAD_REQUEST, "invalid request: expected one JSON-RPC message (a JSON object)");
        }
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

/// Serves until `shutdown` resolves, then drains: no new connections,
/// in-flight tool calls finish (at most [`DRAIN_LIMIT`]), sessions close.
pub async fn serve(
    signpost: Arc<Signpost>,
    opts: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && opts.token.is_none() {
        tracing::warn!(%addr, "serving beyond loopback without a bearer token (--token-file or SIGNPOST_TOKEN)");
    }
    let cancel = CancellationToken::new();
    let app = router(signpost.clone(), &opts, cancel.clone());
    // A line operators and tests can read: where to point clients.
    eprintln!("signpost: listening on http://{addr}{MCP_PATH}");
    tracing::info!(%addr, "serving MCP over streamable HTTP");
    let (drained, drain_over) = tokio::sync::oneshot::channel::<()>();
    let drain = async move {
        shutdown.await;
        tracing::info!("shutting down: finishing in-flight calls");
        tokio::spawn(async move {
            let started = Instant::now();
            while signpost.in_flight() > 0 && started.elapsed() < DRAIN_LIMIT {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            // A call leaves `in_flight` when its result is ready, before
            // rmcp has written it to the client: cancelling the sessions at
            // once could drop that answer. Give the writes a moment.
            tokio::time::sleep(RESPONSE_GRACE).await;
            cancel.cancel();
            let _ = drained.send(());
        });
    };
    let server = accept(listener, app, opts.header_timeout, drain);
    // A graceful shutdown waits for every connection to close: one a
    // client left half-sent (its headers never ended) would hold it for
    // ever. Past the drain and a short grace, the server exits anyway.
    let closed = async {
        if drain_over.await.is_ok() {
            tokio::time::sleep(CLOSE_GRACE).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        served = server => served?,
        () = closed => tracing::warn!(
            "connections still open {} s after the drain (a client that never finished its request): closed",
            CLOSE_GRACE.as_secs()
        ),
    }
    tracing::info!("HTTP server stopped");
    Ok(())
}

/// Serves `app` on the connections `listener` accepts until `drain`
/// resolves, then waits for them to close. Each connection is HTTP/1.1
/// whose request headers must all arrive within `header_timeout` (hyper's
/// header-read timeout, on tokio's timer): a client that stops half-way
/// through them is closed, not waited for.
async fn accept(
    listener: tokio::net::TcpListener,
    app: Router,
    header_timeout: Duration,
    drain_on: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    // Watched on a task of its own from now on, whatever the loop is busy
    // with: a signal handler is in place once the server listens.
    let (drained, mut drain) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        drain_on.await;
        let _ = drained.send(());
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(header_timeout);
    loop {
        let (tcp, _) = tokio::select! {
            biased;
            _ = &mut drain => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // (out of descriptors, a connection reset before it was
                // taken: the next one may do)
                Err(e) => {
                    tracing::debug!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        // Without TCP_NODELAY a response written in several segments waits
        // for the client's delayed ACK (~40 ms a call): Nagle's algorithm.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let connection = http.serve_connection(hyper_util::rt::TokioIo::new(tcp), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "a connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM. The handlers are in place when this
/// returns (not when the future is first polled): a signal sent as soon as
/// the server listens is a shutdown, never the default action. Needs a
/// tokio runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (interrupt, terminate) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()));
        async move {
            let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
                match s {
                    Ok(mut s) => {
                        s.recv().await;
                    }
                    Err(_) => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(interrupt) => {},
                () = wait(terminate) => {},
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
