//! The protocol layer: the only code that touches rmcp. It serves the runtime's catalog as one
//! MCP server in both eras (the `initialize` handshake of 2024-11-05 to 2025-11-25, and
//! stateless 2026-07-28 with the version in each request's `_meta`), over every transport.
//!
//! - `session`: [`Session`], one connection; `handler`: one short method per MCP request;
//!   `lists`: the list requests; `instructions`: the server's `instructions`;
//! - `running`: the requests that run a plugin (`tools/call`, `resources/read`, `prompts/get`)
//!   inside the span `observe` opens per request; `audited`: each call's audit line;
//! - `call`: the steps every call of a tool takes before its plugin starts, whoever calls
//!   it (the client, a composer's code) and however it would run (at once, as a task);
//! - `state`: [`McpState`], what every connection shares;
//! - `era`: everything that differs between the eras for one request;
//! - `scope`, `roots`, `client`, `events`: a request's call scope: directories from the
//!   client's roots, its guest's questions to the client, its log and progress notifications;
//! - `notify`: hot-reload changes and resource updates, told to clients of both eras;
//! - `convert`, `errors`, `paging`: plugin values to MCP types, failures to MCP outcomes,
//!   cursors;
//! - `request_state`: the sealed `requestState` of multi round-trip requests;
//! - `tasks`: the tasks extension (`tasks/get`, `tasks/update`, `tasks/cancel`, and calls
//!   that go on as tasks);
//! - `admission`: where the handler applies access control (`crate::access`: tokens, principals,
//!   entitlements, limits) and words its refusals as JSON-RPC errors;
//! - `compose`: tools that call tools (WIT 0.1.4 `host.call-tool`), each inner call checked as
//!   the client's own, its completed results kept across a request's rounds;
//! - `search`: tool search for large catalogs (`search_tools`, `call_tool` instead of every tool);
//! - `apps`: what an MCP App's read must hold before it reaches the client; `skills`: the
//!   skills extension on the wire;
//! - `approval`: the person's yes before a call of a tool the operator marked (its arguments
//!   shown by `shown_arguments`: what the call may touch first and whole; what was allowed
//!   remembered by `approved`), and `link`: the
//!   account a call needs linked first, both asked before the plugin starts;
//! - `health`: readiness (`/readyz`) of a replica, and the fleet it belongs to;
//! - [`transport`]: stdio and Streamable HTTP.

mod admission;
mod approval;
mod approved;
mod apps;
mod audited;
mod call;
mod client;
mod compose;
mod convert;
mod era;
mod errors;
mod events;
mod handler;
mod health;
mod instructions;
mod link;
mod lists;
mod notify;
mod observe;
mod paging;
mod request_state;
mod roots;
mod running;
mod scope;
mod search;
mod session;
mod shown_arguments;
mod skills;
mod state;
mod tasks;
pub mod transport;

pub(crate) use request_state::StateKeys;
pub use session::Session;
pub use state::McpState;
