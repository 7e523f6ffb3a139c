//! What passes between the backend and the agents while the proxy is
//! connected: the backend's notifications heard ([`Listener`]; on a
//! 2026-07-28 connection, on the stream [`listen`] asks for) and handed to
//! every session as [`Notice`]s, a call's progress passed to the agent that
//! made it ([`Relay`]), and a call no one waits for any more cancelled at
//! the backend ([`Pending`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientNotification,
    Implementation, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    RequestId, ServerNotification, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, Peer};
use rmcp::{ClientHandler, RoleClient, RoleServer};
use tokio::sync::{broadcast, mpsc};

use super::backend::Backend;

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
    pub(super) async fn pass_on(&self, mut params: ProgressNotificationParam) {
        params.progress_token = self.token.clone();
        let _ = self.peer.notify_progress(params).await;
    }
}

/// The relays of the calls in flight, by the token the proxy gave the
/// backend, each with the last progress it passed on.
pub(super) type Relays = Arc<Mutex<Relaying>>;

/// Most progress notifications kept for calls whose relay is not
/// registered yet (the oldest go first).
const MAX_EARLY_PROGRESS: usize = 64;

#[derive(Default)]
pub(super) struct Relaying {
    pub(super) relays: HashMap<ProgressToken, (Relay, Option<f64>)>,
    /// Progress that came before its call's relay was registered: rmcp
    /// gives a request its token as it sends it, so a backend that reports
    /// at once can be heard before the call is known here.
    pub(super) early: std::collections::VecDeque<ProgressNotificationParam>,
}

/// Hears the backend's notifications.
#[derive(Clone)]
pub(super) struct Listener {
    pub(super) tools_changed: mpsc::Sender<()>,
    pub(super) relays: Relays,
    pub(super) notices: broadcast::Sender<Notice>,
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
pub(super) fn listen(peer: &Peer<RoleClient>, listener: Listener, backend: Backend) {
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

/// A call sent to the backend and not yet answered: when it is dropped
/// unanswered (its deadline passed, or its agent cancelled), the backend
/// is told to cancel it. Its progress relay lives as long as it does.
pub(super) struct Pending {
    pub(super) peer: Peer<RoleClient>,
    pub(super) id: Option<RequestId>,
    /// The token its progress relay is filed under, if it has one.
    pub(super) token: Option<ProgressToken>,
    pub(super) relays: Relays,
}

impl Pending {
    pub(super) fn answered(mut self) {
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
