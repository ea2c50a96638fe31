//! The config file's schema (`mcpbox.toml`, documented key by key in `docs/config.md`), and
//! where in the file a value stood. The schema is strict: an unknown key or a wrong type is an
//! error naming the file, the line and the key.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde::Deserialize;
use toml::Spanned;

pub(crate) use self::credentials::{FileCredential, FileLink, FileOAuthClient, FileSecret};
pub(crate) use self::plugin::{FileApprovals, FileApprove, FilePlugin, FilePluginDir, FileTasks};
pub(crate) use self::skills::FileSkills;
use crate::runtime::engine::CopyOnWrite;

mod credentials;
mod plugin;
mod skills;

/// The config file's schema.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileConfig {
    /// Plugin files or directories, relative to the config file.
    #[serde(default)]
    pub(crate) plugins: Vec<PathBuf>,
    /// Watch the plugin paths and reload on change (default true).
    pub(crate) watch: Option<bool>,
    /// Map memory images copy-on-write (`"auto"`, `"on"`, `"off"`; default auto).
    pub(crate) copy_on_write: Option<CopyOnWrite>,
    #[serde(default)]
    pub(crate) roots: Vec<FileRoot>,
    #[serde(default)]
    pub(crate) limits: FileLimits,
    #[serde(default)]
    pub(crate) cache: FileCache,
    #[serde(default)]
    pub(crate) http: FileHttp,
    #[serde(default)]
    pub(crate) auth: FileAuth,
    /// Per-plugin settings, by plugin name.
    #[serde(default)]
    pub(crate) plugin: HashMap<String, FilePlugin>,
    #[serde(default)]
    pub(crate) trust: FileTrust,
    #[serde(default)]
    pub(crate) registries: FileRegistries,
    #[serde(default)]
    pub(crate) store: FileStore,
    /// `[network]`: where names plugins reach are sent, and which extra CAs are trusted.
    #[serde(default)]
    pub(crate) network: FileNetwork,
    /// `[secrets.NAME]`: values plugins never see, set on their requests by credentials.
    #[serde(default)]
    pub(crate) secrets: BTreeMap<String, Spanned<FileSecret>>,
    /// `[oauth_clients.NAME]`: third parties where each user links an account of their own.
    #[serde(default)]
    pub(crate) oauth_clients: BTreeMap<String, Spanned<FileOAuthClient>>,
    /// `[approvals]`: how the person's yes is asked for (docs/approvals.md).
    #[serde(default)]
    pub(crate) approvals: FileApprovals,
    /// `[audit]`: a line per call, chained and signed (docs/audit.md).
    #[serde(default)]
    pub(crate) audit: FileAudit,
    /// `[[skills]]`: directories of skills served (docs/skills.md).
    #[serde(default)]
    pub(crate) skills: Vec<Spanned<FileSkills>>,
    /// Show clients `search_tools` and `call_tool` instead of every tool.
    pub(crate) tool_search: Option<bool>,
    /// What the server tells clients about itself (`instructions` of `initialize`).
    pub(crate) instructions: Option<Spanned<String>>,
}

/// `[audit]` (docs/audit.md).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileAudit {
    /// The audit file (relative to the config); `--audit` overrides it.
    pub(crate) path: Option<PathBuf>,
    /// "digest" (default) or "full".
    pub(crate) arguments: Option<Spanned<String>>,
    /// A PEM ECDSA P-256 private key (`mcpbox keygen`) that signs checkpoints.
    pub(crate) key: Option<PathBuf>,
    pub(crate) checkpoint_lines: Option<Spanned<u64>>,
    pub(crate) checkpoint_seconds: Option<Spanned<u64>>,
    pub(crate) rotate_mib: Option<Spanned<u64>>,
    /// "closed" (default) or "open".
    pub(crate) on_failure: Option<Spanned<String>>,
    /// "line" (default) or "checkpoint".
    pub(crate) fsync: Option<Spanned<String>>,
    /// Also send each line as an OTLP log record to this collector.
    pub(crate) otlp_endpoint: Option<String>,
}

/// `[store]`: the state a fleet's replicas share (docs/fleet.md).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileStore {
    /// The Redis URL.
    pub(crate) redis: Option<Spanned<String>>,
    /// Prefix of every key and channel (default `mcpbox`).
    pub(crate) prefix: Option<Spanned<String>>,
    /// How long a replica's claim on its tasks lasts without renewal (default 30).
    pub(crate) lease_seconds: Option<Spanned<u64>>,
}

