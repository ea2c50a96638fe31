//! The transports (MCP `basic/transports`): each turns bytes on a connection into rmcp
//! messages for a [`Session`](super::Session) and back, with the transport's own rules for bad
//! input.
//!
//! - `stdio`: newline-delimited JSON-RPC on stdin/stdout;
//! - `http`: the HTTP listener, with Streamable HTTP (rmcp's service) and beside it
//!   - `websocket`: subprotocol `mcp`, a text frame per message;
//!   - `legacy_sse`: the 2024-11-05 HTTP+SSE transport, off unless turned on;
//!   - `stateless`: the lean path of the stateless requests that need only their response;
//!   - `guard`: Host, Origin and the bearer or access token, in front of every endpoint;
//!   - `precheck`: with `[auth]`, sessions bound to their principal, the 403 and 429 of
//!     Streamable HTTP requests;
//!   - `tls`: HTTPS, its certificate reloaded when it changes;
//!   - `early_stream`: a slow Streamable HTTP response started as SSE, for its heartbeats;
//!   - `sessions`: legacy sessions named after their replica in a fleet;
//!   - `cors`: CORS for browser-based hosts, only for the origins the operator named;
//!   - `unread_body`: a response sent before its request's body was read says
//!     `Connection: close` (outermost);
//! - `framing`: one message's JSON-RPC checks, shared by stdio, WebSocket and HTTP+SSE;
//! - `channels`: an rmcp session over a pair of channels, the same three transports' core.
//!
//! The rule of this room: bytes become messages here and nowhere else, and what crosses to the
//! handler does so only through rmcp's request (the HTTP request's parts, with the principal the
//! guard found and the precheck's count in their extensions); no room of the protocol layer
//! knows a transport.

mod channels;
mod cors;
mod early_stream;
mod framing;
mod guard;
pub mod http;
mod legacy_sse;
mod precheck;
mod sessions;
mod stateless;
pub mod stdio;
mod tls;
mod unread_body;
mod websocket;
