//! The in-process [`TaskStore`]: a map behind a mutex, with the limits checked on every
//! create and state change, expired tasks dropped as the map is touched, and each task's inbox
//! waking its owner.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use tokio::sync::Notify;

use super::{Inbox, TaskChange, TaskLimits, TaskRecord, TaskState, TaskStore, TaskStoreError, millis, now_ms};
use crate::runtime::sandbox::BoxFuture;

struct Entry {
    record: TaskRecord,
    inbox: Inbox,
    /// Wakes the owner waiting in `next_inbox`.
    wake: Arc<Notify>,
}

/// Tasks in this process's memory.
pub struct MemoryStore {
    limits: TaskLimits,
    tasks: Mutex<HashMap<String, Entry>>,
}

impl MemoryStore {
    /// An empty store holding at most what `limits` allow.
    pub fn new(limits: TaskLimits) -> MemoryStore {
        MemoryStore { limits, tasks: Mutex::default() }
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Drops the tasks past their time to live.
fn sweep(tasks: &mut HashMap<String, Entry>, now: u64) {
    tasks.retain(|_, entry| !entry.record.expired(now));
}

/// Output kept by every task, and by `principal`'s, leaving out task `except`.
fn retained(tasks: &HashMap<String, Entry>, principal: &str, except: &str) -> (usize, usize) {
    tasks.values().filter(|e| e.record.id != except).fold((0, 0), |(all, own), e| {
        let bytes = e.record.state.retained();
        (all + bytes, own + if e.record.principal == principal { bytes } else { 0 })
    })
}

/// The task `id` if `principal` may see it and it has not expired.
fn visible<'a>(
    tasks: &'a mut HashMap<String, Entry>,
    id: &str,
    principal: &str,
    now: u64,
) -> Result<&'a mut Entry, TaskStoreError> {
    match tasks.get_mut(id) {
        Some(entry) if entry.record.principal == principal && !entry.record.expired(now) => Ok(entry),
        _ => Err(TaskStoreError::NotFound),
    }
}

impl MemoryStore {
    fn create_now(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let mut tasks = self.tasks();
        sweep(&mut tasks, now_ms());
        if tasks.len() >= self.limits.max_tasks {
            return Err(TaskStoreError::TooMany(format!(
                "the server holds its limit of {} tasks",
                self.limits.max_tasks
            )));
        }
        let own = tasks.values().filter(|e| e.record.principal == record.principal).count();
        if own >= self.limits.max_tasks_per_principal {
            return Err(TaskStoreError::TooMany(format!(
                "this client holds its limit of {} tasks",
                self.limits.max_tasks_per_principal
            )));
        }
        let entry = Entry { record: record.clone(), inbox: Inbox::default(), wake: Arc::default() };
        tasks.insert(record.id, entry);
        Ok(())
    }

