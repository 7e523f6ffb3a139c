//! The backend a proxy fronts: a command spoken to over stdio, or a server
//! at a URL spoken to over streamable HTTP, as an MCP client (rmcp's own);
//! started (or connected to) again with back-off when it goes away, its
//! tool catalogue kept current as it announces changes.
//!
//! What the proxy does not change passes through: a call's progress reaches
//! the agent that made it (under the agent's own progress token), an agent's
//! cancellation reaches the backend, and the backend's log messages and
//! list changes reach every session ([`Notice`]).

#![allow(deprecated)] // MCP logging (SEP-2577 deprecates it; backends and agents still speak it)

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelledNotification, CancelledNotificationParam,
    ClientCapabilities, ClientConfig, ClientNotification, ClientRequest, Implementation, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestId,
    ServerNotification, ServerPeerInfo, ServerResult, SetLevelRequestParams, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, RoleServer, ServiceExt};
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
    /// The agent cancelled the call; the backend was told to cancel too.
    #[error(
        "the call was cancelled by its caller; the backend was told to cancel it (it may or may not have taken effect)"
    )]
    Cancelled,
}

/// What the backend announced, for every session to pass on to its agent.
#[derive(Debug, Clone)]
pub enum Notice {
    /// Its tools changed (the catalogue is already read again).
    Tools,
    /// Its resources changed.
    Resources,
    /// Its prompts changed.
    Prompts,
    /// A log message; each session passes on what its level lets through.
    Log(Box<LoggingMessageNotificationParam>),
    /// A resource some session subscribed to changed; the sessions that
    /// subscribed to it pass it on.
    Updated(String),
}

/// Where a forwarded call's progress goes: the session of the agent that
/// made the call, under the token the agent gave.
#[derive(Debug, Clone)]
pub struct Relay {
    /// The agent's session.
    pub peer: Peer<RoleServer>,
    /// The agent's progress token.
    pub token: ProgressToken,
}

impl Relay {
    /// Passes the backend's progress to the agent, under the agent's token.
    /// A session that went away hears nothing; the call goes on.
    async fn pass_on(&self, mut params: ProgressNotificationParam) {
        params.progress_token = self.token.clone();
        let _ = self.peer.notify_progress(params).await;
    }
}

/// The relays of the calls in flight, by the token the proxy gave the
/// backend, each with the last progress it passed on.
type Relays = Arc<Mutex<Relaying>>;

/// Most progress notifications kept for calls whose relay is not
/// registered yet (the oldest go first).
const MAX_EARLY_PROGRESS: usize = 64;

/// How many sessions want a resource's updates, and whether the backend
/// took the subscription.
#[derive(Default)]
struct Subscribed {
    sessions: usize,
    /// Set once the backend took it: sessions that come while it is asked
    /// wait for its answer.
    taken: Arc<tokio::sync::OnceCell<()>>,
}

#[derive(Default)]
struct Relaying {
    relays: HashMap<ProgressToken, (Relay, Option<f64>)>,
    /// Progress that came before its call's relay was registered: rmcp
    /// gives a request its token as it sends it, so a backend that reports
    /// at once can be heard before the call is known here.
    early: std::collections::VecDeque<ProgressNotificationParam>,
}

/// Most tools read from a backend's tools/list; the rest are left out
/// (and the log says so).
pub const MAX_TOOLS: usize = 1024;
/// Largest tool kept (its name, description, schemas and annotations), in
/// bytes of JSON; a larger one is left out.
pub const MAX_TOOL_BYTES: usize = 256 << 10;
/// Most bytes of JSON a backend's tools take together: the tools past it
/// are left out (every agent is sent the whole list).
pub const MAX_CATALOGUE_BYTES: usize = 8 << 20;
/// Longest tool name kept, in bytes (MCP's names are 1 to 128 characters).
pub const MAX_NAME_BYTES: usize = 128;
/// Most pages of a paginated tools/list read in one listing: a backend
/// that pages on past it, or gives a cursor twice, is served what was read.
pub const MAX_PAGES: usize = 64;
/// Least time between two listings of a backend's tools after it says
/// they changed: announcements in between are answered by one listing.
const MIN_REFRESH_GAP: Duration = Duration::from_secs(1);

