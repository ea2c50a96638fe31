//! The `mcpbox:plugin/host` imports: what a guest may ask of the host during a call. Logs and
//! progress go to the protocol layer as events, questions to the client through the call's
//! [`ClientRequests`](super::ClientRequests); every one of them, and every announcement, is
//! charged to the call's budget as the JSON it becomes before it goes anywhere.

use super::error::Interrupt;
use super::scope::{ClientError, ClientMethod, GuestEvent, InnerCallError, MAX_CONTENTS_META, Question, Within};
use super::state::HostState;
use crate::runtime::effects::record::EffectLog;
use crate::runtime::engine::bindings::{host, types};
use crate::runtime::grants::meta::{MetaPlace, MetaReach, check_meta};
use crate::runtime::sandbox::budget::{Emission, MAX_SAVED_STATE_BYTES, MAX_TOOL_CALLS_PER_CALL, wire_len};

/// The longest key a guest may give a question.
const MAX_KEY_CHARS: usize = 64;

/// Why `key` cannot name a question, if it cannot. `call<digits>.` is the space of the
/// questions of the tools a plugin calls (`mcp/call/rounds/client.rs`, `InnerClient`): a plugin asking
/// under it could have the answer to its callee's question (a PIN, a confirmation) given to
/// its own harmless one, or the other way round.
fn key_problem(key: &str) -> Option<String> {
    let valid = !key.is_empty()
        && key.len() <= MAX_KEY_CHARS
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if !valid {
        return Some(format!("the question key {key:?} is not 1 to {MAX_KEY_CHARS} characters of [A-Za-z0-9_.-]"));
    }
    let inner = key
        .strip_prefix("call")
        .and_then(|rest| rest.split_once('.'))
        .is_some_and(|(digits, _)| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
    (inner && !crate::switched_off!("rounds.inner-keys-reserved")).then(|| {
        format!("the question key {key:?} is reserved for the questions of the tools a plugin calls (`call<N>.`)")
    })
}

fn client_method(method: host::ClientMethod) -> ClientMethod {
    match method {
        host::ClientMethod::Sample => ClientMethod::Sample,
        host::ClientMethod::Elicit => ClientMethod::Elicit,
        host::ClientMethod::ListRoots => ClientMethod::ListRoots,
    }
}

impl HostState {
    /// Asks the client `questions` (their params still JSON text), each charged to the budget
    /// as a question; the outer `Err` refuses the whole ask, a trap stops the call.
    async fn ask_client(
        &mut self,
        questions: Vec<(Option<String>, ClientMethod, String)>,
    ) -> wasmtime::Result<Result<Vec<Result<String, String>>, String>> {
        // The whole ask is checked before any of it is charged: a refused ask costs nothing.
        let mut parsed = Vec::with_capacity(questions.len());
        for (key, method, params) in questions {
            if let Some(problem) = key.as_deref().and_then(key_problem) {
                return Ok(Err(problem));
            }
            match serde_json::from_str(&params) {
                Ok(params) => parsed.push(Question { key, method, params }),
                Err(e) => return Ok(Err(format!("the request is not JSON: {e}"))),
            }
        }
        for question in &parsed {
            if !self.emit(Emission::ClientRequest, wire_len(&question.params).saturating_add(wire_len(&question.key))) {
                if self.budget.exhausted() {
                    return Err(Interrupt::OutputLimit.into());
                }
                return Ok(Err(format!(
                    "too many requests to the client in one call (at most {})",
                    crate::runtime::sandbox::budget::MAX_CLIENT_REQUESTS_PER_CALL
                )));
            }
        }
        let Some(client) = self.scope.client.clone() else {
            return Ok(Err("this call cannot reach the client".to_owned()));
        };
        tracing::debug!(plugin = %self.plugin, questions = parsed.len(), "guest asks the client");
        let kinds: Vec<&'static str> = parsed.iter().map(|q| question_kind(q.method)).collect();
        let asked = client.ask(parsed).await;
        if let Some(log) = &self.scope.effects {
            record_questions(log, &kinds, &asked);
        }
        match asked {
            Ok(answers) => Ok(Ok(answers.into_iter().map(|a| a.map(|value| value.to_string())).collect())),
            Err(ClientError::Refused(reason)) => Ok(Err(reason)),
            Err(ClientError::InputRequired) => Err(Interrupt::InputRequired.into()),
            Err(ClientError::MissingCapability(capability)) => Err(Interrupt::MissingCapability(capability).into()),
            Err(ClientError::Misuse(message)) => Err(Interrupt::Misuse(message).into()),
        }
    }

    /// `sample` and `elicit`: one question under the next generated key.
    async fn ask_one(&mut self, method: ClientMethod, request: String) -> wasmtime::Result<Result<String, String>> {
        Ok(match self.ask_client(vec![(None, method, request)]).await? {
            Ok(mut answers) => answers.pop().unwrap_or_else(|| Err("the client gave no answer".to_owned())),
            Err(refusal) => Err(refusal),
        })
    }
}

/// A question's kind as the record names it.
fn question_kind(method: ClientMethod) -> &'static str {
    match method {
        ClientMethod::Sample => "sampling",
        ClientMethod::Elicit => "elicitation",
        ClientMethod::ListRoots => "roots",
    }
}