    fn get_now(&self, id: &str, principal: &str) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let mut tasks = self.tasks();
        let entry = visible(&mut tasks, id, principal, now)?;
        let mut record = entry.record.clone();
        // A running task whose owner stopped renewing its lease will never finish.
        if !record.state.is_terminal() && now > record.lease_until_ms {
            record.state = TaskState::Failed(lost_owner());
            record.status_message = Some("the process running this task stopped".to_owned());
        }
        Ok(record)
    }

    fn change_now(&self, id: &str, owner: &str, change: TaskChange) -> Result<(), TaskStoreError> {
        let now = now_ms();
        let mut tasks = self.tasks();
        let (principal, terminal) = match tasks.get(id) {
            Some(entry) if entry.record.owner == owner => {
                (entry.record.principal.clone(), entry.record.state.is_terminal())
            }
            Some(_) => return Err(TaskStoreError::NotOwner),
            None => return Err(TaskStoreError::NotFound),
        };
        if terminal {
            // A finished task keeps what it finished with (a late progress report, a cancel
            // that lost the race).
            return Ok(());
        }
        if let TaskChange::State { state, .. } = &change {
            let (all, own) = retained(&tasks, &principal, id);
            let bytes = state.retained();
            if own + bytes > self.limits.max_output_bytes_per_principal {
                return Err(TaskStoreError::OutputLimit(format!(
                    "{bytes} bytes would exceed the {} bytes one client's tasks may keep",
                    self.limits.max_output_bytes_per_principal
                )));
            }
            if all + bytes > self.limits.max_output_bytes {
                return Err(TaskStoreError::OutputLimit(format!(
                    "{bytes} bytes would exceed the {} bytes all tasks may keep",
                    self.limits.max_output_bytes
                )));
            }
        }
        let Some(entry) = tasks.get_mut(id) else { return Err(TaskStoreError::NotFound) };
        let record = &mut entry.record;
        match change {
            TaskChange::Message(message) => record.status_message = Some(message),
            TaskChange::State { state, retain, message } => {
                if state.is_terminal() {
                    // Kept `retain` from now: the time to live grows by what the call took.
                    record.ttl_ms = now.saturating_sub(record.created_ms).saturating_add(millis(retain));
                }
                if message.is_some() {
                    record.status_message = message;
                }
                record.state = state;
            }
            TaskChange::Lease(until) => {
                record.lease_until_ms = until;
                return Ok(());
            }
        }
        record.updated_ms = now;
        Ok(())
    }

    fn deliver_now(&self, id: &str, principal: &str, answers: Map<String, Value>) -> Result<(), TaskStoreError> {
        let now = now_ms();
        let mut tasks = self.tasks();
        let entry = visible(&mut tasks, id, principal, now)?;
        let TaskState::InputRequired(outstanding) = &mut entry.record.state else { return Ok(()) };
        let mut delivered = false;
        for (key, answer) in answers {
            if outstanding.remove(&key).is_some() {
                entry.inbox.answers.insert(key, answer);
                delivered = true;
            }
        }
        if delivered {
            if outstanding.is_empty() {
                entry.record.state = TaskState::Working;
            }
            entry.record.updated_ms = now;
            entry.wake.notify_one();
        }
        Ok(())
    }

    fn cancel_now(&self, id: &str, principal: &str) -> Result<(), TaskStoreError> {
        let mut tasks = self.tasks();
        let entry = visible(&mut tasks, id, principal, now_ms())?;
        if !entry.record.state.is_terminal() {
            entry.inbox.cancel = true;
            entry.wake.notify_one();
        }
        Ok(())
    }

    /// The inbox's content if it holds any, else what wakes its owner.
    fn take_inbox(&self, id: &str, owner: &str) -> Result<Result<Inbox, Arc<Notify>>, TaskStoreError> {
        let mut tasks = self.tasks();
        let entry = match tasks.get_mut(id) {
            Some(entry) if entry.record.owner == owner => entry,
            Some(_) => return Err(TaskStoreError::NotOwner),
            None => return Err(TaskStoreError::NotFound),
        };
        if entry.inbox == Inbox::default() {
            return Ok(Err(entry.wake.clone()));
        }
        Ok(Ok(std::mem::take(&mut entry.inbox)))
    }
}

/// The JSON-RPC error of a task whose owner is gone.
fn lost_owner() -> Map<String, Value> {
    let mut error = Map::new();
    error.insert("code".to_owned(), (-32603).into());
    error.insert("message".to_owned(), "the process running this task stopped before it finished".into());
    error
}