/// Where the backend is. Its `Debug` shows no token or header value.
#[derive(Clone)]
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

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Command(argv) => f.debug_tuple("Command").field(&argv.first()).finish_non_exhaustive(),
            Backend::Url { url, headers, .. } => {
                let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
                f.debug_struct("Url").field("url", &shown_url(url)).field("headers", &names).finish_non_exhaustive()
            }
        }
    }
}

impl Backend {
    /// `text` (an error's message: reqwest's and rmcp's name the URL they
    /// failed on) without this backend's secrets: its URL, as written or
    /// as parsed, shown as [`shown_url`] shows it; its query, password and
    /// fragment nowhere.
    pub fn hide(&self, text: &str) -> String {
        let Backend::Url { url, .. } = self else { return text.to_owned() };
        let shown = shown_url(url);
        let mut out = text.replace(url.as_str(), &shown);
        let parsed = reqwest::Url::parse(url).ok();
        if let Some(u) = &parsed {
            out = out.replace(u.as_str(), &shown);
        }
        let written = url.split_once('?').map(|(_, q)| q.split('#').next().unwrap_or(q));
        let parts = parsed.iter().flat_map(|u| [u.query(), u.password(), u.fragment()]).flatten();
        // (a part of a few characters is no secret, and is too common a
        // string to cut out of a message)
        for secret in parts.chain(written).filter(|s| s.len() >= 4) {
            out = out.replace(secret, "…");
        }
        out
    }
}

/// Whether `url` holds what may be a secret (a query, a password), which
/// the log lines of rmcp's HTTP client ([`CLIENT_TRANSPORT_LOGS`]) would
/// show: an unreadable URL may too.
pub fn url_holds_secrets(url: &str) -> bool {
    match reqwest::Url::parse(url) {
        Ok(u) => u.query().is_some() || u.password().is_some() || u.fragment().is_some(),
        Err(_) => url.contains(['?', '@', '#']),
    }
}

/// The log targets whose lines can show the URL a request failed on,
/// query included (rmcp's HTTP client and service, reqwest): silenced for
/// a backend URL that holds secrets ([`url_holds_secrets`]), the agents'
/// side of rmcp's service with them; Signpost's own lines say what failed,
/// without them ([`Backend::hide`]).
pub const CLIENT_TRANSPORT_LOGS: [&str; 5] = [
    "rmcp::transport::worker",
    "rmcp::transport::streamable_http_client",
    "rmcp::transport::common::client_side_sse",
    // (its own lines about a request it could not send show the error)
    "rmcp::service",
    // (`redirecting` shows the URL whole)
    "reqwest",
];

/// A URL as it may be shown: scheme, host, port and path, never the user
/// information or the query (either may hold a secret).
fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => {
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!("{}://{}{port}{}", u.scheme(), u.host_str().unwrap_or("?"), u.path())
        }
        Err(_) => "(an unreadable URL)".to_owned(),
    }
}

/// How the backend is reached, and each call's deadline.
#[derive(Debug, Clone)]
pub struct Command {
    /// The backend.
    pub backend: Backend,
    /// Each call's deadline.
    pub timeout: Duration,
    /// Tools the operator vouches only read, whatever the backend's
    /// annotations say: served marked `readOnlyHint: true` (to agents and
    /// policies alike), so a policy may look them up and the sanitiser
    /// reads a name after them as prose. Only the backend or the operator
    /// can say a tool only reads, never a policy.
    pub read_only: Vec<String>,
}

/// `tools`, those named in `read_only` marked read-only (the operator's
/// word over the backend's annotations); a name the backend does not list
/// is warned about, every listing (a typo, or a tool the backend dropped).
fn vouch_read_only(mut tools: Vec<rmcp::model::Tool>, read_only: &[String]) -> Vec<rmcp::model::Tool> {
    for name in read_only {
        match tools.iter_mut().find(|t| t.name == name.as_str()) {
            Some(tool) => {
                let annotations = tool.annotations.take().unwrap_or_default();
                tool.annotations = Some(annotations.read_only(true));
            }
            None => tracing::warn!(
                tool = %sanitize::escape(name, 64),
                "--read-only names a tool the backend does not list: nothing is marked"
            ),
        }
    }
    tools
}

