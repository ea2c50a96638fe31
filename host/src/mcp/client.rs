//! A guest's questions to the client (sampling, elicitation): server-to-client requests in
//! legacy sessions, multi round-trip questions in 2026-07-28 requests. Both implement the
//! runtime's [`ClientRequests`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use rmcp::model::{ClientCapabilities, InputRequest, InputRequests, InputResponses, ServerRequest};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::runtime::sandbox::{BoxFuture, ClientError, ClientMethod, ClientRequests};

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
pub(crate) struct PeerClient {
    pub(crate) peer: Peer<RoleServer>,
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
                _ => return Err(ClientError::Refused(format!("{wire} cannot be sent as a request"))),
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
pub(crate) struct ReplayClient {
    /// `None` when the method cannot return questions.
    answers: Option<InputResponses>,
    capabilities: Option<ClientCapabilities>,
    asked: AtomicUsize,
    questions: Mutex<InputRequests>,
}

impl ReplayClient {
    /// A client for one run of a 2026-07-28 request; `answers` is `None` for methods that
    /// cannot return questions.
    pub(crate) fn new(answers: Option<InputResponses>, capabilities: Option<ClientCapabilities>) -> ReplayClient {
        ReplayClient { answers, capabilities, asked: AtomicUsize::new(0), questions: Mutex::default() }
    }

    /// The questions the run asked that have no answer yet.
    pub(crate) fn take_questions(&self) -> InputRequests {
        std::mem::take(&mut *self.questions.lock().unwrap_or_else(PoisonError::into_inner))
    }
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

#[cfg(test)]
mod fuzz;
