//! The outcome of the request being served, as the runtime counted it. A tool call that failed
//! in the host (its time limit, its memory limit, a crash) reaches the client as an `isError`
//! result, as a tool's own error does, but an operator must tell them apart: the runtime
//! reports what it counted in the metrics (`runtime/catalog/dispatch.rs`), and the request's
//! span and its `request finished` line say the same (`mcp/call/observe.rs`). One outcome, in all
//! three.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

tokio::task_local! {
    static OUTCOME: Arc<Mutex<Option<&'static str>>>;
}

/// Runs `work` (a request), and returns what the runtime reported as its outcome, if anything.
pub(crate) async fn scope<F: Future>(work: F) -> (F::Output, Option<&'static str>) {
    let slot = Arc::new(Mutex::new(None));
    let output = OUTCOME.scope(slot.clone(), work).await;
    let reported = *slot.lock().unwrap_or_else(PoisonError::into_inner);
    (output, reported)
}

/// The request this task serves ended so (the last report wins; outside a request, nothing).
pub(crate) fn report(outcome: &'static str) {
    let _ = OUTCOME.try_with(|slot| *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome));
}