/// Hears the backend's notifications.
#[derive(Clone)]
struct Listener {
    tools_changed: mpsc::Sender<()>,
    relays: Relays,
    notices: broadcast::Sender<Notice>,
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

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.notices.send(Notice::Resources);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.notices.send(Notice::Prompts);
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.notices.send(Notice::Updated(params.uri));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.notices.send(Notice::Log(Box::new(params)));
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        // Progress of a call no agent waits for any more (or of a lookup)
        // goes nowhere. Notifications are handled concurrently, so they may
        // come out of order: one that would make the agent's progress go
        // back (it must increase) is dropped.
        let relay = {
            let mut relaying = self.relays.lock().unwrap_or_else(PoisonError::into_inner);
            match relaying.relays.get_mut(&params.progress_token) {
                Some((relay, last)) if last.is_none_or(|last| params.progress > last) => {
                    *last = Some(params.progress);
                    Some(relay.clone())
                }
                Some(_) => None,
                // Perhaps a call not registered yet: kept a while.
                None => {
                    if relaying.early.len() == MAX_EARLY_PROGRESS {
                        relaying.early.pop_front();
                    }
                    relaying.early.push_back(params);
                    return;
                }
            }
        };
        if let Some(relay) = relay {
            relay.pass_on(params).await;
        }
    }
}

/// On a 2026-07-28 connection a server announces list changes only on a
/// stream asked for them (`subscriptions/listen`): ask for the lists the
/// backend says change, and hear them as an older backend's unscoped
/// announcements are heard. The stream ends with its connection.
fn listen(peer: &Peer<RoleClient>, listener: Listener, backend: Backend) {
    let Some(info) = peer.peer_info() else { return };
    if info.protocol_version < ProtocolVersion::V_2026_07_28 {
        return;
    }
    let caps = &info.capabilities;
    let changes = |c: Option<Option<bool>>| c.flatten() == Some(true);
    let mut filter = SubscriptionFilter::builder();
    if changes(caps.tools.as_ref().map(|t| t.list_changed)) {
        filter = filter.tools_list_changed();
    }
    if changes(caps.resources.as_ref().map(|r| r.list_changed)) {
        filter = filter.resources_list_changed();
    }
    if changes(caps.prompts.as_ref().map(|p| p.list_changed)) {
        filter = filter.prompts_list_changed();
    }
    let filter = filter.build();
    if filter == SubscriptionFilter::default() {
        return;
    }
    let peer = peer.clone();
    tokio::spawn(async move {
        let mut stream = match peer.listen(filter).await {
            Ok(stream) => stream,
            Err(e) => {
                tracing::warn!(error = %backend.hide(&e.to_string()), "the backend did not open a stream for its list changes; changes it makes are not seen until it restarts");
                return;
            }
        };
        while let Ok(Some(notification)) = stream.next().await {
            match notification {
                ServerNotification::ToolListChangedNotification(_) => {
                    let _ = listener.tools_changed.try_send(());
                }
                ServerNotification::ResourceListChangedNotification(_) => {
                    let _ = listener.notices.send(Notice::Resources);
                }
                ServerNotification::PromptListChangedNotification(_) => {
                    let _ = listener.notices.send(Notice::Prompts);
                }
                _ => {}
            }
        }
    });
}

/// On a 2026-07-28 connection a resource's updates come on a stream asked
/// for them: one per subscribed resource, read until it ends, and ended
/// (aborted) when the last session lets the resource go.
async fn listen_to(
    peer: &Peer<RoleClient>,
    uri: &str,
    notices: broadcast::Sender<Notice>,
) -> Result<tokio::task::JoinHandle<()>, ServiceError> {
    let filter = SubscriptionFilter::builder().resource_subscription(uri).build();
    let mut stream = peer.listen(filter).await?;
    Ok(tokio::spawn(async move {
        while let Ok(Some(notification)) = stream.next().await {
            if let ServerNotification::ResourceUpdatedNotification(n) = notification {
                let _ = notices.send(Notice::Updated(n.params.uri));
            }
        }
    }))
}

