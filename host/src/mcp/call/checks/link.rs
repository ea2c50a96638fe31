//! A call of a plugin that sends each caller's own token (`oauth` credentials) when the caller
//! has not linked that account yet: mcpbox asks the user to, with a URL-mode elicitation
//! pointing at its own link (`access/vault/links.rs`), before the plugin starts.
//!
//! - 2025-11-25 clients that declare URL elicitation get `URLElicitationRequiredError`
//!   (`client/elicitation` §URL Elicitation Required Error, code -32042) and retry;
//! - 2026-07-28 requests get an `InputRequiredResult` with the elicitation under a key of
//!   mcpbox's own (`mcpbox.link.CLIENT`, sealed in `requestState` like a plugin's questions);
//!   the retry that accepts it waits (basic §Multi round-trip: "it may need to block until the
//!   request is fulfilled") up to [`LINK_WAIT`] for the account, then asks again;
//! - any other client gets an `isError` result naming the link, for its user to open.

use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorCode, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use serde_json::json;

use crate::mcp::call::Stop;
use crate::mcp::call::request::Call;
use crate::mcp::call::rounds::request_state::Round;
use crate::mcp::session::Session;

/// How long a 2026-07-28 retry that accepted the link waits for the account.
const LINK_WAIT: Duration = Duration::from_secs(60);

/// The input key of mcpbox's own question for `client`'s link.
fn question_key(client: &str) -> String {
    format!("mcpbox.link.{client}")
}

impl Session {
    /// The call step (`call/steps.rs`) that stops a `call` of a tool whose plugin needs an
    /// account the caller has not linked. `round` is the 2026-07-28 round of a client's call:
    /// without one (a tool's call), the link is named in a refusal instead of asked for.
    pub(crate) async fn link_first(&self, call: &Call, round: Option<&mut Round>) -> Result<(), Stop> {
        let (context, catalog, name) = (&call.context, &call.catalog, call.name.as_str());
        let (Some(vault), Some(plugin)) = (&self.state.vault, catalog.tool_plugin(name)) else { return Ok(()) };
        let clients = plugin.policy.linked_clients();
        if clients.is_empty() {
            return Ok(());
        }
        let Some(principal) = call.principal.clone() else {
            let why = format!("`{name}` sends each caller's own token and needs a signed-in caller ([auth])");
            return Err(Stop::Error(McpError::invalid_request(why, None)));
        };
        let unavailable =
            |why: String| McpError::internal_error(format!("the token vault is unavailable: {why}"), None);
        let mut missing = vault.missing(&principal, &clients).await.map_err(unavailable)?;
        let era = call.era;
        if era.is_modern() {
            let accepted =
                round.as_ref().is_some_and(|r| missing.iter().any(|c| r.answered(&question_key(c), "accept")));
            let until = Instant::now() + LINK_WAIT;
            while accepted && !missing.is_empty() && Instant::now() < until && !context.ct.is_cancelled() {
                tokio::time::sleep(Duration::from_millis(250)).await;
                missing = vault.missing(&principal, &clients).await.map_err(unavailable)?;
            }
        }
        let Some(client) = missing.first() else { return Ok(()) };
        let (id, url) = vault.new_link(&principal, client).await.map_err(unavailable)?;
        let message = format!(
            "`{name}` calls a service with your own account at `{client}`, which is not linked yet: open the link, \
             sign in, and allow it; then call again."
        );
        if era.is_modern() {
            let Some(round) = round else { return Err(Stop::Refused(error_result(&message, &url))) };
            let request = json!({ "method": "elicitation/create",
                "params": { "mode": "url", "message": message, "url": url, "elicitationId": id } });
            let request: InputRequest = serde_json::from_value(request)
                .map_err(|e| McpError::internal_error(format!("cannot word the link question: {e}"), None))?;
            let mut questions =
                InputRequiredResult::from_input_requests(InputRequests::from([(question_key(client), request)]));
            round.principal = Some(principal.key().to_owned());
            questions.request_state =
                Some(self.state.state_keys.seal(round, &InputResponses::new(), &Default::default(), None, &[])?);
            return Err(Stop::Ask(questions));
        }
        let url_elicitation = context
            .peer
            .peer_info()
            .and_then(|info| info.capabilities.elicitation.as_ref().map(|e| e.url.is_some()))
            .unwrap_or(false);
        if url_elicitation {
            let data =
                json!({ "elicitations": [{ "mode": "url", "elicitationId": id, "url": url, "message": message }] });
            return Err(Stop::Error(McpError::new(ErrorCode(-32042), format!("{message} {url}"), Some(data))));
        }
        Err(Stop::Refused(error_result(&message, &url)))
    }
}

/// The answer to a client that cannot open a URL itself: the link, for its user.
fn error_result(message: &str, url: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("{message} Link: {url}"))])
}
