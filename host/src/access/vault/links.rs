//! The link endpoints a person's browser opens (docs/credentials.md, "Each user's own
//! account"). MCP's URL elicitation requires that whoever opens the link is the user it was
//! made for (2025-11-25 `client/elicitation` §URL mode, safe URL handling): a link is single-use
//! and lives 10 minutes; opening it first signs the browser's user in at the `[auth]` issuer
//! (mcpbox as its OpenID client, the authorization code flow with PKCE), and only a sign-in
//! whose token this server accepts for the link's own principal goes on to the third party
//! (the same flow, with its own `state` and verifier), whose tokens then become that
//! principal's account. Every `state` is single-use; a replayed callback finds none.
//!
//! - `GET /link/{id}`: the link; redirects to the sign-in;
//! - `GET /link/signed-in`: the sign-in's callback; redirects to the third party;
//! - `GET /link/callback`: the third party's callback; the account is linked;
//! - `DELETE /link[?client=NAME]`: with the principal's own access token, unlinks its accounts.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use serde::{Deserialize, Serialize};

use super::accounts::{LINK_LIFETIME, Link, Vault, Who};
use super::oauth;
use crate::config::{Endpoints as Configured, rendered};

/// A sign-in under way at the `[auth]` issuer.
#[derive(Serialize, Deserialize)]
struct SignIn {
    link: Link,
    verifier: String,
}

/// An authorization under way at the third party.
#[derive(Serialize, Deserialize)]
struct Authorize {
    who: Who,
    client: String,
    verifier: String,
}

/// The routes, for the HTTP listener (outside its bearer-token guard: a browser opens them).
pub(crate) fn routes(vault: Arc<Vault>) -> Router {
    Router::new()
        .route("/link/signed-in", get(signed_in))
        .route("/link/callback", get(callback))
        .route("/link/{id}", get(open))
        .route("/link", delete(unlink))
        .with_state(vault)
}

/// A plain-text page (never HTML: nothing a third party sent is rendered).
fn page(status: StatusCode, text: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{text}\n")).into_response()
}

fn redirect(to: &str) -> Response {
    match HeaderValue::from_str(to) {
        Ok(location) => (StatusCode::FOUND, [(header::LOCATION, location)]).into_response(),
        Err(_) => page(StatusCode::INTERNAL_SERVER_ERROR, "mcpbox made a redirect it cannot send"),
    }
}

fn unavailable(why: &str) -> Response {
    tracing::warn!("a link step failed: {why}");
    page(StatusCode::BAD_GATEWAY, &format!("mcpbox cannot go on with this link: {why}. Nothing was linked."))
}

async fn open(State(vault): State<Arc<Vault>>, Path(id): Path<String>) -> Response {
    let link: Option<Link> = match vault.sealed.get(&format!("link:{id}"), true).await {
        Ok(record) => record.and_then(|record| serde_json::from_slice(&record).ok()),
        Err(why) => return unavailable(&why),
    };
    let Some(link) = link else {
        return page(
            StatusCode::GONE,
            "This link is unknown, used or expired. Call the tool again for a new one. Nothing was linked.",
        );
    };
    let (Ok(base), Some((server, _))) = (vault.base(), vault.server.get()) else {
        return unavailable("links are served over HTTP only");
    };
    let issuer = Configured::Discovered { issuer: link.who.issuer.clone() };
    let endpoints = match vault.endpoints(&format!("issuer {}", link.who.issuer), &issuer).await {
        Ok(endpoints) => endpoints,
        Err(why) => return unavailable(&why),
    };
    let (state, verifier) = (vault.sealed.random_id(), vault.sealed.random_id());
    let mut scopes = vec!["openid".to_owned()];
    scopes.extend(server.scopes_supported().iter().cloned());
    let to = oauth::authorization_url(
        &endpoints.authorization,
        &vault.options.link_client_id,
        &format!("{base}/link/signed-in"),
        &scopes,
        &state,
        &verifier,
        Some(server.resource()),
    );
    let record = match serde_json::to_vec(&SignIn { link, verifier }) {
        Ok(record) => record,
        Err(e) => return unavailable(&e.to_string()),
    };
    if let Err(why) = vault.sealed.put(&format!("signin:{state}"), &record, Some(LINK_LIFETIME)).await {
        return unavailable(&why);
    }
    redirect(&to)
}

/// A callback's query: a code and its `state`, or the server's `error`.
#[derive(Deserialize)]
struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// The record a callback's `state` names, taken (single use), and its code.
async fn taken<T: for<'de> Deserialize<'de>>(
    vault: &Vault,
    kind: &str,
    query: &Callback,
) -> Result<(T, String), Response> {
    let state = query.state.as_deref().unwrap_or_default();
    let single_use = !crate::switched_off!("vault.single-use-state");
    let record = match vault.sealed.get(&format!("{kind}:{state}"), single_use).await {
        Ok(record) => record.and_then(|record| serde_json::from_slice::<T>(&record).ok()),
        Err(why) => return Err(unavailable(&why)),
    };
    let Some(record) = record else {
        tracing::warn!("a link callback came with an unknown or used state");
        return Err(page(StatusCode::BAD_REQUEST, "Unknown or used state: nothing was linked."));
    };
    match (&query.error, &query.code) {
        (None, Some(code)) => Ok((record, code.clone())),
        (error, _) => {
            let error = error.as_deref().unwrap_or("no code");
            let error: String = error.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').take(64).collect();
            Err(page(StatusCode::FORBIDDEN, &format!("The sign-in was refused ({error}): nothing was linked.")))
        }
    }
}

