//! The server's tasks: where they are kept, this process as their owner, and `tasks/get`,
//! `tasks/update`, `tasks/cancel` over them.

use std::sync::Arc;
use std::time::Duration;

use ring::rand::{SecureRandom, SystemRandom};
use rmcp::ErrorData as McpError;
use rmcp::model::{CancelTaskParams, ClientCapabilities, GetTaskParams, GetTaskResult, InputRequest, UpdateTaskParams};

use super::wire;
use crate::access::Principal;
use crate::fleet::{Fleet, RedisTasks};
use crate::mcp::call::rounds::client::fits_request;
use crate::runtime::tasks::{
    MemoryStore, TaskRecord, TaskSettings, TaskState, TaskStore, TaskStoreError, millis, now_ms,
};

/// How long an owner's lease lasts without renewal in one process (a fleet's is configured);
/// renewed at a third of it.
const LEASE: Duration = Duration::from_secs(30);

/// Random bytes in a task id: 256 bits, so ids cannot be guessed or enumerated
/// (extensions/tasks §Security Considerations).
const ID_BYTES: usize = 32;

/// The server's tasks: where they are kept, and this process's name as their owner.
pub(crate) struct Tasks {
    pub(super) store: Arc<dyn TaskStore>,
    /// This process, as the owner of the tasks it runs.
    pub(super) owner: String,
    /// How long its claim on a task lasts without renewal.
    pub(super) lease: Duration,
    pub(crate) settings: TaskSettings,
    pub(super) random: SystemRandom,
}

impl Tasks {
    /// Tasks kept in the fleet's store, or in this process's memory without one.
    pub(crate) fn new(settings: TaskSettings, fleet: Option<&Fleet>) -> anyhow::Result<Tasks> {
        let random = SystemRandom::new();
        let (store, owner, lease): (Arc<dyn TaskStore>, _, _) = match fleet {
            Some(fleet) => {
                let store = Arc::new(RedisTasks::new(fleet.clone(), settings.limits));
                store.clone().sweep_orphans();
                (store, fleet.owner().to_owned(), fleet.lease())
            }
            None => {
                let owner = random_id(&random).map_err(|_| anyhow::anyhow!("cannot name this process's tasks"))?;
                (Arc::new(MemoryStore::new(settings.limits)), owner, LEASE)
            }
        };
        Ok(Tasks { store, owner, lease, settings, random })
    }

    /// Who a request acts for: a task is seen and answered only by requests of the principal
    /// that created it (its [`Principal::key`](crate::access::Principal::key), with
    /// `[auth]`). Without authorization every request of this server is the same one, and a
    /// task's unguessable id is what keeps it private.
    pub(crate) fn principal(principal: Option<&Principal>) -> String {
        principal.map_or("local", Principal::key).to_owned()
    }

    /// A new task, stored before this returns (extensions/tasks §Task Creation: durably
    /// created before the `CreateTaskResult`).
    pub(super) async fn create(&self, principal: &str, message: Option<String>) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let id = random_id(&self.random).map_err(|()| TaskStoreError::TooMany("no randomness for an id".to_owned()))?;
        let record = TaskRecord {
            id,
            principal: principal.to_owned(),
            owner: self.owner.clone(),
            lease_until_ms: now.saturating_add(millis(self.lease)),
            created_ms: now,
            updated_ms: now,
            // Running up to its deadline, then kept for the retention: a finished task's time
            // to live becomes what it ran plus the retention.
            ttl_ms: millis(self.settings.deadline).saturating_add(millis(self.settings.retention)),
            status_message: message,
            state: TaskState::Working,
        };
        self.store.create(record.clone()).await?;
        entered(record.state.name());
        Ok(record)
    }

    /// `tasks/get` (extensions/tasks §Task Polling): the task with what its state carries.
    pub(crate) async fn get(&self, params: GetTaskParams, principal: String) -> Result<GetTaskResult, McpError> {
        let record = self.store.get(&params.task_id, &principal).await.map_err(not_found)?;
        Ok(GetTaskResult::new(wire::detailed(&record)))
    }

    /// `tasks/update` (extensions/tasks §Task Update Requests): answers to outstanding
    /// questions are checked against what was asked (one that is not a result of its method is
    /// refused whole, nothing delivered); answers to other keys are ignored.
    pub(crate) async fn update(&self, params: UpdateTaskParams, principal: String) -> Result<(), McpError> {
        let record = self.store.get(&params.task_id, &principal).await.map_err(not_found)?;
        if let TaskState::InputRequired(outstanding) = &record.state {
            for (key, answer) in &params.input_responses {
                let Some(asked) = outstanding.get(key) else { continue };
                let fits = serde_json::from_value::<InputRequest>(asked.clone())
                    .is_ok_and(|request| fits_request(&request, answer));
                if !fits && !crate::switched_off!("tasks.answers-fit") {
                    return Err(McpError::invalid_params(
                        format!("inputResponses.{key} is not a result of the request it answers"),
                        None,
                    ));
                }
            }
        }
        let answers = params.input_responses.into_iter().collect();
        self.store.deliver(&params.task_id, &principal, answers).await.map_err(not_found)
    }

    /// `tasks/cancel` (extensions/tasks §Task Cancellation): delivered to the task's owner,
    /// acknowledged at once; a finished task stays as it finished.
    pub(crate) async fn cancel(&self, params: CancelTaskParams, principal: String) -> Result<(), McpError> {
        self.store.cancel(&params.task_id, &principal).await.map_err(not_found)
    }
}

/// Counts a task that entered `state` (`mcpbox_tasks_total`).
pub(super) fn entered(state: &'static str) {
    crate::telemetry::metrics::metrics().tasks.with_label_values(&[state]).inc();
}

/// Whether the request declared the tasks extension (2026-07-28 per-request capabilities).
pub(crate) fn declared(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities.is_some_and(ClientCapabilities::supports_tasks)
}

/// The error of a request that needs the tasks extension and did not declare it
/// (extensions/tasks §Capability Negotiation).
pub(crate) fn extension_required() -> McpError {
    McpError::missing_required_client_capability(ClientCapabilities::builder().enable_tasks().build())
}

/// An unknown, expired or foreign task (extensions/tasks §Protocol Errors: -32602).
pub(super) fn not_found(error: TaskStoreError) -> McpError {
    match error {
        TaskStoreError::NotFound => McpError::invalid_params("task not found (unknown, expired, or not yours)", None),
        other => McpError::internal_error(other.to_string(), None),
    }
}

/// `ID_BYTES` random bytes, base64url.
pub(super) fn random_id(random: &SystemRandom) -> Result<String, ()> {
    use base64::Engine;
    let mut bytes = [0u8; ID_BYTES];
    random.fill(&mut bytes).map_err(|_| ())?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}
