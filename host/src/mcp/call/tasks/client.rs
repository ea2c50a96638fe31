//! What a task-capable call's guest asks through: the request's multi round-trip until the
//! call detaches; after, the task's `inputRequests`, answered by `tasks/update` through the
//! owner's inbox, which also carries `tasks/cancel` (the supervisor below, which renews the
//! owner's lease as well).

use std::sync::Arc;

use std::time::Duration;

use serde_json::{Map, Value};

use super::shared::{Phase, Shared};
use crate::mcp::call::rounds::client::{capability_name, client_question};
use crate::runtime::sandbox::{BoxFuture, ClientError, ClientMethod, ClientRequests, Question};
use crate::runtime::tasks::{TaskChange, TaskState};

impl Shared {
    /// The task's questions: each becomes an entry of `inputRequests` under its key, and the
    /// call waits until `tasks/update` has answered all of them (or the task is cancelled).
    async fn ask_task(&self, id: String, questions: Vec<Question>) -> Result<Vec<Result<Value, String>>, ClientError> {
        let mut asked = Vec::with_capacity(questions.len());
        let mut requests = Map::new();
        for question in questions {
            let key = self.replay.claim(&question)?;
            if !self.offers(question.method) {
                return Err(ClientError::MissingCapability(capability_name(question.method)));
            }
            match client_question(question.method, question.params).map(serde_json::to_value) {
                Ok(Ok(request)) => {
                    requests.insert(key.clone(), request);
                    asked.push(Ok(key));
                }
                Ok(Err(e)) => asked.push(Err(format!("cannot encode the request: {e}"))),
                Err(invalid) => asked.push(Err(invalid)),
            }
        }
        let waits = !requests.is_empty();
        if waits {
            let waiting = TaskChange::State {
                state: TaskState::InputRequired(requests),
                retain: Duration::ZERO,
                message: Some("waiting for the client's input".to_owned()),
            };
            self.change(&id, waiting).await.map_err(|e| ClientError::Refused(e.to_string()))?;
        }
        let mut answers = Vec::with_capacity(asked.len());
        for key in asked {
            let key = match key {
                Ok(key) => key,
                Err(invalid) => {
                    answers.push(Err(invalid));
                    continue;
                }
            };
            loop {
                if let Some(answer) =
                    self.answers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&key)
                {
                    answers.push(Ok(answer));
                    break;
                }
                tokio::select! {
                    () = self.answered.notified() => {}
                    () = self.cancel.cancelled() => return Err(ClientError::Refused("the task was cancelled".to_owned())),
                }
            }
        }
        if waits {
            // The store made it `working` again as the last answer arrived; the message follows.
            let _ = self.change(&id, TaskChange::Message("working with the client's answers".to_owned())).await;
        }
        Ok(answers)
    }

    fn offers(&self, method: ClientMethod) -> bool {
        self.replay.offers(method)
    }
}

/// The client a task-capable call's guest asks: the request's round until the call detaches,
/// the task's `inputRequests` after.
pub(super) struct TaskClient(pub(super) Arc<Shared>);

impl ClientRequests for TaskClient {
    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'static, Result<Vec<Result<Value, String>>, ClientError>> {
        let shared = self.0.clone();
        Box::pin(async move {
            let mut phase = shared.phase.lock().await;
            if let Phase::Detached(id) = &*phase {
                let id = id.clone();
                drop(phase);
                return shared.ask_task(id, questions).await;
            }
            let answered = shared.replay.ask(questions).await;
            if matches!(answered, Err(ClientError::InputRequired)) {
                // The round ends with these questions: too late to become a task.
                *phase = Phase::Ending;
            }
            answered
        })
    }

    fn offers(&self, method: ClientMethod) -> bool {
        self.0.offers(method)
    }

    fn save_state(&self, state: Vec<u8>) {
        self.0.replay.save_state(state);
    }

    fn saved_state(&self) -> Option<Vec<u8>> {
        self.0.replay.saved_state()
    }

    fn detach(&self, status_message: Option<String>) -> BoxFuture<'static, Result<(), String>> {
        let shared = self.0.clone();
        Box::pin(async move { shared.detach(status_message).await })
    }
}
