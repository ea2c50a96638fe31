//! The schema of `[secrets.NAME]` and `[[plugin.NAME.credentials]]` (docs/credentials.md).

use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

/// `[secrets.NAME]`: where one secret is kept: exactly one of `file` and `env`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileSecret {
    /// A file only its owner may read (relative to the config, or `~/...`).
    pub(crate) file: Option<Spanned<PathBuf>>,
    /// An environment variable of mcpbox's.
    pub(crate) env: Option<Spanned<String>>,
}

/// `[[plugin.NAME.credentials]]`: a value set on the plugin's requests to one origin.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileCredential {
    /// The origin: `https://api.github.com`, `http://127.0.0.1:8080`.
    pub(crate) host: Spanned<String>,
    /// Set this header to `value`...
    pub(crate) header: Option<Spanned<String>>,
    /// ...or this query parameter...
    pub(crate) query: Option<Spanned<String>>,
    /// ...or `Authorization: Basic` with this user name and `value` as the password.
    pub(crate) basic_username: Option<Spanned<String>>,
    /// Text with `{secrets.NAME}` placeholders.
    pub(crate) value: Option<Spanned<String>>,
    /// Or `Authorization: Bearer` with each caller's own token at this `[oauth_clients.NAME]`.
    pub(crate) oauth: Option<Spanned<String>>,
}

/// `[oauth_clients.NAME]`: mcpbox as an OAuth client of a third party, to link each user's own
/// account there (the token vault, docs/credentials.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileOAuthClient {
    /// The third party's issuer: its endpoints from its metadata (RFC 8414, or OpenID discovery).
    pub(crate) issuer: Option<Spanned<String>>,
    /// Or its endpoints, given.
    pub(crate) authorization_endpoint: Option<Spanned<String>>,
    pub(crate) token_endpoint: Option<Spanned<String>>,
    pub(crate) client_id: Spanned<String>,
    /// `{secrets.NAME}`: the client's secret (HTTP basic auth at the token endpoint).
    pub(crate) client_secret: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) scopes: Vec<String>,
}

/// `[auth.link]`: mcpbox as an OpenID client of the `[auth]` issuers, to sign the person who
/// opens a link in and check they are the user it was made for; and the vault's key.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileLink {
    pub(crate) client_id: Spanned<String>,
    /// `{secrets.NAME}`.
    pub(crate) client_secret: Option<Spanned<String>>,
    /// 32 bytes in base64 (`openssl rand -base64 32`) sealing the stored tokens; needed with
    /// `[store]` (every replica the same), otherwise a key made for the process.
    pub(crate) key_file: Option<Spanned<PathBuf>>,
}
