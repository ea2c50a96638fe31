//! The command line of `mcpbox serve` (and of `check` and `compile`, which take the same
//! options). Values are checked where they are merged with the file (`config/mod.rs`).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use crate::runtime::engine::CopyOnWrite;

/// Options of `mcpbox serve`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// Plugin files (`.wasm` components), directories of them, or registry references
    /// (`oci://REGISTRY/REPO:TAG` or `...@sha256:DIGEST`, pinned in `mcpbox.lock`).
    pub paths: Vec<PathBuf>,
    /// Refuse to resolve any registry reference that `mcpbox.lock` does not pin, and to serve
    /// any plugin whose definitions are not pinned (`mcpbox accept` pins them).
    #[arg(long)]
    pub locked: bool,
    /// Serve every plugin's tool, prompt and template definitions as they are, changed or not,
    /// instead of withholding those that differ from their pins (a development folder).
    #[arg(long)]
    pub unpinned: bool,
    /// Trust signatures by this public key (PEM, as `cosign.pub`) for every registry plugin
    /// (repeatable; adds to `[trust] keys`).
    #[arg(long = "trust-key", value_name = "FILE")]
    pub trust_keys: Vec<PathBuf>,
    /// Serve this registry reference although no trusted key signed it (repeatable; adds to
    /// `[trust] unsigned`).
    #[arg(long = "allow-unsigned", value_name = "REF")]
    pub allow_unsigned: Vec<String>,
    /// Reach this registry (`HOST:PORT`) over plain HTTP; registries on this machine always
    /// may be (repeatable; adds to `[registries] insecure`).
    #[arg(long = "insecure-registry", value_name = "HOST")]
    pub insecure_registries: Vec<String>,
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
    /// Wall-time limit of one call, in seconds, at most a day [default: 30].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Memory limit of one call's instance, in MiB, at most 4096 [default: 256].
    #[arg(long, value_name = "MIB")]
    pub memory: Option<u64>,
    /// Output limit of one call (content returned), in MiB, at most 1024 [default: 16].
    #[arg(long, value_name = "MIB")]
    pub max_output: Option<u64>,
    /// What one call may write into granted directories, in MiB, at most 1048576 [default: 64].
    #[arg(long, value_name = "MIB")]
    pub max_write_mib: Option<u64>,
    /// Serve the skills in this directory (repeatable): each subdirectory with a SKILL.md, or
    /// the directory itself if it has one (docs/skills.md).
    #[arg(long = "skills", value_name = "DIR")]
    pub skills: Vec<PathBuf>,
    /// Write a line per call to this file: who called what, with which grants, and what it
    /// read, wrote and sent; hash-chained ([audit] in the config for the rest).
    #[arg(long, value_name = "PATH")]
    pub audit: Option<PathBuf>,
    /// Largest JSON-RPC message accepted (a stdin line or an HTTP body), in bytes
    /// [default: 64 MiB].
    #[arg(long, value_name = "BYTES")]
    pub max_message_bytes: Option<usize>,
    /// Largest plugin file accepted, in MiB, at most 4096 [default: 256].
    #[arg(long, value_name = "MIB")]
    pub max_plugin_mib: Option<u64>,
    /// Longest a plugin may take to compile, in seconds; a longer compilation is stopped and
    /// the plugin refused [default: 300].
    #[arg(long, value_name = "SECONDS")]
    pub compile_timeout: Option<f64>,
    /// Keys that seal the `requestState` of multi round-trip requests: a file with one base64
    /// 32-byte key a line, the first sealing and all opening (rotate by adding a new first
    /// line) [default: a key made per process; retries then work only on that process].
    #[arg(long, value_name = "FILE", env = "MCPBOX_REQUEST_STATE_KEYS")]
    pub request_state_keys: Option<PathBuf>,
    /// How long a `requestState` stays valid, in seconds [default: 600].
    #[arg(long, value_name = "SECONDS")]
    pub request_state_ttl: Option<f64>,
    /// How long a call that became a task may run, in seconds, at most a day; separate from
    /// --timeout, which bounds the call until it becomes one [default: 3600].
    #[arg(long, value_name = "SECONDS")]
    pub task_deadline: Option<f64>,
    /// How long a finished task's result stays readable, in seconds [default: 3600].
    #[arg(long, value_name = "SECONDS")]
    pub task_retention: Option<f64>,
    /// Tasks the server holds at once, running or finished [default: 1000].
    #[arg(long, value_name = "N")]
    pub max_tasks: Option<usize>,
    /// Tasks one client holds at once [default: 100].
    #[arg(long, value_name = "N")]
    pub max_tasks_per_client: Option<usize>,
    /// Output (results, questions) all tasks keep at once, in MiB [default: 256].
    #[arg(long, value_name = "MIB")]
    pub max_task_output: Option<u64>,
    /// Output one client's tasks keep at once, in MiB [default: 64].
    #[arg(long, value_name = "MIB")]
    pub max_task_output_per_client: Option<u64>,
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
    #[arg(long, value_name = "WHEN")]
    pub copy_on_write: Option<CopyOnWrite>,
    /// Don't watch the plugin paths (by default a `.wasm` added, changed or removed there is
    /// loaded, reloaded or dropped while serving, and clients are told).
    #[arg(long)]
    pub no_watch: bool,
    /// Show clients two tools, `search_tools` and `call_tool`, instead of every tool (for large
    /// catalogs; docs/composition.md).
    #[arg(long)]
    pub tool_search: bool,
    /// Items per page of list results [default: 100].
    #[arg(long, value_name = "N")]
    pub page_size: Option<usize>,
    /// Serve Streamable HTTP on this address instead of stdio: `HOST:PORT`, `localhost:PORT` or
    /// a bare `PORT` (on 127.0.0.1; port 0 picks one); `--http` alone binds 127.0.0.1:8080.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8080", value_parser = listen_address)]
    pub http: Option<SocketAddr>,
    /// Serve Prometheus metrics at `/metrics` on this address (`HOST:PORT`, or a bare `PORT` on
    /// 127.0.0.1): a listener of its own, without the MCP endpoint's token; off unless given.
    #[arg(long, value_name = "ADDR", env = "MCPBOX_METRICS", value_parser = listen_address)]
    pub metrics: Option<SocketAddr>,
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
    /// The WebSocket endpoint (subprotocol `mcp`) on the HTTP listener [default: /ws].
    #[arg(long, value_name = "PATH")]
    pub ws_path: Option<String>,
    /// Don't serve WebSocket.
    #[arg(long)]
    pub no_ws: bool,
    /// Serve HTTPS: this certificate chain (PEM, leaf first), reloaded when it changes.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// A TLS-terminating proxy stands in front of this plain HTTP listener (lets `[auth]` serve
    /// off loopback without --tls-cert).
    #[arg(long)]
    pub behind_tls_proxy: bool,
    /// Serve the deprecated 2024-11-05 HTTP+SSE transport too, for old clients: the stream at
    /// /sse, messages POSTed to /sse/messages.
    #[arg(long)]
    pub legacy_sse: bool,
    /// Where the HTTP+SSE stream is, with --legacy-sse [default: /sse].
    #[arg(long, value_name = "PATH")]
    pub legacy_sse_path: Option<String>,
    /// How often an open SSE stream gets a keep-alive comment and a WebSocket a ping, in
    /// milliseconds (0: never), so that proxies don't close a stream that waits on a slow call
    /// [default: 15000].
    #[arg(long, value_name = "MS")]
    pub heartbeat_ms: Option<u64>,
    /// Share tasks, resource updates and list changes with the other replicas of a fleet
    /// through this Redis (`redis://[:PASSWORD@]HOST:PORT[/DB]`, `rediss://` for TLS); over
    /// `[store] redis`. Needs --request-state-keys (every replica the same file).
    #[arg(long, value_name = "URL", env = "MCPBOX_STORE", hide_env_values = true)]
    pub store: Option<String>,
    /// With a shared store: how long a replica's claim on its tasks lasts without renewal, in
    /// seconds (a dead replica's tasks fail after it); over `[store] lease_seconds` [default: 30].
    #[arg(long, value_name = "SECONDS")]
    pub store_lease: Option<u64>,
    /// This replica's name (a DNS label, the pod name under Kubernetes): its legacy session ids
    /// start with it, so that a load balancer can route by them (in a fleet, `--store`, they do
    /// with the host name when this is not given) [default: the host name].
    #[arg(long, value_name = "NAME", env = "MCPBOX_REPLICA")]
    pub replica: Option<String>,
    /// After SIGTERM or SIGINT, how long in-flight calls may finish before streams and
    /// sessions close, in seconds; over `[http] shutdown_grace_seconds` [default: 10].
    #[arg(long, value_name = "SECONDS")]
    pub shutdown_grace: Option<u64>,
    /// After SIGTERM, how long the listener still takes new requests while /readyz already
    /// fails (for load balancers to notice), in seconds; over `[http] drain_delay_seconds`
    /// [default: 0].
    #[arg(long, value_name = "SECONDS")]
    pub drain_delay: Option<u64>,
}

