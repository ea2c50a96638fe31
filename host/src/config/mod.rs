//! Settings from the command line and the optional config file (`--config mcpbox.toml`),
//! merged into one [`Settings`]; command-line options override the file. Every value is
//! checked here, and a bad one is an error naming the flag, or the file, line and key.
//!
//! - `args`: the command line ([`ServeArgs`]);
//! - `file`: the file's schema and positions;
//! - `plugin`: `[plugin.NAME]` sections into the runtime's `PluginConfig`;
//! - `pins`: where tool definitions are pinned (beside the config, or the state directory);
//! - `http`: the HTTP listener's options (`--http`, WebSocket, HTTP+SSE, heartbeats);
//! - `auth`: `[auth]`, the OAuth resource server; `entitlements`: its `[[auth.entitlements]]`
//!   and `[auth.limits]`;
//! - `tasks`: the task deadline, retention and limits;
//! - `store`: `[store]`, the Redis a fleet's replicas share, and the replica's name;
//! - `secrets`: `[secrets.NAME]`, read and kept current (the credentials that use them are
//!   read with their plugin's section); `vault`: the token vault's third parties and key;
//! - `skills`: `[[skills]]` and `--skills`, the skill directories; `instructions`;
//! - `audit`: `--audit` and `[audit]`; `quota`: a writable directory's write budget;
//!   `routes`: `[network]`, the operator's routes for plugins' outgoing HTTP;
//! - `host_files`: the files the host trusts that no plugin may write (the audit, the pins,
//!   the compile cache), kept out of every grant;
//! - `problems`: every problem of a configuration, collected and reported at once.

mod args;
mod audit;
mod auth;
mod entitlements;
mod file;
mod host_files;
mod http;
mod pins;
mod plugin;
mod problems;
mod quota;
mod routes;
mod secrets;
mod skills;
mod store;
mod tasks;
mod vault;

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use toml::Spanned;

pub use args::ServeArgs;
pub use auth::{IntrospectionClient, OAuthOptions};
pub use entitlements::{Entitlement, Grantee, PrincipalLimits, Rate};
use file::ConfigFile;
pub use http::HttpOptions;
use problems::{Problems, flag_limit, pick, spanned_limit};
pub use secrets::Secrets;
pub(crate) use secrets::in_dir_of;
pub use vault::{Endpoints, OAuthClientOptions, VaultOptions, rendered};

use crate::registry::cosign::PublicKey;
use crate::registry::{Mirrors, OciRef, Trust, is_reference, lock_path};
use crate::runtime::catalog::discover;
use crate::runtime::engine::compile::CompileBounds;
use crate::runtime::engine::{CopyOnWrite, EngineOptions, copy_on_write, default_cache_dir};
use crate::runtime::grants::limits::{self, LimitError, Limits};
use crate::runtime::grants::plugin_config::PluginConfigs;
use crate::runtime::grants::roots::AllowedDir;
use crate::runtime::tasks::TaskSettings;

/// Default largest JSON-RPC message (a stdin line or an HTTP body).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 << 20;

/// How long a multi round-trip `requestState` stays valid by default.
pub const DEFAULT_REQUEST_STATE_TTL: std::time::Duration = std::time::Duration::from_secs(600);
/// The smallest and largest JSON-RPC message limit: below 1 KiB not even `initialize` fits;
/// above 1 GiB one message could hold the host's memory.
const MESSAGE_BYTES_RANGE: std::ops::RangeInclusive<usize> = 1024..=(1 << 30);
/// How long a legacy session's approval question waits, unless configured.
const DEFAULT_APPROVAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);
/// Items per page of list results, unless configured.
const DEFAULT_PAGE_SIZE: usize = 100;

