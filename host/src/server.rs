//! The MCP face of Signpost: an rmcp [`ServerHandler`] per session.
//!
//! Each call runs on a [`SessionContext`]: the trail it sends
//! ([`crate::trails`]), else its MCP session's own (the stdio connection,
//! one streamable-HTTP session), else, for a sessionless request, a new
//! trail. Each has its own history, so the policy sees what *this* agent
//! did, and its own policy instances, so nothing one agent's calls left in
//! a policy's memory reaches another agent. Tool calls run
//! on tokio's blocking pool: policy calls are synchronous and bounded by the
//! policy deadline, and WASI host functions must not run on an async worker.

#![allow(deprecated)] // MCP logging (SEP-2577 deprecates it; our users' clients still read it)

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceUpdatedNotificationParam,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSendError};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::live_policy::{SwapRecord, SwapResult};
use crate::proxy::{Notice, Relay, Upstream, severity};
use crate::service::Signpost;
use crate::session::SessionContext;
use crate::tools::{self, UnknownTool};
use crate::trails::carry::TRAIL_ARG;
use crate::trails::{Opened, Owner};

const INSTRUCTIONS: &str = "Signpost serves a code graph. Start with resolve (a name) or search (words) to \
get 40-hex ids, then describe an id or walk its neighbors. Every result carries `hints`: actionable ones are \
complete calls you can send as they are. Text results start with [state_tag]; `→ next:` lines are those calls. \
Without an MCP session, results carry a `trail` (hints include it): send it back to keep your history; it expires \
after an hour unused.";

const PROXY_INSTRUCTIONS: &str = "Signpost adds hints to this server's results: after the server's own \
content, a text block starts with [state_tag]; its `→ next:` lines are complete calls you can send as they are \
(also in the result's _meta `signpost/hints`).";

/// The status resource of the live policy.
pub const POLICY_STATUS_URI: &str = "signpost://policy";
/// The status resource of the served graph.
pub const GRAPH_STATUS_URI: &str = "signpost://graph";

/// The live policy's status, as a resource.
fn policy_status_resource() -> Resource {
    Resource::new(POLICY_STATUS_URI, "policy")
        .with_title("Live hint policy")
        .with_description(
            "The serving policy (name, version, sha256), its counters, the last swap, and how agents \
             follow its hints (follow-through by tool and state tag)",
        )
        .with_mime_type("application/json")
}

/// One MCP session's handler (for a sessionless HTTP request: one
/// request's).
#[derive(Clone)]
pub struct Handler {
    signpost: Arc<Signpost>,
    /// The session's own history, for calls that send no trail.
    own: Arc<SessionContext>,
    log_level: Arc<Mutex<LoggingLevel>>,
    /// The resources it subscribed to with `resources/subscribe`.
    subscribed: Arc<Subscribed>,
}

impl Handler {
    /// A new session: no trail, no policy instance yet.
    pub fn new(signpost: Arc<Signpost>) -> Self {
        let subscribed = Arc::new(Subscribed::held(signpost.upstream().cloned(), Vec::new()));
        Handler { signpost, own: Arc::default(), log_level: Arc::new(Mutex::new(LoggingLevel::Info)), subscribed }
    }

    /// Why `uri` cannot be subscribed to here, if it cannot: Signpost's own
    /// that announce updates can, and a backend's when it takes
    /// subscriptions.
    fn cannot_subscribe(&self, uri: &str) -> Option<&'static str> {
        // The graph's status announces its swaps and a first index's
        // progress; a proxy serves no graph.
        if own_subscribable(uri) || (uri == GRAPH_STATUS_URI && self.signpost.upstream().is_none()) {
            return None;
        }
        let Some(upstream) = self.signpost.upstream().filter(|_| uri != GRAPH_STATUS_URI) else {
            return Some("no resource of Signpost's but the policy's and the graph's status announce updates");
        };
        (!upstream.can_subscribe()).then_some("the backend does not take subscriptions")
    }
}

/// Resources a session (or one `subscriptions/listen` stream) subscribed
/// to. The backend's are let go when it ends: the last session to let one
/// go unsubscribes the backend.
struct Subscribed {
    upstream: Option<Arc<Upstream>>,
    uris: Mutex<HashSet<String>>,
}

