//! The backend a proxy fronts: a command spoken to over stdio, or a server
//! at a URL spoken to over streamable HTTP, as an MCP client (rmcp's own);
//! started (or connected to) again with back-off when it goes away, its
//! tool catalogue kept current as it announces changes.
//!
//! What the proxy does not change passes through: a call's progress reaches
//! the agent that made it (under the agent's own progress token), an agent's
//! cancellation reaches the backend, and the backend's log messages and
//! list changes reach every session ([`Notice`]).
//!
//! The connection and its calls are here. [`backend`] says where the
//! backend is and keeps its URL's secrets out of messages; [`relay`] passes
//! its notifications, a call's progress and an agent's cancellation
//! through; [`subscriptions`] keeps what sessions asked of it (a log level,
//! resources' updates) across restarts; [`listing`] reads its tools into
//! the catalogue.

#![allow(deprecated)] // MCP logging (SEP-2577 deprecates it; backends and agents still speak it)

mod backend;
mod listing;
mod relay;
mod subscriptions;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, ClientRequest, LoggingLevel, ProgressNotificationParam,
    ServerPeerInfo, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::sync::{broadcast, mpsc};

use super::catalogue::Catalogue;
use crate::sanitize;
use backend::shown_url;
pub use backend::{Backend, CLIENT_TRANSPORT_LOGS, Command, url_holds_secrets};
use relay::{Listener, Pending, Relays, listen};
pub use relay::{Notice, Relay};
use subscriptions::Subscribed;
pub use subscriptions::severity;

/// Longest wait between two attempts to start a backend that keeps dying.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// First wait after a backend died.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// Why a forwarded call has no result from the backend. Its text reaches
/// the agent (as a tool error) and the policy.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    /// No answer within the deadline; the backend was told to cancel.
    #[error("the backend did not answer within {0:?}; the call was cancelled (it may or may not have taken effect)")]
    Timeout(Duration),
    /// The backend is not running (it exited, or cannot be started).
    #[error("the backend is not running ({0}); Signpost restarts it, try again shortly")]
    Down(String),
    /// The backend answered with a JSON-RPC error.
    #[error("the backend refused the call: {0}")]
    Refused(String),
    /// The backend answered with something that is not a tool result.
    #[error("the backend answered with something that is not a tool result: {0}")]
    Garbage(String),
    /// The agent cancelled the call; the backend was told to cancel too.
    #[error(
        "the call was cancelled by its caller; the backend was told to cancel it (it may or may not have taken effect)"
    )]
    Cancelled,
}

/// Least time between two listings of a backend's tools after it says
/// they changed: announcements in between are answered by one listing.
const MIN_REFRESH_GAP: Duration = Duration::from_secs(1);

/// A running connection to the backend, numbered: a call that failed on
/// it drops this one only, never a newer one.
struct Connection {
    service: RunningService<RoleClient, Listener>,
    generation: u64,
}

/// When the next start may be tried, after how many failures in a row.
#[derive(Debug, Default)]
struct Backoff {
    failures: u32,
    not_before: Option<Instant>,
    last_error: String,
}

/// The backend: its connection (started again after it dies) and its catalogue.
pub struct Upstream {
    command: Command,
    connection: tokio::sync::Mutex<Option<Connection>>,
    /// The number the next connection gets.
    generations: std::sync::atomic::AtomicU64,
    backoff: Mutex<Backoff>,
    catalogue: ArcSwap<Catalogue>,
    info: ArcSwap<Option<ServerPeerInfo>>,
    /// Tells each serving session what the backend announced (it tells its agent).
    notices: broadcast::Sender<Notice>,
    tools_changed: mpsc::Sender<()>,
    relays: Relays,
    /// The most verbose log level any session asked for: asked of the
    /// backend, and again of each new start.
    log_level: Mutex<Option<LoggingLevel>>,
    /// The resources sessions subscribed to, each with how many sessions
    /// did: the backend is subscribed to each once, and again after a
    /// restart.
    subscriptions: Mutex<HashMap<String, Subscribed>>,
    /// A 2026-07-28 backend's stream of each subscribed resource's updates.
    streams: Mutex<HashMap<String, tokio::task::JoinHandle<()>>>,
    /// A digest of the tools the catalogue was last made of: a listing
    /// that finds the same tools changes nothing and tells no one.
    listed: Mutex<Option<u64>>,
}