/// Everything `serve` needs, merged from the file and the command line.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Plugin files and directories: the file's, then the command line's.
    pub plugin_paths: Vec<PathBuf>,
    /// Directories every plugin may see (unless its config opts out).
    pub roots: Vec<AllowedDir>,
    /// Every call's limits, unless a plugin's config replaces them.
    pub limits: Limits,
    /// The largest JSON-RPC message accepted.
    pub max_message_bytes: usize,
    /// The engine's settings.
    pub engine: EngineOptions,
    /// `[plugin.NAME]` sections, by plugin name.
    pub plugin_configs: PluginConfigs,
    /// Items per page of list results.
    pub page_size: usize,
    /// Show clients `search_tools` and `call_tool` instead of every tool.
    pub tool_search: bool,
    /// Serve Streamable HTTP with these options.
    pub http: Option<HttpOptions>,
    /// Serve stdio (without `--http`, or with `--stdio`).
    pub stdio: bool,
    /// Watch the plugin paths and reload on change.
    pub watch: bool,
    /// Why [`EngineOptions::copy_on_write`] is what it is, for the log.
    pub copy_on_write_reason: String,
    /// How copy-on-write was asked for, to decide again when pulled plugins join.
    pub copy_on_write_mode: CopyOnWrite,
    /// How big a plugin file may be and how long it may take to compile.
    pub compile_bounds: CompileBounds,
    /// The file of the keys that seal `requestState`, if the operator gave one.
    pub request_state_keys: Option<PathBuf>,
    /// How long a `requestState` stays valid.
    pub request_state_ttl: std::time::Duration,
    /// Task deadline, retention and limits.
    pub tasks: TaskSettings,
    /// Registry references (`oci://`), the file's then the command line's.
    pub plugin_refs: Vec<OciRef>,
    /// How registry references are pinned and trusted.
    pub registry: RegistrySettings,
    /// The store shared with the other replicas of a fleet; `None`: this process alone.
    pub store: Option<crate::fleet::StoreOptions>,
    /// This replica's name (session ids start with it).
    pub replica: String,
    /// `[secrets.NAME]`, read; kept current by [`Secrets::watch`].
    pub secrets: Secrets,
    /// The token vault's options (`[oauth_clients]`, `[auth.link]`), if any.
    pub vault: Option<VaultOptions>,
    /// How long a legacy session's approval question waits for the person (`[approvals]`).
    pub approval_timeout: std::time::Duration,
    /// Where definitions are pinned, and whether an unpinned plugin is refused.
    pub pins: crate::runtime::catalog::PinSettings,
    /// The audit (`--audit`, `[audit]`), if kept.
    pub(crate) audit: Option<crate::audit::AuditSettings>,
    /// The operator's skill directories (`[[skills]]`, `--skills`).
    pub skills: Vec<crate::runtime::SkillSource>,
    /// The operator's `instructions`.
    pub instructions: Option<String>,
}

/// Where the lock lives, whether it binds, whom to trust, which registries may be plain HTTP.
#[derive(Debug, Clone)]
pub struct RegistrySettings {
    /// The cache directory the store of pulled blobs lives under.
    pub store_dir: Option<PathBuf>,
    pub lock_path: PathBuf,
    pub locked: bool,
    pub trust: Trust,
    pub insecure: Vec<String>,
    /// `[registries.mirrors]`: pulls try these before each registry.
    pub mirrors: Mirrors,
}

