//! Changes (hot reload, resource updates) told to clients, the same way in both eras: a legacy
//! session gets `notifications/*/list_changed` and the updates of the resources it subscribed
//! to (`resources/subscribe`); a 2026-07-28 `subscriptions/listen` stream gets what its accepted
//! filter names (basic/patterns/subscriptions). [`pump`] is the one loop for both.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer, SubscriptionSendError, SubscriptionSink};
use tokio::sync::broadcast;

use crate::runtime::Change;

/// Where one client's change notifications go.
pub(crate) enum Notifier<'a> {
    /// A legacy session, with the URIs it subscribed to.
    Session { peer: &'a Peer<RoleServer>, subscriptions: &'a Mutex<BTreeSet<String>> },
    /// A 2026-07-28 subscription stream; rmcp's sink drops what the accepted filter excludes.
    Stream(&'a SubscriptionSink),
}

impl Notifier<'_> {
    /// Sends `change` if this client wants it; false once the client is gone.
    async fn send(&self, change: Change) -> bool {
        match self {
            Notifier::Session { peer, subscriptions } => {
                let sent = match change {
                    Change::Tools => peer.notify_tool_list_changed().await,
                    Change::Prompts => peer.notify_prompt_list_changed().await,
                    Change::Resources => peer.notify_resource_list_changed().await,
                    Change::ResourceUpdated(uri) => {
                        if !subscriptions.lock().unwrap_or_else(PoisonError::into_inner).contains(&uri) {
                            return true;
                        }
                        peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await
                    }
                };
                sent.is_ok()
            }
            Notifier::Stream(sink) => {
                let sent = match change {
                    Change::Tools => sink.notify_tool_list_changed().await,
                    Change::Prompts => sink.notify_prompt_list_changed().await,
                    Change::Resources => sink.notify_resource_list_changed().await,
                    Change::ResourceUpdated(uri) => {
                        let filter = sink.accepted();
                        if !filter.resource_subscriptions.as_ref().is_some_and(|uris| uris.contains(&uri)) {
                            return true;
                        }
                        sink.notify_resource_updated(uri).await
                    }
                };
                !matches!(sent, Err(SubscriptionSendError::SubscriptionClosed))
            }
        }
    }
}

/// Tells `notifier` every change until the changes end or the client is gone.
pub(crate) async fn pump(mut changes: broadcast::Receiver<Change>, notifier: Notifier<'_>) {
    loop {
        let change = match changes.recv().await {
            Ok(change) => change,
            // A slow client skips some hints; list changes are idempotent.
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if !notifier.send(change).await {
            return;
        }
    }
}

/// A legacy session's subscriptions, shared by its handler and its pump.
pub(crate) type Subscriptions = Arc<Mutex<BTreeSet<String>>>;
