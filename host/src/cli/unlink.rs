//! `mcpbox unlink`: the operator removes a user's linked accounts from a fleet's token vault
//! (the records in `[store]`; the vault of a single process lives in its memory, where only
//! the user's own `DELETE /link` or a restart reaches it).

use anyhow::{Result, bail};

use crate::config::{ServeArgs, Settings};

/// `args`: what the fleet serves with, checked as `serve` checks it.
pub(crate) async fn run(args: ServeArgs, issuer: &str, subject: &str, client: Option<&str>) -> Result<()> {
    let settings = Settings::from_args(&args)?;
    let Some(vault) = &settings.vault else { bail!("the config has no token vault ([oauth_clients], [auth.link])") };
    let Some(store) = &settings.store else {
        bail!(
            "the config keeps linked accounts in the serving process's memory (no [store]): the user unlinks with \
             `DELETE /link` and their token, or a restart of mcpbox forgets every account"
        )
    };
    let clients: Vec<String> = match client {
        Some(client) if vault.clients.contains_key(client) => vec![client.to_owned()],
        Some(client) => bail!("no [oauth_clients.{client}] in the config"),
        None => vault.clients.keys().cloned().collect(),
    };
    let removed = crate::access::unlink_in_store(store, issuer, subject, &clients).await?;
    eprintln!("removed {removed} linked account(s) of {subject} ({issuer})");
    Ok(())
}
