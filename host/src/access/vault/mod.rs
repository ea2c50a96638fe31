//! The token vault (docs/credentials.md, "Each user's own account"): for a plugin served to
//! many users, each principal links its own account at a third party (`[oauth_clients.NAME]`)
//! through a link mcpbox makes (`links.rs`, the endpoints a browser opens), and that
//! principal's calls go out with its own token (`accounts.rs`, bound to the call by the
//! protocol layer as the runtime's `LinkedAccounts`). Tokens are sealed with the operator's key
//! (`sealed.rs`) in memory or in the fleet's store; `oauth.rs` speaks OAuth 2.1 to the
//! authorization servers.

mod accounts;
mod links;
mod oauth;
mod sealed;

pub(crate) use accounts::{Vault, unlink_in_store};
pub(crate) use links::routes;
