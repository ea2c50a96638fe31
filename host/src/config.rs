//! Settings from the command line and the optional config file (`--config mcpbox.toml`).
//! The file is strict: an unknown key or a wrong type is an error naming the file, the line
//! and the key. Command-line options override the file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use serde::Deserialize;

use crate::catalog::{PluginOverride, PluginOverrides};
use crate::engine::{EngineOptions, default_cache_dir};
use crate::policy::{HostPattern, NetworkPolicy, PluginDir, Policy};
use crate::roots::AllowedDir;
use crate::sandbox::Limits;

/// Default largest JSON-RPC message on stdio.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Options of `mcpbox serve`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// Plugin files (`.wasm` components) or directories of them.
    pub paths: Vec<PathBuf>,
    /// Grant plugins read-only access to this directory (repeatable). Clients' MCP roots can
    /// narrow what is granted, never widen it.
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// Grant plugins read-write access to this directory (repeatable).
    #[arg(long = "root-rw", value_name = "DIR")]
    pub writable_roots: Vec<PathBuf>,
    /// A TOML config file (plugins, roots, limits, per-plugin settings).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Wall-time limit of one call, in seconds [default: 30].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Memory limit of one call's instance, in MiB [default: 256].
    #[arg(long, value_name = "MIB")]
    pub memory: Option<usize>,
    /// Output limit of one call (content returned), in MiB [default: 16].
    #[arg(long, value_name = "MIB")]
    pub max_output: Option<usize>,
    /// Largest JSON-RPC message accepted (a stdin line or an HTTP body), in bytes
    /// [default: 64 MiB].
    #[arg(long, value_name = "BYTES")]
    pub max_message_bytes: Option<usize>,
    /// Directory of the compile cache [default: ~/.cache/mcpbox; env MCPBOX_CACHE_DIR].
    #[arg(long, value_name = "DIR", env = "MCPBOX_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Compile every plugin afresh, without the on-disk cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Allocate every instance afresh instead of from wasmtime's pooling allocator (the
    /// default, measured faster; it reserves address space for 2,000 instances up front).
    #[arg(long)]
    pub no_pooling: bool,
    /// How instances get their initial memory: `on` maps the plugin's memory image
    /// copy-on-write (fast for large interpreter plugins), `off` copies it (best throughput
    /// for small compiled plugins), `auto` turns it on when some plugin file is 4 MiB or more
    /// [default: auto].
    #[arg(long, value_enum, value_name = "WHEN")]
    pub copy_on_write: Option<CopyOnWrite>,
    /// Don't watch the plugin paths (by default a `.wasm` added, changed or removed there is
    /// loaded, reloaded or dropped while serving, and clients are told).
    #[arg(long)]
    pub no_watch: bool,
    /// Items per page of list results [default: 100].
    #[arg(long, value_name = "N")]
    pub page_size: Option<usize>,
    /// Serve Streamable HTTP on this address instead of stdio (port 0 picks one); `--http`
    /// alone binds 127.0.0.1:8080.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080")]
    pub http: Option<std::net::SocketAddr>,
    /// With --http, serve stdio as well.
    #[arg(long)]
    pub stdio: bool,
    /// The MCP endpoint path of the HTTP server.
    #[arg(long, value_name = "PATH", default_value = "/mcp")]
    pub http_path: String,
    /// Accept this `Host` header value too (repeatable); loopback names and the bound address
    /// are always accepted.
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// Accept requests from this browser origin too, e.g. https://app.example.com:443
    /// (repeatable); local origins are always accepted, others get 403.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// Require `Authorization: Bearer <token>` on HTTP, the token read from this file.
    #[arg(long, value_name = "FILE")]
    pub auth_token_file: Option<PathBuf>,
}

