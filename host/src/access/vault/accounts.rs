//! The vault itself: each principal's accounts at the third parties (`[oauth_clients.NAME]`),
//! the links that add one, and the tokens a call's request gets (refreshed before they expire,
//! dropped when the refresh fails, so that the next call asks the user to link again).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use super::oauth::{self, Endpoints, Refusal};
use super::sealed::Sealed;
use crate::access::{Principal, ResourceServer};
use crate::config::{Endpoints as Configured, OAuthClientOptions, VaultOptions, rendered};
use crate::fleet::Fleet;
use crate::runtime::grants::credentials::{LinkedAccounts, TokenFuture};

/// How long a link, and each step of the flows it starts, may wait for the person.
pub(super) const LINK_LIFETIME: Duration = Duration::from_secs(600);

/// A token is refreshed this long before it expires (or at half its lifetime, if shorter).
const REFRESH_AHEAD: Duration = Duration::from_secs(30);

/// A principal as the vault keeps it apart: its key, and who it is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(super) struct Who {
    pub(super) key: String,
    pub(super) issuer: String,
    pub(super) subject: String,
}

impl Who {
    pub(super) fn of(principal: &Principal) -> Who {
        let caller = principal.caller();
        Who { key: principal.key().to_owned(), issuer: caller.issuer.clone(), subject: caller.subject.clone() }
    }

    /// The principal's part of a record's name: a digest, so that store keys carry no identity.
    fn digest(&self) -> String {
        crate::hex::hex(&Sha256::digest(self.key.as_bytes()))
    }
}

/// What a link was made for.
#[derive(Serialize, Deserialize)]
pub(super) struct Link {
    pub(super) who: Who,
    pub(super) client: String,
}

/// One linked account's tokens.
#[derive(Serialize, Deserialize)]
struct Account {
    access: String,
    refresh: Option<String>,
    /// Unix seconds; `None`: the server said nothing of it.
    expires_at: Option<u64>,
    /// Seconds the access token was issued for.
    lifetime: Option<u64>,
}

impl Drop for Account {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        self.access.zeroize();
        self.refresh.zeroize();
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The token vault.
pub(crate) struct Vault {
    pub(super) options: VaultOptions,
    pub(super) sealed: Sealed,
    pub(super) http: reqwest::Client,
    /// The resource server of the listener: checks the sign-in's token, and its resource's
    /// origin is where links point (set when the listener is bound).
    pub(super) server: OnceLock<(Arc<ResourceServer>, String)>,
    /// Third parties' and issuers' endpoints, once discovered.
    endpoints: Mutex<HashMap<String, Endpoints>>,
    /// One refresh at a time per account in this process (a rotated refresh token is single-use).
    refreshing: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Vault {
    /// The vault of `options`, its records in `fleet`'s store if given.
    pub(crate) fn new(options: VaultOptions, fleet: Option<Fleet>) -> anyhow::Result<Arc<Vault>> {
        if options.key.is_none() {
            tracing::warn!(
                "no [auth.link] key_file: linked accounts are sealed with a key made for this process and kept in its \
                 memory; they are lost when it stops"
            );
        }
        let sealed = Sealed::new(options.key.as_deref().map(|key| &key[..]), fleet)?;
        // rustls needs its crypto provider chosen before a client is built (ring, as elsewhere).
        let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| anyhow::anyhow!("cannot make the vault's HTTP client: {e}"))?;
        Ok(Arc::new(Vault {
            options,
            sealed,
            http,
            server: OnceLock::new(),
            endpoints: Mutex::default(),
            refreshing: Mutex::default(),
        }))
    }

    /// Links point at the listener of `server` (its resource's origin).
    pub(crate) fn serve_at(&self, server: Arc<ResourceServer>) {
        let resource = server.resource().to_owned();
        let origin = match resource.find("://").and_then(|at| resource[at + 3..].find('/').map(|end| at + 3 + end)) {
            Some(end) => resource[..end].to_owned(),
            None => resource.clone(),
        };
        let _ = self.server.set((server, origin));
    }

