//! The in-process [`TaskStore`]: a map behind a mutex, with the limits checked on every
//! create and state change, expired tasks dropped as the map is touched, and each task's inbox
//! waking its owner.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use tokio::sync::Notify;

use super::{Inbox, TaskChange, TaskEntry, TaskLimits, TaskRecord, TaskStore, TaskStoreError, now_ms};
use crate::runtime::sandbox::BoxFuture;

struct Entry {
    task: TaskEntry,
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
    tasks.retain(|_, entry| !entry.task.record.expired(now));
}

/// Output kept by every task, and by `principal`'s, leaving out task `except`.
fn retained(tasks: &HashMap<String, Entry>, principal: &str, except: &str) -> (usize, usize) {
    tasks.values().filter(|e| e.task.record.id != except).fold((0, 0), |(all, own), e| {
        let bytes = e.task.record.state.retained();
        (all + bytes, own + if e.task.record.principal == principal { bytes } else { 0 })
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
        Some(entry) if entry.task.visible_to(principal, now) => Ok(entry),
        _ => Err(TaskStoreError::NotFound),
    }
}

impl MemoryStore {
    fn create_now(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let mut tasks = self.tasks();
        sweep(&mut tasks, now_ms());
        let own = tasks.values().filter(|e| e.task.record.principal == record.principal).count();
        self.limits.check_count(tasks.len(), own)?;
        tasks.insert(record.id.clone(), Entry { task: TaskEntry::new(record), wake: Arc::default() });
        Ok(())
    }

    fn get_now(&self, id: &str, principal: &str) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let mut tasks = self.tasks();
        Ok(visible(&mut tasks, id, principal, now)?.task.view(now))
    }

    fn change_now(&self, id: &str, owner: &str, change: TaskChange) -> Result<(), TaskStoreError> {
        let now = now_ms();
        let mut tasks = self.tasks();
        let Some(entry) = tasks.get(id) else { return Err(TaskStoreError::NotFound) };
        if !entry.task.changeable_by(owner)? {
            return Ok(());
        }
        if let TaskChange::State { state, .. } = &change {
            let (all, own) = retained(&tasks, &entry.task.record.principal, id);
            self.limits.check_output(state.retained(), all, own)?;
        }
        if let Some(entry) = tasks.get_mut(id) {
            entry.task.apply(change, now);
        }
        Ok(())
    }

    fn deliver_now(&self, id: &str, principal: &str, answers: Map<String, Value>) -> Result<(), TaskStoreError> {
        let now = now_ms();
        let mut tasks = self.tasks();
        let entry = visible(&mut tasks, id, principal, now)?;
        if entry.task.deliver(answers, now) {
            entry.wake.notify_one();
        }
        Ok(())
    }

    fn cancel_now(&self, id: &str, principal: &str) -> Result<(), TaskStoreError> {
        let mut tasks = self.tasks();
        let entry = visible(&mut tasks, id, principal, now_ms())?;
        if entry.task.cancel() {
            entry.wake.notify_one();
        }
        Ok(())
    }

    /// The inbox's content if it holds any, else what wakes its owner.
    fn take_inbox(&self, id: &str, owner: &str) -> Result<Result<Inbox, Arc<Notify>>, TaskStoreError> {
        let mut tasks = self.tasks();
        let Some(entry) = tasks.get_mut(id) else { return Err(TaskStoreError::NotFound) };
        Ok(entry.task.take_inbox(owner)?.ok_or_else(|| entry.wake.clone()))
    }
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
    use crate::runtime::tasks::TaskState;

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