/// The config file's schema.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    /// Plugin files or directories, relative to the config file.
    #[serde(default)]
    plugins: Vec<PathBuf>,
    /// Watch the plugin paths and reload on change (default true).
    watch: Option<bool>,
    /// Map memory images copy-on-write (`"auto"`, `"on"`, `"off"`; default auto).
    copy_on_write: Option<CopyOnWrite>,
    #[serde(default)]
    roots: Vec<FileRoot>,
    #[serde(default)]
    limits: FileLimits,
    #[serde(default)]
    cache: FileCache,
    /// Per-plugin settings, by plugin name.
    #[serde(default)]
    plugin: HashMap<String, FilePlugin>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRoot {
    path: PathBuf,
    name: Option<String>,
    #[serde(default)]
    writable: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLimits {
    timeout_ms: Option<u64>,
    memory_mib: Option<usize>,
    max_output_mib: Option<usize>,
    max_message_bytes: Option<usize>,
    page_size: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCache {
    dir: Option<PathBuf>,
    enabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePlugin {
    /// Replaces `<name>.` before the plugin's tool, prompt and template names; may be "".
    prefix: Option<String>,
    /// Serve only these of the plugin's tools.
    tools: Option<Vec<String>>,
    /// Never serve these of the plugin's tools.
    exclude_tools: Option<Vec<String>>,
    /// This plugin's limits, replacing those of [limits].
    timeout_ms: Option<u64>,
    memory_mib: Option<usize>,
    max_output_mib: Option<usize>,
    /// At most this many calls of the plugin at once (default: no limit).
    max_concurrency: Option<usize>,
    /// Environment variables the plugin sees, with their values.
    env: Option<std::collections::BTreeMap<String, String>>,
    /// Environment variables the plugin sees, with the values mcpbox itself was started with.
    env_from_host: Option<Vec<String>>,
    /// Whether it sees the shared roots (`--root`, `[[roots]]`); default true.
    roots: Option<bool>,
    /// Directories of its own.
    #[serde(default)]
    dirs: Vec<FilePluginDir>,
    /// Outgoing HTTP allow-list: `https://api.example.com`, `https://*.example.com:8443`.
    network: Option<Vec<toml::Spanned<String>>>,
    /// Let allowed hosts resolve to loopback, private and link-local addresses too.
    allow_private_network: Option<bool>,
    /// Link imports it was not granted as stubs that deny or trap, instead of refusing to load.
    stub_ungranted: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePluginDir {
    path: toml::Spanned<PathBuf>,
    name: Option<String>,
    #[serde(default)]
    writable: bool,
    /// Grant only the parts inside the client's roots, when the client has roots.
    #[serde(default)]
    within_client_roots: bool,
}

/// When instances map their memory image copy-on-write (see [`crate::engine::build_engine`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CopyOnWrite {
    /// When some plugin file is at least [`COPY_ON_WRITE_FROM_BYTES`] large.
    #[default]
    Auto,
    On,
    Off,
}

/// Plugin files from this size on are interpreter guests with megabytes of initialized heap
/// (componentize-py makes 18 MB, componentize-js 12 MB), for which copy-on-write makes every
/// call several times faster; compiled guests are well under 1 MB, for which copying keeps
/// throughput under concurrency higher (measurements in `engine.rs`).
pub const COPY_ON_WRITE_FROM_BYTES: u64 = 4 << 20;

/// Decides `mode` for the plugins at `paths` (at start-up: a plugin added later runs under the
/// same setting); returns the decision and why, for the log.
pub fn copy_on_write(mode: CopyOnWrite, paths: &[PathBuf]) -> (bool, String) {
    match mode {
        CopyOnWrite::On => (true, "copy-on-write was asked for".to_owned()),
        CopyOnWrite::Off => (false, "copying was asked for".to_owned()),
        CopyOnWrite::Auto => {
            let (files, _) = crate::catalog::discover(paths);
            let largest = files
                .iter()
                .filter_map(|file| std::fs::metadata(file).ok().map(|m| (m.len(), file)))
                .max_by_key(|(size, _)| *size);
            match largest {
                Some((size, file)) if size >= COPY_ON_WRITE_FROM_BYTES => {
                    (true, format!("the largest plugin, {}, is {:.1} MB", file.display(), size as f64 / 1e6))
                }
                Some((size, file)) => {
                    (false, format!("the largest plugin, {}, is {:.1} MB", file.display(), size as f64 / 1e6))
                }
                None => (false, "no plugin yet".to_owned()),
            }
        }
    }
}

/// Everything `serve` needs, merged from the file and the command line.
#[derive(Debug, Clone)]
pub struct Settings {
    pub plugin_paths: Vec<PathBuf>,
    pub roots: Vec<AllowedDir>,
    pub limits: Limits,
    pub max_message_bytes: usize,
    pub engine: EngineOptions,
    pub plugins: PluginOverrides,
    pub page_size: usize,
    pub http: Option<crate::mcp::http::HttpOptions>,
    pub stdio: bool,
    pub watch: bool,
    /// Why [`EngineOptions::copy_on_write`] is what it is, for the log.
    pub copy_on_write_reason: String,
}

impl Settings {
    pub fn from_args(args: &ServeArgs) -> Result<Settings> {
        let (file, text, base) = match &args.config {
            Some(path) => {
                let (file, text) = read_config(path)?;
                (file, text, path.parent().map(Path::to_owned).unwrap_or_default())
            }
            None => (FileConfig::default(), String::new(), PathBuf::new()),
        };
        let config_path = args.config.as_deref().unwrap_or(Path::new("mcpbox.toml"));
        // "file:line:col: " of a spanned value, for errors found after parsing.
        let at = |span: std::ops::Range<usize>| {
            let (line, column) = line_column(&text, span.start);
            format!("{}:{line}:{column}", config_path.display())
        };
        let mut plugin_paths: Vec<PathBuf> = file.plugins.iter().map(|p| base.join(p)).collect();
        plugin_paths.extend(args.paths.iter().cloned());

        let mut roots = Vec::new();
        for root in &file.roots {
            let path = base.join(&root.path);
            let dir = AllowedDir::new(&path, root.name.clone(), root.writable).with_context(|| {
                format!("{}: in [[roots]]", args.config.as_deref().unwrap_or(Path::new("")).display())
            })?;
            roots.push(dir);
        }
        for path in &args.roots {
            roots.push(AllowedDir::new(path, None, false).context("in --root")?);
        }
        for path in &args.writable_roots {
            roots.push(AllowedDir::new(path, None, true).context("in --root-rw")?);
        }

        let mut limits = Limits::default();
        if let Some(ms) = file.limits.timeout_ms {
            limits.timeout = Duration::from_millis(ms);
        }
        if let Some(seconds) = args.timeout {
            if !(seconds.is_finite() && seconds > 0.0) {
                return Err(anyhow!("--timeout must be a positive number of seconds"));
            }
            limits.timeout = Duration::from_secs_f64(seconds);
        }
        if let Some(mib) = args.memory.or(file.limits.memory_mib) {
            limits.memory_bytes =
                mib.checked_mul(1 << 20).ok_or_else(|| anyhow!("memory limit of {mib} MiB is too large"))?;
        }
        if let Some(mib) = args.max_output.or(file.limits.max_output_mib) {
            limits.output_bytes =
                mib.checked_mul(1 << 20).ok_or_else(|| anyhow!("output limit of {mib} MiB is too large"))?;
        }
        let max_message_bytes =
            args.max_message_bytes.or(file.limits.max_message_bytes).unwrap_or(DEFAULT_MAX_MESSAGE_BYTES);

        let cache_enabled = !args.no_cache && file.cache.enabled.unwrap_or(true);
        let cache_dir = args.cache_dir.clone().or(file.cache.dir.map(|d| base.join(d))).or_else(default_cache_dir);
        let largest_memory = file
            .plugin
            .values()
            .filter_map(|p| p.memory_mib)
            .map(|mib| mib.saturating_mul(1 << 20))
            .fold(limits.memory_bytes, usize::max);
        let mode = args.copy_on_write.or(file.copy_on_write).unwrap_or_default();
        let (copy_on_write, copy_on_write_reason) = copy_on_write(mode, &plugin_paths);
        let engine = EngineOptions {
            cache_dir: cache_dir.filter(|_| cache_enabled),
            pooling: !args.no_pooling,
            max_memory_bytes: largest_memory,
            copy_on_write,
        };
        let mut plugins = PluginOverrides::new();
        for (name, p) in file.plugin {
            let mib = |value: Option<usize>, what: &str| {
                value
                    .map(|mib| {
                        mib.checked_mul(1 << 20)
                            .ok_or_else(|| anyhow!("[plugin.{name}] {what} of {mib} MiB is too large"))
                    })
                    .transpose()
            };
            let mut env: Vec<(String, String)> = p.env.unwrap_or_default().into_iter().collect();
            for variable in p.env_from_host.unwrap_or_default() {
                let value = std::env::var(&variable).map_err(|_| {
                    anyhow!("[plugin.{name}] env_from_host names `{variable}`, which is not set for mcpbox")
                })?;
                env.push((variable, value));
            }
            let mut dirs = Vec::new();
            for dir in p.dirs {
                let path = base.join(dir.path.get_ref());
                let allowed = AllowedDir::new(&path, dir.name, dir.writable)
                    .with_context(|| format!("{}: in [[plugin.{name}.dirs]] path", at(dir.path.span())))?;
                dirs.push(PluginDir { dir: allowed, within_client_roots: dir.within_client_roots });
            }
            let network = match p.network {
                Some(entries) => {
                    let mut allow = Vec::new();
                    for entry in entries {
                        let pattern: HostPattern = entry
                            .get_ref()
                            .parse()
                            .with_context(|| format!("{}: in [plugin.{name}] network", at(entry.span())))?;
                        allow.push(pattern);
                    }
                    Some(Arc::new(NetworkPolicy { allow, allow_private: p.allow_private_network.unwrap_or(false) }))
                }
                None if p.allow_private_network.is_some() => {
                    return Err(anyhow!(
                        "{}: [plugin.{name}] allow_private_network needs a `network` allow-list",
                        config_path.display()
                    ));
                }
                None => None,
            };
            let policy = Policy {
                shared_roots: p.roots.unwrap_or(true),
                dirs,
                network,
                env: env.into(),
                stub_ungranted: p.stub_ungranted.unwrap_or(false),
            };
            let setting = PluginOverride {
                policy,
                prefix: p.prefix,
                tools: p.tools,
                exclude_tools: p.exclude_tools.unwrap_or_default(),
                timeout: p.timeout_ms.map(Duration::from_millis),
                memory_bytes: mib(p.memory_mib, "memory_mib")?,
                output_bytes: mib(p.max_output_mib, "max_output_mib")?,
                max_concurrency: p.max_concurrency,
            };
            plugins.insert(name, setting);
        }
        let page_size = args.page_size.or(file.limits.page_size).unwrap_or(100).max(1);
        let auth_token = match &args.auth_token_file {
            Some(path) => {
                let token = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read the auth token file {}", path.display()))?;
                let token = token.trim().to_owned();
                if token.is_empty() {
                    return Err(anyhow!("the auth token file {} is empty", path.display()));
                }
                Some(token)
            }
            None => None,
        };
        let http = args.http.map(|addr| crate::mcp::http::HttpOptions {
            addr,
            path: args.http_path.clone(),
            allowed_hosts: args.allowed_hosts.clone(),
            allowed_origins: args.allowed_origins.clone(),
            auth_token,
            max_body_bytes: max_message_bytes,
        });
        let stdio = http.is_none() || args.stdio;
        let watch = !args.no_watch && file.watch.unwrap_or(true);
        Ok(Settings {
            plugin_paths,
            roots,
            limits,
            max_message_bytes,
            engine,
            plugins,
            page_size,
            http,
            stdio,
            watch,
            copy_on_write_reason,
        })
    }
}

fn read_config(path: &Path) -> Result<(FileConfig, String)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
    Ok((parse_config(path, &text)?, text))
}

fn parse_config(path: &Path, text: &str) -> Result<FileConfig> {
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
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let text = "plugins = [\"a\"]\n\n[limits]\ntimeout_ms = 5\nmemroy_mib = 3\n";
        let error = parse_config(Path::new("mcpbox.toml"), text).unwrap_err().to_string();
        assert!(error.starts_with("mcpbox.toml:5:1: unknown field `memroy_mib`"), "{error}");
    }

    #[test]
    fn wrong_type_names_the_line() {
        let text = "[limits]\ntimeout_ms = \"soon\"\n";
        let error = parse_config(Path::new("c.toml"), text).unwrap_err().to_string();
        assert!(error.starts_with("c.toml:2:"), "{error}");
        assert!(error.contains("invalid type"), "{error}");
    }

    #[test]
    fn the_documented_example_config_is_valid() {
        let readme = include_str!("../../docs/config.md");
        let start = readme.find("```toml\n").expect("docs/config.md has a toml example") + "```toml\n".len();
        let end = start + readme[start..].find("```").unwrap();
        let config = parse_config(Path::new("docs/config.md"), &readme[start..end]).unwrap();
        assert_eq!(config.plugin["fs"].exclude_tools.as_deref(), Some(&["write_file".to_owned()][..]));
        assert_eq!(config.limits.max_output_mib, Some(16));
    }

    #[test]
    fn a_bad_network_entry_names_file_line_and_reason() {
        let path = std::env::temp_dir().join(format!("mcpbox-config-test-{}.toml", std::process::id()));
        std::fs::write(&path, "[plugin.web]\nnetwork = [\n  \"https://ok.example\",\n  \"api.example.com\",\n]\n")
            .unwrap();
        let args = ServeArgs { config: Some(path.clone()), ..Default::default() };
        let error = format!("{:#}", Settings::from_args(&args).unwrap_err());
        std::fs::remove_file(&path).unwrap();
        assert!(error.starts_with(&format!("{}:4:3: in [plugin.web] network", path.display())), "{error}");
        assert!(error.contains("`api.example.com` needs a scheme"), "{error}");
    }

    #[test]
    fn plugin_policies_parse() {
        let path = std::env::temp_dir().join(format!("mcpbox-policy-test-{}.toml", std::process::id()));
        let text = "[plugin.web]\nnetwork = [\"https://*.example.com\"]\nroots = false\nstub_ungranted = true\n\n\
                    [[plugin.web.dirs]]\npath = \".\"\nwritable = true\nwithin_client_roots = true\n";
        std::fs::write(&path, text).unwrap();
        let args = ServeArgs { config: Some(path.clone()), ..Default::default() };
        let settings = Settings::from_args(&args).unwrap();
        std::fs::remove_file(&path).unwrap();
        let policy = &settings.plugins["web"].policy;
        assert!(!policy.shared_roots && policy.stub_ungranted);
        assert!(policy.dirs[0].dir.writable && policy.dirs[0].within_client_roots);
        let network = policy.network.as_ref().unwrap();
        assert!(network.admits("https", "api.example.com", 443).is_some() && !network.allow_private);
        // A plugin without a section gets the defaults: shared roots, nothing else.
        assert!(!settings.plugins.contains_key("other"));
    }

    #[test]
    fn prefixes_and_roots_parse() {
        let text = "[[roots]]\npath = \".\"\nwritable = true\n\n[plugin.conformance]\nprefix = \"\"\n";
        let config = parse_config(Path::new("c.toml"), text).unwrap();
        assert!(config.roots[0].writable);
        assert_eq!(config.plugin["conformance"].prefix.as_deref(), Some(""));
    }

    #[test]
    fn copy_on_write_is_on_for_large_plugins_when_auto() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.wasm");
        std::fs::write(&small, vec![0u8; 300_000]).unwrap();
        let paths = [dir.path().to_owned()];
        let (on, why) = copy_on_write(CopyOnWrite::Auto, &paths);
        assert!(!on, "{why}");
        assert!(why.ends_with("small.wasm, is 0.3 MB"), "{why}");
        std::fs::write(dir.path().join("python.wasm"), vec![0u8; COPY_ON_WRITE_FROM_BYTES as usize]).unwrap();
        let (on, why) = copy_on_write(CopyOnWrite::Auto, &paths);
        assert!(on && why.ends_with("python.wasm, is 4.2 MB"), "{why}");
        assert!(!copy_on_write(CopyOnWrite::Off, &paths).0);
        assert!(copy_on_write(CopyOnWrite::On, &[small]).0);
    }

    #[test]
    fn copy_on_write_comes_from_the_file_or_the_command_line() {
        let path = std::env::temp_dir().join(format!("mcpbox-cow-test-{}.toml", std::process::id()));
        std::fs::write(&path, "copy_on_write = \"on\"\n").unwrap();
        let args = ServeArgs { config: Some(path.clone()), ..Default::default() };
        assert!(Settings::from_args(&args).unwrap().engine.copy_on_write);
        let args =
            ServeArgs { config: Some(path.clone()), copy_on_write: Some(CopyOnWrite::Off), ..Default::default() };
        assert!(!Settings::from_args(&args).unwrap().engine.copy_on_write);
        std::fs::write(&path, "copy_on_write = \"sometimes\"\n").unwrap();
        let error = format!(
            "{:#}",
            Settings::from_args(&ServeArgs { config: Some(path.clone()), ..Default::default() }).unwrap_err()
        );
        std::fs::remove_file(&path).unwrap();
        assert!(error.contains(":1:17:") && error.contains("unknown variant `sometimes`"), "{error}");
    }
}
