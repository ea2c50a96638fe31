//! A running call's guest events (log and progress) as notifications to the client that made
//! the request, sent beside the call and before its response.

#![expect(deprecated, reason = "logging stays served to the clients that use it")]

use std::time::Duration;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;

use crate::mcp::wire::convert;
use crate::runtime::sandbox::GuestEvent;

/// How long one notification may take to reach the transport.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

async fn send_in_time<E>(send: impl std::future::Future<Output = Result<(), E>>) -> bool {
    matches!(tokio::time::timeout(NOTIFY_TIMEOUT, send).await, Ok(Ok(())))
}

/// Sends a call's guest events as notifications until the call drops its sender. A
/// notification that cannot be sent in time (the client stopped reading, or the session is
/// shutting down) ends forwarding for this call; the call itself goes on.
pub(crate) async fn forward_events(
    mut receiver: mpsc::UnboundedReceiver<GuestEvent>,
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    log_level: Option<LoggingLevel>,
) {
    let mut open = true;
    while let Some(event) = receiver.recv().await {
        if !open {
            continue;
        }
        match event {
            GuestEvent::Progress { progress, total, message } => {
                let Some(token) = &progress_token else { continue };
                let mut param = ProgressNotificationParam::new(token.clone(), progress);
                param.total = total;
                param.message = message;
                open = send_in_time(peer.notify_progress(param)).await;
            }
            GuestEvent::Log { level, logger, data } => {
                let level = convert::log_level(&level);
                if log_level.is_some_and(|min| convert::severity(level) >= convert::severity(min)) {
                    let mut param = LoggingMessageNotificationParam::new(level, data);
                    param.logger = logger;
                    open = send_in_time(peer.notify_logging_message(param)).await;
                }
            }
        }
    }
}
