//! What goes from a running call to the client: a guest's questions (sampling, elicitation)
//! as server-to-client requests in legacy sessions or as multi round-trip questions in
//! 2026-07-28 requests, and its log and progress reports as notifications.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequests, InputResponses, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::convert;
use crate::sandbox::{BoxFuture, ClientError, ClientMethod, ClientRequests, GuestEvent};

/// How long one notification may take to reach the transport.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

async fn send_in_time<E>(send: impl std::future::Future<Output = Result<(), E>>) -> bool {
    matches!(tokio::time::timeout(NOTIFY_TIMEOUT, send).await, Ok(Ok(())))
}

/// The MCP method and the capability a client request needs.
fn client_method(method: ClientMethod) -> (&'static str, fn(&ClientCapabilities) -> bool) {
    match method {
        ClientMethod::Sample => ("sampling/createMessage", |c| c.sampling.is_some()),
        ClientMethod::Elicit => ("elicitation/create", |c| c.elicitation.is_some()),
    }
}

/// The client capability a question needs, as named in `clientCapabilities`.
fn capability_name(method: ClientMethod) -> &'static str {
    match method {
        ClientMethod::Sample => "sampling",
        ClientMethod::Elicit => "elicitation",
    }
}

/// `{method, params}` as the typed question rmcp sends or lists.
fn client_question(method: ClientMethod, params: Value) -> Result<InputRequest, ClientError> {
    let (wire, _) = client_method(method);
    let message = json!({ "method": wire, "params": params });
    match method {
        ClientMethod::Sample => serde_json::from_value(message).map(InputRequest::CreateMessage),
        ClientMethod::Elicit => serde_json::from_value(message).map(InputRequest::Elicitation),
    }
    .map_err(|e| ClientError::Refused(format!("invalid {wire} request: {e}")))
}

/// A guest's `sample` and `elicit` in a legacy session: server-to-client requests
/// (2025-06-18 `client/sampling`, `client/elicitation`).
pub(super) struct PeerClient {
    pub(super) peer: Peer<RoleServer>,
}

impl ClientRequests for PeerClient {
    fn request(&self, method: ClientMethod, params: Value) -> BoxFuture<'static, Result<Value, ClientError>> {
        let peer = self.peer.clone();
        Box::pin(async move {
            let (wire, offered) = client_method(method);
            if !peer.peer_info().is_some_and(|info| offered(&info.capabilities)) {
                return Err(ClientError::Refused(format!("the client does not offer {wire}")));
            }
            let request = match client_question(method, params)? {
                InputRequest::CreateMessage(request) => ServerRequest::CreateMessageRequest(request),
                InputRequest::Elicitation(request) => ServerRequest::ElicitRequest(request),
                _ => unreachable!("client_question only builds sampling and elicitation"),
            };
            let result =
                peer.send_request(request).await.map_err(|e| ClientError::Refused(format!("{wire} failed: {e}")))?;
            serde_json::to_value(result)
                .map_err(|e| ClientError::Refused(format!("cannot encode the {wire} result: {e}")))
        })
    }
}

/// A guest's `sample` and `elicit` in a 2026-07-28 request: the n-th question of a run is
/// answered from the request's `inputResponses` under `<kind>-<n>`; a question without an
/// answer stops the run and is returned to the client to answer. Guests see the same answers
/// on every run, so a run that asks the same questions in the same order gets further each time.
pub(super) struct ReplayClient {
    /// `None` when the method cannot return questions.
    pub(super) answers: Option<InputResponses>,
    pub(super) capabilities: Option<ClientCapabilities>,
    pub(super) asked: AtomicUsize,
    pub(super) questions: Mutex<InputRequests>,
}

impl ClientRequests for ReplayClient {
    fn request(&self, method: ClientMethod, params: Value) -> BoxFuture<'static, Result<Value, ClientError>> {
        let number = self.asked.fetch_add(1, Ordering::Relaxed);
        let (wire, offered) = client_method(method);
        let result = (|| {
            if !self.capabilities.as_ref().is_some_and(offered) {
                // 2026-07-28 basic §Client capabilities: the request must declare what it needs.
                return Err(ClientError::MissingCapability(capability_name(method)));
            }
            let Some(answers) = &self.answers else {
                return Err(ClientError::Refused(format!("{wire} cannot be asked during this request")));
            };
            let key = format!("{}-{number}", wire.split('/').next().unwrap_or(wire));
            if let Some(answer) = answers.get(&key) {
                return Ok(answer.clone());
            }
            let question = client_question(method, params)?;
            self.questions.lock().unwrap_or_else(PoisonError::into_inner).insert(key, question);
            Err(ClientError::InputRequired)
        })();
        Box::pin(std::future::ready(result))
    }
}

/// Sends a call's guest events as notifications until the call drops its sender. A
/// notification that cannot be sent in time (the client stopped reading, or the session is
/// shutting down) ends forwarding for this call; the call itself goes on.
pub(super) async fn forward_events(
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
