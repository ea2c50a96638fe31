//! A `tools/call` that may go on as a task (extensions/tasks §Task Creation).
//!
//! The call runs in a tokio task of its own, with a cancellation of its own, under the task
//! deadline. Until it *detaches* it is an ordinary call: its questions are the request's multi
//! round-trip questions, the client's cancellation or departure stops it, and the plugin's time
//! limit bounds it. It detaches when it has run the operator's `after` threshold, or when the
//! plugin calls `detach`: the task is stored, the request answers with `CreateTaskResult`,
//! and from then on the call belongs to the task: its questions wait in `inputRequests` for
//! `tasks/update`, its progress messages become the status message, only `tasks/cancel` or
//! the deadline stop it, and its outcome is stored as the task's result or error.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CreateTaskResult};
use serde_json::{Map, Value};
use tokio::sync::{Mutex, Notify, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::client::TaskClient;
use super::requests::Tasks;
use super::shared::{Phase, Shared};
use super::wire;
use crate::mcp::call::call_outcome;
use crate::mcp::call::compose::{InnerCalls, Tree};
use crate::mcp::call::request::Call;
use crate::mcp::call::rounds::request_state::Round;
use crate::mcp::call::scope::OpenRound;
use crate::mcp::session::Session;
use crate::mcp::wire::era::Dialect;
use crate::mcp::wire::errors::tool_failure;
use crate::runtime::engine::bindings::tools::CallResult;
use crate::runtime::grants::plugin_config::ToolTasks;
use crate::runtime::sandbox::budget::OutputHold;
use crate::runtime::sandbox::{GuestEvent, MetaSink};
use crate::runtime::tasks::{TaskChange, TaskState, TaskStoreError};
use crate::runtime::{CallError, CallScope};

/// Stops an ordinary call whose request went away (the client disconnected or cancelled);
/// a detached call goes on.
struct StopUnlessDetached(Arc<Shared>);

impl Drop for StopUnlessDetached {
    fn drop(&mut self) {
        if !self.0.detached.load(Ordering::Acquire) {
            self.0.cancel.cancel();
        }
    }
}

/// A tool the operator lets run as a task, as its plugin serves it.
pub(crate) struct TaskTool {
    /// When it becomes a task, and whether only as one.
    pub(crate) policy: ToolTasks,
    /// The plugin's call time limit, which bounds the call until it becomes a task.
    pub(crate) time_limit: Duration,
    /// The plugin, for errors.
    pub(crate) plugin: Arc<str>,
}

/// The task `name`'s call goes on as (extensions/tasks §Capability Negotiation), if any: where
/// the operator lets the tool be one and the request declared the extension (legacy sessions
/// never can). A tool that must be one is refused to a request that did not declare it.
pub(crate) fn task_for(call: &Call) -> Result<Option<TaskTool>, McpError> {
    let Some((policy, plugin)) = call.catalog.task_policy(&call.name) else { return Ok(None) };
    if call.era.is_modern() && super::requests::declared(call.context.meta.client_capabilities().as_ref()) {
        return Ok(Some(TaskTool { policy, time_limit: plugin.limits.timeout, plugin: plugin.name.clone() }));
    }
    if policy.required && !crate::switched_off!("tasks.required-refused") {
        return Err(super::requests::extension_required());
    }
    Ok(None)
}

/// What a finished call hands the request that still waits for it.
type Finished = (Result<CallResult, CallError>, OutputHold);

impl Session {
    /// `tools/call` of a tool the operator lets run as a task, from a 2026-07-28 request that
    /// declared the extension.
    pub(crate) async fn call_tool_as_task(
        &self,
        call: &Call,
        arguments: String,
        round: Option<Round>,
        tool: TaskTool,
    ) -> Result<CallToolResponse, McpError> {
        let TaskTool { policy, time_limit: plugin_timeout, plugin } = tool;
        let name = call.name.clone();
        let open: OpenRound = match self.open_round(&call.context, round)? {
            Ok(open) => open,
            Err(questions) => return Ok(CallToolResponse::InputRequired(questions)),
        };
        let tasks = self.state.tasks.clone();
        let (created, mut created_seen) = watch::channel(None);
        let shared = Arc::new(Shared {
            principal: Tasks::principal(call.principal.as_deref()),
            tasks: tasks.clone(),
            phase: Mutex::new(Phase::Sync),
            created,
            detached: AtomicBool::new(false),
            cancel: CancellationToken::new(),
            cancelled_by_client: AtomicBool::new(false),
            answers: std::sync::Mutex::default(),
            answered: Notify::new(),
            replay: open.replay.clone(),
        });
        let _stop = StopUnlessDetached(shared.clone());
        if policy.after == Some(Duration::ZERO)
            && let Err(refused) = shared.detach(None).await
        {
            // Too many tasks held: the call is refused rather than run past its time limit.
            return Err(McpError::internal_error(format!("cannot start a task for `{name}`: {refused}"), None));
        }
        let meta = call.meta.clone().unwrap_or_default();
        let tree = Tree::new(open.calls.clone());
        // Stopped by the task's own cancellation, under the task deadline; the `_meta` the guest
        // sets goes with the result, stored in the task or returned.
        let client = Arc::new(TaskClient(shared.clone()));
        let mut scope = self.call_scope(call, open.view.clone(), client, shared.cancel.clone());
        scope.timeout = Some(tasks.settings.deadline);
        // Its guest's calls of other tools (WIT 0.1.4): their questions wait like its own.
        let inner = InnerCalls::new(self.clone(), call.clone(), &scope, tree.clone());
        scope.tools = Some(Arc::new(inner));
        let (finished_send, mut finished) = oneshot::channel::<Finished>();
        let dialect = call.era.dialect();
        let audit = call.audit.clone();
        // Run on the catalog whose steps let it through, even if a reload swapped another in.
        let run = run(
            call.catalog.clone(),
            name.clone(),
            arguments,
            scope,
            shared.clone(),
            (dialect, meta.clone()),
            finished_send,
        );
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            if let Some((id, outcome)) = run.await
                && let Some(audit) = audit
            {
                audit.task_ended(&id, outcome, started).await;
            }
        });

        // The operator's threshold: armed unless there is none (or it already detached).
        let mut armed = policy.after.is_some_and(|after| !after.is_zero());
        let threshold = tokio::time::sleep(policy.after.unwrap_or_default());
        tokio::pin!(threshold);
        let time_limit = tokio::time::sleep(plugin_timeout);
        tokio::pin!(time_limit);
        loop {
            tokio::select! {
                // A task, once there is one, is the answer (even if its call already ended).
                biased;
                record = async { created_seen.wait_for(Option::is_some).await.ok().and_then(|r| r.clone()) } => {
                    if let Some(record) = record {
                        // extensions/tasks: `CreateTaskResult` only once `tasks/get` finds it.
                        return Ok(CallToolResponse::Task(CreateTaskResult::new(wire::task(&record))));
                    }
                }
                done = &mut finished => {
                    let Ok((outcome, _hold)) = done else {
                        return Err(McpError::internal_error(format!("the call of `{name}` stopped"), None));
                    };
                    if let Some(questions) = open.unanswered(&self.state.state_keys, &tree.recorded())? {
                        return Ok(CallToolResponse::InputRequired(questions));
                    }
                    return call_outcome(&name, outcome, dialect, &meta).map(CallToolResponse::from);
                }
                () = &mut threshold, if armed => {
                    armed = false;
                    if let Err(refused) = shared.detach(None).await {
                        tracing::warn!(tool = %name, "the call stays synchronous: {refused}");
                    }
                }
                () = &mut time_limit => {
                    let mut phase = shared.phase.lock().await;
                    if !matches!(*phase, Phase::Detached(_)) {
                        *phase = Phase::Ending;
                        shared.cancel.cancel();
                        return tool_failure(&name, CallError::Timeout { plugin, limit: plugin_timeout })
                            .map(CallToolResponse::from);
                    }
                }
            }
        }
    }
}

