//! Joining the fleet: connecting to the store, subscribing to the fleet's changes and this
//! replica's inbox, and dispatching what arrives.

use std::sync::Arc;

use anyhow::{Context, Result};
use redis::aio::ConnectionManagerConfig;
use redis::{IntoConnectionInfo, ProtocolVersion, PushInfo, PushKind};
use tokio::sync::mpsc;

use super::changes;
use super::replica::{Fleet, RESPONSE_TIMEOUT, StoreOptions, redacted};
use crate::runtime::LiveCatalog;

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
}
