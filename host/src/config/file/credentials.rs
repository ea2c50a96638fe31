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
    pub(crate) value: Spanned<String>,
}
