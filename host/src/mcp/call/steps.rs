//! The steps before a tool's plugin starts, in their order: the tool is known (to a composer's
//! code, only one meant for a model), the principal is admitted (entitlement, then limits:
//! `admission.rs`), the accounts its plugin sends the caller's own token to are linked (`link.rs`),
//! and the person said yes where the operator asks for it (`approval.rs`). Every kind of call
//! takes them through [`Session::tool_call_steps`] and nowhere else, so a step added here holds
//! for the client's calls, for inner calls and for calls that go on as tasks alike
//! (`approvals::a_marked_tool_waits_for_the_yes_whoever_calls_it_and_however_it_would_run`).

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, InputRequiredResult};

use super::compose::for_the_model;
use super::request::Call;
use crate::mcp::call::checks::admission::Pass;
use crate::mcp::call::rounds::request_state::Round;
use crate::mcp::session::Session;
use crate::mcp::wire::errors::request_error;
use crate::runtime::{CallError, Catalog};

/// Who makes a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Caller {
    /// The client, with a `tools/call` of its own: its request may carry the answers to the
    /// host's questions.
    Client,
    /// A tool's code within the client's request (WIT 0.1.4 `host.call-tool`): the host asks
    /// the client nothing in its name.
    Tool,
}

/// What a call answers instead of running, when a step stops it.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The request fails with this JSON-RPC error.
    Error(McpError),
    /// The call's result is this refusal (`isError`), for the model to read.
    Refused(CallToolResult),
    /// 2026-07-28: the host's question, for the client to answer and repeat the request with.
    Ask(InputRequiredResult),
}

impl From<McpError> for Stop {
    fn from(error: McpError) -> Stop {
        Stop::Error(error)
    }
}

impl Stop {
    /// The answer to the client's `tools/call` that stopped.
    pub(crate) fn answer(self) -> Result<CallToolResponse, McpError> {
        match self {
            Stop::Error(error) => Err(error),
            Stop::Refused(result) => Ok(CallToolResponse::from(result)),
            Stop::Ask(questions) => Ok(CallToolResponse::InputRequired(questions)),
        }
    }
}

/// A call every step let through, until it has run.
pub(crate) struct Ready {
    /// Counted as running against the principal's limits until dropped.
    _pass: Option<Pass>,
    /// The id of the answer that approved it.
    approved: Option<String>,
}

impl Ready {
    /// The call ran to an end (or went on as a task): the answer that approved it approves
    /// nothing more.
    pub(crate) fn ran(&self, session: &Session) {
        if let Some(id) = &self.approved {
            session.state.approvals.use_up(id);
        }
    }
}

impl Session {
    /// The steps before `caller`'s `call` of a tool (with `arguments`, canonical JSON text)
    /// runs, in order; the first that stops it says what to answer instead. `round` is the
    /// 2026-07-28 round of a client's call (`None` in a legacy session and for a tool's).
    pub(crate) async fn tool_call_steps(
        &self,
        caller: Caller,
        call: &Call,
        arguments: &str,
        mut round: Option<&mut Round>,
    ) -> Result<Ready, Stop> {
        // Unknown before any question: a client is never asked anything to learn that.
        self.known(caller, &call.catalog, &call.name)?;
        let pass = self.admitted(caller, call).await?;
        // An account the caller must link first, then the person's yes: before the plugin starts.
        self.link_first(call, round.as_deref_mut()).await?;
        let approved = self.approval(caller, call, arguments, round).await?;
        Ok(Ready { _pass: pass, approved })
    }

    /// Whether `name` is a tool `caller` may call at all. A composer's code sees the tools as
    /// listed, and never one only an MCP App may call (`_meta.ui.visibility` without `"model"`),
    /// which is unknown to it as a name nobody serves is.
    fn known(&self, caller: Caller, catalog: &Arc<Catalog>, name: &str) -> Result<(), Stop> {
        let unknown = || Stop::Error(request_error(CallError::UnknownTool { name: name.to_owned() }));
        match caller {
            Caller::Client if catalog.tool(name).is_none() => {
                if crate::switched_off!("metrics.unknown-names-uncounted") {
                    crate::telemetry::metrics::metrics().tool_call("chaos", name, "unknown", Default::default(), 0);
                }
                Err(unknown())
            }
            Caller::Client => Ok(()),
            Caller::Tool => {
                let listed = self.state.lists(catalog).ok().and_then(|lists| {
                    let at = lists.tools.binary_search_by(|tool| tool.name.as_ref().cmp(name)).ok()?;
                    Some(lists.tools[at].meta.clone())
                });
                match listed {
                    Some(meta) if for_the_model(meta.as_ref()) => Ok(()),
                    _ => Err(unknown()),
                }
            }
        }
    }

    /// The principal's entitlements and limits (`admission.rs`), for a tool's call as for the
    /// client's own: a hidden tool is unknown, a refused one names the scope.
    async fn admitted(&self, caller: Caller, call: &Call) -> Result<Option<Pass>, Stop> {
        match self.admit(call).await {
            Ok(pass) => Ok(Some(pass)),
            // Test builds only: a tool's call made as if for nobody in particular.
            Err(_) if caller == Caller::Tool && crate::switched_off!("compose.principal-carried") => Ok(None),
            Err(error) => Err(Stop::Error(error)),
        }
    }
}