impl TaskStore for MemoryStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(std::future::ready(self.create_now(record)))
    }

    fn get<'a>(&'a self, id: &'a str, principal: &'a str) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        Box::pin(std::future::ready(self.get_now(id, principal)))
    }

    fn change<'a>(
        &'a self,
        id: &'a str,
        owner: &'a str,
        change: TaskChange,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(std::future::ready(self.change_now(id, owner, change)))
    }

    fn deliver<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        answers: Map<String, Value>,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(std::future::ready(self.deliver_now(id, principal, answers)))
    }

    fn cancel<'a>(&'a self, id: &'a str, principal: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(std::future::ready(self.cancel_now(id, principal)))
    }

    fn next_inbox<'a>(&'a self, id: &'a str, owner: &'a str) -> BoxFuture<'a, Result<Inbox, TaskStoreError>> {
        Box::pin(async move {
            loop {
                match self.take_inbox(id, owner)? {
                    Ok(inbox) => return Ok(inbox),
                    // `notify_one` keeps a permit when nobody waits, so a delivery between the
                    // look and the wait is not missed.
                    Err(wake) => wake.notified().await,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn record(id: &str, principal: &str) -> TaskRecord {
        let now = now_ms();
        TaskRecord {
            id: id.to_owned(),
            principal: principal.to_owned(),
            owner: "me".to_owned(),
            lease_until_ms: now + 60_000,
            created_ms: now,
            updated_ms: now,
            ttl_ms: 60_000,
            status_message: None,
            state: TaskState::Working,
        }
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[tokio::test]
    async fn a_task_is_seen_by_its_principal_only_and_changed_by_its_owner_only() {
        let store = MemoryStore::new(TaskLimits::default());
        store.create(record("t", "alice")).await.unwrap();
        assert_eq!(store.get("t", "alice").await.unwrap().id, "t");
        assert_eq!(store.get("t", "bob").await, Err(TaskStoreError::NotFound));
        assert_eq!(store.cancel("t", "bob").await, Err(TaskStoreError::NotFound));
        let done = TaskChange::State { state: TaskState::Cancelled, retain: Duration::ZERO, message: None };
        assert_eq!(store.change("t", "other", done).await, Err(TaskStoreError::NotOwner));
    }

    #[tokio::test]
    async fn answers_leave_the_questions_at_once_and_reach_the_owner() {
        let store = MemoryStore::new(TaskLimits::default());
        store.create(record("t", "p")).await.unwrap();
        let questions =
            object(json!({ "a": { "method": "elicitation/create" }, "b": { "method": "elicitation/create" } }));
        let ask =
            TaskChange::State { state: TaskState::InputRequired(questions), retain: Duration::ZERO, message: None };
        store.change("t", "me", ask).await.unwrap();
        store.deliver("t", "p", object(json!({ "a": { "action": "accept" }, "zzz": {} }))).await.unwrap();
        let TaskState::InputRequired(left) = store.get("t", "p").await.unwrap().state else { panic!("not waiting") };
        assert_eq!(left.keys().collect::<Vec<_>>(), ["b"]);
        let inbox = store.next_inbox("t", "me").await.unwrap();
        assert_eq!(inbox.answers.keys().collect::<Vec<_>>(), ["a"], "an unknown key is ignored");
        store.deliver("t", "p", object(json!({ "b": { "action": "decline" } }))).await.unwrap();
        assert_eq!(store.get("t", "p").await.unwrap().state, TaskState::Working);
        store.cancel("t", "p").await.unwrap();
        let inbox = store.next_inbox("t", "me").await.unwrap();
        assert!(inbox.cancel && inbox.answers.contains_key("b"));
    }

    #[tokio::test]
    async fn limits_bind_the_count_and_the_kept_output() {
        let limits = TaskLimits {
            max_tasks: 3,
            max_tasks_per_principal: 2,
            max_output_bytes: 1000,
            max_output_bytes_per_principal: 600,
        };
        let store = MemoryStore::new(limits);
        store.create(record("a1", "a")).await.unwrap();
        store.create(record("a2", "a")).await.unwrap();
        assert!(matches!(store.create(record("a3", "a")).await, Err(TaskStoreError::TooMany(_))));
        store.create(record("b1", "b")).await.unwrap();
        assert!(matches!(store.create(record("c1", "c")).await, Err(TaskStoreError::TooMany(_))));
        let result = |n: usize| TaskState::Completed(object(json!({ "text": "x".repeat(n) })));
        let finish = |n| TaskChange::State { state: result(n), retain: Duration::from_secs(60), message: None };
        store.change("a1", "me", finish(500)).await.unwrap();
        assert!(matches!(store.change("a2", "me", finish(200)).await, Err(TaskStoreError::OutputLimit(_))));
        store.change("b1", "me", finish(400)).await.unwrap();
        assert!(matches!(store.change("a2", "me", finish(50)).await, Ok(())));
    }

    #[tokio::test]
    async fn expired_tasks_are_gone_and_lost_owners_read_as_failed() {
        let store = MemoryStore::new(TaskLimits::default());
        let mut old = record("old", "p");
        old.created_ms -= 120_000;
        store.create(old).await.unwrap();
        assert_eq!(store.get("old", "p").await, Err(TaskStoreError::NotFound));
        let mut orphan = record("orphan", "p");
        orphan.lease_until_ms = now_ms() - 1;
        store.create(orphan).await.unwrap();
        assert!(matches!(store.get("orphan", "p").await.unwrap().state, TaskState::Failed(_)));
    }
}
