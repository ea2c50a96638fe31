//! A task as every store keeps it: its state, record, inbox and changes, the limits a store
//! enforces, and the [`TaskStore`] trait both stores implement.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::runtime::sandbox::BoxFuture;

/// What a task is doing, with what the client reads in each state (JSON, as the protocol
/// layer made it: the runtime never interprets it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", content = "data", rename_all = "snake_case")]
pub enum TaskState {
    /// The call runs.
    Working,
    /// The call waits for answers to these questions, by key (`{method, params}` each).
    InputRequired(Map<String, Value>),
    /// The call ended with this result.
    Completed(Map<String, Value>),
    /// The call ended with this JSON-RPC error (`{code, message, data?}`).
    Failed(Map<String, Value>),
    /// The call was cancelled.
    Cancelled,
}

impl TaskState {
    /// The state's name on the wire (extensions/tasks `status`), as metrics label it.
    pub fn name(&self) -> &'static str {
        match self {
            TaskState::Working => "working",
            TaskState::InputRequired(_) => "input_required",
            TaskState::Completed(_) => "completed",
            TaskState::Failed(_) => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }

    /// Whether the task has ended (completed, failed or cancelled).
    pub fn is_terminal(&self) -> bool {
        matches!(self, TaskState::Completed(_) | TaskState::Failed(_) | TaskState::Cancelled)
    }

    /// The bytes of output this state keeps (what counts against the retained-output limits).
    pub fn retained(&self) -> usize {
        match self {
            TaskState::InputRequired(map) | TaskState::Completed(map) | TaskState::Failed(map) => {
                crate::runtime::sandbox::budget::wire_len(map)
            }
            TaskState::Working | TaskState::Cancelled => 0,
        }
    }
}

/// One task as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Unguessable: whoever knows it may read the task (within its principal).
    pub id: String,
    /// Who created it: only requests of the same principal see it.
    pub principal: String,
    /// The process running its call.
    pub owner: String,
    /// Until when the owner's lease holds (ms since the epoch); renewed while the call runs.
    pub lease_until_ms: u64,
    /// When it was created (ms since the epoch).
    pub created_ms: u64,
    /// When its state or message last changed.
    pub updated_ms: u64,
    /// How long after creation it is kept (ms).
    pub ttl_ms: u64,
    /// A word on the current state (the plugin's latest progress message, or why it ended).
    pub status_message: Option<String>,
    /// Its state.
    pub state: TaskState,
}

impl TaskRecord {
    /// When it stops being kept (ms since the epoch).
    pub fn expires_at(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    /// Whether it is past its time to live at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        now_ms >= self.expires_at()
    }
}

/// What arrived for a task's owner since it last looked.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inbox {
    /// Answers to outstanding questions, by key.
    pub answers: Map<String, Value>,
    /// The client asked to cancel the task.
    pub cancel: bool,
}

/// A change the owner makes to its task.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskChange {
    /// A new status message (progress).
    Message(String),
    /// A new state; `retain` is how long a terminal state is kept from now on.
    State {
        /// The state.
        state: TaskState,
        /// For a terminal state: how long it stays readable.
        retain: Duration,
        /// Its status message (replaces the current one when `Some`).
        message: Option<String>,
    },
    /// The owner still runs it: its lease is extended to this time (ms since the epoch).
    Lease(u64),
}

/// Why the store refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TaskStoreError {
    /// No such task for this principal (never created, expired, or someone else's).
    #[error("task not found")]
    NotFound,
    /// Creating it would exceed a limit on how many tasks are held.
    #[error("too many tasks: {0}")]
    TooMany(String),
    /// The state would keep more output than a limit allows.
    #[error("task output limit: {0}")]
    OutputLimit(String),
    /// Only the owner changes a task, and this process is not (or no longer) its owner.
    #[error("task is owned by another process")]
    NotOwner,
    /// The store did not answer (a shared store out of reach).
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// How many tasks, and how much of their output, the store holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLimits {
    /// Tasks held at once (running or kept for their result), the whole server.
    pub max_tasks: usize,
    /// Tasks held at once by one principal.
    pub max_tasks_per_principal: usize,
    /// Output (results, errors, questions) held at once, in bytes, the whole server.
    pub max_output_bytes: usize,
    /// Output held at once by one principal.
    pub max_output_bytes_per_principal: usize,
}