/// Runs the call, forwarding its progress messages to the task once there is one, and hands
/// its outcome to the request (still an ordinary call) or stores it in the task.
async fn run(
    catalog: Arc<crate::runtime::Catalog>,
    name: String,
    arguments: String,
    mut scope: CallScope,
    shared: Arc<Shared>,
    (dialect, meta): (Dialect, Arc<MetaSink>),
    finished: oneshot::Sender<Finished>,
) -> Option<(String, &'static str)> {
    let hold = OutputHold::default();
    let (events, received) = mpsc::unbounded_channel();
    scope.events = Some(events);
    let (outcome, ()) =
        tokio::join!(catalog.call_tool(&name, arguments, scope.holding(&hold)), status_messages(received, &shared));
    let mut phase = shared.phase.lock().await;
    let Phase::Detached(id) = &*phase else {
        *phase = Phase::Ending;
        let _ = finished.send((outcome, hold));
        return None;
    };
    let id = id.clone();
    drop(phase);
    let (state, message) = if shared.cancelled_by_client.load(Ordering::Acquire) {
        (TaskState::Cancelled, "cancelled by the client".to_owned())
    } else {
        task_outcome(&name, outcome, dialect, &meta)
    };
    let ended = match &state {
        TaskState::Completed(_) => "completed",
        TaskState::Cancelled => "cancelled",
        _ => "failed",
    };
    let retain = shared.tasks.settings.retention;
    let finish = TaskChange::State { state, retain, message: Some(message) };
    if let Err(TaskStoreError::OutputLimit(limit)) = shared.change(&id, finish).await {
        let error = failure(&McpError::internal_error(format!("the task's result is not kept: {limit}"), None));
        let _ = shared
            .change(&id, TaskChange::State { state: TaskState::Failed(error), retain, message: Some(limit) })
            .await;
    }
    drop(hold);
    // Ends the supervisor.
    shared.cancel.cancel();
    Some((id, ended))
}