impl Settings {
    /// Reads the config file `args` names, if any, and merges it with `args`. A file that
    /// does not parse is one error; otherwise every problem is reported at once.
    pub fn from_args(args: &ServeArgs) -> Result<Settings> {
        let file = ConfigFile::read(args.config.as_deref())?;
        let mut problems = Problems::default();
        let (plugin_paths, plugin_refs) = plugin_sources(&file, args, &mut problems);
        let registry = registry_settings(&file, args, &mut problems);
        let limits = call_limits(&file, args, &mut problems);
        let compile_bounds = compile_bounds(&file, args, &mut problems);
        let request_state_ttl = problems
            .take(flag_limit(args.request_state_ttl, "--request-state-ttl", limits::timeout_from_secs))
            .flatten()
            .unwrap_or(DEFAULT_REQUEST_STATE_TTL);
        let tasks = tasks::task_settings(args, &mut problems);
        let approval_timeout = problems
            .take(spanned_limit(
                &file,
                &file.config.approvals.timeout_ms,
                "[approvals] timeout_ms",
                limits::timeout_from_ms,
            ))
            .flatten()
            .unwrap_or(DEFAULT_APPROVAL_TIMEOUT);
        let secrets = secrets::secrets(&file, &mut problems);
        let plugin_configs = plugin::plugin_configs(&file, &secrets, &mut problems);
        let vault = vault::vault_options(&file, &secrets, &mut problems);
        let max_message_bytes = problems.take(max_message_bytes(&file, args)).unwrap_or(DEFAULT_MAX_MESSAGE_BYTES);
        let roots = roots(&file, args, &mut problems);
        let mut http = http::http_options(&file, args, max_message_bytes, &mut problems);
        let store = store::store_options(&file, args, &mut problems);
        let replica = store::replica_name(args, &mut problems);
        let audit = audit::audit_settings(&file, args, &mut problems);
        let skills = skills::skill_sources(&file, args, &mut problems);
        let instructions = problems.take(skills::instructions(&file)).flatten();
        if vault.is_some() && http.as_ref().is_none_or(|http| http.oauth.is_none()) {
            problems.take::<()>(Err(anyhow!(
                "{}: [auth.link], [oauth_clients] and `oauth` credentials need [auth] served over HTTP (--http): \
                 without access tokens there are no users to link accounts for",
                file.path.display()
            )));
        }
        // Named session ids wherever a load balancer may route by them: a fleet, or a replica
        // the operator named.
        if let Some(http) = &mut http
            && (store.is_some() || args.replica.is_some())
        {
            http.session_prefix = Some(replica.clone());
        }
        // What the host trusts is never where a plugin writes (host_files.rs): refused here,
        // naming the file and the grant.
        if let Some(audit) = &audit {
            problems.take(host_files::outside_writable(&audit.path, "the audit file", &roots, &plugin_configs));
        }
        if let Some(pins) =
            pins::pin_settings(&file, args).path.filter(|_| !crate::switched_off!("pins.outside-writable"))
        {
            problems.take(host_files::outside_writable(&pins, "the pins file", &roots, &plugin_configs));
        }
        let cache_enabled = !args.no_cache && file.config.cache.enabled.unwrap_or(true);
        if let Some(cache) =
            cache_dir(&file, args).filter(|_| cache_enabled && !crate::switched_off!("engine.cache-outside-writable"))
        {
            let what = "the compile cache (--cache-dir, or --no-cache)";
            problems.take(host_files::outside_writable(&cache, what, &roots, &plugin_configs));
        }
        problems.finish()?;
        let copy_on_write_mode = args.copy_on_write.or(file.config.copy_on_write).unwrap_or_default();
        let (engine, copy_on_write_reason) =
            engine_options(&file, args, &plugin_paths, copy_on_write_mode, limits, &plugin_configs);
        Ok(Settings {
            roots,
            limits,
            max_message_bytes,
            engine,
            plugin_configs,
            page_size: args.page_size.or(file.config.limits.page_size).unwrap_or(DEFAULT_PAGE_SIZE).max(1),
            tool_search: args.tool_search || file.config.tool_search.unwrap_or(false),
            stdio: http.is_none() || args.stdio,
            http,
            watch: !args.no_watch && file.config.watch.unwrap_or(true),
            copy_on_write_reason,
            copy_on_write_mode,
            plugin_paths,
            compile_bounds,
            request_state_keys: args.request_state_keys.clone(),
            request_state_ttl,
            tasks,
            plugin_refs,
            registry,
            store,
            replica,
            secrets,
            vault,
            approval_timeout,
            audit,
            skills,
            instructions,
            pins: pins::pin_settings(&file, args),
        })
    }
}

impl Settings {
    /// Adds plugin files pulled from registries, and decides copy-on-write again with them
    /// (a large pulled component turns `auto` on as a local one does).
    pub fn add_plugin_files(&mut self, files: &[PathBuf]) {
        self.plugin_paths.extend_from_slice(files);
        (self.engine.copy_on_write, self.copy_on_write_reason) =
            copy_on_write(self.copy_on_write_mode, &discover(&self.plugin_paths).0);
    }
}

/// The file's plugins (paths relative to it), then the command line's: files and directories
/// apart from registry references.
fn plugin_sources(file: &ConfigFile, args: &ServeArgs, problems: &mut Problems) -> (Vec<PathBuf>, Vec<OciRef>) {
    let (mut paths, mut refs) = (Vec::new(), Vec::new());
    let in_file = file.config.plugins.iter().map(|p| (p, true));
    for (path, from_file) in in_file.chain(args.paths.iter().map(|p| (p, false))) {
        match path.to_str().filter(|text| is_reference(text)) {
            Some(text) => {
                let parsed = OciRef::parse(text).with_context(|| match from_file {
                    true => format!("{}: plugins", file.path.display()),
                    false => "on the command line".to_owned(),
                });
                if let Some(parsed) = problems.take(parsed) {
                    refs.push(parsed);
                }
            }
            None if from_file => paths.push(file.resolve(path)),
            None => paths.push(path.clone()),
        }
    }
    (paths, refs)
}

