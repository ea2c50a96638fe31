//! A guest's questions to the client (sampling, elicitation, roots): server-to-client requests
//! in legacy sessions, multi round-trip questions in 2026-07-28 requests (basic §Multi
//! round-trip requests). Both implement the runtime's [`ClientRequests`].
#![expect(deprecated, reason = "sampling and roots stay served to the clients that use them")]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, CreateMessageResult, ElicitResult, InputRequest, InputRequests, InputResponses,
    ListRootsResult, ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde::Deserialize;
use serde_json::{Value, json};

use super::request_state::{Asked, question_digest};
use super::roots::ROOTS_QUESTION;
use crate::runtime::sandbox::{BoxFuture, ClientError, ClientMethod, ClientRequests, Question};

/// The MCP method and the capability a client request needs.
fn client_method(method: ClientMethod) -> (&'static str, fn(&ClientCapabilities) -> bool) {
    match method {
        ClientMethod::Sample => ("sampling/createMessage", |c| c.sampling.is_some()),
        ClientMethod::Elicit => ("elicitation/create", |c| c.elicitation.is_some()),
        ClientMethod::ListRoots => ("roots/list", |c| c.roots.is_some()),
    }
}

/// The part of a capability a question's params need beyond its method, and whether a client
/// declared it: URL-mode elicitation only to a client that declared `elicitation.url`, form mode
/// only to one that declared `form` (or an empty `elicitation`, which means form; 2025-11-25
/// client/elicitation §Capabilities), and `tools`/`toolChoice` in a sampling request only to one
/// that declared `sampling.tools` (2025-11-25 client/sampling §Tools in sampling).
type Declared = fn(&ClientCapabilities) -> bool;
fn sub_capability(method: ClientMethod, params: &Value) -> Option<(&'static str, Declared)> {
    match method {
        ClientMethod::Elicit if params.get("mode").and_then(Value::as_str) == Some("url") => {
            Some(("elicitation.url", |c| c.elicitation.as_ref().is_some_and(|e| e.url.is_some())))
        }
        ClientMethod::Elicit => {
            Some(("elicitation.form", |c| c.elicitation.as_ref().is_some_and(|e| e.form.is_some() || e.url.is_none())))
        }
        ClientMethod::Sample if params.get("tools").is_some() || params.get("toolChoice").is_some() => {
            Some(("sampling.tools", |c| c.sampling.as_ref().is_some_and(|s| s.tools.is_some())))
        }
        _ => None,
    }
}

/// Which capability `question` needs that `capabilities` lack, if any.
fn lacking(question: &Question, capabilities: Option<&ClientCapabilities>) -> Option<&'static str> {
    let (_, offered) = client_method(question.method);
    if !capabilities.is_some_and(offered) {
        return Some(capability_name(question.method));
    }
    match sub_capability(question.method, &question.params) {
        Some((name, declared)) if !capabilities.is_some_and(declared) => Some(name),
        _ => None,
    }
}

/// The client capability a question needs, as named in `clientCapabilities`; also the
/// prefix of its generated keys (`sampling-0`, `elicitation-1`, `roots-2`).
pub(crate) fn capability_name(method: ClientMethod) -> &'static str {
    match method {
        ClientMethod::Sample => "sampling",
        ClientMethod::Elicit => "elicitation",
        ClientMethod::ListRoots => "roots",
    }
}

/// `{method, params}` as the typed question rmcp sends or lists.
pub(crate) fn client_question(method: ClientMethod, params: Value) -> Result<InputRequest, String> {
    let (wire, _) = client_method(method);
    let message = match method {
        // `roots/list` takes no params; whatever the guest passed is not sent.
        ClientMethod::ListRoots => json!({ "method": wire }),
        _ => json!({ "method": wire, "params": params }),
    };
    match method {
        ClientMethod::Sample => serde_json::from_value(message).map(InputRequest::CreateMessage),
        ClientMethod::Elicit => serde_json::from_value(message).map(InputRequest::Elicitation),
        ClientMethod::ListRoots => serde_json::from_value(message).map(InputRequest::ListRoots),
    }
    .map_err(|e| format!("invalid {wire} request: {e}"))
}