/// A finished call as the task's state (extensions/tasks §Task Execution Errors): a result,
/// `isError` included, is `completed`; a JSON-RPC error is `failed`.
fn task_outcome(
    name: &str,
    outcome: Result<CallResult, CallError>,
    dialect: Dialect,
    meta: &MetaSink,
) -> (TaskState, String) {
    match call_outcome(name, outcome, dialect, meta)
        .and_then(|result| serde_json::to_value(result).map_err(|e| McpError::internal_error(e.to_string(), None)))
    {
        Ok(Value::Object(result)) => {
            let failed = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
            (TaskState::Completed(result), if failed { "the tool reported an error" } else { "done" }.to_owned())
        }
        Ok(_) => (
            TaskState::Failed(failure(&McpError::internal_error("the result is not an object", None))),
            "failed".to_owned(),
        ),
        Err(error) => (TaskState::Failed(failure(&error)), error.message.to_string()),
    }
}

/// A JSON-RPC error as the object a failed task carries.
fn failure(error: &McpError) -> Map<String, Value> {
    match serde_json::to_value(error) {
        Ok(Value::Object(map)) => map,
        _ => Map::from_iter([
            ("code".to_owned(), Value::from(-32603)),
            ("message".to_owned(), error.message.to_string().into()),
        ]),
    }
}

/// A detached call's progress messages become its task's status message (extensions/tasks:
/// tasks carry no progress or log notifications); before that, and for logs, nothing is sent.
async fn status_messages(mut events: mpsc::UnboundedReceiver<GuestEvent>, shared: &Shared) {
    while let Some(event) = events.recv().await {
        // The flag first: an ordinary call's progress costs no lock.
        if let GuestEvent::Progress { message: Some(message), .. } = event
            && shared.detached.load(Ordering::Acquire)
            && let Some(id) = shared.task_id().await
        {
            let _ = shared.change(&id, TaskChange::Message(message)).await;
        }
    }
}
