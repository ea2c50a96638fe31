//! This replica's connection to the fleet's store: its owner name and presence, key names, and
//! who waits for its inbox.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use anyhow::Result;
use redis::aio::ConnectionManager;
use sha2::{Digest, Sha256};
use tokio::sync::Notify;

/// How long one store operation may take before it counts as failed.
pub(super) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// Where a fleet's shared state lives, as the operator configured it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// `redis://` or `rediss://` URL (credentials in it, or from the environment).
    pub url: String,
    /// Prefix of every key and channel: fleets sharing one Redis use their own.
    pub prefix: String,
    /// How long a replica's claim on its tasks (and its presence) lasts without renewal.
    pub lease: Duration,
}

/// This replica's connection to the fleet's store.
#[derive(Clone)]
pub struct Fleet {
    pub(super) redis: ConnectionManager,
    pub(super) prefix: Arc<str>,
    /// This process, unique in the fleet: `NAME/RANDOM` (a replica restarted under its name
    /// is a new owner: the tasks of the process before it are not its own).
    pub(super) owner: Arc<str>,
    /// The name the operator gave this replica (the pod name), as its presence says (session ids
    /// start with it too: `config/http.rs` `session_prefix`).
    pub(super) name: Arc<str>,
    pub(super) lease: Duration,
    /// Owners of tasks waiting for their inbox, woken by a message on this replica's channel.
    pub(super) waiting: Arc<Mutex<HashMap<String, Weak<Notify>>>>,
}

impl Fleet {
    /// This process as the owner of its tasks.
    pub(crate) fn owner(&self) -> &str {
        &self.owner
    }

    /// How long leases last.
    pub(crate) fn lease(&self) -> Duration {
        self.lease
    }

    /// Whether the store answers (readiness).
    pub(crate) async fn ping(&self) -> Result<(), String> {
        let mut redis = self.redis.clone();
        redis::cmd("PING").query_async::<String>(&mut redis).await.map(drop).map_err(|e| e.to_string())
    }

    /// `prefix:part:part...`
    pub(super) fn key(&self, parts: &[&str]) -> String {
        let mut key = self.prefix.to_string();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }

    pub(super) fn inbox_channel(&self) -> String {
        self.key(&["inbox", &self.owner])
    }

    /// Marks this replica present until its lease ends.
    pub(super) async fn present(&self) -> redis::RedisResult<()> {
        let mut redis = self.redis.clone();
        let presence = serde_json::json!({ "name": &*self.name, "renewed_ms": crate::runtime::tasks::now_ms() });
        redis::cmd("SET")
            .arg(self.key(&["replica", &self.owner]))
            .arg(presence.to_string())
            .arg("PX")
            .arg(crate::runtime::tasks::millis(self.lease))
            .query_async::<()>(&mut redis)
            .await
    }

    /// Renews the presence at a third of the lease, as long as the process lives.
    pub(super) async fn keep_present(self) {
        let mut tick = tokio::time::interval(self.lease / 3);
        loop {
            tick.tick().await;
            if let Err(error) = self.present().await {
                store_error("presence");
                tracing::warn!("cannot renew this replica's presence in the store: {error}");
            }
        }
    }

    /// What wakes the owner's wait for task `id`'s inbox (kept while someone holds it).
    pub(super) fn waiter(&self, id: &str) -> Arc<Notify> {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        waiting.retain(|_, notify| notify.strong_count() > 0);
        if let Some(notify) = waiting.get(id).and_then(Weak::upgrade) {
            return notify;
        }
        let notify = Arc::new(Notify::new());
        waiting.insert(id.to_owned(), Arc::downgrade(&notify));
        notify
    }

    pub(super) fn wake(&self, id: &str) {
        let notify = self.waiting.lock().unwrap_or_else(PoisonError::into_inner).get(id).and_then(Weak::upgrade);
        if let Some(notify) = notify {
            notify.notify_one();
        }
    }
}

/// A principal's key in a key name: its SHA-256 (principal keys are JSON of any length).
pub(super) fn principal_key(principal: &str) -> String {
    crate::hex::hex(&Sha256::digest(principal.as_bytes())[..16])
}

/// The URL without its password, for logs and errors.
pub(super) fn redacted(url: &str) -> String {
    match url.split_once("://").and_then(|(scheme, rest)| rest.split_once('@').map(|(_, host)| (scheme, host))) {
        Some((scheme, host)) => format!("{scheme}://***@{host}"),
        None => url.to_owned(),
    }
}

/// Counts an operation on the store that failed (`mcpbox_store_errors_total`).
pub(crate) fn store_error(operation: &'static str) {
    crate::telemetry::metrics::metrics().store_errors.with_label_values(&[operation]).inc();
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_stay_out_of_logs() {
        assert_eq!(super::redacted("redis://:secret@10.0.0.1:6379/0"), "redis://***@10.0.0.1:6379/0");
        assert_eq!(super::redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
