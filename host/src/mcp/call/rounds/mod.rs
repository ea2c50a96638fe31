//! The rounds in which a call asks its client, in both eras: server-to-client requests in
//! legacy sessions, multi round-trip questions in 2026-07-28 requests (basic §Multi round-trip
//! requests).
//!
//! - `client`: a guest's questions to the client (sampling, elicitation, roots), keys claimed
//!   once, answers checked against the method; an inner call's questions under its own keys;
//! - `roots`: the client's roots turned into the directories a request may use (only ever
//!   narrowing the operator's);
//! - `request_state`: the sealed `requestState` a 2026-07-28 retry echoes (the answers so far,
//!   the plugin's saved state, completed inner calls, approvals), bound to its request.
//!
//! The rule of this room: what the client said is checked here before any other room reads
//! it; nothing the client sends widens a grant.

pub(crate) mod client;
pub(crate) mod request_state;
pub(crate) mod roots;
