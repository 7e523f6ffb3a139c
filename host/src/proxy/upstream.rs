//! The backend a proxy fronts: a command spoken to over stdio, or a server
//! at a URL spoken to over streamable HTTP, as an MCP client (rmcp's own);
//! started (or connected to) again with back-off when it goes away, its
//! tool catalogue kept current as it announces changes.

use std::ffi::OsString;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation, ServerPeerInfo,
};
use rmcp::service::{NotificationContext, Peer, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::{broadcast, mpsc};

use super::catalogue::Catalogue;
use crate::sanitize;

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
}

/// Where the backend is.
#[derive(Debug, Clone)]
pub enum Backend {
    /// A program and its arguments, spoken to over its stdin and stdout.
    Command(Vec<OsString>),
    /// A streamable HTTP endpoint.
    Url {
        /// e.g. `https://mcp.example.com/mcp`.
        url: String,
        /// Sent as `Authorization: Bearer …` with every request.
        token: Option<String>,
        /// Other headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

/// How the backend is reached, and each call's deadline.
#[derive(Debug, Clone)]
pub struct Command {
    /// The backend.
    pub backend: Backend,
    /// Each call's deadline.
    pub timeout: Duration,
}

/// Hears the backend's notifications.
#[derive(Clone)]
struct Listener {
    tools_changed: mpsc::Sender<()>,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("signpost-proxy", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // A refresh already queued covers this one too.
        let _ = self.tools_changed.try_send(());
    }
}

/// A running connection to the backend.
struct Connection {
    service: RunningService<RoleClient, Listener>,
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
    backoff: Mutex<Backoff>,
    catalogue: ArcSwap<Catalogue>,
    info: ArcSwap<Option<ServerPeerInfo>>,
    /// Tells each serving session the tools changed (it tells its agent).
    changed: broadcast::Sender<()>,
    tools_changed: mpsc::Sender<()>,
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
            backoff: Mutex::default(),
            catalogue: ArcSwap::from_pointee(Catalogue::new(Vec::new())),
            info: ArcSwap::from_pointee(None),
            changed: broadcast::channel(16).0,
            tools_changed,
        });
        upstream.peer().await.map_err(|e| anyhow::anyhow!("{}: {e}", upstream.describe()))?;
        let weak = Arc::downgrade(&upstream);
        tokio::spawn(async move {
            while refresh.recv().await.is_some() {
                let Some(upstream) = weak.upgrade() else { break };
                match upstream.peer().await {
                    Ok(peer) => {
                        if let Err(e) = upstream.refresh(&peer).await {
                            tracing::warn!(error = %e, "the backend's tools/list failed; serving the last one");
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "the backend's tools changed but it is not running"),
                }
            }
        });
        Ok(upstream)
    }

