//! The scope a request's call runs in: its directories, where its guest's questions go, and
//! its guest events forwarded as notifications. Era differences come from [`Era`]: a legacy
//! session's roots and server-to-client requests, or a 2026-07-28 request's multi round-trip
//! answers (basic §Multi round-trip requests), where a question without an answer ends the
//! call with an `InputRequiredResult` and the client repeats it with `inputResponses`.

use std::future::Future;
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{InputRequiredResult, InputResponses};
use rmcp::service::{RequestContext, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::compose::{InnerCalls, Recorded, Tree};
use super::events::forward_events;
use super::request::Call;
use crate::mcp::call::rounds::client::{PeerClient, ReplayClient};
use crate::mcp::call::rounds::request_state::{Asked, Round, StateKeys, question_digest};
use crate::mcp::call::rounds::roots::{self, FsView};
use crate::mcp::session::Session;
use crate::runtime::CallScope;
use crate::runtime::sandbox::ClientRequests;

/// An opened round of a 2026-07-28 request (see [`Session::open_round`]).
pub(crate) struct OpenRound {
    pub(crate) view: FsView,
    pub(crate) replay: Arc<ReplayClient>,
    round: Option<Round>,
    /// The answers so far, carried into the next round's `requestState`.
    answers: Option<InputResponses>,
    /// What their questions were.
    asked: Asked,
    /// The inner calls earlier rounds completed (`compose.rs`).
    pub(crate) calls: Vec<Recorded>,
}

/// `questions` with the `answers` so far (to the questions `asked`) and `saved` sealed into
/// their `requestState` (none for a method that cannot return questions, which has no
/// `round`). Each question is sealed with its digest, so that its answer counts for it alone; a
/// key asked anew drops the answer it had (it answered another question).
fn seal(
    keys: &StateKeys,
    round: Option<&Round>,
    (answers, asked): (Option<&InputResponses>, &Asked),
    mut questions: InputRequiredResult,
    saved: Option<Vec<u8>>,
    calls: &[Recorded],
) -> Result<InputRequiredResult, McpError> {
    if let Some(round) = round {
        let now = questions.input_requests.iter().flatten();
        let now: Asked = now.map(|(key, request)| (key.clone(), question_digest(request))).collect();
        let mut answers = answers.cloned().unwrap_or_default();
        answers.retain(|key, _| !now.contains_key(key));
        let mut asked: Asked =
            asked.iter().filter(|(key, _)| answers.contains_key(*key)).map(|(k, d)| (k.clone(), d.clone())).collect();
        asked.extend(now);
        questions.request_state = Some(keys.seal(round, &answers, &asked, saved.as_deref(), calls)?);
    }
    Ok(questions)
}

impl OpenRound {
    /// The questions the run asked that have no answer yet, sealed with its saved state and the
    /// inner calls it completed; `None` when it asked none.
    pub(crate) fn unanswered(
        &self,
        keys: &StateKeys,
        calls: &[Recorded],
    ) -> Result<Option<InputRequiredResult>, McpError> {
        let (questions, saved) = self.replay.take_questions();
        if questions.is_empty() {
            return Ok(None);
        }
        let questions = InputRequiredResult::from_input_requests(questions);
        seal(keys, self.round.as_ref(), (self.answers.as_ref(), &self.asked), questions, saved, calls).map(Some)
    }
}

impl Session {
    /// Runs `call` with this request's scope. Its guest's events are forwarded beside the call
    /// in the same task (no spawn on the hot path) and all sent before `call`'s output is
    /// returned, so they precede the response. `round` is the 2026-07-28 round of a method
    /// that may return `InputRequiredResult` (see [`Round::of`]), `None` for the others and in
    /// legacy sessions. The questions come back with the answers so far sealed into their
    /// `requestState`; a `requestState` that does not open is the JSON-RPC error.
    pub(crate) async fn with_scope<T, F: Future<Output = T>>(
        &self,
        request: &Call,
        round: Option<Round>,
        call: impl FnOnce(CallScope) -> F,
    ) -> Result<Result<T, InputRequiredResult>, McpError> {
        let (context, era) = (&request.context, request.era);
        let (view, client, opened) = if era.is_modern() {
            let opened = match self.open_round(context, round)? {
                Ok(opened) => opened,
                Err(questions) => return Ok(Err(questions)),
            };
            (opened.view.clone(), opened.replay.clone() as Arc<dyn ClientRequests>, Some(opened))
        } else {
            let view = self.roots.view(&self.state.operator_grants).await;
            (view, Arc::new(PeerClient::new(context.peer.clone())) as Arc<dyn ClientRequests>, None)
        };
        let mut scope = self.call_scope(request, view, client, context.ct.clone());
        // The other tools its guest may call (WIT 0.1.4), with what earlier rounds completed.
        let tree = Tree::new(opened.as_ref().map(|opened| opened.calls.clone()).unwrap_or_default());
        let progress_token = context.meta.get_progress_token();
        let log_level = era.log_level(context, self.log_level());
        let with_tools = |mut scope: CallScope| {
            let tools = InnerCalls::new(self.clone(), request.clone(), &scope, tree.clone());
            scope.tools = Some(Arc::new(tools));
            scope
        };
        let output = if progress_token.is_none() && log_level.is_none() {
            call(with_tools(scope)).await
        } else {
            let (sender, receiver) = mpsc::unbounded_channel();
            // The sender lives in the scope, which the call drops when it ends; that ends the
            // forwarding.
            scope.events = Some(sender);
            let scope = with_tools(scope);
            let forward = forward_events(receiver, context.peer.clone(), progress_token, log_level);
            tokio::join!(call(scope), forward).0
        };
        if let Some(opened) = opened
            && let Some(questions) = opened.unanswered(&self.state.state_keys, &tree.recorded())?
        {
            return Ok(Err(questions));
        }
        Ok(Ok(output))
    }

    /// The scope of `call`, as every kind of call starts it (a call that goes on as a task too:
    /// `tasks/call.rs`): its directories `view`, its guest's questions going to `client`,
    /// stopped by `cancel`, made for its principal with its linked accounts, its effects
    /// recorded for the audit, the `_meta` its guest sets going to the call's. Its time limit,
    /// events and inner calls are the caller's to set.
    pub(crate) fn call_scope(
        &self,
        call: &Call,
        view: FsView,
        client: Arc<dyn ClientRequests>,
        cancel: CancellationToken,
    ) -> CallScope {
        let principal = &call.principal;
        CallScope {
            grants: view.grants,
            client_roots: view.client_roots,
            cancel,
            timeout: None,
            events: None,
            client: Some(client),
            resource_updated: Some(self.resource_updated.clone()),
            // The catalog names the called plugin's URIs.
            owned_uris: None,
            output_hold: None,
            principal_dir: principal.as_ref().map(|p| p.dir_name().clone()),
            caller: principal.as_ref().map(|p| p.caller().clone()),
            linked: self.state.linked(principal.as_ref()),
            effects: call.effects(),
            meta: call.meta.clone(),
            tools: None,
        }
    }

    /// A 2026-07-28 request's round: its `requestState` opened (the JSON-RPC error if it does
    /// not open), its directories, and the client that answers its guest's questions from its
    /// `inputResponses`; or, when the host must ask for the client's roots first, that question.
    pub(crate) fn open_round(
        &self,
        context: &RequestContext<RoleServer>,
        mut round: Option<Round>,
    ) -> Result<Result<OpenRound, InputRequiredResult>, McpError> {
        let keys = &self.state.state_keys;
        if let Some(round) = round.as_mut() {
            round.principal = self.principal(context).map(|p| p.key().to_owned());
        }
        let carried = round.as_mut().map(|round| keys.carried(round)).transpose()?;
        let (answers, carried) =
            carried.map(|carried| (carried.answers, (carried.saved, carried.calls, carried.asked))).unzip();
        let (saved, calls, asked) = carried.unwrap_or_default();
        match self.modern_parts(context, answers.as_ref(), &asked, saved.clone()) {
            Ok((view, replay)) => Ok(Ok(OpenRound { view, replay, round, answers, asked, calls })),
            // The host's own question comes first; the plugin's state stays for later.
            Err(questions) => seal(keys, round.as_ref(), (answers.as_ref(), &asked), questions, saved, &calls).map(Err),
        }
    }

    /// A 2026-07-28 request's directories (its roots answer, when its client declares roots and
    /// they can narrow anything) and the client that answers its guest's questions.
    fn modern_parts(
        &self,
        context: &RequestContext<RoleServer>,
        answers: Option<&InputResponses>,
        asked: &Asked,
        saved: Option<Vec<u8>>,
    ) -> Result<(FsView, Arc<ReplayClient>), InputRequiredResult> {
        let capabilities = context.meta.client_capabilities();
        let asks_roots =
            self.state.roots_narrow(&self.state.catalog()) && capabilities.as_ref().is_some_and(|c| c.roots.is_some());
        let view = match answers {
            Some(answers) if asks_roots => roots::modern_view(&self.state.allowed, answers)?,
            _ => FsView::operator(&self.state.operator_grants),
        };
        Ok((view, Arc::new(ReplayClient::new(answers.cloned(), asked.clone(), capabilities, saved))))
    }
}