/// Records each question and how it was answered (an elicitation's `action`, never its content).
fn record_questions(
    log: &EffectLog,
    kinds: &[&str],
    asked: &Result<Vec<Result<serde_json::Value, String>>, ClientError>,
) {
    for (at, kind) in kinds.iter().enumerate() {
        let outcome = match asked {
            Ok(answers) => match answers.get(at) {
                Some(Ok(answer)) => answer
                    .get("action")
                    .and_then(serde_json::Value::as_str)
                    .map_or_else(|| "answered".to_owned(), str::to_owned),
                Some(Err(reason)) => format!("refused: {reason}"),
                None => "unanswered".to_owned(),
            },
            Err(ClientError::InputRequired) => "pending: returned to the client".to_owned(),
            Err(ClientError::Refused(reason) | ClientError::Misuse(reason)) => format!("refused: {reason}"),
            Err(ClientError::MissingCapability(capability)) => format!("refused: the client lacks {capability}"),
        };
        log.question(kind, outcome);
    }
}

impl HostState {
    /// `result-meta` (`uri` none) and `contents-meta`: charged to the output budget as it
    /// goes out, checked against what the plugin may claim (`runtime/grants/meta.rs`).
    fn set_meta(&mut self, uri: Option<String>, meta: String) -> Result<(), String> {
        if !self.emit(Emission::Event, wire_len(&meta).saturating_add(wire_len(&uri))) {
            return Err("the call's output limit is reached".to_owned());
        }
        let place = if uri.is_some() { MetaPlace::Resource } else { MetaPlace::Other };
        let reach = MetaReach { network: self.network.policy.as_deref(), permissions: &self.ui_permissions };
        let checked = match serde_json::from_str(&meta) {
            Ok(serde_json::Value::Object(unchecked)) if crate::switched_off!("metadata.call-meta-checked") => unchecked,
            _ => check_meta(&meta, place, reach)?,
        };
        let Some(sink) = &self.scope.meta else { return Ok(()) };
        match uri {
            None => sink.set_result(checked),
            Some(uri) => {
                if !sink.set_contents(uri, checked) {
                    return Err(format!("_meta was set for more than {MAX_CONTENTS_META} contents"));
                }
            }
        }
        Ok(())
    }
}

impl types::Host for HostState {}