/// Whether `answer` has the shape of a result of `method` (basic §Multi round-trip requests:
/// the server SHOULD validate `inputResponses`); one that does not is asked again.
fn fits(method: ClientMethod, answer: &Value) -> bool {
    // Deserialized from the borrowed value: checking an answer copies nothing.
    match method {
        ClientMethod::Sample => CreateMessageResult::deserialize(answer).is_ok(),
        ClientMethod::Elicit => ElicitResult::deserialize(answer).is_ok(),
        ClientMethod::ListRoots => ListRootsResult::deserialize(answer).is_ok(),
    }
}

/// Whether `answer` has the shape of a result of `request` (a question a task asked).
pub(crate) fn fits_request(request: &InputRequest, answer: &Value) -> bool {
    match request {
        InputRequest::CreateMessage(_) => fits(ClientMethod::Sample, answer),
        InputRequest::Elicitation(_) => fits(ClientMethod::Elicit, answer),
        InputRequest::ListRoots(_) => fits(ClientMethod::ListRoots, answer),
        _ => false,
    }
}

/// The prefix of mcpbox's own question keys (an approval, a link): never a plugin's, so no
/// answer to a plugin's question can pass for the person's yes, and no plugin reads it.
pub(crate) const HOST_KEYS: &str = "mcpbox.";

/// The keys a call has used, so that none is used twice; and the generated keys' counter.
#[derive(Default)]
struct Keys {
    used: Mutex<BTreeSet<String>>,
    asked: AtomicUsize,
}

impl Keys {
    /// The key of `question`: its own or the next generated one (`<kind>-<n>`, n counting
    /// every question of the call, as 0.1.0 plugins' replay relies on); a key used twice, or
    /// the host's own roots key for anything but the roots, is the guest's mistake.
    fn claim(&self, question: &Question) -> Result<String, ClientError> {
        let number = self.asked.fetch_add(1, Ordering::Relaxed);
        let key = match &question.key {
            Some(key) => key.clone(),
            None => format!("{}-{number}", capability_name(question.method)),
        };
        if key == ROOTS_QUESTION
            && question.method != ClientMethod::ListRoots
            && !crate::switched_off!("rounds.roots-key-reserved")
        {
            return Err(ClientError::Misuse(format!("the question key `{key}` is reserved for the client's roots")));
        }
        if key.starts_with(HOST_KEYS) && !crate::switched_off!("approvals.host-keys-reserved") {
            return Err(ClientError::Misuse(format!(
                "the question key `{key}` is reserved for mcpbox's own questions (`{HOST_KEYS}*`)"
            )));
        }
        if !self.used.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone())
            && !crate::switched_off!("rounds.key-once")
        {
            return Err(ClientError::Misuse(format!("the question key `{key}` is used twice in one call")));
        }
        Ok(key)
    }
}

/// A guest's questions in a legacy session: server-to-client requests (2025-06-18
/// `client/sampling`, `client/elicitation`, `client/roots`), one after the other.
pub(crate) struct PeerClient {
    peer: Peer<RoleServer>,
    keys: Keys,
}

impl PeerClient {
    pub(crate) fn new(peer: Peer<RoleServer>) -> PeerClient {
        PeerClient { peer, keys: Keys::default() }
    }
}

impl ClientRequests for PeerClient {
    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'static, Result<Vec<Result<Value, String>>, ClientError>> {
        let claimed: Result<Vec<_>, _> = questions.iter().map(|q| self.keys.claim(q)).collect();
        let peer = self.peer.clone();
        let info = self.peer.peer_info();
        let offers: Vec<Option<&'static str>> =
            questions.iter().map(|q| lacking(q, info.as_ref().map(|i| &i.capabilities))).collect();
        Box::pin(async move {
            claimed?;
            let mut answers = Vec::with_capacity(questions.len());
            for (question, offered) in questions.into_iter().zip(offers) {
                answers.push(ask_peer(&peer, question, offered).await);
            }
            Ok(answers)
        })
    }

    fn offers(&self, method: ClientMethod) -> bool {
        let (_, offered) = client_method(method);
        self.peer.peer_info().is_some_and(|info| offered(&info.capabilities))
    }
}