/// Which of a pair of limits (the whole server's, one principal's) a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// The whole server's.
    All,
    /// One principal's.
    Own,
}

impl TaskLimits {
    /// Whether one more task fits, given how many are held (`all`) and by its principal (`own`).
    pub fn check_count(&self, all: usize, own: usize) -> Result<(), TaskStoreError> {
        if all >= self.max_tasks {
            return Err(self.count_refusal(Over::All));
        }
        if own >= self.max_tasks_per_principal && !crate::switched_off!("tasks.per-client") {
            return Err(self.count_refusal(Over::Own));
        }
        Ok(())
    }

    /// Whether keeping `bytes` more stays within the limits, given what the other tasks keep
    /// (`all`) and the principal's other tasks (`own`).
    pub fn check_output(&self, bytes: usize, all: usize, own: usize) -> Result<(), TaskStoreError> {
        if own + bytes > self.max_output_bytes_per_principal {
            return Err(self.output_refusal(bytes, Over::Own));
        }
        if all + bytes > self.max_output_bytes {
            return Err(self.output_refusal(bytes, Over::All));
        }
        Ok(())
    }

    /// The refusal of a task over the count limit `over`.
    pub fn count_refusal(&self, over: Over) -> TaskStoreError {
        TaskStoreError::TooMany(match over {
            Over::All => format!("the server holds its limit of {} tasks", self.max_tasks),
            Over::Own => format!("this client holds its limit of {} tasks", self.max_tasks_per_principal),
        })
    }

    /// The refusal of `bytes` of output over the limit `over`.
    pub fn output_refusal(&self, bytes: usize, over: Over) -> TaskStoreError {
        TaskStoreError::OutputLimit(match over {
            Over::All => format!("{bytes} bytes would exceed the {} bytes all tasks may keep", self.max_output_bytes),
            Over::Own => format!(
                "{bytes} bytes would exceed the {} bytes one client's tasks may keep",
                self.max_output_bytes_per_principal
            ),
        })
    }
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            max_tasks: 1000,
            max_tasks_per_principal: 100,
            max_output_bytes: 256 << 20,
            max_output_bytes_per_principal: 64 << 20,
        }
    }
}

/// How long tasks run and stay, and how many the store holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSettings {
    /// A task's call is stopped this long after it started (its own limit, instead of the
    /// call time limit).
    pub deadline: Duration,
    /// A finished task's result stays readable this long.
    pub retention: Duration,
    /// What the store holds at most.
    pub limits: TaskLimits,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            deadline: Duration::from_secs(3600),
            retention: Duration::from_secs(3600),
            limits: TaskLimits::default(),
        }
    }
}

/// Where tasks live. Every method names the principal or the owner it acts for: a task is
/// read and answered by its principal's requests, changed by its owner only.
pub trait TaskStore: Send + Sync {
    /// Stores a new task; when this returns, `get` finds it (the extension's durable create).
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>>;

    /// The task `id` as `principal` sees it.
    fn get<'a>(&'a self, id: &'a str, principal: &'a str) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>>;

    /// The owner's change to its task.
    fn change<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// Answers from the client: those for outstanding questions leave the task's visible
    /// questions at once and go to the owner's inbox; others are ignored (the extension: a
    /// server SHOULD ignore responses to keys not outstanding). The task is `working` again
    /// when none is left.
    fn deliver<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        answers: Map<String, Value>,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// The client's request to cancel, for the owner's inbox; a finished task stays as it is.
    fn cancel<'a>(&'a self, id: &'a str, principal: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// Waits until the owner's inbox holds something, and empties it.
    fn next_inbox<'a>(&'a self, id: &'a str, owner: &'a str) -> BoxFuture<'a, Result<Inbox, TaskStoreError>>;
}

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `duration` in whole milliseconds, saturating.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
