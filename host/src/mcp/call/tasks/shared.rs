//! What a task-capable call, its guest's client and its request share: where the call stands
//! (an ordinary call, ending, or a task), and the supervisor that delivers a task's inbox and
//! renews its owner's lease.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value};
use tokio::sync::{Mutex, Notify, watch};
use tokio_util::sync::CancellationToken;

use super::requests::Tasks;
use crate::mcp::call::rounds::client::ReplayClient;
use crate::runtime::tasks::{TaskChange, TaskRecord, TaskStoreError, millis, now_ms};

/// Where the call stands.
pub(super) enum Phase {
    /// An ordinary call: it may still become a task.
    Sync,
    /// It stopped to ask the request's client, or the request gave up on it: it will not
    /// become a task.
    Ending,
    /// It is the task with this id.
    Detached(String),
}

/// What the call, its client and the request share.
pub(super) struct Shared {
    pub(super) tasks: Arc<Tasks>,
    pub(super) principal: String,
    pub(super) phase: Mutex<Phase>,
    /// Set once the task is stored, for the request to answer with it.
    pub(super) created: watch::Sender<Option<TaskRecord>>,
    /// Mirrors `Phase::Detached`, for the request's drop guard (which cannot wait for the lock).
    pub(super) detached: AtomicBool,
    /// Stops the call.
    pub(super) cancel: CancellationToken,
    /// Set when the client cancelled the task (the outcome is then `cancelled`).
    pub(super) cancelled_by_client: AtomicBool,
    /// Answers delivered to the task, not yet taken by the question that waits for them.
    pub(super) answers: std::sync::Mutex<Map<String, Value>>,
    pub(super) answered: Notify,
    /// The request's round: questions before detaching, and the keys used so far.
    pub(super) replay: Arc<ReplayClient>,
}

impl Shared {
    /// Stores the task and makes this call its; `Ok` if it already is.
    pub(super) async fn detach(self: &Arc<Self>, message: Option<String>) -> Result<(), String> {
        let mut phase = self.phase.lock().await;
        match &*phase {
            Phase::Detached(_) => return Ok(()),
            Phase::Ending => return Err("the call is already ending".to_owned()),
            Phase::Sync => {}
        }
        let record = self.tasks.create(&self.principal, message).await.map_err(|e| e.to_string())?;
        *phase = Phase::Detached(record.id.clone());
        self.detached.store(true, Ordering::Release);
        tokio::spawn(supervise(self.clone(), record.id.clone()));
        // Told while the phase is still locked: the call cannot end (and its request see it
        // end) before the request can see the task.
        self.created.send_replace(Some(record));
        drop(phase);
        Ok(())
    }

    /// The task's id once detached.
    pub(super) async fn task_id(&self) -> Option<String> {
        match &*self.phase.lock().await {
            Phase::Detached(id) => Some(id.clone()),
            _ => None,
        }
    }

    pub(super) async fn change(&self, id: &str, change: TaskChange) -> Result<(), TaskStoreError> {
        let entered = match &change {
            TaskChange::State { state, .. } => Some(state.name()),
            _ => None,
        };
        self.tasks.store.change(id, &self.tasks.owner, change).await?;
        if let Some(state) = entered {
            super::requests::entered(state);
        }
        Ok(())
    }
}

/// Delivers the task's inbox to its call (answers, cancellation) and renews the owner's lease,
/// until the call ends.
pub(super) async fn supervise(shared: Arc<Shared>, id: String) {
    let lease = shared.tasks.lease;
    let mut renew = tokio::time::interval(lease / 3);
    loop {
        tokio::select! {
            () = shared.cancel.cancelled() => return,
            inbox = shared.tasks.store.next_inbox(&id, &shared.tasks.owner) => {
                let Ok(inbox) = inbox else { return };
                if inbox.cancel {
                    shared.cancelled_by_client.store(true, Ordering::Release);
                    shared.cancel.cancel();
                }
                shared.answers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend(inbox.answers);
                shared.answered.notify_one();
            }
            _ = renew.tick() => {
                let until = now_ms().saturating_add(millis(lease));
                if shared.change(&id, TaskChange::Lease(until)).await.is_err() {
                    return;
                }
            }
        }
    }
}