/// One question sent to a legacy client; `lacking` is what the client did not declare.
async fn ask_peer(peer: &Peer<RoleServer>, question: Question, lacking: Option<&'static str>) -> Result<Value, String> {
    let (wire, _) = client_method(question.method);
    match lacking {
        Some(name) if name == capability_name(question.method) => {
            return Err(format!("the client does not offer {wire}"));
        }
        Some(name) => return Err(format!("the client does not offer {wire} with {name}")),
        None => {}
    }
    let request = match client_question(question.method, question.params)? {
        InputRequest::CreateMessage(request) => ServerRequest::CreateMessageRequest(request),
        InputRequest::Elicitation(request) => ServerRequest::ElicitRequest(request),
        InputRequest::ListRoots(request) => ServerRequest::ListRootsRequest(request),
        _ => return Err(format!("{wire} cannot be sent as a request")),
    };
    let result = peer.send_request(request).await.map_err(|e| format!("{wire} failed: {e}"))?;
    serde_json::to_value(result).map_err(|e| format!("cannot encode the {wire} result: {e}"))
}

/// A guest's questions in a 2026-07-28 request: each is answered from the request's
/// `inputResponses` under its key; if any question of an `ask` has no (valid) answer, the run
/// stops and every unanswered question of it is returned to the client to answer. Guests see
/// the same answers on every run, so a run that asks the same questions gets further each
/// time; one that kept a state (`save-state`) finds it again in the next round.
pub(crate) struct ReplayClient {
    /// `None` when the method cannot return questions.
    answers: Option<InputResponses>,
    /// The question each answer's key was asked (`request_state.rs`): an answer is given to
    /// that question only.
    asked: Asked,
    capabilities: Option<ClientCapabilities>,
    keys: Keys,
    questions: Mutex<InputRequests>,
    /// What the previous round kept.
    saved_before: Option<Vec<u8>>,
    /// What this round keeps.
    saved_now: Mutex<Option<Vec<u8>>>,
}

impl ReplayClient {
    /// A client for one run of a 2026-07-28 request; `answers` is `None` for methods that
    /// cannot return questions, `asked` what their questions were; `saved` is the state the
    /// previous round kept.
    pub(crate) fn new(
        answers: Option<InputResponses>,
        asked: Asked,
        capabilities: Option<ClientCapabilities>,
        saved: Option<Vec<u8>>,
    ) -> ReplayClient {
        ReplayClient {
            answers,
            asked,
            capabilities,
            keys: Keys::default(),
            questions: Mutex::default(),
            saved_before: saved,
            saved_now: Mutex::default(),
        }
    }

    /// The questions the run asked that have no answer yet, and the state it kept for the
    /// next round.
    pub(crate) fn take_questions(&self) -> (InputRequests, Option<Vec<u8>>) {
        let questions = std::mem::take(&mut *self.questions.lock().unwrap_or_else(PoisonError::into_inner));
        (questions, self.saved_now.lock().unwrap_or_else(PoisonError::into_inner).take())
    }

    /// The key of `question`, unique in the call: a call that goes on as a task keeps the keys
    /// its rounds used (extensions/tasks: a key is never reused over a task's lifetime).
    pub(crate) fn claim(&self, question: &Question) -> Result<String, ClientError> {
        self.keys.claim(question)
    }