    /// Where links and their callbacks are.
    pub(super) fn base(&self) -> Result<&str, String> {
        self.server.get().map(|(_, origin)| origin.as_str()).ok_or_else(|| "links are served over HTTP only".to_owned())
    }

    pub(super) fn client(&self, name: &str) -> Result<&OAuthClientOptions, String> {
        self.options.clients.get(name).ok_or_else(|| format!("no [oauth_clients.{name}] is configured"))
    }

    /// A third party's (or an issuer's) endpoints, discovered once it answers.
    pub(super) async fn endpoints(&self, cache_key: &str, configured: &Configured) -> Result<Endpoints, String> {
        let issuer = match configured {
            Configured::Given { authorization, token } => {
                return Ok(Endpoints { authorization: authorization.clone(), token: token.clone() });
            }
            Configured::Discovered { issuer } => issuer,
        };
        if let Some(known) = self.endpoints.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(cache_key) {
            return Ok(known.clone());
        }
        let found = oauth::discover(&self.http, issuer).await?;
        self.endpoints
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(cache_key.to_owned(), found.clone());
        Ok(found)
    }

    pub(super) fn account_name(client: &str, who: &Who) -> String {
        if crate::switched_off!("vault.accounts-per-principal") {
            return format!("account:{client}");
        }
        format!("account:{client}:{}", who.digest())
    }

    /// The `clients` `principal` has not linked an account at.
    pub(crate) async fn missing(&self, principal: &Principal, clients: &[String]) -> Result<Vec<String>, String> {
        let who = Who::of(principal);
        let mut missing = Vec::new();
        for client in clients {
            if self.sealed.get(&Self::account_name(client, &who), false).await?.is_none() {
                missing.push(client.clone());
            }
        }
        Ok(missing)
    }

    /// A single-use link for `principal` to link its account at `client`: its id and URL. A
    /// link not opened yet is given again, so that a client calling in a loop holds one link
    /// per account, not one per call.
    pub(crate) async fn new_link(&self, principal: &Principal, client: &str) -> Result<(String, String), String> {
        self.client(client)?;
        let who = Who::of(principal);
        let pending = format!("pending:{client}:{}", who.digest());
        if let Some(id) = self.sealed.get(&pending, false).await?
            && let Ok(id) = std::str::from_utf8(&id)
            && self.sealed.get(&format!("link:{id}"), false).await?.is_some()
        {
            return Ok((id.to_owned(), format!("{}/link/{id}", self.base()?)));
        }
        let id = self.sealed.random_id();
        let record = serde_json::to_vec(&Link { who, client: client.to_owned() }).map_err(|e| e.to_string())?;
        self.sealed.put(&format!("link:{id}"), &record, Some(LINK_LIFETIME)).await?;
        self.sealed.put(&pending, id.as_bytes(), Some(LINK_LIFETIME)).await?;
        Ok((id.clone(), format!("{}/link/{id}", self.base()?)))
    }

    /// Stores `tokens` as `who`'s account at `client`.
    pub(super) async fn keep(&self, who: &Who, client: &str, tokens: oauth::Tokens) -> Result<(), String> {
        let account = Account {
            access: tokens.access.to_string(),
            refresh: tokens.refresh.as_ref().map(|r| r.to_string()),
            expires_at: tokens.expires_in.map(|seconds| now() + seconds),
            lifetime: tokens.expires_in,
        };
        let record = Zeroizing::new(serde_json::to_vec(&account).map_err(|e| e.to_string())?);
        self.sealed.put(&Self::account_name(client, who), &record, None).await
    }

    /// Removes `who`'s accounts at `clients`.
    pub(super) async fn unlink(&self, who: &Who, clients: &[String]) -> Result<(), String> {
        for client in clients {
            self.sealed.delete(&Self::account_name(client, who)).await?;
        }
        Ok(())
    }

