//! The person's yes before a call of a tool the operator marked (`[plugin.NAME] approve`,
//! docs/approvals.md), asked by mcpbox itself before the plugin starts:
//!
//! - legacy sessions: a form `elicitation/create` request (2025-11-25 client/elicitation §Form
//!   mode), answered within `[approvals] timeout_ms`; the answer is the reply to mcpbox's own
//!   request id, so it belongs to this call and nothing else;
//! - 2026-07-28 requests: an `InputRequiredResult` with the same form under mcpbox's own key
//!   [`QUESTION_KEY`] (basic §Multi round-trip requests). The answer counts only beside a
//!   `requestState` mcpbox sealed when it asked *this* call (method, tool, arguments digest,
//!   principal: `request_state.rs`), and each question's id is used up once the call ran, so
//!   a replayed or edited answer approves nothing else and "allow once" runs once.
//!
//! What the person reads is mcpbox's: the plugin and tool names and the arguments escaped and
//! cut ([`readable`]), the directories it may write and the hosts it may reach; never the
//! tool's description or anything else the plugin wrote. Plugins cannot answer: their question
//! keys may not start with `mcpbox.` (`client.rs`), and the question is asked before any
//! instance of the plugin exists.

use std::sync::PoisonError;
use std::time::Instant;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, ClientCapabilities, ContentBlock, ElicitResult, ElicitationAction, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext, RoleServer, ServiceError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::approved::{ApprovedTool, PRINCIPAL_SESSION, remember};
use crate::mcp::call::request::Call;
use crate::mcp::call::rounds::client::client_question;
use crate::mcp::call::rounds::request_state::{Approval, Round};
use crate::mcp::call::{Caller, Stop};
use crate::mcp::session::Session;
use crate::mcp::wire::era::Era;
use crate::readable::readable;
use crate::runtime::plugin::Plugin;
use crate::runtime::sandbox::ClientMethod;

/// The input key of mcpbox's approval question in 2026-07-28 requests.
pub(crate) const QUESTION_KEY: &str = "mcpbox.approval";

/// What the person chose.
#[derive(Debug, PartialEq, Eq)]
enum Choice {
    Once,
    Session,
}

impl Session {
    /// The call step (`call/steps.rs`) that lets `caller`'s `call` of a tool run only with the
    /// person's yes, where its plugin's `approve` covers it: `Ok` with the id of the answer that
    /// approved it (to use up once it ran), if one did. `arguments` are the call's as canonical
    /// JSON text.
    pub(crate) async fn approval(
        &self,
        caller: Caller,
        call: &Call,
        arguments: &str,
        round: Option<&mut Round>,
    ) -> Result<Option<String>, Stop> {
        let (context, catalog, name, era) = (&call.context, &call.catalog, call.name.as_str(), call.era);
        let Some(entry) = catalog.tool(name) else { return Ok(None) };
        let Some(plugin) = catalog.plugins().get(entry.plugin) else { return Ok(None) };
        let local = &entry.item.descriptor.name;
        if !plugin.approve.needs(local) || crate::switched_off!("approvals.gate") {
            return Ok(None);
        }
        if caller == Caller::Tool && era.is_modern() {
            // A 2026-07-28 round has no place for the host's own question inside another call.
            let why = format!(
                "`{name}` needs the person's yes before each call, which is asked only when the client calls it itself"
            );
            return Err(Stop::Error(McpError::invalid_request(why, None)));
        }
        let tool =
            ApprovedTool { plugin: plugin.name.to_string(), tool: local.clone(), fingerprint: plugin.fingerprint };
        let principal = call.principal.as_ref().map(|p| p.key().to_owned());
        // A session: a legacy session, a connection (stdio, WebSocket), or a signed-in principal.
        let has_session = !era.is_modern() || self.connection || principal.is_some();
        if self.approved_for_session(&tool, era, principal.as_deref()) {
            return Ok(None);
        }
        let capabilities = match era.is_modern() {
            true => context.meta.client_capabilities(),
            false => context.peer.peer_info().map(|info| info.capabilities.clone()),
        };
        if !capabilities.as_ref().is_some_and(asks_forms) {
            let why = "the client cannot ask its user (it declares no form elicitation)";
            let _ = noted::<()>(call, Err(why.to_owned()));
            return Err(Stop::Refused(refused(name, why)));
        }
        let version = context.protocol_version().map(|v| v.as_str().to_owned()).unwrap_or_default();
        let params = self.question(plugin, local, name, arguments, has_session, &version);
        let remember = |choice: Choice| {
            if choice == Choice::Session {
                self.remember_for_session(tool.clone(), era, principal.clone());
            }
        };
        if !era.is_modern() {
            let answer = self.ask_peer(context, params).await;
            return match noted(call, answer.and_then(|answer| choice(&answer, has_session))) {
                Ok(choice) => {
                    remember(choice);
                    Ok(None)
                }
                Err(why) => Err(Stop::Refused(refused(name, &why))),
            };
        }
        let Some(round) = round else { return Err(Stop::Refused(refused(name, "this request cannot ask"))) };
        round.principal.clone_from(&principal);
        let approvals = &self.state.approvals;
        let sealed = match self.state.state_keys.approval(round)? {
            // Test builds only: an answer without the state mcpbox sealed when it asked counts.
            None if crate::switched_off!("approvals.answer-bound") => Some(Approval::Asked { id: String::new() }),
            sealed => sealed,
        };
        match sealed {
            Some(Approval::Granted { id }) if !approvals.used(&id) => {
                round.approval = Some(Approval::Granted { id: id.clone() });
                return Ok(Some(id));
            }
            Some(Approval::Asked { id }) if !approvals.used(&id) => {
                if let Some(answer) = round.new_answer(QUESTION_KEY) {
                    return match noted(call, choice(answer, has_session)) {
                        Ok(choice) => {
                            remember(choice);
                            round.approval = Some(Approval::Granted { id: id.clone() });
                            Ok(Some(id))
                        }
                        Err(why) => Err(Stop::Refused(refused(name, &why))),
                    };
                }
            }
            // No state, a state from before the question, or one whose call ran: ask (again).
            _ => {}
        }
        let request = client_question(ClientMethod::Elicit, params)
            .map_err(|e| McpError::internal_error(format!("cannot word the approval question: {e}"), None))?;
        round.approval = Some(Approval::Asked { id: approvals.new_id()? });
        let mut questions =
            InputRequiredResult::from_input_requests(InputRequests::from([(QUESTION_KEY.to_owned(), request)]));
        questions.request_state =
            Some(self.state.state_keys.seal(round, &InputResponses::new(), &Default::default(), None, &[])?);
        let _ = noted::<()>(call, Err("pending: returned to the client".to_owned()));
        Err(Stop::Ask(questions))
    }