    /// The answer to `question`, or `None` when it has none yet (it is added to `unanswered`).
    fn answer(
        &self,
        question: Question,
        unanswered: &mut InputRequests,
    ) -> Result<Option<Result<Value, String>>, ClientError> {
        let (wire, _) = client_method(question.method);
        if let Some(name) = lacking(&question, self.capabilities.as_ref()) {
            // 2026-07-28 basic §Client capabilities: the request must declare what it needs.
            return Err(ClientError::MissingCapability(name));
        }
        let Some(answers) = &self.answers else {
            return Err(ClientError::Refused(format!("{wire} cannot be asked during this request")));
        };
        let key = self.keys.claim(&question)?;
        let method = question.method;
        let request = match client_question(method, question.params) {
            Ok(request) => request,
            Err(invalid) => return Ok(Some(Err(invalid))),
        };
        // An answer counts for the question its key was asked, not for another one asked under
        // the same key since (it is asked anew).
        let for_this = |_: &&Value| self.asked.get(&key).is_some_and(|asked| *asked == question_digest(&request));
        if let Some(answer) = answers
            .get(&key)
            .filter(|answer| crate::switched_off!("rounds.answer-fits-question") || fits(method, answer))
            .filter(|answer| crate::switched_off!("rounds.answer-bound") || for_this(answer))
        {
            return Ok(Some(Ok(answer.clone())));
        }
        unanswered.insert(key, request);
        Ok(None)
    }
}

impl ClientRequests for ReplayClient {
    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'static, Result<Vec<Result<Value, String>>, ClientError>> {
        let result = (|| {
            let mut unanswered = InputRequests::new();
            let answers: Vec<_> =
                questions.into_iter().map(|q| self.answer(q, &mut unanswered)).collect::<Result<_, _>>()?;
            if unanswered.is_empty() {
                // Every question has an answer (or a reason it cannot be asked).
                return Ok(answers.into_iter().flatten().collect());
            }
            self.questions.lock().unwrap_or_else(PoisonError::into_inner).append(&mut unanswered);
            Err(ClientError::InputRequired)
        })();
        Box::pin(std::future::ready(result))
    }

    fn offers(&self, method: ClientMethod) -> bool {
        let (_, offered) = client_method(method);
        self.capabilities.as_ref().is_some_and(offered)
    }

    fn save_state(&self, state: Vec<u8>) {
        *self.saved_now.lock().unwrap_or_else(PoisonError::into_inner) = Some(state);
    }

    fn saved_state(&self) -> Option<Vec<u8>> {
        self.saved_before.clone()
    }
}

/// The questions of an inner call (`compose.rs`): asked through the calling call's client, each
/// under a key of the inner call's own (`call<place>.<key>`), so that a call whose result is
/// replayed in a later round, and asks nothing then, moves no other question's key. An inner
/// call keeps no state for later rounds (its result is kept instead) and never becomes a task.
pub(crate) struct InnerClient {
    outer: Arc<dyn ClientRequests>,
    prefix: String,
    asked: AtomicUsize,
}

impl InnerClient {
    /// The client of the inner call at `place` in its request's order of calls.
    pub(crate) fn new(outer: Arc<dyn ClientRequests>, place: usize) -> InnerClient {
        InnerClient { outer, prefix: format!("call{place}."), asked: AtomicUsize::new(0) }
    }
}

impl ClientRequests for InnerClient {
    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'static, Result<Vec<Result<Value, String>>, ClientError>> {
        let questions = questions
            .into_iter()
            .map(|mut question| {
                let number = self.asked.fetch_add(1, Ordering::Relaxed);
                let key = match question.key.take() {
                    Some(key) => key,
                    None => format!("{}-{number}", capability_name(question.method)),
                };
                question.key = Some(format!("{}{key}", self.prefix));
                question
            })
            .collect();
        self.outer.ask(questions)
    }

    fn offers(&self, method: ClientMethod) -> bool {
        self.outer.offers(method)
    }

    fn detach(&self, _status_message: Option<String>) -> BoxFuture<'static, Result<(), String>> {
        let refusal = "a call made by another tool cannot become a task (the calling tool can)";
        if crate::switched_off!("compose.inner-detach-refused") {
            return self.outer.detach(_status_message);
        }
        Box::pin(std::future::ready(Err(refusal.to_owned())))
    }
}

#[cfg(test)]
mod fuzz;