    /// The current access token of `who` at `client`, refreshed first when it is due.
    async fn access_token(&self, who: &Who, client: &str) -> Result<Zeroizing<Vec<u8>>, String> {
        let name = Self::account_name(client, who);
        let not_linked = || format!("the caller has not linked an account at `{client}`");
        let record = self.sealed.get(&name, false).await?.ok_or_else(not_linked)?;
        let account: Account = serde_json::from_slice(&record).map_err(|_| not_linked())?;
        if !due(&account) {
            return Ok(Zeroizing::new(account.access.as_bytes().to_vec()));
        }
        let lock = self
            .refreshing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(name.clone())
            .or_default()
            .clone();
        let _one_at_a_time = lock.lock().await;
        // Another call may have refreshed it meanwhile.
        let record = self.sealed.get(&name, false).await?.ok_or_else(not_linked)?;
        let account: Account = serde_json::from_slice(&record).map_err(|_| not_linked())?;
        if !due(&account) {
            return Ok(Zeroizing::new(account.access.as_bytes().to_vec()));
        }
        match self.refresh(client, &account).await {
            Ok(tokens) => {
                let access = Zeroizing::new(tokens.access.as_bytes().to_vec());
                let tokens =
                    oauth::Tokens { refresh: tokens.refresh.or(account.refresh.clone().map(Zeroizing::new)), ..tokens };
                self.keep(who, client, tokens).await?;
                tracing::info!(client, "refreshed a linked account's token");
                Ok(access)
            }
            // Not reached: the account stays, and the next request tries again.
            Err(Refusal::Unreachable(why)) => {
                tracing::warn!(client, "cannot refresh a linked account's token now: {why}");
                Err(format!("the caller's account at `{client}` is unavailable: its token expired and {why}"))
            }
            Err(Refusal::Refused(why)) => {
                self.sealed.delete(&name).await?;
                tracing::warn!(client, "dropped a linked account whose token could not be refreshed: {why}");
                Err(format!(
                    "the caller's account at `{client}` must be linked again: its token expired and refreshing it failed"
                ))
            }
        }
    }

    async fn refresh(&self, client: &str, account: &Account) -> Result<oauth::Tokens, Refusal> {
        let refresh = account.refresh.as_deref().ok_or_else(|| Refusal::Refused("no refresh token".to_owned()))?;
        let options = self.client(client).map_err(Refusal::Refused)?;
        let endpoints = self.endpoints(client, &options.endpoints).await.map_err(Refusal::Unreachable)?;
        let secret = options.client_secret.as_deref().map(rendered);
        oauth::token_request(
            &self.http,
            &endpoints.token,
            &options.client_id,
            secret.as_deref().map(|s| &s[..]),
            &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
        )
        .await
    }

    /// The accounts of `principal`, for its calls.
    pub(crate) fn linked(self: &Arc<Self>, principal: &Principal) -> Arc<dyn LinkedAccounts> {
        Arc::new(Bound { vault: self.clone(), who: Who::of(principal) })
    }
}

/// Removes the accounts of `issuer`'s `subject` at `clients` from a fleet's store, without a
/// vault of this process (the operator's `mcpbox unlink`); how many there were.
pub(crate) async fn unlink_in_store(
    store: &crate::fleet::StoreOptions,
    issuer: &str,
    subject: &str,
    clients: &[String],
) -> anyhow::Result<usize> {
    let key = serde_json::to_string(&[issuer, subject])?;
    let who = Who { key, issuer: issuer.to_owned(), subject: subject.to_owned() };
    let names: Vec<String> = clients.iter().map(|client| Vault::account_name(client, &who)).collect();
    crate::fleet::vault_delete_all(store, &names).await
}

/// Whether an account's token is due for a refresh.
fn due(account: &Account) -> bool {
    let Some(expires_at) = account.expires_at else { return false };
    let ahead =
        account.lifetime.map_or(REFRESH_AHEAD.as_secs(), |lifetime| (lifetime / 2).min(REFRESH_AHEAD.as_secs()));
    now() + ahead >= expires_at
}

/// The vault bound to one principal: what a call of its gets.
struct Bound {
    vault: Arc<Vault>,
    who: Who,
}

impl LinkedAccounts for Bound {
    fn access_token<'a>(&'a self, client: &'a str) -> TokenFuture<'a> {
        Box::pin(self.vault.access_token(&self.who, client))
    }
}
