//! One connection as an MCP server: what it answers that runs no plugin, and how it tells its
//! clients what changed.
//!
//! - `handler`: rmcp's `ServerHandler` for [`Session`](crate::mcp::Session), one short method
//!   per MCP request; the requests that run a plugin go on in `call/running.rs`;
//! - `lists`: the list requests (pages, caching hints, filtered per principal);
//! - `instructions`: the server's `instructions`;
//! - `search`: tool search for large catalogs (`search_tools`, `call_tool` instead of every
//!   tool);
//! - `notify`: hot-reload changes and resource updates, told to clients of both eras;
//! - `health`: readiness (`/readyz`) of a replica, and the fleet it belongs to.
//!
//! The rule of this room: it decides which request is which and answers the ones that run
//! nothing; whatever runs a plugin, or checks a caller before one runs, is `call`'s.

mod handler;
pub(crate) mod health;
mod instructions;
mod lists;
pub(crate) mod notify;
mod search;