async fn signed_in(State(vault): State<Arc<Vault>>, Query(query): Query<Callback>) -> Response {
    let (sign_in, code): (SignIn, String) = match taken(&vault, "signin", &query).await {
        Ok(taken) => taken,
        Err(response) => return response,
    };
    let (Ok(base), Some((server, _))) = (vault.base(), vault.server.get()) else {
        return unavailable("links are served over HTTP only");
    };
    let issuer = Configured::Discovered { issuer: sign_in.link.who.issuer.clone() };
    let endpoints = match vault.endpoints(&format!("issuer {}", sign_in.link.who.issuer), &issuer).await {
        Ok(endpoints) => endpoints,
        Err(why) => return unavailable(&why),
    };
    let secret = vault.options.link_client_secret.as_deref().map(rendered);
    let redirect_uri = format!("{base}/link/signed-in");
    let tokens = oauth::token_request(
        &vault.http,
        &endpoints.token,
        &vault.options.link_client_id,
        secret.as_deref().map(|s| &s[..]),
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &redirect_uri),
            ("code_verifier", &sign_in.verifier),
            ("resource", server.resource()),
        ],
    )
    .await;
    let tokens = match tokens {
        Ok(tokens) => tokens,
        Err(why) => return unavailable(&why.to_string()),
    };
    let mut headers = HeaderMap::new();
    let Ok(bearer) = HeaderValue::from_str(&format!("Bearer {}", &*tokens.access)) else {
        return unavailable("the issuer's token is not a header value");
    };
    headers.insert(header::AUTHORIZATION, bearer);
    let Ok(signed_in) = server.authenticate(&headers).await else {
        return page(StatusCode::FORBIDDEN, "The sign-in gave no token this server accepts: nothing was linked.");
    };
    if Who::of(&signed_in).key != sign_in.link.who.key && !crate::switched_off!("vault.link-opener-is-its-user") {
        tracing::warn!(
            client = sign_in.link.client,
            "refused a link opened by another user than the one it was made for"
        );
        return page(
            StatusCode::FORBIDDEN,
            "This link was made for another user than the one signed in: nothing was linked. \
             Open the link your own client showed you.",
        );
    }
    let Link { who, client } = sign_in.link;
    let options = match vault.client(&client) {
        Ok(options) => options,
        Err(why) => return unavailable(&why),
    };
    let endpoints = match vault.endpoints(&client, &options.endpoints).await {
        Ok(endpoints) => endpoints,
        Err(why) => return unavailable(&why),
    };
    let (state, verifier) = (vault.sealed.random_id(), vault.sealed.random_id());
    let to = oauth::authorization_url(
        &endpoints.authorization,
        &options.client_id,
        &format!("{base}/link/callback"),
        &options.scopes,
        &state,
        &verifier,
        None,
    );
    let record = match serde_json::to_vec(&Authorize { who, client, verifier }) {
        Ok(record) => record,
        Err(e) => return unavailable(&e.to_string()),
    };
    if let Err(why) = vault.sealed.put(&format!("authorize:{state}"), &record, Some(LINK_LIFETIME)).await {
        return unavailable(&why);
    }
    redirect(&to)
}

async fn callback(State(vault): State<Arc<Vault>>, Query(query): Query<Callback>) -> Response {
    let (authorize, code): (Authorize, String) = match taken(&vault, "authorize", &query).await {
        Ok(taken) => taken,
        Err(response) => return response,
    };
    let Ok(base) = vault.base() else { return unavailable("links are served over HTTP only") };
    let options = match vault.client(&authorize.client) {
        Ok(options) => options,
        Err(why) => return unavailable(&why),
    };
    let endpoints = match vault.endpoints(&authorize.client, &options.endpoints).await {
        Ok(endpoints) => endpoints,
        Err(why) => return unavailable(&why),
    };
    let secret = options.client_secret.as_deref().map(rendered);
    let redirect_uri = format!("{base}/link/callback");
    let tokens = oauth::token_request(
        &vault.http,
        &endpoints.token,
        &options.client_id,
        secret.as_deref().map(|s| &s[..]),
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &redirect_uri),
            ("code_verifier", &authorize.verifier),
        ],
    )
    .await;
    let tokens = match tokens {
        Ok(tokens) => tokens,
        Err(why) => return unavailable(&why.to_string()),
    };
    if let Err(why) = vault.keep(&authorize.who, &authorize.client, tokens).await {
        return unavailable(&why);
    }
    tracing::info!(client = authorize.client, "linked an account");
    page(
        StatusCode::OK,
        &format!("Your account at `{}` is linked. Go back to your client and call the tool again.", authorize.client),
    )
}

async fn unlink(
    State(vault): State<Arc<Vault>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let Some((server, _)) = vault.server.get() else { return unavailable("links are served over HTTP only") };
    let principal = match server.authenticate(&headers).await {
        Ok(principal) => principal,
        Err(refusal) => return refusal,
    };
    let clients: Vec<String> = match query.get("client") {
        Some(client) if vault.options.clients.contains_key(client) => vec![client.clone()],
        Some(_) => return page(StatusCode::NOT_FOUND, "No such OAuth client."),
        None => vault.options.clients.keys().cloned().collect(),
    };
    match vault.unlink(&Who::of(&principal), &clients).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(why) => unavailable(&why),
    }
}
