//! mcpbox as an OAuth 2.1 resource server (MCP `basic/authorization`, 2025-06-18 to
//! 2026-07-28): every request to an MCP endpoint carries an access token that one of the
//! operator's authorization servers issued for this server, or gets the spec's challenge.
//!
//! - `server.rs`: the resource server, the challenges (RFC 6750 §3: 401 with
//!   `resource_metadata` and `scope`, `error="invalid_token"` when a token was presented), the
//!   Protected Resource Metadata document (RFC 9728 §2, §3);
//! - `rules.rs`: what a token must satisfy, whichever way it is checked;
//! - `keys.rs`: each issuer's signing keys, found through its metadata (RFC 8414, OpenID
//!   Connect Discovery), cached, fetched again for an unknown key id at most every 30 s;
//! - `token.rs`: a JWT access token checked (signature, algorithm allow-list, `iss`, `aud`,
//!   `exp`, `nbf`);
//! - `introspect.rs`: an opaque token checked by introspection (RFC 7662), cached briefly;
//! - `cache.rs`: what is remembered about tokens, by their digest.
//!
//! Tokens are read from the `Authorization` header only (never the query string, §Access Token
//! Usage), never logged, and never passed on: plugins and every other party see at most the
//! principal.

mod cache;
mod introspect;
mod keys;
mod rules;
mod server;
mod token;

pub(crate) use server::ResourceServer;