impl host::Host for HostState {
    fn log(&mut self, level: types::LogLevel, logger: Option<String>, data: String) {
        let data = serde_json::from_str(&data).unwrap_or(serde_json::Value::String(data));
        let bytes = wire_len(&data).saturating_add(wire_len(&logger));
        // The host's own log gets it only within the budget the guest's stderr has.
        if crate::switched_off!("output.host-log-shares-stderr") || self.stderr.take_line(bytes) {
            let plugin = &self.plugin;
            use types::LogLevel as L;
            match level {
                L::Debug => tracing::debug!(target: "mcpbox::guest", %plugin, logger, %data),
                L::Info | L::Notice => tracing::info!(target: "mcpbox::guest", %plugin, logger, %data),
                L::Warning => tracing::warn!(target: "mcpbox::guest", %plugin, logger, %data),
                _ => tracing::error!(target: "mcpbox::guest", %plugin, logger, %data),
            }
        }
        self.send(GuestEvent::Log { level, logger, data }, bytes);
    }

    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        let bytes = wire_len(&(progress, total, &message));
        self.send(GuestEvent::Progress { progress, total, message }, bytes);
    }

    fn cancelled(&mut self) -> bool {
        self.scope.cancel.is_cancelled()
    }

    async fn sample(&mut self, request: String) -> wasmtime::Result<Result<String, String>> {
        self.ask_one(ClientMethod::Sample, request).await
    }

    async fn elicit(&mut self, request: String) -> wasmtime::Result<Result<String, String>> {
        self.ask_one(ClientMethod::Elicit, request).await
    }

    async fn ask(
        &mut self,
        questions: Vec<host::Question>,
    ) -> wasmtime::Result<Result<Vec<Result<String, String>>, String>> {
        let questions = questions.into_iter().map(|q| (q.key, client_method(q.method), q.params)).collect();
        self.ask_client(questions).await
    }

    fn can_ask(&mut self, method: host::ClientMethod) -> bool {
        self.scope.client.as_ref().is_some_and(|client| client.offers(client_method(method)))
    }

    fn save_state(&mut self, state: Vec<u8>) -> Result<(), String> {
        if state.len() > MAX_SAVED_STATE_BYTES && !crate::switched_off!("rounds.saved-state-capped") {
            return Err(format!(
                "a saved state of {} bytes is over the {MAX_SAVED_STATE_BYTES} bytes a call may keep",
                state.len()
            ));
        }
        if !self.emit(Emission::SavedState, wire_len(&state)) {
            return Err("the call's output limit or its number of saved states is reached".to_owned());
        }
        if let Some(client) = &self.scope.client {
            client.save_state(state);
        }
        Ok(())
    }

    fn saved_state(&mut self) -> Option<Vec<u8>> {
        self.scope.client.as_ref().and_then(|client| client.saved_state())
    }

    async fn detach(&mut self, status_message: Option<String>) -> Result<(), String> {
        if !self.emit(Emission::Event, wire_len(&status_message)) {
            return Err("the call's output limit is reached".to_owned());
        }
        match &self.scope.client {
            Some(client) => client.detach(status_message).await,
            None => Err("this call cannot become a task".to_owned()),
        }
    }

    fn resource_updated(&mut self, uri: String) {
        if !self.emit(Emission::Announcement, wire_len(&uri)) {
            return;
        }
        if let Some(owned) = &self.scope.owned_uris
            && !owned(&uri)
            && !crate::switched_off!("catalog.announces-own-uris")
        {
            // Within the call's log budget: a thousand refusals a call must not flood the log.
            if self.stderr.take_line(uri.len()) {
                tracing::warn!(plugin = %self.plugin, %uri, "refused a resource update for a URI the plugin does not serve");
            }
            return;
        }
        if let Some(notify) = &self.scope.resource_updated {
            notify(uri);
        }
    }

    fn caller(&mut self) -> Option<host::Principal> {
        // Set only where the operator lets this plugin know (`runtime/plugin/loaded.rs`).
        self.scope.caller.as_ref().map(|caller| host::Principal {
            issuer: caller.issuer.clone(),
            subject: caller.subject.clone(),
            scopes: caller.scopes.clone(),
        })
    }

    fn result_meta(&mut self, meta: String) -> Result<(), String> {
        self.set_meta(None, meta)
    }

    fn contents_meta(&mut self, uri: String, meta: String) -> Result<(), String> {
        self.set_meta(Some(uri), meta)
    }

    fn callable_tools(&mut self) -> Vec<host::CallableTool> {
        let Some(tools) = &self.scope.tools else { return Vec::new() };
        if self.may_call.is_empty() {
            return Vec::new();
        }
        let listed: Vec<host::CallableTool> = tools
            .callable()
            .into_iter()
            .filter(|tool| self.may_call.allows(&tool.name, &tool.prefix))
            .map(|tool| host::CallableTool {
                name: tool.name,
                description: tool.description,
                input_schema: tool.input_schema.to_string(),
                output_schema: tool.output_schema.map(|schema| schema.to_string()),
            })
            .collect();
        // What the guest takes in counts like what it sends: a list is not a way around the limit.
        if !self.budget.take_in(wire_len(&listed)) {
            return Vec::new();
        }
        listed
    }

    async fn call_tool(&mut self, name: String, arguments: String) -> wasmtime::Result<Result<String, String>> {
        // (A name no plugin serves is judged by its own first part: it is refused further on.)
        let prefix = match &self.scope.tools {
            Some(tools) => tools.prefix_of(&name),
            None => None,
        };
        let prefix = prefix.unwrap_or_else(|| name.split_once('.').map(|(p, _)| format!("{p}.")).unwrap_or_default());
        if !self.may_call.allows(&name, &prefix) {
            return Ok(Err(format!(
                "plugin `{}` may not call `{name}`: the operator lists the tools it may call in [plugin.{}] may_call",
                self.plugin, self.plugin
            )));
        }
        let arguments: serde_json::Value = match serde_json::from_str(&arguments) {
            Ok(value @ serde_json::Value::Object(_)) => value,
            Ok(_) => return Ok(Err("the arguments must be a JSON object".to_owned())),
            Err(e) => return Ok(Err(format!("the arguments are not JSON: {e}"))),
        };
        if !self.emit(Emission::ToolCall, wire_len(&arguments).saturating_add(name.len())) {
            if self.budget.exhausted() {
                return Err(Interrupt::OutputLimit.into());
            }
            return Ok(Err(format!("too many calls of other tools in one call (at most {MAX_TOOL_CALLS_PER_CALL})")));
        }
        let Some(tools) = self.scope.tools.clone() else {
            return Ok(Err("no tool can be called during this request".to_owned()));
        };
        let within = Within {
            time: self.deadline.saturating_duration_since(std::time::Instant::now()),
            output: self.budget.left(),
        };
        tracing::debug!(plugin = %self.plugin, tool = %name, "guest calls another tool");
        match tools.call(name, arguments, within).await {
            Ok(result) => {
                let text = result.to_string();
                if !self.budget.take_in(text.len()) {
                    return Err(Interrupt::OutputLimit.into());
                }
                Ok(Ok(text))
            }
            Err(InnerCallError::Refused(reason)) => Ok(Err(reason)),
            Err(InnerCallError::InputRequired) => Err(Interrupt::InputRequired.into()),
            Err(InnerCallError::MissingCapability(capability)) => Err(Interrupt::MissingCapability(capability).into()),
        }
    }

    fn granted_dirs(&mut self) -> Vec<host::GrantedDir> {
        self.scope
            .grants
            .iter()
            .map(|g| host::GrantedDir { name: g.name.clone(), guest_path: g.guest_path.clone(), writable: g.writable })
            .collect()
    }
}