/// `[trust]`, `[registries]` and their flags; every key file is read now, so that a missing
/// or malformed one is named with its file, line and key.
fn registry_settings(file: &ConfigFile, args: &ServeArgs, problems: &mut Problems) -> RegistrySettings {
    let section = &file.config.trust;
    let read = |path: &Spanned<PathBuf>, key: &str| {
        PublicKey::read(&file.resolve(path.get_ref())).with_context(|| format!("{}: {key}", file.at(path.span())))
    };
    let mut trust = Trust::default();
    trust.keys.extend(section.keys.iter().filter_map(|path| problems.take(read(path, "[trust] keys"))));
    for path in &args.trust_keys {
        trust.keys.extend(problems.take(PublicKey::read(path).context("in --trust-key")));
    }
    for (name, plugin) in &section.plugin {
        let key = format!("[trust.plugin.{name}] keys");
        let keys = plugin.keys.iter().filter_map(|path| problems.take(read(path, &key))).collect();
        trust.per_plugin.insert(name.clone(), keys);
    }
    trust.unsigned.extend(section.unsigned.iter().chain(&args.allow_unsigned).cloned());
    for (registry, mirrors) in &file.config.registries.mirrors {
        for mirror in mirrors {
            let parsed = OciRef::parse(&format!("oci://{mirror}/probe:1"));
            if !parsed.is_ok_and(|probe| probe.registry_as_written() == mirror) {
                problems.take::<()>(Err(anyhow!(
                    "{}: [registries.mirrors] \"{registry}\": `{mirror}` is not a registry (HOST or HOST:PORT)",
                    file.path.display()
                )));
            }
        }
    }
    let mut insecure = file.config.registries.insecure.clone();
    insecure.extend(args.insecure_registries.iter().cloned());
    RegistrySettings {
        store_dir: cache_dir(file, args),
        lock_path: lock_path(args.config.as_deref()),
        locked: args.locked,
        trust,
        insecure,
        mirrors: file.config.registries.mirrors.clone(),
    }
}

/// `[[roots]]`, then `--root` and `--root-rw`; each must be an existing directory.
fn roots(file: &ConfigFile, args: &ServeArgs, problems: &mut Problems) -> Vec<AllowedDir> {
    let in_file = file.config.roots.iter().map(|root| {
        let mut dir = AllowedDir::new(&file.resolve(&root.path), root.name.clone(), root.writable)
            .with_context(|| format!("{}: in [[roots]]", file.path.display()))?;
        dir.quota = quota::dir_quota(file, "[[roots]]", root.writable, &root.max_mib, &root.max_files)?;
        Ok(dir)
    });
    let read_only = args.roots.iter().map(|path| AllowedDir::new(path, None, false).context("in --root"));
    let writable = args.writable_roots.iter().map(|path| AllowedDir::new(path, None, true).context("in --root-rw"));
    in_file.chain(read_only).chain(writable).filter_map(|root| problems.take(root)).collect()
}

/// `[limits]` with the flags over them; a bad value is a problem, and the default stands in.
fn call_limits(file: &ConfigFile, args: &ServeArgs, problems: &mut Problems) -> Limits {
    let section = &file.config.limits;
    let defaults = Limits::default();
    let timeout = pick(
        problems,
        flag_limit(args.timeout, "--timeout", limits::timeout_from_secs),
        spanned_limit(file, &section.timeout_ms, "[limits] timeout_ms", limits::timeout_from_ms),
    );
    let memory = pick(
        problems,
        flag_limit(args.memory, "--memory", limits::memory_from_mib),
        spanned_limit(file, &section.memory_mib, "[limits] memory_mib", limits::memory_from_mib),
    );
    let output = pick(
        problems,
        flag_limit(args.max_output, "--max-output", limits::output_from_mib),
        spanned_limit(file, &section.max_output_mib, "[limits] max_output_mib", limits::output_from_mib),
    );
    let write = pick(
        problems,
        flag_limit(args.max_write_mib, "--max-write-mib", limits::write_from_mib),
        spanned_limit(file, &section.max_write_mib, "[limits] max_write_mib", limits::write_from_mib),
    );
    Limits {
        timeout: timeout.unwrap_or(defaults.timeout),
        memory_bytes: memory.unwrap_or(defaults.memory_bytes),
        output_bytes: output.unwrap_or(defaults.output_bytes),
        write_bytes: write.unwrap_or(defaults.write_bytes),
    }
}

