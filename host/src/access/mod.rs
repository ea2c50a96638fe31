//! Access control, between the protocol (`mcp`, which calls it) and the configuration: who a
//! request's token stands for, and what that principal may do. No file here names rmcp.
//!
//! What an authenticated principal may do (docs/authorization.md §Entitlements, §Limits): the
//! operator's entitlements decide which tools, prompts and resources it may list and use, and
//! its limits how much of the server it may take at once. Applied in one place per request:
//! by `handler.rs` for every transport (a JSON-RPC error), and before that, for Streamable
//! HTTP, by `transport/precheck.rs` (the spec's 403 challenge, or 429 with `Retry-After`).
//!
//! - `tokens/`: access tokens checked (OAuth 2.1 resource server: JWTs, introspection, keys);
//! - `principal.rs`: who a valid token stands for;
//! - `verdicts.rs`: [`Access`], the entitlements and limits of one server applied;
//! - `entitlements.rs`: scopes and claims to plugins and names, the verdict on one item;
//! - `limits.rs`: concurrent calls and calls per minute, per principal;
//! - `vault/`: each principal's own accounts at third parties, linked through mcpbox's links.
//!
//! Without `[auth]` there is no principal and nothing here applies: stdio and the static
//! token serve everything to whoever may connect.

mod entitlements;
mod limits;
mod principal;
mod tokens;
mod vault;
mod verdicts;

pub(crate) use entitlements::{Item, Kind, Verdict};
pub(crate) use limits::{LimitRefusal, Running};
pub(crate) use principal::Principal;
pub(crate) use tokens::ResourceServer;
pub(crate) use vault::{Vault, routes as link_routes, unlink_in_store};
pub(crate) use verdicts::{Access, Admitted, item, refusal_description, refused_because};