impl Subscribed {
    fn held(upstream: Option<Arc<Upstream>>, uris: Vec<String>) -> Self {
        Subscribed { upstream, uris: Mutex::new(uris.into_iter().collect()) }
    }

    fn has(&self, uri: &str) -> bool {
        self.uris.lock().unwrap_or_else(PoisonError::into_inner).contains(uri)
    }
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        let Some(upstream) = self.upstream.clone() else { return };
        let uris: Vec<String> = self
            .uris
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .filter(|u| !own_subscribable(u))
            .collect();
        if uris.is_empty() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                for uri in uris {
                    upstream.drop_updates(&uri).await;
                }
            });
        }
    }
}

/// The resources of Signpost's own that announce their updates: the policy
/// status, whenever the policy is swapped (or a swap is refused).
fn own_subscribable(uri: &str) -> bool {
    uri == POLICY_STATUS_URI
}

/// Why `uri` cannot be subscribed to, as the agent reads it.
fn not_subscribable(uri: &str, why: &str) -> McpError {
    McpError::invalid_params(
        format!(
            "`{}` cannot be subscribed to: {why}; {POLICY_STATUS_URI} can (it changes when the policy is swapped), \
             and {GRAPH_STATUS_URI} where a graph is served",
            crate::clip(uri)
        ),
        Some(serde_json::json!({"uri": uri})),
    )
}

/// Who is calling: the digest of the request's bearer token over HTTP
/// (its `Authorization` header, read as the token check reads it), nobody
/// in particular on stdio.
fn owner_of(context: &RequestContext<RoleServer>) -> Owner {
    let token = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get(axum::http::header::AUTHORIZATION))
        .and_then(|v| v.to_str().ok());
    token.map(Owner::of_authorization).unwrap_or_default()
}

fn swap_level(record: &SwapRecord) -> LoggingLevel {
    match record.result {
        SwapResult::Published | SwapResult::CanaryPromoted | SwapResult::CanaryStarted | SwapResult::ShadowStarted => {
            LoggingLevel::Notice
        }
        SwapResult::Unchanged | SwapResult::Superseded => LoggingLevel::Info,
        SwapResult::Rejected | SwapResult::RolledBack | SwapResult::CanaryDropped => LoggingLevel::Warning,
    }
}

/// Where a status's changes are told: a session's peer, the log level it
/// asked for, and what it subscribed to.
struct Told {
    peer: rmcp::Peer<RoleServer>,
    level: Arc<Mutex<LoggingLevel>>,
    subscribed: Weak<Subscribed>,
}

