//! One MCP connection (for stdio: the process): what it shares with every connection, its
//! roots, subscriptions and log level, and the principal that opened it. What it answers is in
//! `handler.rs`, `lists.rs`, `observe.rs` and `scope.rs`.

#![expect(deprecated, reason = "the log level a legacy session set stays served to the clients that use it")]

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::LoggingLevel;

use super::state::McpState;
use crate::access::Principal;
use crate::mcp::call::checks::approved::SessionApprovals;
use crate::mcp::call::rounds::roots::SessionRoots;
use crate::mcp::server::notify::Subscriptions;
use crate::runtime::Change;
use tokio::sync::broadcast::Receiver;

/// One connection.
#[derive(Clone)]
pub struct Session {
    pub(crate) state: Arc<McpState>,
    pub(super) log_level: Arc<Mutex<Option<LoggingLevel>>>,
    pub(crate) roots: Arc<SessionRoots>,
    /// Resource URIs this session subscribed to (legacy `resources/subscribe`).
    pub(super) subscriptions: Subscriptions,
    /// What a guest's `resource-updated` calls (made once, shared by every call's scope).
    pub(crate) resource_updated: Arc<dyn Fn(String) + Send + Sync>,
    /// The principal that opened this session, for transports whose session is one
    /// connection (WebSocket, HTTP+SSE); others carry it with each request.
    pub(crate) principal: Option<Arc<Principal>>,
    /// One client's connection for its whole life (stdio, WebSocket, HTTP+SSE), which is the
    /// session "allow for this session" covers in 2026-07-28 requests too.
    pub(crate) connection: bool,
    /// The tools this session's user allowed for the session (`approval.rs`).
    pub(crate) approved: SessionApprovals,
    /// How the client reaches this session, as the audit names it.
    pub(crate) transport: &'static str,
    /// Change subscriptions made for `subscriptions/listen` streams about to start.
    pub(crate) listening: Arc<EarlySubscriptions>,
}

/// Change subscriptions made when a `subscriptions/listen` is accepted, before rmcp acknowledges
/// it, taken by the stream when it starts. They are all alike (every change from their making
/// on), so which stream takes which does not matter; a few left by streams that failed to start
/// are dropped, oldest first.
#[derive(Default)]
pub(crate) struct EarlySubscriptions(Mutex<std::collections::VecDeque<Receiver<Change>>>);

/// Subscriptions kept for streams about to start.
const EARLY_SUBSCRIPTIONS: usize = 64;

impl EarlySubscriptions {
    pub(crate) fn subscribe_early(&self, changes: Receiver<Change>) {
        let mut early = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if early.len() == EARLY_SUBSCRIPTIONS {
            early.pop_front();
        }
        early.push_back(changes);
    }

    pub(crate) fn take(&self) -> Option<Receiver<Change>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).pop_front()
    }
}

impl Session {
    /// A new connection to the server `state` describes.
    pub fn new(state: Arc<McpState>) -> Self {
        let live = state.live().clone();
        Session {
            state,
            log_level: Arc::default(),
            roots: Arc::new(SessionRoots::new()),
            subscriptions: Subscriptions::default(),
            resource_updated: Arc::new(move |uri| live.resource_updated(uri)),
            principal: None,
            connection: false,
            approved: SessionApprovals::default(),
            transport: "streamable-http",
            listening: Arc::default(),
        }
    }

    /// A new connection opened by `principal`, which every request on it acts for.
    pub(crate) fn for_principal(state: Arc<McpState>, principal: Option<Arc<Principal>>) -> Self {
        Session { principal, connection: true, ..Session::new(state) }
    }

    /// The session of one client's connection for its whole life (stdio).
    pub fn for_connection(state: Arc<McpState>) -> Self {
        Session { connection: true, transport: "stdio", ..Session::new(state) }
    }

    /// The session's `logging/setLevel`, if it sent one.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        *self.log_level.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
