//! Replicas sharing what must be shared (issue 20): one Redis that every replica of a fleet
//! talks to, behind the runtime's traits. In-memory stays the default for one process; with
//! `[store] redis` (or `--store`) a replica keeps its tasks there (`tasks.rs`), fans resource
//! updates and list changes out to every replica's listeners (`changes.rs`), and says it is
//! alive (a presence key that expires with its lease, so nothing of a dead replica outlives
//! it). What is *not* in the store: the keys that seal `requestState` (the operator gives
//! every replica the same file), legacy sessions (they stay on their replica), the
//! per-principal limits (counted per replica: docs/fleet.md has the arithmetic).
//!
//! Keys, all under the operator's prefix (`mcpbox` unless configured):
//! `P:task:ID` (a hash: `rev`, `doc`; expires with the task), `P:tasks` and `P:tasks:PRINCIPAL`
//! (sorted sets of task ids by expiry: the count limits), `P:out` (a hash of each task's kept
//! output: the output limits), `P:leases` (running tasks by the end of their owner's lease:
//! the orphans to settle), `P:replica:OWNER` (presence), `P:catalog` (the catalog last
//! announced); channels `P:changes` and `P:inbox:OWNER`.
//!
//! - `tasks`: the [`TaskStore`](crate::runtime::tasks::TaskStore) in Redis;
//! - `changes`: list changes and resource updates between replicas.

mod changes;
mod tasks;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use anyhow::{Context, Result};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{IntoConnectionInfo, ProtocolVersion, PushInfo, PushKind};
use sha2::{Digest, Sha256};
use tokio::sync::{Notify, mpsc};

pub(crate) use tasks::RedisTasks;

use crate::runtime::LiveCatalog;

/// How long one store operation may take before it counts as failed.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

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
    redis: ConnectionManager,
    prefix: Arc<str>,
    /// This process, unique in the fleet: `NAME/RANDOM` (a replica restarted under its name
    /// is a new owner: the tasks of the process before it are not its own).
    owner: Arc<str>,
    /// The name the operator gave this replica (the pod name), as its presence says (session ids
    /// start with it too: `config/http.rs` `session_prefix`).
    name: Arc<str>,
    lease: Duration,
    /// Owners of tasks waiting for their inbox, woken by a message on this replica's channel.
    waiting: Arc<Mutex<HashMap<String, Weak<Notify>>>>,
}

impl Fleet {
    /// Connects to the store (RESP3: commands and subscriptions share one connection, which
    /// reconnects and subscribes again by itself) and starts announcing this replica.
    pub async fn connect(options: &StoreOptions, name: &str, live: Arc<LiveCatalog>) -> Result<Fleet> {
        let info = options.url.as_str().into_connection_info().context("[store] redis is not a redis:// URL")?;
        let settings = info.redis_settings().clone().set_protocol(ProtocolVersion::RESP3);
        let client = redis::Client::open(info.set_redis_settings(settings)).context("[store] redis")?;
        let (push_send, push_receive) = mpsc::unbounded_channel::<PushInfo>();
        let config = ConnectionManagerConfig::new()
            .set_push_sender(push_send)
            .set_automatic_resubscription()
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_connection_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(2);
        let redis = client
            .get_connection_manager_with_config(config)
            .await
            .with_context(|| format!("cannot reach the store at {}", redacted(&options.url)))?;
        let random = crate::hex::random_hex::<8>().context("no randomness for a replica id")?;
        let owner = format!("{name}/{random}");
        let fleet = Fleet {
            redis,
            prefix: options.prefix.as_str().into(),
            owner: owner.into(),
            name: name.into(),
            lease: options.lease,
            waiting: Arc::default(),
        };
        let mut subscriber = fleet.redis.clone();
        subscriber.subscribe(fleet.key(&["changes"])).await.context("cannot subscribe to the fleet's changes")?;
        subscriber.subscribe(fleet.inbox_channel()).await.context("cannot subscribe to this replica's inbox")?;
        fleet.present().await.context("cannot announce this replica in the store")?;
        tokio::spawn(fleet.clone().keep_present());
        tokio::spawn(fleet.clone().dispatch(push_receive, live.clone()));
        changes::start(&fleet, live).await?;
        tracing::info!(replica = %fleet.owner, store = %redacted(&options.url), prefix = %options.prefix, "sharing state with the fleet");
        Ok(fleet)
    }

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
    fn key(&self, parts: &[&str]) -> String {
        let mut key = self.prefix.to_string();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }

    fn inbox_channel(&self) -> String {
        self.key(&["inbox", &self.owner])
    }

    /// Marks this replica present until its lease ends.
    async fn present(&self) -> redis::RedisResult<()> {
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
    async fn keep_present(self) {
        let mut tick = tokio::time::interval(self.lease / 3);
        loop {
            tick.tick().await;
            if let Err(error) = self.present().await {
                store_error("presence");
                tracing::warn!("cannot renew this replica's presence in the store: {error}");
            }
        }
    }

    /// Routes what the store pushes: a change from another replica to this one's listeners, a
    /// task id on this replica's inbox channel to the call waiting for it.
    async fn dispatch(self, mut pushes: mpsc::UnboundedReceiver<PushInfo>, live: Arc<LiveCatalog>) {
        let changes = self.key(&["changes"]);
        let inbox = self.inbox_channel();
        while let Some(push) = pushes.recv().await {
            if push.kind == PushKind::Disconnection {
                tracing::warn!("lost the store's connection; reconnecting");
                continue;
            }
            if push.kind != PushKind::Message {
                continue;
            }
            let [channel, payload] = &push.data[..] else { continue };
            let (Ok(channel), Ok(payload)) =
                (redis::from_redis_value_ref::<String>(channel), redis::from_redis_value_ref::<String>(payload))
            else {
                continue;
            };
            if channel == changes {
                changes::received(&self, &live, &payload);
            } else if channel == inbox {
                self.wake(&payload);
            }
        }
    }

    /// What wakes the owner's wait for task `id`'s inbox (kept while someone holds it).
    fn waiter(&self, id: &str) -> Arc<Notify> {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        waiting.retain(|_, notify| notify.strong_count() > 0);
        if let Some(notify) = waiting.get(id).and_then(Weak::upgrade) {
            return notify;
        }
        let notify = Arc::new(Notify::new());
        waiting.insert(id.to_owned(), Arc::downgrade(&notify));
        notify
    }

    fn wake(&self, id: &str) {
        let notify = self.waiting.lock().unwrap_or_else(PoisonError::into_inner).get(id).and_then(Weak::upgrade);
        if let Some(notify) = notify {
            notify.notify_one();
        }
    }
}

/// A principal's key in a key name: its SHA-256 (principal keys are JSON of any length).
fn principal_key(principal: &str) -> String {
    crate::hex::hex(&Sha256::digest(principal.as_bytes())[..16])
}

/// The URL without its password, for logs and errors.
fn redacted(url: &str) -> String {
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