/// How big a plugin file may be and how long it may take to compile.
fn compile_bounds(file: &ConfigFile, args: &ServeArgs, problems: &mut Problems) -> CompileBounds {
    let section = &file.config.limits;
    let defaults = CompileBounds::default();
    let max_file_bytes = pick(
        problems,
        flag_limit(args.max_plugin_mib, "--max-plugin-mib", limits::plugin_bytes_from_mib),
        spanned_limit(file, &section.max_plugin_mib, "[limits] max_plugin_mib", limits::plugin_bytes_from_mib),
    );
    let timeout = pick(
        problems,
        flag_limit(args.compile_timeout, "--compile-timeout", limits::timeout_from_secs),
        spanned_limit(file, &section.compile_timeout_ms, "[limits] compile_timeout_ms", limits::timeout_from_ms),
    );
    CompileBounds {
        max_file_bytes: max_file_bytes.unwrap_or(defaults.max_file_bytes),
        timeout: timeout.unwrap_or(defaults.timeout),
    }
}

fn message_bytes(bytes: usize) -> Result<usize, LimitError> {
    if MESSAGE_BYTES_RANGE.contains(&bytes) {
        Ok(bytes)
    } else if bytes < *MESSAGE_BYTES_RANGE.start() {
        Err(LimitError::TooSmall {
            min: format!("{} bytes", MESSAGE_BYTES_RANGE.start()),
            value: format!("{bytes} bytes"),
        })
    } else {
        Err(LimitError::TooLarge {
            max: format!("{} bytes", MESSAGE_BYTES_RANGE.end()),
            value: format!("{bytes} bytes"),
        })
    }
}

fn max_message_bytes(file: &ConfigFile, args: &ServeArgs) -> Result<usize> {
    let from_file =
        spanned_limit(file, &file.config.limits.max_message_bytes, "[limits] max_message_bytes", message_bytes)?;
    let from_flag = flag_limit(args.max_message_bytes, "--max-message-bytes", message_bytes)?;
    Ok(from_flag.or(from_file).unwrap_or(DEFAULT_MAX_MESSAGE_BYTES))
}

/// The cache directory: `--cache-dir` (or `$MCPBOX_CACHE_DIR`), `[cache] dir`, the default.
/// The compile cache and the store of pulled plugins live there.
fn cache_dir(file: &ConfigFile, args: &ServeArgs) -> Option<PathBuf> {
    args.cache_dir.clone().or(file.config.cache.dir.as_ref().map(|d| file.resolve(d))).or_else(default_cache_dir)
}

/// The engine's settings: the cache, pooling sized for the largest memory limit of any
/// plugin, and copy-on-write decided for the plugins at start-up.
fn engine_options(
    file: &ConfigFile,
    args: &ServeArgs,
    plugin_paths: &[PathBuf],
    mode: CopyOnWrite,
    limits: Limits,
    plugin_configs: &PluginConfigs,
) -> (EngineOptions, String) {
    let cache_enabled = !args.no_cache && file.config.cache.enabled.unwrap_or(true);
    let cache_dir = cache_dir(file, args);
    let largest_memory = plugin_configs.values().filter_map(|p| p.memory_bytes).fold(limits.memory_bytes, usize::max);
    // The plugin files' sizes decide; a path that is no plugin is reported when they load.
    let (copy_on_write, reason) = copy_on_write(mode, &discover(plugin_paths).0);
    let options = EngineOptions {
        cache_dir: cache_dir.filter(|_| cache_enabled),
        pooling: !args.no_pooling,
        max_memory_bytes: largest_memory,
        copy_on_write,
    };
    (options, reason)
}

#[cfg(test)]
mod tests;