impl Told {
    /// Tells each change `changes` brings, until the session ends: an
    /// update of the status `uri` if the session subscribed to it, and a
    /// log message from `logger` at the change's level if the session's
    /// level lets it through.
    async fn each<T: serde::Serialize + Clone>(
        self,
        mut changes: tokio::sync::broadcast::Receiver<T>,
        uri: &'static str,
        logger: &'static str,
        level_of: impl Fn(&T) -> LoggingLevel,
    ) {
        loop {
            let change = match changes.recv().await {
                Ok(change) => change,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            };
            let Some(held) = self.subscribed.upgrade() else { break };
            if held.has(uri)
                && self.peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_err()
            {
                break;
            }
            drop(held);
            let wanted = *self.level.lock().unwrap_or_else(PoisonError::into_inner);
            let this = level_of(&change);
            if severity(this) < severity(wanted) {
                continue;
            }
            let data = serde_json::to_value(&change).unwrap_or_default();
            let param = LoggingMessageNotificationParam::new(this, data).with_logger(logger);
            if self.peer.notify_logging_message(param).await.is_err() {
                break;
            }
        }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        // Prompts: none, but `prompts/list` answers (empty), and a handler
        // that answers is declared (2026-07-28, SEP-2575).
        let mut capabilities =
            ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().enable_logging().build();
        // The policy's status announces its updates (and, in front of a
        // backend that takes subscriptions, the backend's resources).
        if let Some(r) = capabilities.resources.as_mut() {
            r.subscribe = Some(true);
        }
        let server = Implementation::new("signpost", env!("CARGO_PKG_VERSION"));
        if let Some(upstream) = self.signpost.upstream() {
            // The backend's own words first: the agent is using its tools.
            let info = upstream.info();
            let theirs = info.as_ref().and_then(|i| i.instructions.clone()).unwrap_or_default();
            let title = info.as_ref().map_or_else(
                || "Signpost".to_owned(),
                |i| {
                    let name = i.server_info.as_ref().map(|s| s.title.clone().unwrap_or_else(|| s.name.clone()));
                    format!("{} (hints by Signpost)", name.unwrap_or_else(|| "a server".into()))
                },
            );
            // Lists that change when the backend's do; a session passes the
            // backend's announcements on (`on_initialized`).
            let theirs_change = |c: &ServerCapabilities| {
                let resources = c.resources.as_ref().is_some_and(|r| r.list_changed == Some(true));
                let prompts = c.prompts.as_ref().is_some_and(|p| p.list_changed == Some(true));
                (resources, prompts)
            };
            let (resources, prompts) = info.as_ref().map_or((false, false), |i| theirs_change(&i.capabilities));
            let mut capabilities = ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_prompts()
                .enable_logging()
                .build();
            if let Some(r) = capabilities.resources.as_mut() {
                r.list_changed = resources.then_some(true);
                r.subscribe = Some(true);
            }
            if let Some(p) = capabilities.prompts.as_mut() {
                p.list_changed = prompts.then_some(true);
            }
            let instructions = format!("{theirs}\n\n{PROXY_INSTRUCTIONS}").trim().to_owned();
            return ServerConfig::new(capabilities)
                .with_server_info(server.with_title(crate::clip(&title)))
                .with_instructions(instructions);
        }
        ServerConfig::new(capabilities).with_server_info(server.with_title("Signpost")).with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Forward policy swaps to this session as logging notifications,
        // until the session ends.
        let swaps = self.signpost.live().subscribe();
        let (peer, level) = (context.peer, self.log_level.clone());
        // Subscriptions are the session's: its tasks hold them weakly, so
        // that they end with it.
        let subscribed: Weak<Subscribed> = Arc::downgrade(&self.subscribed);
        // A proxy passes on what its backend announces: list changes,
        // updates of resources the session subscribed to, and log messages
        // its agent's level lets through.
        if let Some(upstream) = self.signpost.upstream() {
            let mut notices = upstream.subscribe();
            let (peer, level, subscribed) = (peer.clone(), level.clone(), subscribed.clone());
            tokio::spawn(async move {
                loop {
                    let sent = match notices.recv().await {
                        // A lagged receiver missed some: a list change covers them.
                        Ok(Notice::Tools) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                            peer.notify_tool_list_changed().await
                        }
                        Ok(Notice::Resources) => peer.notify_resource_list_changed().await,
                        Ok(Notice::Prompts) => peer.notify_prompt_list_changed().await,
                        Ok(Notice::Updated(uri)) => match subscribed.upgrade() {
                            Some(s) if s.has(&uri) => {
                                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await
                            }
                            Some(_) => continue,
                            None => break,
                        },
                        Ok(Notice::Log(message)) => {
                            let wanted = *level.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                            if severity(message.level) < severity(wanted) {
                                continue;
                            }
                            peer.notify_logging_message(*message).await
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                    };
                    if sent.is_err() {
                        break;
                    }
                }
            });
        }
        // The graph's status changes: `resources/updated` for a session
        // subscribed to it, and a log message (a first index's progress at
        // info, a refused reload at warning, an edit's swap at debug).
        let graph_told = Told { peer: peer.clone(), level: level.clone(), subscribed: subscribed.clone() };
        tokio::spawn(graph_told.each(self.signpost.graphs().subscribe(), GRAPH_STATUS_URI, "signpost.graph", |n| {
            match n.what {
                "building" | "built" => LoggingLevel::Info,
                "refused" => LoggingLevel::Warning,
                _ => LoggingLevel::Debug,
            }
        }));
        // The policy's swaps, alike.
        let policy_told = Told { peer, level, subscribed };
        tokio::spawn(policy_told.each(swaps, POLICY_STATUS_URI, "signpost.policy", swap_level));
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let uri = request.uri;
        if let Some(why) = self.cannot_subscribe(&uri) {
            return Err(not_subscribable(&uri, why));
        }
        let fresh = self.subscribed.uris.lock().unwrap_or_else(PoisonError::into_inner).insert(uri.clone());
        if fresh
            && !own_subscribable(&uri)
            && let Some(upstream) = self.signpost.upstream()
            && let Err(e) = upstream.want_updates(&uri).await
        {
            self.subscribed.uris.lock().unwrap_or_else(PoisonError::into_inner).remove(&uri);
            return Err(not_subscribable(&uri, &e.to_string()));
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let had = self.subscribed.uris.lock().unwrap_or_else(PoisonError::into_inner).remove(&request.uri);
        if had
            && !own_subscribable(&request.uri)
            && let Some(upstream) = self.signpost.upstream()
        {
            upstream.drop_updates(&request.uri).await;
        }
        Ok(())
    }

    /// 2026-07-28 (`subscriptions/listen`): list changes, and updates of the
    /// resources asked for that announce theirs (the policy's status; a
    /// backend's, when it takes subscriptions).
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let mut accepted = requested.clone();
        if let Some(uris) = accepted.resource_subscriptions.as_mut() {
            uris.retain(|u| self.cannot_subscribe(u).is_none());
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let uris: HashSet<String> = context.accepted().resource_subscriptions.iter().flatten().cloned().collect();
        let upstream = self.signpost.upstream().cloned();
        // The backend's resources this stream holds, let go when it ends.
        let mut held = Vec::new();
        if let Some(up) = &upstream {
            for uri in uris.iter().filter(|u| !own_subscribable(u)) {
                match up.want_updates(uri).await {
                    Ok(()) => held.push(uri.clone()),
                    Err(e) => tracing::warn!(error = %e, "a resource subscription was not taken by the backend"),
                }
            }
        }
        let _held = Subscribed::held(upstream.clone(), held);
        let mut notices = upstream.as_ref().map(|u| u.subscribe());
        let mut swaps = self.signpost.live().subscribe();
        let mut graph_changes = self.signpost.graphs().subscribe();
        let graph_wanted = uris.contains(GRAPH_STATUS_URI) && upstream.is_none();
        let sink = context.sink();
        loop {
            let sent = tokio::select! {
                () = context.cancelled() => break,
                notice = async {
                    match notices.as_mut() {
                        Some(n) => n.recv().await,
                        None => std::future::pending().await,
                    }
                } => match notice {
                    Ok(Notice::Tools) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        sink.notify_tool_list_changed().await
                    }
                    Ok(Notice::Resources) => sink.notify_resource_list_changed().await,
                    Ok(Notice::Prompts) => sink.notify_prompt_list_changed().await,
                    Ok(Notice::Updated(uri)) if uris.contains(&uri) => sink.notify_resource_updated(uri).await,
                    Ok(_) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                        notices = None;
                        continue;
                    }
                },
                swap = swaps.recv() => match swap {
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_))
                        if uris.contains(POLICY_STATUS_URI) =>
                    {
                        sink.notify_resource_updated(POLICY_STATUS_URI).await
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                },
                change = graph_changes.recv() => match change {
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) if graph_wanted => {
                        sink.notify_resource_updated(GRAPH_STATUS_URI).await
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                },
            };
            match sent {
                // What this stream did not ask for is not sent on it.
                Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_)) => {}
                Err(_) => break,
            }
        }
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self.log_level.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = request.level;
        if let Some(upstream) = self.signpost.upstream() {
            upstream.want_log_level(request.level).await;
        }
        Ok(())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        if let Some(upstream) = self.signpost.upstream() {
            let first_page = request.as_ref().is_none_or(|r| r.cursor.is_none());
            let mut theirs = if upstream.info().is_some_and(|i| i.capabilities.resources.is_some()) {
                upstream.request(async |peer| peer.list_resources(request).await).await?
            } else {
                ListResourcesResult::default()
            };
            if first_page {
                theirs.resources.insert(0, policy_status_resource());
            }
            return Ok(theirs);
        }
        let status = policy_status_resource();
        let graph = Resource::new(GRAPH_STATUS_URI, "graph")
            .with_title("Served code graph")
            .with_description("The graph's name, source files, counts, load time and last reload")
            .with_mime_type("application/json");
        Ok(ListResourcesResult::with_all_items(vec![status, graph]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if let Some(upstream) = self.signpost.upstream()
            && request.uri != POLICY_STATUS_URI
        {
            return upstream.request(async |peer| peer.read_resource_once(request).await).await;
        }
        let (uri, text) = match request.uri.as_str() {
            POLICY_STATUS_URI => (POLICY_STATUS_URI, serde_json::to_string_pretty(&self.signpost.status())),
            GRAPH_STATUS_URI => (GRAPH_STATUS_URI, serde_json::to_string_pretty(&self.signpost.graphs().status())),
            other => {
                return Err(McpError::resource_not_found(
                    format!("no resource `{}`; try {POLICY_STATUS_URI} or {GRAPH_STATUS_URI}", crate::clip(other)),
                    Some(serde_json::json!({"uri": other})),
                ));
            }
        };
        let contents = ResourceContents::text(text.unwrap_or_default(), uri).with_mime_type("application/json");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        match self.signpost.upstream() {
            Some(upstream) if upstream.info().is_some_and(|i| i.capabilities.prompts.is_some()) => {
                upstream.request(async |peer| peer.list_prompts(request).await).await
            }
            _ => Ok(ListPromptsResult::default()),
        }
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        match self.signpost.upstream() {
            Some(upstream) => upstream.request(async |peer| peer.get_prompt_once(request).await).await,
            None => Err(McpError::invalid_params(format!("no prompt `{}`", crate::clip(&request.name)), None)),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        match self.signpost.upstream() {
            Some(upstream) => Ok(ListToolsResult::with_all_items(upstream.catalogue().tools().to_vec())),
            None => Ok(ListToolsResult::with_all_items(self.signpost.tools().to_vec())),
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        match self.signpost.upstream() {
            Some(upstream) => upstream.catalogue().get(name).cloned(),
            None => self.signpost.tools().iter().find(|t| t.name == name).cloned(),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if let Some(upstream) = self.signpost.upstream() {
            return self.forward(upstream.clone(), request, context).await;
        }
        let tool: tools::Tool =
            request.name.parse().map_err(|e: UnknownTool| McpError::invalid_params(e.to_string(), None))?;
        let mut args = request.arguments.unwrap_or_default();
        // The trail is the host's: neither the tool nor the policy sees it.
        let opened = self.open_trail(args.remove(TRAIL_ARG), &context).await;
        let trails = self.signpost.trails();
        // The call is synchronous (the graph's work and the policy's, each
        // bounded): it runs on this worker, in place when its policy can
        // (`Policy::run`), else with this worker's other tasks handed to
        // another thread, rather than bounced to the blocking pool and back
        // (two thread wake-ups a call, which cost more CPU than the pipeline
        // itself). (`block_in_place` needs a multi-threaded runtime; on any
        // other, the blocking pool.)
        let multi_thread =
            tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread;
        let signpost = &self.signpost;
        let response = trails
            .run(&opened, tool.name(), async |session| {
                if multi_thread {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| signpost.call(tool, args, &session)))
                        .map_err(|_| panicked(tool.name()))
                } else {
                    let signpost = signpost.clone();
                    tokio::task::spawn_blocking(move || signpost.call(tool, args, &session))
                        .await
                        .map_err(|e| McpError::internal_error(format!("tool call failed: {e}"), None))
                }
            })
            .await?;
        let content = vec![ContentBlock::text(response.text)];
        let mut result =
            if response.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
        result.structured_content = Some(response.structured);
        Ok(result.into())
    }
}

/// What an agent gets for a call that panicked (a bug in Signpost; the
/// panic is on the server's stderr): an error now, rather than no answer
/// ever, and the server goes on serving.
fn panicked(tool: &str) -> McpError {
    McpError::internal_error(
        format!("the call to `{}` failed inside Signpost (a bug: the server's log says where)", crate::clip(tool)),
        None,
    )
}

impl Handler {
    /// The session a call runs on: the trail it `sent`, else this MCP
    /// session's own (stdio is one session; over HTTP, a request in a
    /// session names it), else (a sessionless, 2026-07-28 request) a new
    /// trail.
    async fn open_trail(&self, sent: Option<serde_json::Value>, context: &RequestContext<RoleServer>) -> Opened {
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let in_session = parts.is_none_or(|p| p.headers.contains_key("mcp-session-id"));
        let own = in_session.then(|| self.own.clone());
        self.signpost.trails().open(sent, owner_of(context), own).await
    }

    /// A proxy's tool call ([`crate::proxy`]): a tool the backend lists,
    /// sent to it through the pipeline on the call's session, as
    /// [`ServerHandler::call_tool`] runs Signpost's own.
    async fn forward(
        &self,
        upstream: Arc<Upstream>,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let catalogue = upstream.catalogue();
        if catalogue.get(&request.name).is_none() {
            let names: Vec<&str> = catalogue.tools().iter().map(|t| t.name.as_ref()).collect();
            return Err(McpError::invalid_params(
                format!(
                    "no tool `{}` on this server; its tools: {}",
                    crate::clip(&request.name),
                    crate::clip(&names.join(", "))
                ),
                None,
            ));
        }
        let mut args = request.arguments.take().unwrap_or_default();
        // The trail is Signpost's, unless the backend's tool has an argument of that name.
        let sent_trail = if catalogue.threads_trail(&request.name) { args.remove(TRAIL_ARG) } else { None };
        let opened = self.open_trail(sent_trail, &context).await;
        let trails = self.signpost.trails();
        request.arguments = Some(args);
        let tool = request.name.to_string();
        let signpost = &self.signpost;
        // The call's progress goes back to this agent, under its own token.
        let relay = context.meta.get_progress_token().map(|token| Relay { peer: context.peer.clone(), token });
        // An input request (MRTR) can reach only an agent that speaks 2026-07-28.
        let mrtr = context.protocol_version().is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let cancelled = &context.ct;
        let response = trails
            .run(&opened, &tool, async |session| {
                use futures_util::FutureExt as _;
                let forwarded = signpost.forward(&upstream, request, &session, relay, cancelled);
                std::panic::AssertUnwindSafe(forwarded).catch_unwind().await.map_err(|_| panicked(&tool))
            })
            .await?;
        match proxied(response) {
            CallToolResponse::InputRequired(_) if !mrtr => Ok(CallToolResult::error(vec![ContentBlock::text(
                "the backend asks for input before it answers (an input request of protocol 2026-07-28), which \
                 this session's protocol version cannot carry: connect with protocol 2026-07-28, or call the \
                 backend directly for this tool",
            )])
            .into()),
            answer => Ok(answer),
        }
    }
}

/// The prefix of the `_meta` keys Signpost writes on a proxied result.
const SIGNPOST_META: &str = "signpost/";

/// A forwarded call's result as the agent gets it: the backend's content and
/// structured content as it sent them, then the policy's text; the hints and
/// the state tag in `_meta` (`signpost/hints`, `signpost/state`, and on a
/// trail `signpost/trail`), where they cannot break the tool's output
/// schema. An input request the backend made (MRTR) reaches the agent as
/// it is. No `signpost/` key of the backend's own reaches the agent.
fn proxied(response: crate::response::Response) -> CallToolResponse {
    let mut result = match response.backend.map(|b| *b) {
        Some(CallToolResponse::Complete(result)) => result,
        // (Signpost's keys are Signpost's to write: a backend's go)
        Some(CallToolResponse::InputRequired(mut asked)) => {
            if let Some(meta) = asked.meta.as_mut() {
                meta.0.retain(|key, _| !key.starts_with(SIGNPOST_META));
            }
            return CallToolResponse::InputRequired(asked);
        }
        Some(other) => return other,
        // No result from the backend: why, in the host's words, whatever
        // the policy's text says.
        None => {
            let why = response.structured.pointer("/error/message").and_then(serde_json::Value::as_str);
            CallToolResult::error(why.map(|w| vec![ContentBlock::text(w.to_owned())]).unwrap_or_default())
        }
    };
    if response.is_error {
        result.is_error = Some(true);
    }
    if !response.text.trim().is_empty() {
        result.content.push(ContentBlock::text(response.text));
    }
    let mut meta = result.meta.take().unwrap_or_default();
    // Every `signpost/` key is Signpost's: one the backend wrote (a forged
    // trail, coercion or state) is not passed on, whether or not Signpost
    // writes its own.
    meta.0.retain(|key, _| !key.starts_with(SIGNPOST_META));
    meta.0.insert("signpost/state".into(), serde_json::Value::String(response.state_tag));
    meta.0.insert("signpost/hints".into(), serde_json::json!(response.hints));
    // A sessionless client's trail, and why the one it sent was not used.
    let fields = [
        (TRAIL_ARG, "signpost/trail"),
        (crate::trails::carry::NOTICE_FIELD, "signpost/trail_notice"),
        (crate::pipeline::COERCED_FIELD, "signpost/coerced"),
    ];
    for (field, key) in fields {
        if let Some(value) = response.structured.get(field) {
            meta.0.insert(key.into(), value.clone());
        }
    }
    result.meta = Some(meta);
    result.into()
}