/// An address to listen on: `HOST:PORT` with an IP, `localhost:PORT`, or a bare `PORT` on
/// loopback. A plugin path given right after `--http` (which takes an optional value) gets a
/// message saying so, instead of a parser's complaint about address syntax.
fn listen_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(address) = text.parse::<SocketAddr>() {
        return Ok(address);
    }
    if let Ok(port) = text.parse::<u16>() {
        return Ok((Ipv4Addr::LOCALHOST, port).into());
    }
    if let Some(port) = text.strip_prefix("localhost:").and_then(|port| port.parse::<u16>().ok()) {
        return Ok((Ipv4Addr::LOCALHOST, port).into());
    }
    if Path::new(text).exists() || text.ends_with(".wasm") {
        return Err(format!(
            "`{text}` is a plugin path, not an address: `--http` takes an optional address, so put the plugin \
             paths before it (`mcpbox serve {text} --http`) or give it one (`--http 127.0.0.1:8080 {text}`)"
        ));
    }
    Err(format!("`{text}` is not an address to listen on: use HOST:PORT (127.0.0.1:8080), localhost:PORT or PORT"))
}

#[cfg(test)]
mod tests {
    use super::listen_address;

    #[test]
    fn listen_addresses() {
        assert_eq!(listen_address("127.0.0.1:0").unwrap().to_string(), "127.0.0.1:0");
        assert_eq!(listen_address("8080").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(listen_address("localhost:9").unwrap().to_string(), "127.0.0.1:9");
        assert_eq!(listen_address("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert!(listen_address("plugins/x.wasm").unwrap_err().contains("is a plugin path, not an address"));
        assert!(listen_address("example.com:80").unwrap_err().contains("is not an address to listen on"));
    }
}