    /// The backend, for messages (never its token or headers).
    pub fn describe(&self) -> String {
        match &self.command.backend {
            Backend::Command(argv) => {
                let argv: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
                format!("backend `{}`", sanitize::escape(&argv.join(" "), 200))
            }
            Backend::Url { url, .. } => format!("backend {}", sanitize::escape(url, 200)),
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

    /// Hears each change of the catalogue.
    pub fn subscribe(&self) -> broadcast::Receiver<()> {
        self.changed.subscribe()
    }

    /// The live connection's peer: the running one, or a new start when
    /// the last one died and its back-off has passed.
    pub async fn peer(&self) -> Result<Peer<RoleClient>, UpstreamError> {
        let mut connection = self.connection.lock().await;
        if let Some(c) = connection.as_ref() {
            if !c.service.is_closed() && !c.service.peer().is_transport_closed() {
                return Ok(c.service.peer().clone());
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
                let peer = c.service.peer().clone();
                *connection = Some(c);
                drop(connection);
                if let Err(e) = self.refresh(&peer).await {
                    self.failed(e.to_string());
                    return Err(e);
                }
                *self.backoff.lock().unwrap_or_else(PoisonError::into_inner) = Backoff::default();
                Ok(peer)
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
        let listener = Listener { tools_changed: self.tools_changed.clone() };
        let failed = |e: rmcp::service::ClientInitializeError| format!("{} failed to initialize: {e}", self.describe());
        let service = match &self.command.backend {
            Backend::Command(argv) => {
                let (program, args) = argv.split_first().ok_or("no command")?;
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args);
                let (transport, _) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::inherit())
                    .spawn()
                    .map_err(|e| format!("cannot start {}: {e}", self.describe()))?;
                listener.serve(transport).await.map_err(failed)?
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
                listener.serve(transport).await.map_err(failed)?
            }
        };
        self.info.store(Arc::new(service.peer().peer_info().map(|i| (*i).clone())));
        tracing::info!(backend = %self.describe(), "backend started");
        Ok(Connection { service })
    }

    /// Reads the backend's tools/list into the catalogue and tells sessions.
    async fn refresh(&self, peer: &Peer<RoleClient>) -> Result<(), UpstreamError> {
        let tools = tokio::time::timeout(self.command.timeout, peer.list_all_tools())
            .await
            .map_err(|_| UpstreamError::Timeout(self.command.timeout))?
            .map_err(classify)?;
        let names: Vec<String> = tools.iter().map(|t| sanitize::escape(&t.name, 64)).collect();
        tracing::info!(tools = ?names, "the backend's tools");
        self.catalogue.store(Arc::new(Catalogue::new(tools)));
        let _ = self.changed.send(());
        Ok(())
    }

    /// Sends one request of another kind (resources, prompts) to the
    /// backend under the deadline: its answer or its own MCP error, passed
    /// through.
    pub async fn request<T>(
        &self,
        send: impl AsyncFnOnce(Peer<RoleClient>) -> Result<T, ServiceError>,
    ) -> Result<T, rmcp::ErrorData> {
        let unavailable = |e: UpstreamError| rmcp::ErrorData::internal_error(e.to_string(), None);
        let peer = self.peer().await.map_err(unavailable)?;
        match tokio::time::timeout(self.command.timeout, send(peer)).await {
            Err(_) => Err(unavailable(UpstreamError::Timeout(self.command.timeout))),
            Ok(Err(ServiceError::McpError(e))) => Err(e),
            Ok(Err(e)) => Err(unavailable(classify(e))),
            Ok(Ok(answer)) => Ok(answer),
        }
    }

    /// Sends one `tools/call` to the backend under the deadline.
    pub async fn call(&self, params: CallToolRequestParams) -> Result<CallToolResponse, UpstreamError> {
        let peer = self.peer().await?;
        match tokio::time::timeout(self.command.timeout, peer.call_tool_once(params)).await {
            Err(_) => Err(UpstreamError::Timeout(self.command.timeout)),
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => {
                let e = classify(e);
                if matches!(e, UpstreamError::Down(_)) {
                    self.lost().await;
                }
                Err(e)
            }
        }
    }

    /// Drops the live connection after a call on it failed in transport (an
    /// HTTP backend gone away): it is connected to again on a later call.
    /// (Two calls failing at once may drop a connection a third just made:
    /// that costs one more connect, never a call.)
    async fn lost(&self) {
        let mut connection = self.connection.lock().await;
        if connection.is_some() {
            tracing::warn!(backend = %self.describe(), "the backend's connection failed; connecting again");
            *connection = None;
            drop(connection);
            self.failed("its connection failed".into());
        }
    }
}

/// An rmcp client error as the agent should read it.
fn classify(e: ServiceError) -> UpstreamError {
    match e {
        ServiceError::McpError(e) => UpstreamError::Refused(sanitize::line(&e.message, 500)),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) | ServiceError::Cancelled { .. } => {
            UpstreamError::Down(sanitize::line(&e.to_string(), 300))
        }
        ServiceError::Timeout { timeout } => UpstreamError::Timeout(timeout),
        other => UpstreamError::Garbage(sanitize::line(&other.to_string(), 300)),
    }
}
