//! The HTTP transport's options, as the command line sets them.

use std::net::SocketAddr;

/// Options of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on (port 0 picks one).
    pub addr: SocketAddr,
    /// The MCP endpoint, `/mcp` by default.
    pub path: String,
    /// `Host` values accepted besides the loopback names and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted besides `http://localhost`, `127.0.0.1` and `[::1]` (any
    /// port). Requests without `Origin` (non-browser clients) pass.
    pub allowed_origins: Vec<String>,
    /// If set, every MCP request needs `Authorization: Bearer <token>`.
    pub auth_token: Option<String>,
    /// The largest request body accepted (`--max-message-bytes`).
    pub max_body_bytes: usize,
}
