//! Whether this replica should get traffic (`/readyz`) and whether it lives (`/healthz`), for
//! load balancers and Kubernetes probes. Ready means: every plugin it was given loaded, the
//! shared store (if any) answers, and no stop signal arrived. A stop signal fails readiness at
//! once, before the listener stops taking requests (`transport/http.rs`), so a load balancer
//! checking `/readyz` sends nothing new while the calls in flight drain.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::fleet::Fleet;

/// How long the store may take to answer a readiness check.
const STORE_CHECK: Duration = Duration::from_secs(1);

/// What readiness depends on.
pub(crate) struct Health {
    /// Plugins that failed to load at start-up (files, for the log; counted in the answer).
    failed_plugins: usize,
    draining: AtomicBool,
    fleet: Option<Fleet>,
    /// Cancelled when the server stops taking connections: `subscriptions/listen` streams end
    /// with their completion result (`handler.rs`) while the connection can still carry it.
    listens: CancellationToken,
}

impl Health {
    pub(crate) fn new(failed_plugins: usize, fleet: Option<Fleet>) -> Health {
        Health { failed_plugins, draining: AtomicBool::new(false), fleet, listens: CancellationToken::new() }
    }

    /// The server stops taking connections: every `subscriptions/listen` stream ends now,
    /// gracefully (2026-07-28 basic/patterns/subscriptions §Graceful Closure).
    pub(crate) fn end_listens(&self) {
        self.listens.cancel();
    }

    /// Resolves when `subscriptions/listen` streams must end.
    pub(crate) async fn listens_ended(&self) {
        self.listens.cancelled().await;
    }

    /// A stop signal arrived: readiness fails from now on.
    pub(crate) fn drain(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// Whether to send this replica traffic, and why (the body of `/readyz`).
    pub(crate) async fn readiness(&self) -> (bool, Value) {
        let mut reasons = Vec::new();
        if self.draining.load(Ordering::Acquire) {
            reasons.push("shutting down".to_owned());
        }
        if self.failed_plugins > 0 {
            reasons.push(format!("{} plugin(s) failed to load (see the log)", self.failed_plugins));
        }
        let mut body = json!({});
        if let Some(fleet) = &self.fleet {
            body["replica"] = fleet.owner().into();
            match tokio::time::timeout(STORE_CHECK, fleet.ping()).await {
                Ok(Ok(())) => body["store"] = "ok".into(),
                Ok(Err(error)) => reasons.push(format!("the store does not answer: {error}")),
                Err(_) => reasons.push(format!("the store did not answer within {STORE_CHECK:?}")),
            }
        }
        body["ready"] = reasons.is_empty().into();
        if !reasons.is_empty() {
            body["reasons"] = reasons.into();
        }
        (body["ready"] == true, body)
    }
}
