//! The token vault's options (docs/credentials.md, "Each user's own account"):
//! `[oauth_clients.NAME]` (the third parties), `[auth.link]` (mcpbox's own client at the
//! `[auth]` issuers, which signs a link's opener in), and the key that seals stored tokens.
//! A credential with `oauth = ...` needs all of it and `[auth]`: without principals there is no
//! "each user".

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use base64::Engine;
use toml::Spanned;
use zeroize::Zeroizing;

use super::file::{ConfigFile, FileOAuthClient};
use super::problems::Problems;
use super::secrets::Secrets;
use crate::runtime::grants::credentials::{LinkedTokens, Template};

/// Where a third party's endpoints come from.
#[derive(Debug, Clone)]
pub enum Endpoints {
    /// Its metadata at this issuer, fetched when first needed (and again until it answers).
    Discovered {
        issuer: String,
    },
    Given {
        authorization: String,
        token: String,
    },
}

/// One `[oauth_clients.NAME]`.
#[derive(Clone)]
pub struct OAuthClientOptions {
    pub endpoints: Endpoints,
    pub client_id: String,
    pub client_secret: Option<Arc<Template>>,
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for OAuthClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClientOptions")
            .field("endpoints", &self.endpoints)
            .field("client_id", &self.client_id)
            .finish()
    }
}

/// The vault's options.
#[derive(Clone)]
pub struct VaultOptions {
    pub clients: BTreeMap<String, OAuthClientOptions>,
    /// mcpbox's client id and secret at the `[auth]` issuers.
    pub link_client_id: String,
    pub link_client_secret: Option<Arc<Template>>,
    /// The key sealing stored tokens; `None`: one made for this process.
    pub key: Option<Arc<Zeroizing<Vec<u8>>>>,
}

impl std::fmt::Debug for VaultOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultOptions")
            .field("clients", &self.clients)
            .field("link_client_id", &self.link_client_id)
            .finish()
    }
}

/// A secret's value rendered from its template (no linked tokens in these).
pub fn rendered(template: &Template) -> Zeroizing<Vec<u8>> {
    template.render(&LinkedTokens::new())
}

/// The vault's options, if any credential or section asks for one; each problem is kept.
pub(crate) fn vault_options(file: &ConfigFile, secrets: &Secrets, problems: &mut Problems) -> Option<VaultOptions> {
    let config = &file.config;
    let first_oauth = config.plugin.iter().find_map(|(name, section)| {
        section.credentials.iter().find_map(|c| c.oauth.as_ref().map(|o| (name.clone(), o.span())))
    });
    let link = config.auth.link.as_ref();
    if first_oauth.is_none() && config.oauth_clients.is_empty() && link.is_none() {
        return None;
    }
    let at = |span: std::ops::Range<usize>| file.at(span);
    if config.auth.issuers.is_empty() {
        let (what, span) = match (&first_oauth, config.oauth_clients.values().next(), link) {
            (Some((name, span)), _, _) => (format!("[[plugin.{name}.credentials]] oauth"), span.clone()),
            (None, Some(client), _) => ("[oauth_clients]".to_owned(), client.span()),
            (None, None, Some(link)) => ("[auth.link]".to_owned(), link.span()),
            (None, None, None) => return None,
        };
        problems.take::<()>(Err(anyhow!(
            "{}: {what} needs [auth] (each user's own account needs users: OAuth access tokens on HTTP)",
            at(span)
        )));
        return None;
    }
    let Some(link) = link else {
        let span = first_oauth
            .map_or_else(|| config.oauth_clients.values().next().map(Spanned::span).unwrap_or_default(), |(_, s)| s);
        problems.take::<()>(Err(anyhow!(
            "{}: linking each user's account needs [auth.link] (mcpbox's client at the [auth] issuer, which signs the link's opener in)",
            at(span)
        )));
        return None;
    };
    let template = |text: &Spanned<String>, key: &str| {
        Template::parse(text.get_ref(), |name| secrets.get(name))
            .map(Arc::new)
            .with_context(|| format!("{}: {key}", at(text.span())))
    };
    let mut clients = BTreeMap::new();
    for (name, section) in &config.oauth_clients {
        if let Some(client) = problems.take(oauth_client(file, name, section.get_ref(), &template)) {
            clients.insert(name.clone(), client);
        }
    }
    let link_section = link.get_ref();
    let link_client_secret =
        link_section.client_secret.as_ref().and_then(|s| problems.take(template(s, "[auth.link] client_secret")));
    let key = match &link_section.key_file {
        Some(path) => problems.take(read_key(file, path)).map(Arc::new),
        None if config.store.redis.is_some() => {
            problems.take::<()>(Err(anyhow!(
                "{}: [auth.link] needs key_file with [store]: every replica must open the tokens the others stored",
                at(link.span())
            )));
            None
        }
        None => None,
    };
    Some(VaultOptions { clients, link_client_id: link_section.client_id.get_ref().clone(), link_client_secret, key })
}

fn oauth_client(
    file: &ConfigFile,
    name: &str,
    section: &FileOAuthClient,
    template: &impl Fn(&Spanned<String>, &str) -> Result<Arc<Template>>,
) -> Result<OAuthClientOptions> {
    let key = |key: &str| format!("[oauth_clients.{name}] {key}");
    let endpoints = match (&section.issuer, &section.authorization_endpoint, &section.token_endpoint) {
        (Some(issuer), None, None) => Endpoints::Discovered { issuer: url(file, issuer, &key("issuer"))? },
        (None, Some(authorization), Some(token)) => Endpoints::Given {
            authorization: url(file, authorization, &key("authorization_endpoint"))?,
            token: url(file, token, &key("token_endpoint"))?,
        },
        _ => bail!(
            "{}: {} needs `issuer`, or both `authorization_endpoint` and `token_endpoint`",
            file.at(section.client_id.span()),
            key("client_id")
        ),
    };
    let client_secret = section.client_secret.as_ref().map(|s| template(s, &key("client_secret"))).transpose()?;
    Ok(OAuthClientOptions {
        endpoints,
        client_id: section.client_id.get_ref().clone(),
        client_secret,
        scopes: section.scopes.clone(),
    })
}

/// An `http(s)://` URL (plain HTTP only on this machine's loopback).
fn url(file: &ConfigFile, value: &Spanned<String>, key: &str) -> Result<String> {
    let text = value.get_ref().trim_end_matches('/').to_owned();
    let uri: http::Uri = text.parse().map_err(|_| anyhow!("{}: {key} `{text}` is not a URL", file.at(value.span())))?;
    let loopback =
        uri.host().is_some_and(|h| h == "localhost" || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()));
    match uri.scheme_str() {
        Some("https") => Ok(text),
        Some("http") if loopback => Ok(text),
        _ => bail!("{}: {key} must be https:// (http:// only on loopback)", file.at(value.span())),
    }
}

fn read_key(file: &ConfigFile, path: &Spanned<std::path::PathBuf>) -> Result<Zeroizing<Vec<u8>>> {
    let resolved = file.resolve(path.get_ref());
    let at = file.at(path.span());
    let text = Zeroizing::new(
        std::fs::read_to_string(&resolved)
            .with_context(|| format!("{at}: [auth.link] key_file: cannot read {}", resolved.display()))?,
    );
    let key = Zeroizing::new(base64::engine::general_purpose::STANDARD.decode(text.trim()).unwrap_or_default());
    if key.len() != 32 {
        bail!("{at}: [auth.link] key_file holds 32 bytes in base64 (`openssl rand -base64 32`)");
    }
    Ok(key)
}
