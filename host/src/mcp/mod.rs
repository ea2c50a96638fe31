//! The protocol layer: the only code that touches rmcp. It serves the runtime's catalog as one
//! MCP server in both eras (the `initialize` handshake of 2024-11-05 to 2025-11-25, and
//! stateless 2026-07-28 with the version in each request's `_meta`), over every transport.
//!
//! Its rooms, from the bytes in to the wire words out:
//!
//! - [`transport`]: bytes to rmcp and back (stdio, Streamable HTTP, WebSocket, HTTP+SSE; the
//!   guard at the HTTP door);
//! - `server`: one connection's handler (one short method per MCP request), the lists, the
//!   server's instructions, changes told to clients, readiness, tool search;
//! - `call`: a request that runs a plugin (`tools/call`, `resources/read`, `prompts/get`): its
//!   span and audit line, the steps before the plugin starts, its scope, inner calls and calls
//!   that go on as tasks; with the checks it passes (`call/checks`) and the rounds in which it
//!   asks the client (`call/rounds`);
//! - `skills`: the skills extension on the wire;
//! - `wire`: the words every room speaks: what differs between the eras, plugin values as MCP
//!   types, failures as MCP outcomes, cursors.
//!
//! And the two types every room shares, in files of their own here: `session` ([`Session`],
//! one connection, which the rooms' `impl Session` blocks extend) and `state` ([`McpState`],
//! what every connection shares).
//!
//! The rule of this folder: no two rooms use each other, directly or through others
//! (`layering/circles.rs` fails the test command on a circle between rooms); a room nested in
//! another (`call/checks`) may use what its parent holds, and every room the two types here.
//! Between the rooms here, the order of the list holds: each uses only the rooms after it
//! (`layering/rooms.rs`).

mod call;
mod server;
mod session;
mod skills;
mod state;
pub mod transport;
mod wire;

pub(crate) use call::rounds::request_state::StateKeys;
pub use session::Session;
pub use state::McpState;