    fn approved_for_session(&self, tool: &ApprovedTool, era: Era, principal: Option<&str>) -> bool {
        if !era.is_modern() || self.connection {
            return self.approved.lock().unwrap_or_else(PoisonError::into_inner).contains(tool);
        }
        let Some(principal) = principal else { return false };
        let remembered = self.state.approvals.principals.lock().unwrap_or_else(PoisonError::into_inner);
        remembered.get(&(principal.to_owned(), tool.clone())).is_some_and(|until| *until > Instant::now())
    }

    fn remember_for_session(&self, tool: ApprovedTool, era: Era, principal: Option<String>) {
        if !era.is_modern() || self.connection {
            self.approved.lock().unwrap_or_else(PoisonError::into_inner).insert(tool);
        } else if let Some(principal) = principal {
            let mut remembered = self.state.approvals.principals.lock().unwrap_or_else(PoisonError::into_inner);
            remember(&mut remembered, (principal, tool), Instant::now() + PRINCIPAL_SESSION);
        }
    }

    /// The form: what will run, with which grants, and the choices.
    fn question(
        &self,
        plugin: &Plugin,
        tool: &str,
        served: &str,
        arguments: &str,
        has_session: bool,
        version: &str,
    ) -> Value {
        let message = format!(
            "Approve this call? The operator asks for your yes before every call of this tool.\n\n\
             Tool: {} (served as {})\nPlugin: {}\n{}\nAt stake: {}\n\n\
             mcpbox wrote this text; nothing in it but the names and arguments comes from the plugin or the model.",
            readable(tool, 200),
            readable(served, 200),
            readable(&plugin.name, 200),
            super::shown_arguments::shown(arguments),
            self.at_stake(plugin),
        );
        let mut choices = vec![("once", "Allow once")];
        if has_session {
            choices.push(("session", "Allow for this session"));
        }
        choices.push(("deny", "Deny"));
        // 2025-11-25 titled single-select enums; older clients know `enumNames`.
        let decision = if version >= "2025-11-25" {
            let options: Vec<Value> =
                choices.iter().map(|(value, title)| json!({ "const": value, "title": title })).collect();
            json!({ "type": "string", "title": "Decision", "oneOf": options })
        } else {
            let values: Vec<&str> = choices.iter().map(|(value, _)| *value).collect();
            let titles: Vec<&str> = choices.iter().map(|(_, title)| *title).collect();
            json!({ "type": "string", "title": "Decision", "enum": values, "enumNames": titles })
        };
        json!({ "mode": "form", "message": message, "requestedSchema": {
            "type": "object", "properties": { "decision": decision }, "required": ["decision"] } })
    }

