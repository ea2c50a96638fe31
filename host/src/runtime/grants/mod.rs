//! The grants: what the operator (config, command line) and the user (client roots, a token's
//! principal) give a plugin, and nothing a plugin says can widen. Directories (`roots`, each one the
//! operator allows canonicalized once in `allowed`, their write budgets in `quota`, and each
//! principal's own in `principal_dirs`), hosts and environment (`policy`, with `address` parsing
//! its `host:port` entries), the credentials set on its requests and the secrets in them
//! (`credentials`), where the operator points names and which CAs it trusts (`routes`), the limits every call runs under (`limits`), all of it per plugin
//! (`plugin_config`), and which tools need the person's yes before each call (`approve`), which served tools it may call
//! through the host (`may_call`), the tool annotations
//! the grants decide (`vouched`), what its `_meta` and icons may claim (`meta`: MCP Apps' domains within
//! its network grant); and what a plugin asks for in its own metadata, shown and never granted
//! (`requested`). Values only: this room runs nothing and knows no sandbox, plugin or catalog.

pub(crate) mod address;
mod allowed;
pub(crate) mod approve;
pub(crate) mod credentials;
pub(crate) mod limits;
pub(crate) mod may_call;
pub(crate) mod meta;
pub(crate) mod plugin_config;
pub(crate) mod policy;
pub(crate) mod principal_dirs;
pub(crate) mod quota;
pub(crate) mod requested;
pub(crate) mod roots;
pub(crate) mod routes;
pub(crate) mod vouched;
