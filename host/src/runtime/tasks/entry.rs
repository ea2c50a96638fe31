//! One task as every store keeps it, its record and its owner's inbox, and the rules of how it
//! changes: who may change it, what a finished task keeps, how answers and cancellation reach
//! the owner, how a task whose owner stopped renewing reads. The stores apply these rules
//! under their own atomicity (a mutex in memory, a compare-and-set in Redis) and add their
//! limits.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Inbox, TaskChange, TaskRecord, TaskState, TaskStoreError, millis};

/// A task and what waits for its owner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEntry {
    /// The task.
    pub record: TaskRecord,
    /// What arrived for its owner.
    #[serde(default)]
    pub inbox: Inbox,
}

impl TaskEntry {
    /// A new task with an empty inbox.
    pub fn new(record: TaskRecord) -> TaskEntry {
        TaskEntry { record, inbox: Inbox::default() }
    }

    /// Whether `principal` may see it at `now` (its own, not expired).
    pub fn visible_to(&self, principal: &str, now: u64) -> bool {
        self.record.principal == principal && !self.record.expired(now)
    }

    /// Whether it still runs on an owner that stopped renewing its lease: that call will never
    /// finish.
    pub fn orphaned(&self, now: u64) -> bool {
        !self.record.state.is_terminal() && now > self.record.lease_until_ms
    }

    /// The record as a client reads it at `now`: an orphaned task reads as failed.
    pub fn view(&self, now: u64) -> TaskRecord {
        let mut record = self.record.clone();
        if self.orphaned(now) {
            fail_orphan(&mut record);
        }
        record
    }

    /// Marks an orphaned task failed for good and forgets its owner (nothing of a dead process
    /// stays in the store); true if it was orphaned.
    pub fn settle_orphan(&mut self, now: u64) -> bool {
        if !self.orphaned(now) || crate::switched_off!("fleet.orphans-settle") {
            return false;
        }
        fail_orphan(&mut self.record);
        self.record.owner.clear();
        self.record.updated_ms = now;
        self.inbox = Inbox::default();
        true
    }

    /// Checks that `owner` may change it: Ok(false) when it is finished (a late progress
    /// report, a cancel that lost the race: it keeps what it finished with).
    pub fn changeable_by(&self, owner: &str) -> Result<bool, TaskStoreError> {
        if self.record.owner != owner {
            return Err(TaskStoreError::NotOwner);
        }
        Ok(!self.record.state.is_terminal())
    }

    /// The owner's `change` at `now` (after [`TaskEntry::changeable_by`] said yes and the
    /// store checked its limits).
    pub fn apply(&mut self, change: TaskChange, now: u64) {
        let record = &mut self.record;
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
                return;
            }
        }
        record.updated_ms = now;
    }

    /// Answers from the client: those for outstanding questions leave the visible questions
    /// and go to the inbox (others are ignored); `working` again when none is left. True if
    /// any was delivered (the owner is to be woken).
    pub fn deliver(&mut self, answers: Map<String, Value>, now: u64) -> bool {
        let TaskState::InputRequired(outstanding) = &mut self.record.state else { return false };
        let mut delivered = false;
        for (key, answer) in answers {
            if outstanding.remove(&key).is_some() {
                self.inbox.answers.insert(key, answer);
                delivered = true;
            }
        }
        if delivered {
            if outstanding.is_empty() {
                self.record.state = TaskState::Working;
            }
            self.record.updated_ms = now;
        }
        delivered
    }

    /// The client's cancellation for the inbox; true if the owner is to be woken (a finished
    /// task stays as it is).
    pub fn cancel(&mut self) -> bool {
        if self.record.state.is_terminal() {
            return false;
        }
        self.inbox.cancel = true;
        true
    }

    /// The inbox's content for `owner`, emptied; `None` when nothing waits.
    pub fn take_inbox(&mut self, owner: &str) -> Result<Option<Inbox>, TaskStoreError> {
        if self.record.owner != owner {
            return Err(TaskStoreError::NotOwner);
        }
        if self.inbox == Inbox::default() {
            return Ok(None);
        }
        Ok(Some(std::mem::take(&mut self.inbox)))
    }
}

fn fail_orphan(record: &mut TaskRecord) {
    let mut error = Map::new();
    error.insert("code".to_owned(), (-32603).into());
    error.insert("message".to_owned(), "the process running this task stopped before it finished".into());
    record.state = TaskState::Failed(error);
    record.status_message = Some("the process running this task stopped".to_owned());
}