/// `[auth]`: OAuth 2.1 access tokens on HTTP (docs/authorization.md).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileAuth {
    /// The authorization servers (issuer identifiers) whose tokens are accepted.
    #[serde(default)]
    pub(crate) issuers: Vec<String>,
    /// This server's resource identifier: the URL clients reach the MCP endpoint at.
    pub(crate) resource: Option<String>,
    /// The `aud` tokens must carry, for providers without resource indicators.
    pub(crate) audience: Option<String>,
    /// Allowed JWS algorithms (default RS256, ES256).
    pub(crate) algorithms: Option<Vec<String>>,
    /// Scopes announced in the resource metadata and the 401 challenge.
    #[serde(default)]
    pub(crate) scopes_supported: Vec<String>,
    /// Clock skew tolerated on `exp` and `nbf`, in seconds (default 30, at most 300).
    pub(crate) leeway_seconds: Option<u64>,
    /// The client mcpbox introspects opaque tokens as (RFC 7662), if any.
    pub(crate) introspection_client: Option<String>,
    /// The file holding that client's secret, relative to the config.
    pub(crate) introspection_secret_file: Option<PathBuf>,
    /// How long an introspection answer is kept, in seconds (default 30, at most 300; 0: never).
    pub(crate) introspection_cache_seconds: Option<u64>,
    /// `[[auth.entitlements]]`: what each scope or claim lets a principal use; none: all.
    #[serde(default)]
    pub(crate) entitlements: Vec<Spanned<FileEntitlement>>,
    /// `[auth.limits]`: each principal's share of the server.
    #[serde(default)]
    pub(crate) limits: FileAuthLimits,
    /// `[auth.link]`: how the token vault signs a link's opener in.
    pub(crate) link: Option<Spanned<FileLink>>,
}

/// `[[auth.entitlements]]`: a scope (or a claim's value) and what it lets a principal use.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileEntitlement {
    /// The scope that grants this.
    pub(crate) scope: Option<String>,
    /// Or a claim of the token (`groups`) and the value it must have (or contain).
    pub(crate) claim: Option<String>,
    pub(crate) value: Option<String>,
    /// Everything these plugins serve.
    #[serde(default)]
    pub(crate) plugins: Vec<String>,
    /// Tools, prompts, resource URIs (and templates' URI templates), as listed; `*` at the
    /// end matches any rest.
    #[serde(default)]
    pub(crate) tools: Vec<String>,
    #[serde(default)]
    pub(crate) prompts: Vec<String>,
    #[serde(default)]
    pub(crate) resources: Vec<String>,
    /// Principals without this entitlement are not told these exist (an unknown name, not a
    /// challenge naming the scope).
    #[serde(default)]
    pub(crate) hidden: bool,
}

/// `[auth.limits]`: per principal.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileAuthLimits {
    /// Calls one principal may have running at once.
    pub(crate) concurrent_calls: Option<Spanned<u64>>,
    /// Calls one principal may start per minute, on average.
    pub(crate) calls_per_minute: Option<Spanned<u64>>,
    /// Calls it may start at once after a quiet spell (default: calls_per_minute).
    pub(crate) burst: Option<Spanned<u64>>,
}

/// `[trust]`: whose signatures registry plugins need (docs/registries.md).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileTrust {
    /// Public keys (PEM files, relative to the config) trusted for every registry plugin.
    #[serde(default)]
    pub(crate) keys: Vec<Spanned<PathBuf>>,
    /// References served although unsigned: the operator's explicit opt-out, one by one.
    #[serde(default)]
    pub(crate) unsigned: Vec<String>,
    /// `[trust.plugin.NAME]`: keys trusted for one plugin only.
    #[serde(default)]
    pub(crate) plugin: BTreeMap<String, FileTrustPlugin>,
}

/// `[trust.plugin.NAME]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileTrustPlugin {
    #[serde(default)]
    pub(crate) keys: Vec<Spanned<PathBuf>>,
}

/// `[registries]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileRegistries {
    /// Registries (`HOST:PORT`) reached over plain HTTP although not on this machine.
    #[serde(default)]
    pub(crate) insecure: Vec<String>,
    /// `[registries.mirrors]`: a registry as references write it → the registries (`HOST:PORT`)
    /// its pulls try first, in order.
    #[serde(default)]
    pub(crate) mirrors: BTreeMap<String, Vec<String>>,
}

/// `[[roots]]`: a directory every plugin may see (unless it opts out).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileRoot {
    pub(crate) path: PathBuf,
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) writable: bool,
    /// Write budgets of a writable directory: its tree's size and entries.
    pub(crate) max_mib: Option<Spanned<u64>>,
    pub(crate) max_files: Option<Spanned<u64>>,
}

