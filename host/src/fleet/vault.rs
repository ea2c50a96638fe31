//! The token vault's records in the fleet's store (`access/vault/`): sealed bytes under
//! `PREFIX:vault:KEY`, so that an account linked through one replica serves calls on every
//! other. The store sees only ciphertext: the vault seals each record with the operator's key
//! before it gets here.

use std::time::Duration;

use super::replica::{Fleet, RESPONSE_TIMEOUT, store_error};

impl Fleet {
    fn vault_key(&self, key: &str) -> String {
        self.key(&["vault", key])
    }

    async fn vault_command<T: redis::FromRedisValue>(
        &self,
        command: redis::Cmd,
        operation: &'static str,
    ) -> Result<T, String> {
        let mut redis = self.redis.clone();
        match tokio::time::timeout(RESPONSE_TIMEOUT, command.query_async::<T>(&mut redis)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => {
                store_error(operation);
                Err(format!("the fleet's store failed: {e}"))
            }
            Err(_) => {
                store_error(operation);
                Err("the fleet's store did not answer in time".to_owned())
            }
        }
    }

    /// Keeps `value` under `key`, for `ttl` if given.
    pub(crate) async fn vault_put(&self, key: &str, value: &[u8], ttl: Option<Duration>) -> Result<(), String> {
        let mut command = redis::cmd("SET");
        command.arg(self.vault_key(key)).arg(value);
        if let Some(ttl) = ttl {
            command.arg("PX").arg(ttl.as_millis().max(1) as u64);
        }
        self.vault_command::<()>(command, "vault_put").await
    }

    /// The value under `key`.
    pub(crate) async fn vault_get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        let mut command = redis::cmd("GET");
        command.arg(self.vault_key(key));
        self.vault_command(command, "vault_get").await
    }

    /// The value under `key`, removed in the same step: a single-use record is used once,
    /// whichever replica asks first.
    pub(crate) async fn vault_take(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        let mut command = redis::cmd("GETDEL");
        command.arg(self.vault_key(key));
        self.vault_command(command, "vault_take").await
    }

    /// Removes `key`.
    pub(crate) async fn vault_delete(&self, key: &str) -> Result<(), String> {
        let mut command = redis::cmd("DEL");
        command.arg(self.vault_key(key));
        self.vault_command::<()>(command, "vault_delete").await
    }
}

/// Removes the vault records `names` from the store of `options`, with a connection of its
/// own (the operator's `mcpbox unlink`, no replica needed); how many existed.
pub(crate) async fn vault_delete_all(options: &super::StoreOptions, names: &[String]) -> anyhow::Result<usize> {
    use anyhow::Context;
    let client = redis::Client::open(options.url.as_str()).context("the [store] redis URL")?;
    let mut connection = tokio::time::timeout(RESPONSE_TIMEOUT * 5, client.get_multiplexed_async_connection())
        .await
        .context("the store did not answer in time")?
        .context("cannot reach the store")?;
    let mut removed = 0;
    for name in names {
        let key = format!("{}:vault:{name}", options.prefix);
        removed += redis::cmd("DEL").arg(&key).query_async::<usize>(&mut connection).await.context("DEL")?;
    }
    Ok(removed)
}