/// A call sent to the backend and not yet answered: when it is dropped
/// unanswered (its deadline passed, or its agent cancelled), the backend
/// is told to cancel it. Its progress relay lives as long as it does.
struct Pending {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
    /// The token its progress relay is filed under, if it has one.
    token: Option<ProgressToken>,
    relays: Relays,
}

impl Pending {
    fn answered(mut self) {
        self.id = None;
    }
}

/// How long a call's progress relay outlives its answer: rmcp handles each
/// notification in a task of its own, so progress the backend sent before
/// its answer may be handled after it.
const RELAY_GRACE: Duration = Duration::from_millis(500);

impl Drop for Pending {
    fn drop(&mut self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            if let Some(token) = &self.token {
                self.relays.lock().unwrap_or_else(PoisonError::into_inner).relays.remove(token);
            }
            return;
        };
        if let Some(token) = self.token.take() {
            let relays = self.relays.clone();
            runtime.spawn(async move {
                tokio::time::sleep(RELAY_GRACE).await;
                relays.lock().unwrap_or_else(PoisonError::into_inner).relays.remove(&token);
            });
        }
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let reason = Some("the caller stopped waiting (its deadline passed, or its agent cancelled)".to_owned());
        let cancel = CancelledNotification::new(CancelledNotificationParam::new(Some(id), reason));
        runtime.spawn(async move {
            let _ = peer.send_notification(ClientNotification::CancelledNotification(cancel)).await;
        });
    }
}

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

    /// A session asked for log messages at `level`: the backend (when it
    /// logs) is asked for the most verbose level any session asked for, and
    /// each session passes on what its own level lets through.
    pub async fn want_log_level(&self, level: LoggingLevel) {
        {
            let mut wanted = self.log_level.lock().unwrap_or_else(PoisonError::into_inner);
            if wanted.is_some_and(|w| severity(w) <= severity(level)) {
                return;
            }
            *wanted = Some(level);
        }
        if let Ok((peer, _)) = self.peer().await {
            self.ask_log_level(&peer, level).await;
        }
    }

    /// Whether the backend takes subscriptions to its resources.
    pub fn can_subscribe(&self) -> bool {
        self.info().is_some_and(|i| i.capabilities.resources.as_ref().is_some_and(|r| r.subscribe == Some(true)))
    }

    /// A session wants `uri`'s updates: the first one subscribes the
    /// backend (an error, and nothing kept, when it refuses). A session
    /// that comes while the backend is being asked waits for its answer,
    /// and when it refused, asks again itself.
    pub async fn want_updates(&self, uri: &str) -> Result<(), UpstreamError> {
        let taken = {
            let mut subscribed = self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner);
            let s = subscribed.entry(uri.to_owned()).or_default();
            s.sessions += 1;
            s.taken.clone()
        };
        /// Takes the session back off the count unless it was subscribed:
        /// when the backend refused, and when the wait was given up (its
        /// request cancelled).
        struct Counted<'u> {
            upstream: &'u Upstream,
            uri: &'u str,
            taken: bool,
        }
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                if !self.taken {
                    self.upstream.drop_count(self.uri);
                }
            }
        }
        let mut counted = Counted { upstream: self, uri, taken: false };
        let ask = async || {
            let (peer, _) = self.peer().await?;
            self.ask_updates(&peer, uri).await
        };
        let asked = taken.get_or_try_init(ask).await.map(|_| ());
        counted.taken = asked.is_ok();
        asked
    }

    /// A session no longer wants `uri`'s updates: the last one unsubscribes
    /// the backend.
    pub async fn drop_updates(&self, uri: &str) {
        if !self.drop_count(uri) {
            return;
        }
        if let Some(stream) = self.streams.lock().unwrap_or_else(PoisonError::into_inner).remove(uri) {
            stream.abort();
            return;
        }
        if let Ok((peer, _)) = self.peer().await
            && let Err(e) = self.within(peer.unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri))).await
        {
            tracing::warn!(error = %e, "the backend did not take an unsubscription");
        }
    }

    /// One session fewer for `uri`; whether it was the last.
    fn drop_count(&self, uri: &str) -> bool {
        let mut subscribed = self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner);
        match subscribed.get_mut(uri) {
            Some(s) if s.sessions > 1 => {
                s.sessions -= 1;
                false
            }
            Some(_) => {
                subscribed.remove(uri);
                true
            }
            None => false,
        }
    }

    /// Subscribes the backend to `uri`: `resources/subscribe`, or on
    /// 2026-07-28 a stream of its updates.
    async fn ask_updates(&self, peer: &Peer<RoleClient>, uri: &str) -> Result<(), UpstreamError> {
        if !self.can_subscribe() {
            return Err(UpstreamError::Refused(format!(
                "{} does not take subscriptions to its resources",
                self.describe()
            )));
        }
        if peer.peer_info().is_some_and(|i| i.protocol_version >= ProtocolVersion::V_2026_07_28) {
            let opened = tokio::time::timeout(self.command.timeout, listen_to(peer, uri, self.notices.clone())).await;
            match opened {
                Ok(Ok(stream)) => {
                    let mut streams = self.streams.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Some(old) = streams.insert(uri.to_owned(), stream) {
                        old.abort();
                    }
                    return Ok(());
                }
                // A backend that says 2026-07-28 but has no stream for it:
                // `resources/subscribe`, as before.
                Ok(Err(e)) => {
                    let e = self.command.backend.hide(&e.to_string());
                    tracing::debug!(error = %e, "no stream for a resource's updates; subscribing");
                }
                Err(_) => return Err(UpstreamError::Timeout(self.command.timeout)),
            }
        }
        self.within(peer.subscribe(rmcp::model::SubscribeRequestParams::new(uri))).await
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

    async fn ask_log_level(&self, peer: &Peer<RoleClient>, level: LoggingLevel) {
        if self.info().is_none_or(|i| i.capabilities.logging.is_none()) {
            return;
        }
        if let Err(e) = self.within(peer.set_level(SetLevelRequestParams::new(level))).await {
            tracing::warn!(error = %e, "the backend did not take the log level");
        }
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

    /// Reads the backend's tools/list into the catalogue and tells sessions
    /// (unless it lists what it listed before).
    async fn refresh(&self, peer: &Peer<RoleClient>) -> Result<(), UpstreamError> {
        let (tools, digest) = self.list_tools(peer).await?;
        if *self.listed.lock().unwrap_or_else(PoisonError::into_inner) == Some(digest) {
            tracing::debug!("the backend lists the tools it listed before");
            return Ok(());
        }
        let names: Vec<String> = tools.iter().map(|t| sanitize::escape(&t.name, 64)).collect();
        tracing::info!(tools = ?names, "the backend's tools");
        // Compiling the schemas is CPU work: off the async workers.
        let catalogue = tokio::task::spawn_blocking(move || Catalogue::new(tools))
            .await
            .map_err(|e| UpstreamError::Garbage(format!("reading its tools failed: {e}")))?;
        self.catalogue.store(Arc::new(catalogue));
        *self.listed.lock().unwrap_or_else(PoisonError::into_inner) = Some(digest);
        let _ = self.notices.send(Notice::Tools);
        Ok(())
    }

    /// The backend's tools, page after page, within one deadline and the
    /// bounds on what is served ([`MAX_TOOLS`], [`MAX_TOOL_BYTES`],
    /// [`MAX_CATALOGUE_BYTES`], [`MAX_NAME_BYTES`], [`MAX_PAGES`]; the log
    /// says what was left out), those the operator vouches for marked
    /// read-only; and a digest of them.
    async fn list_tools(&self, peer: &Peer<RoleClient>) -> Result<(Vec<rmcp::model::Tool>, u64), UpstreamError> {
        use std::hash::{Hash, Hasher};
        let deadline = tokio::time::Instant::now() + self.command.timeout;
        let mut kept = Vec::new();
        let (mut listed, mut bytes) = (0usize, 0usize);
        let mut digest = std::collections::hash_map::DefaultHasher::new();
        let mut cursors = std::collections::HashSet::new();
        let mut cursor = None;
        let mut cut_short = None;
        for page in 1.. {
            let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor.take());
            let answer = tokio::time::timeout_at(deadline, peer.list_tools(Some(params))).await;
            let result = answer
                .map_err(|_| UpstreamError::Timeout(self.command.timeout))?
                .map_err(|e| classify(e, &self.command.backend))?;
            for tool in result.tools {
                listed += 1;
                let json = serde_json::to_vec(&tool).unwrap_or_default();
                let fits = !json.is_empty()
                    && json.len() <= MAX_TOOL_BYTES
                    && tool.name.len() <= MAX_NAME_BYTES
                    && bytes + json.len() <= MAX_CATALOGUE_BYTES;
                if fits && kept.len() < MAX_TOOLS {
                    bytes += json.len();
                    json.hash(&mut digest);
                    kept.push(tool);
                }
            }
            cut_short = match result.next_cursor {
                None => None,
                Some(_) if kept.len() >= MAX_TOOLS => Some("it lists more tools than are served"),
                Some(_) if page >= MAX_PAGES => Some("it pages on past the most pages read"),
                Some(c) if !cursors.insert(c.clone()) => Some("it gave a cursor twice"),
                Some(c) => {
                    cursor = Some(c);
                    continue;
                }
            };
            break;
        }
        if kept.len() < listed || cut_short.is_some() {
            tracing::warn!(
                listed,
                kept = kept.len(),
                stopped = cut_short.unwrap_or("at its last page"),
                "not every tool the backend lists is served: at most {MAX_TOOLS} tools, {MAX_PAGES} pages, \
                 {MAX_TOOL_BYTES} bytes of JSON a tool and {MAX_CATALOGUE_BYTES} in all, names of at most \
                 {MAX_NAME_BYTES} bytes"
            );
        }
        Ok((vouch_read_only(kept, &self.command.read_only), digest.finish()))
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

/// How much a log level says: `debug` least, `emergency` most.
pub fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_urls_secrets_are_hidden_from_every_message() {
        let url = |u: &str| Backend::Url { url: u.to_owned(), token: None, headers: Vec::new() };
        let keyed = url("https://user:pa55word@mcp.example.com/mcp?api_key=K3Y-123#frag-ment");
        // As written, as reqwest writes it (normalised), and in pieces.
        for said in [
            "error sending request for url (https://user:pa55word@mcp.example.com/mcp?api_key=K3Y-123#frag-ment)",
            "url: \"https://user:pa55word@mcp.example.com/mcp?api_key=K3Y-123#frag-ment\"",
            "the query api_key=K3Y-123 was refused; password pa55word",
        ] {
            let hidden = keyed.hide(said);
            for secret in ["K3Y-123", "pa55word", "frag-ment"] {
                assert!(!hidden.contains(secret), "{said} → {hidden}");
            }
        }
        assert!(
            keyed
                .hide("for url (https://user:pa55word@mcp.example.com/mcp?api_key=K3Y-123#frag-ment)")
                .contains("https://mcp.example.com/mcp")
        );
        // Nothing to hide: the message as it is.
        let plain = url("http://127.0.0.1:8080/mcp");
        assert_eq!(
            plain.hide("connection refused: http://127.0.0.1:8080/mcp"),
            "connection refused: http://127.0.0.1:8080/mcp"
        );
        assert_eq!(Backend::Command(vec!["x".into()]).hide("a?b"), "a?b");
        assert!(url_holds_secrets("https://h/mcp?k=v") && url_holds_secrets("https://u:p@h/mcp"));
        assert!(!url_holds_secrets("https://h/mcp") && !url_holds_secrets("https://user@h/mcp"));
        assert!(url_holds_secrets("not a url?key=v"));
    }
}
