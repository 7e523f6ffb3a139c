//! What sessions ask of the backend, asked again after it restarts: the
//! log level (the most verbose any session asked for; [`severity`] orders
//! them) and subscriptions to resources' updates, one per resource however
//! many sessions want it (`resources/subscribe`, or on a 2026-07-28
//! connection a stream of its updates).

use std::sync::{Arc, PoisonError};

use rmcp::RoleClient;
use rmcp::model::{LoggingLevel, ProtocolVersion, ServerNotification, SetLevelRequestParams, SubscriptionFilter};
use rmcp::service::{Peer, ServiceError};
use tokio::sync::broadcast;

use super::{Notice, Upstream, UpstreamError};

/// How many sessions want a resource's updates, and whether the backend
/// took the subscription.
#[derive(Default)]
pub(super) struct Subscribed {
    sessions: usize,
    /// Set once the backend took it: sessions that come while it is asked
    /// wait for its answer.
    taken: Arc<tokio::sync::OnceCell<()>>,
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

impl Upstream {
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
    pub(super) async fn ask_updates(&self, peer: &Peer<RoleClient>, uri: &str) -> Result<(), UpstreamError> {
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

    pub(super) async fn ask_log_level(&self, peer: &Peer<RoleClient>, level: LoggingLevel) {
        if self.info().is_none_or(|i| i.capabilities.logging.is_none()) {
            return;
        }
        if let Err(e) = self.within(peer.set_level(SetLevelRequestParams::new(level))).await {
            tracing::warn!(error = %e, "the backend did not take the log level");
        }
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