/// `[limits]`: every call's limits; spanned so that an out-of-range value names its line.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileLimits {
    pub(crate) timeout_ms: Option<Spanned<u64>>,
    pub(crate) memory_mib: Option<Spanned<u64>>,
    pub(crate) max_output_mib: Option<Spanned<u64>>,
    pub(crate) max_write_mib: Option<Spanned<u64>>,
    pub(crate) max_message_bytes: Option<Spanned<usize>>,
    pub(crate) page_size: Option<usize>,
    pub(crate) max_plugin_mib: Option<Spanned<u64>>,
    pub(crate) compile_timeout_ms: Option<Spanned<u64>>,
}

/// `[network]`: the operator's routes for every plugin's outgoing HTTP (config/routes.rs).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileNetwork {
    /// Host name → `ADDRESS:PORT` connected to instead of the name's DNS answer.
    #[serde(default)]
    pub(crate) hosts: BTreeMap<String, Spanned<String>>,
    /// PEM certificates of CAs trusted beside the public web's roots.
    pub(crate) ca_file: Option<Spanned<PathBuf>>,
}

/// `[cache]`: the compile cache.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileCache {
    pub(crate) dir: Option<PathBuf>,
    pub(crate) enabled: Option<bool>,
}

/// `[http]`: the transports beside Streamable HTTP, and heartbeats (the flags override them).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileHttp {
    /// Serve WebSocket (default true).
    pub(crate) websocket: Option<bool>,
    pub(crate) ws_path: Option<Spanned<String>>,
    /// Serve the 2024-11-05 HTTP+SSE transport (default false).
    pub(crate) legacy_sse: Option<bool>,
    pub(crate) legacy_sse_path: Option<Spanned<String>>,
    /// Keep-alive interval of SSE streams and WebSocket pings (0: never; default 15000).
    pub(crate) heartbeat_ms: Option<Spanned<u64>>,
    /// TLS on the listener: the certificate chain and the key (PEM), relative to the config.
    pub(crate) tls_cert: Option<PathBuf>,
    pub(crate) tls_key: Option<PathBuf>,
    /// A TLS-terminating proxy stands in front of a plain HTTP listener.
    pub(crate) behind_tls_proxy: Option<bool>,
    /// After a stop signal: how long in-flight calls may finish (default 10).
    pub(crate) shutdown_grace_seconds: Option<Spanned<u64>>,
    /// After a stop signal: how long new requests are still taken, readiness failing (default 0).
    pub(crate) drain_delay_seconds: Option<Spanned<u64>>,
}

/// A config file as read: its schema, its text (for positions), and where it is.
#[derive(Debug, Default)]
pub(crate) struct ConfigFile {
    pub(crate) config: FileConfig,
    text: String,
    /// The file as the user named it (`mcpbox.toml` when there is none, for messages).
    pub(crate) path: PathBuf,
    /// The directory relative paths in the file start from.
    pub(crate) base: PathBuf,
}

impl ConfigFile {
    /// Reads and parses `path`; no file is an empty config.
    pub(crate) fn read(path: Option<&Path>) -> Result<ConfigFile> {
        let Some(path) = path else { return Ok(ConfigFile { path: "mcpbox.toml".into(), ..ConfigFile::default() }) };
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
        Ok(ConfigFile {
            config: parse(path, &text)?,
            text,
            path: path.to_owned(),
            base: path.parent().map(Path::to_owned).unwrap_or_default(),
        })
    }

    /// `file:line:col` of a spanned value, for errors found after parsing.
    pub(crate) fn at(&self, span: std::ops::Range<usize>) -> String {
        let (line, column) = line_column(&self.text, span.start);
        format!("{}:{line}:{column}", self.path.display())
    }

    /// `path` relative to the config file's directory; `~/...` in the home directory (`$HOME`),
    /// so one config can name a per-user data directory.
    pub(crate) fn resolve(&self, path: &Path) -> PathBuf {
        if let Ok(in_home) = path.strip_prefix("~")
            && let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty())
        {
            return PathBuf::from(home).join(in_home);
        }
        self.base.join(path)
    }
}

/// The schema of `text`, or an error naming `path`, the line and the key.
pub(crate) fn parse(path: &Path, text: &str) -> Result<FileConfig> {
    toml::from_str(text).map_err(|e| {
        let (line, column) = e.span().map(|span| line_column(text, span.start)).unwrap_or((1, 1));
        anyhow!("{}:{line}:{column}: {}", path.display(), e.message().trim_end())
    })
}

/// 1-based line and column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

#[cfg(test)]
mod fuzz;
