//! List changes and resource updates between replicas. A replica's own changes (its hot
//! reload, a plugin's `resource-updated`) are published on `P:changes`; every other replica
//! tells its own listeners (legacy sessions' subscriptions, 2026-07-28 `subscriptions/listen`
//! streams), so a listener hears of an update wherever the call that made it ran.
//!
//! Rolling updates: two catalog versions serve at once. A replica that starts with a catalog
//! other than the one the fleet last announced (`P:catalog`, a digest of names and
//! descriptors) announces every list as changed, so listeners everywhere list again; cursors
//! are sort keys (`mcp/wire/paging.rs`), so a listing whose pages come from both versions still
//! holds each name at most once, in order. Pub/sub delivers to the replicas connected at the
//! time: a change is a hint to list again, never state.

use std::sync::Arc;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::replica::Fleet;
use crate::runtime::{Change, LiveCatalog};

/// One change on the wire.
#[derive(Serialize, Deserialize)]
struct Message {
    /// The replica (owner id) it came from: a replica skips its own.
    from: String,
    /// `tools`, `prompts`, `resources`, or `updated` with `uri`.
    change: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
}

fn encode(from: &str, change: &Change) -> Message {
    let (change, uri) = match change {
        Change::Tools => ("tools", None),
        Change::Prompts => ("prompts", None),
        Change::Resources => ("resources", None),
        Change::ResourceUpdated(uri) => ("updated", Some(uri.clone())),
    };
    Message { from: from.to_owned(), change: change.to_owned(), uri }
}

fn decode(message: Message) -> Option<Change> {
    Some(match (message.change.as_str(), message.uri) {
        ("tools", _) => Change::Tools,
        ("prompts", _) => Change::Prompts,
        ("resources", _) => Change::Resources,
        ("updated", Some(uri)) => Change::ResourceUpdated(uri),
        _ => return None,
    })
}

/// Forwards this replica's changes to the fleet, and announces its catalog if the fleet
/// last saw another.
pub(super) async fn start(fleet: &Fleet, live: Arc<LiveCatalog>) -> Result<()> {
    let (outbox, mut changes) = mpsc::unbounded_channel();
    live.forward_to(outbox);
    let publisher = fleet.clone();
    let catalog_live = live.clone();
    tokio::spawn(async move {
        while let Some(change) = changes.recv().await {
            if matches!(change, Change::Tools | Change::Prompts | Change::Resources) {
                // A hot reload: this replica's catalog is the latest the fleet has seen.
                let _ = publisher.swap_catalog(&catalog_live.fingerprint()).await;
            }
            if let Err(error) = publisher.publish(&change).await {
                super::replica::store_error("publish");
                tracing::warn!("cannot tell the other replicas of {change:?}: {error}");
            }
        }
    });
    let fingerprint = live.fingerprint();
    let previous = fleet.swap_catalog(&fingerprint).await.context("cannot read the fleet's catalog")?;
    if previous.is_some_and(|previous| previous != fingerprint) {
        tracing::info!("this replica serves another catalog than the fleet did: every list announced as changed");
        for change in [Change::Tools, Change::Prompts, Change::Resources] {
            fleet.publish(&change).await.context("cannot announce this replica's catalog")?;
        }
    }
    Ok(())
}

/// A message on `P:changes`, told to this replica's listeners unless it sent it.
pub(super) fn received(fleet: &Fleet, live: &LiveCatalog, payload: &str) {
    let Ok(message) = serde_json::from_str::<Message>(payload) else {
        tracing::warn!("ignored an unreadable change from the fleet");
        return;
    };
    if message.from == fleet.owner() {
        return;
    }
    if let Some(change) = decode(message) {
        live.announce(change);
    }
}

impl Fleet {
    async fn publish(&self, change: &Change) -> redis::RedisResult<()> {
        let payload = serde_json::to_string(&encode(self.owner(), change)).unwrap_or_default();
        let mut redis = self.redis.clone();
        redis::cmd("PUBLISH").arg(self.key(&["changes"])).arg(payload).query_async(&mut redis).await
    }

    /// Records `fingerprint` as the fleet's catalog; the one before.
    async fn swap_catalog(&self, fingerprint: &str) -> redis::RedisResult<Option<String>> {
        let mut redis = self.redis.clone();
        redis::cmd("SET").arg(self.key(&["catalog"])).arg(fingerprint).arg("GET").query_async(&mut redis).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_survives_the_wire() {
        for change in
            [Change::Tools, Change::Prompts, Change::Resources, Change::ResourceUpdated("memo://a b".to_owned())]
        {
            let text = serde_json::to_string(&encode("r/1", &change)).unwrap();
            assert_eq!(decode(serde_json::from_str(&text).unwrap()), Some(change));
        }
    }
}