    /// The directories the plugin may write and the hosts it may reach, at most (a client's
    /// roots can only narrow them).
    fn at_stake(&self, plugin: &Plugin) -> String {
        let policy = &plugin.policy;
        let shared = self.state.allowed.iter().filter(|_| policy.shared_roots);
        let own = policy.dirs.iter().map(|d| &d.dir);
        let writes: Vec<String> = shared
            .chain(own)
            .filter(|dir| dir.writable)
            .map(|dir| {
                let per_principal = if dir.per_principal { "/{sub}" } else { "" };
                readable(&format!("{}{per_principal}", dir.path.display()), 300)
            })
            .collect();
        let hosts: Vec<String> = policy
            .network
            .iter()
            .flat_map(|network| network.allow.iter().map(|host| readable(&host.to_string(), 300)))
            .collect();
        let writes =
            if writes.is_empty() { "writes nowhere".to_owned() } else { format!("writes {}", writes.join(", ")) };
        let hosts =
            if hosts.is_empty() { "reaches no host".to_owned() } else { format!("reaches {}", hosts.join(", ")) };
        format!("{writes}; {hosts}")
    }

    /// Asks a legacy session's client; the answer, or why there is none.
    async fn ask_peer(&self, context: &RequestContext<RoleServer>, params: Value) -> Result<Value, String> {
        let request = match client_question(ClientMethod::Elicit, params) {
            Ok(InputRequest::Elicitation(request)) => ServerRequest::ElicitRequest(request),
            Ok(_) | Err(_) => return Err("mcpbox could not word its question".to_owned()),
        };
        let timeout = self.state.approvals.timeout;
        let options = PeerRequestOptions::with_timeout(timeout);
        let asked = async {
            let handle = context.peer.send_request_with_option(request, options).await?;
            handle.await_response().await
        };
        let answer = tokio::select! {
            answer = asked => answer,
            () = context.ct.cancelled() => return Err("the call was cancelled while its user was asked".to_owned()),
        };
        match answer {
            Ok(result) => serde_json::to_value(result).map_err(|e| format!("cannot read the answer: {e}")),
            Err(ServiceError::Timeout { .. }) => {
                Err(format!("the user did not answer within {} s", timeout.as_secs_f64()))
            }
            Err(e) => Err(format!("the question failed: {e}")),
        }
    }
}

/// Whether a client asks its user forms: `elicitation` declared, with `form`, or empty
/// (2025-11-25 client/elicitation: an empty object means form mode only).
fn asks_forms(capabilities: &ClientCapabilities) -> bool {
    capabilities.elicitation.as_ref().is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The person's choice in `answer`, or why the call does not run.
fn choice(answer: &Value, has_session: bool) -> Result<Choice, String> {
    let result = ElicitResult::deserialize(answer).map_err(|_| "the answer is not an elicitation result".to_owned())?;
    match result.action {
        ElicitationAction::Decline => return Err("the user declined".to_owned()),
        ElicitationAction::Cancel => return Err("the user cancelled the question".to_owned()),
        ElicitationAction::Accept => {}
        _ => return Err("the answer is no action mcpbox knows".to_owned()),
    }
    match result.content.as_ref().and_then(|content| content["decision"].as_str()) {
        Some("once") => Ok(Choice::Once),
        Some("session") if has_session => Ok(Choice::Session),
        Some("deny") => Err("the user denied it".to_owned()),
        _ => Err("the answer chose none of the offered decisions".to_owned()),
    }
}

/// The `isError` result of a call that did not run.
fn refused(tool: &str, why: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "mcpbox did not run `{}`: it needs the user's approval, and {why}.",
        readable(tool, 200)
    ))])
}

/// Records the person's answer in the call's audit line, if the audit keeps one.
fn noted<T: std::fmt::Debug>(call: &Call, answer: Result<T, String>) -> Result<T, String> {
    if let Some(log) = call.effects() {
        let outcome = match &answer {
            Ok(choice) => format!("allowed: {choice:?}").to_lowercase(),
            Err(why) if why.starts_with("pending") => why.clone(),
            Err(why) => format!("refused: {why}"),
        };
        log.question("approval", outcome);
    }
    answer
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_an_accepted_offered_decision_approves() {
        let accept = |decision: &str| json!({ "action": "accept", "content": { "decision": decision } });
        assert_eq!(choice(&accept("once"), false), Ok(Choice::Once));
        assert_eq!(choice(&accept("session"), true), Ok(Choice::Session));
        assert!(choice(&accept("session"), false).is_err());
        assert!(choice(&accept("deny"), true).unwrap_err().contains("denied"));
        assert!(choice(&json!({ "action": "decline" }), true).unwrap_err().contains("declined"));
        assert!(choice(&json!({ "action": "cancel" }), true).unwrap_err().contains("cancelled"));
        assert!(choice(&json!({ "action": "accept" }), true).is_err());
        assert!(choice(&json!("yes"), true).is_err());
    }
}
