//! A stored task in the extension's wire shapes (extensions/tasks §Tasks): ISO 8601 times,
//! integer milliseconds, and the state's payload inlined (`inputRequests`, `result`, `error`);
//! never a `requestState`, which tasks do not carry.

use rmcp::model::{DetailedTask, Task, TaskPayload, TaskStatus};

use crate::runtime::tasks::{TaskRecord, TaskState};

/// How often clients are asked to poll (extensions/tasks §Task Polling: `pollIntervalMs`).
const POLL_INTERVAL_MS: u64 = 500;

/// `ms` since the epoch as ISO 8601 (UTC, milliseconds).
fn iso8601(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(String::new, |time| time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// The task's metadata (`Task`, as `CreateTaskResult` carries it).
pub(super) fn task(record: &TaskRecord) -> Task {
    let mut task =
        Task::new(record.id.clone(), status(&record.state), iso8601(record.created_ms), iso8601(record.updated_ms))
            .with_ttl_ms(record.ttl_ms)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
    task.status_message = record.status_message.clone();
    task
}

fn status(state: &TaskState) -> TaskStatus {
    match state {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired(_) => TaskStatus::InputRequired,
        TaskState::Completed(_) => TaskStatus::Completed,
        TaskState::Failed(_) => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    }
}

/// The task with its state's payload (`DetailedTask`, as `tasks/get` returns it).
pub(super) fn detailed(record: &TaskRecord) -> DetailedTask {
    let payload = match &record.state {
        TaskState::Working => TaskPayload::Working,
        TaskState::InputRequired(questions) => TaskPayload::InputRequired {
            // Stored as the protocol layer wrote them; one that no longer parses is left out.
            input_requests: questions
                .iter()
                .filter_map(|(key, q)| Some((key.clone(), serde_json::from_value(q.clone()).ok()?)))
                .collect(),
        },
        TaskState::Completed(result) => TaskPayload::Completed { result: result.clone() },
        TaskState::Failed(error) => TaskPayload::Failed { error: error.clone() },
        TaskState::Cancelled => TaskPayload::Cancelled,
    };
    DetailedTask::new(task(record), payload)
}