impl Upstream {
    /// Starts the backend and reads its tools: an error when it cannot be
    /// started or does not answer `initialize` and `tools/list` within the
    /// deadline. Needs a tokio runtime.
    pub async fn start(command: Command) -> anyhow::Result<Arc<Self>> {
        if let Backend::Command(argv) = &command.backend {
            anyhow::ensure!(!argv.is_empty(), "no backend command: give one after `--`");
        }
        let (tools_changed, mut refresh) = mpsc::channel(1);
        let upstream = Arc::new(Upstream {
            command,
            connection: tokio::sync::Mutex::new(None),
            generations: std::sync::atomic::AtomicU64::new(0),
            backoff: Mutex::default(),
            catalogue: ArcSwap::from_pointee(Catalogue::new(Vec::new())),
            info: ArcSwap::from_pointee(None),
            notices: broadcast::channel(64).0,
            tools_changed,
            relays: Arc::default(),
            log_level: Mutex::new(None),
            subscriptions: Mutex::default(),
            streams: Mutex::default(),
            listed: Mutex::default(),
        });
        upstream.peer().await.map_err(|e| anyhow::anyhow!("{}: {e}", upstream.describe()))?;
        let weak = Arc::downgrade(&upstream);
        tokio::spawn(async move {
            let mut last: Option<tokio::time::Instant> = None;
            while refresh.recv().await.is_some() {
                // A backend that announces changes on and on is listed at
                // most once a gap (what it announces meanwhile is one
                // more listing, the channel holding one).
                if let Some(last) = last {
                    tokio::time::sleep_until(last + MIN_REFRESH_GAP).await;
                }
                last = Some(tokio::time::Instant::now());
                let Some(upstream) = weak.upgrade() else { break };
                match upstream.peer().await {
                    Ok((peer, generation)) => {
                        if let Err(e) = upstream.refresh(&peer).await {
                            // Not served on a list it could not read: made again on a later call.
                            upstream.lost(generation, &e.to_string()).await;
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "the backend's tools changed but it is not running"),
                }
            }
        });
        Ok(upstream)
    }

    /// The backend, for messages an agent may read: the program's name
    /// (not its arguments) or the URL without user information and query,
    /// since either may hold a secret.
    pub fn describe(&self) -> String {
        match &self.command.backend {
            Backend::Command(argv) => {
                let program = argv.first().map(std::path::Path::new);
                let name = program.and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
                format!("backend `{}`", sanitize::escape(&name.unwrap_or_default(), 80))
            }
            Backend::Url { url, .. } => format!("backend {}", sanitize::escape(&shown_url(url), 200)),
        }
    }

    /// The tools it serves now.
    pub fn catalogue(&self) -> Arc<Catalogue> {
        self.catalogue.load_full()
    }

    /// What it said of itself at `initialize` (the last start).
    pub fn info(&self) -> Option<ServerPeerInfo> {
        self.info.load().as_ref().clone()
    }

    /// Hears what the backend announces.
    pub fn subscribe(&self) -> broadcast::Receiver<Notice> {
        self.notices.subscribe()
    }

    /// A request to the backend, within its deadline.
    async fn within<T>(
        &self,
        request: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, UpstreamError> {
        let answered = tokio::time::timeout(self.command.timeout, request).await;
        answered
            .map_err(|_| UpstreamError::Timeout(self.command.timeout))?
            .map_err(|e| classify(e, &self.command.backend))
    }

    /// The live connection's peer and its number: the running one, or a
    /// new start when the last one died and its back-off has passed.
    async fn peer(&self) -> Result<(Peer<RoleClient>, u64), UpstreamError> {
        let mut connection = self.connection.lock().await;
        if let Some(c) = connection.as_ref() {
            if !c.service.is_closed() && !c.service.peer().is_transport_closed() {
                return Ok((c.service.peer().clone(), c.generation));
            }
            tracing::warn!(backend = %self.describe(), "the backend exited; restarting it");
            *connection = None;
            self.failed("it exited".into());
        }
        {
            let backoff = self.backoff.lock().unwrap_or_else(PoisonError::into_inner);
            if backoff.not_before.is_some_and(|t| Instant::now() < t) {
                return Err(UpstreamError::Down(backoff.last_error.clone()));
            }
        }
        match tokio::time::timeout(self.command.timeout.max(Duration::from_secs(10)), self.connect()).await {
            Ok(Ok(c)) => {
                let (peer, generation) = (c.service.peer().clone(), c.generation);
                *connection = Some(c);
                drop(connection);
                // A backend whose tools cannot be read is not served: the
                // next call starts it again (and reads them again).
                if let Err(e) = self.refresh(&peer).await {
                    self.lost(generation, &e.to_string()).await;
                    return Err(e);
                }
                *self.backoff.lock().unwrap_or_else(PoisonError::into_inner) = Backoff::default();
                let level = *self.log_level.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(level) = level {
                    self.ask_log_level(&peer, level).await;
                }
                // What sessions subscribed to, subscribed again.
                let uris: Vec<String> =
                    self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner).keys().cloned().collect();
                for uri in uris {
                    if let Err(e) = self.ask_updates(&peer, &uri).await {
                        tracing::warn!(error = %e, uri = %sanitize::escape(&uri, 200), "the restarted backend did not take a subscription again");
                    }
                }
                Ok((peer, generation))
            }
            Ok(Err(e)) => {
                self.failed(e.clone());
                Err(UpstreamError::Down(e))
            }
            Err(_) => {
                let why = "it did not finish `initialize` in time".to_owned();
                self.failed(why.clone());
                Err(UpstreamError::Down(why))
            }
        }
    }

    fn failed(&self, why: String) {
        let mut backoff = self.backoff.lock().unwrap_or_else(PoisonError::into_inner);
        let wait = FIRST_BACKOFF.saturating_mul(1 << backoff.failures.min(8)).min(MAX_BACKOFF);
        backoff.failures = backoff.failures.saturating_add(1);
        backoff.not_before = Some(Instant::now() + wait);
        backoff.last_error = why;
    }

    async fn connect(&self) -> Result<Connection, String> {
        let listener = Listener {
            tools_changed: self.tools_changed.clone(),
            relays: self.relays.clone(),
            notices: self.notices.clone(),
        };
        let failed = |e: rmcp::service::ClientInitializeError| {
            format!("{} failed to initialize: {}", self.describe(), self.command.backend.hide(&e.to_string()))
        };
        let service = match &self.command.backend {
            Backend::Command(argv) => {
                let (program, args) = argv.split_first().ok_or("no command")?;
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args);
                let (transport, _) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::inherit())
                    .spawn()
                    .map_err(|e| format!("cannot start {}: {e}", self.describe()))?;
                listener.clone().serve(transport).await.map_err(failed)?
            }
            Backend::Url { url, token, headers } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(token) = token {
                    config = config.auth_header(token.clone());
                }
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    let name = HeaderName::try_from(name.as_str()).map_err(|e| format!("header name `{name}`: {e}"))?;
                    let value =
                        HeaderValue::try_from(value.as_str()).map_err(|e| format!("header `{name}`'s value: {e}"))?;
                    custom.insert(name, value);
                }
                let transport = StreamableHttpClientTransport::from_config(config.custom_headers(custom));
                listener.clone().serve(transport).await.map_err(failed)?
            }
        };
        self.info.store(Arc::new(service.peer().peer_info().map(|i| (*i).clone())));
        tracing::info!(backend = %self.describe(), "backend started");
        listen(service.peer(), listener, self.command.backend.clone());
        let generation = self.generations.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Connection { service, generation })
    }

    /// Sends one request of another kind (resources, prompts) to the
    /// backend under the deadline: its answer or its own MCP error, passed
    /// through.
    pub async fn request<T>(
        &self,
        send: impl AsyncFnOnce(Peer<RoleClient>) -> Result<T, ServiceError>,
    ) -> Result<T, rmcp::ErrorData> {
        let unavailable = |e: UpstreamError| rmcp::ErrorData::internal_error(e.to_string(), None);
        let deadline = tokio::time::Instant::now() + self.command.timeout;
        let (peer, generation) = tokio::time::timeout_at(deadline, self.peer())
            .await
            .map_err(|_| unavailable(UpstreamError::Timeout(self.command.timeout)))?
            .map_err(unavailable)?;
        match tokio::time::timeout_at(deadline, send(peer)).await {
            Err(_) => Err(unavailable(UpstreamError::Timeout(self.command.timeout))),
            Ok(Err(ServiceError::McpError(e))) => Err(e),
            Ok(Err(e)) => {
                let e = classify(e, &self.command.backend);
                if matches!(e, UpstreamError::Down(_)) {
                    self.lost(generation, "its connection failed").await;
                }
                Err(unavailable(e))
            }
            Ok(Ok(answer)) => Ok(answer),
        }
    }

    /// Sends one `tools/call` to the backend under one deadline for the
    /// whole call: waiting for a (re)start included. Its progress goes to
    /// `relay` (when given); dropped before its answer (the deadline, or the
    /// agent cancelled), the backend is told to cancel it.
    pub async fn call(
        &self,
        params: CallToolRequestParams,
        relay: Option<Relay>,
    ) -> Result<CallToolResponse, UpstreamError> {
        let deadline = tokio::time::Instant::now() + self.command.timeout;
        let timeout = UpstreamError::Timeout(self.command.timeout);
        let (peer, generation) =
            tokio::time::timeout_at(deadline, self.peer()).await.map_err(|_| timeout.clone())??;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let sent = async {
            let handle = peer.send_request_with_option(request, PeerRequestOptions::no_options()).await?;
            let token = relay.is_some().then(|| handle.progress_token.clone());
            if let Some(relay) = relay {
                // What the backend reported before the call was registered
                // goes first, in order, each past the one before.
                let early: Vec<ProgressNotificationParam> = {
                    let mut relaying = self.relays.lock().unwrap_or_else(PoisonError::into_inner);
                    let token = &handle.progress_token;
                    let mine: Vec<ProgressNotificationParam> =
                        relaying.early.iter().filter(|p| p.progress_token == *token).cloned().collect();
                    relaying.early.retain(|p| p.progress_token != *token);
                    let last = mine.iter().map(|p| p.progress).reduce(f64::max);
                    relaying.relays.insert(handle.progress_token.clone(), (relay.clone(), last));
                    mine
                };
                let mut passed: Option<f64> = None;
                for params in early {
                    if passed.is_some_and(|p| params.progress <= p) {
                        continue;
                    }
                    passed = Some(params.progress);
                    relay.pass_on(params).await;
                }
            }
            let pending =
                Pending { peer: peer.clone(), id: Some(handle.id.clone()), token, relays: self.relays.clone() };
            let answer = handle.await_response().await;
            pending.answered();
            match answer? {
                ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
                ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
                ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
                _ => Err(ServiceError::UnexpectedResponse),
            }
        };
        match tokio::time::timeout_at(deadline, sent).await {
            Err(_) => Err(timeout),
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => {
                let e = classify(e, &self.command.backend);
                if matches!(e, UpstreamError::Down(_)) {
                    self.lost(generation, "its connection failed").await;
                }
                Err(e)
            }
        }
    }

    /// Drops connection number `generation` (when it is still the live
    /// one) after it failed: in transport (an HTTP backend gone away), or
    /// its tools could not be read. It is started or connected to again on
    /// a later call, after the back-off.
    async fn lost(&self, generation: u64, why: &str) {
        let mut connection = self.connection.lock().await;
        if connection.as_ref().is_some_and(|c| c.generation == generation) {
            tracing::warn!(backend = %self.describe(), why, "dropping the backend's connection; it is made again on a later call");
            *connection = None;
            drop(connection);
            self.failed(why.to_owned());
        }
    }
}

/// An rmcp client error as the agent should read it, without the
/// secrets of `backend`'s URL.
fn classify(e: ServiceError, backend: &Backend) -> UpstreamError {
    match e {
        ServiceError::McpError(e) => UpstreamError::Refused(sanitize::line(&e.message, 500)),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) | ServiceError::Cancelled { .. } => {
            UpstreamError::Down(sanitize::line(&backend.hide(&e.to_string()), 300))
        }
        ServiceError::Timeout { timeout } => UpstreamError::Timeout(timeout),
        other => UpstreamError::Garbage(sanitize::line(&backend.hide(&other.to_string()), 300)),
    }
}
