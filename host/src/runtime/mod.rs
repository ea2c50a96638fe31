//! The runtime: everything between a plugin file and a finished call, and nothing of MCP's
//! wire format (no file here names rmcp or the `mcp` module; a test enforces it).
//!
//! - [`engine`]: the one wasmtime engine, every knob with its reason; `idle`: the pool's freed
//!   memory returned once no call runs;
//! - [`catalog`]: plugin files found, loaded, merged into one set of names, and calls routed;
//! - [`compile`]: plugin files compiled within a size and a time bound (in a child process);
//! - `load`, `linker`, `plain`, `descriptors`: loading one plugin (imports checked against its
//!   policy, what it describes bounded and checked);
//! - [`plugin`] and `invoke`: a loaded plugin, and the one generic way into its exports;
//! - [`sandbox`]: one call in a fresh store (grants, limits, the host imports, errors);
//! - [`policy`], `address`, `special_purpose`, `requested`, [`roots`]: what a plugin may touch
//!   (`special_purpose`: public addresses, from the IANA registries in `host/data/iana/`);
//! - `network`, `guest_io`: outgoing HTTP under the allow-list, guest stdout and stderr;
//! - [`limits`] and `budget`: the limits, and the one budget everything a call emits is
//!   charged to;
//! - [`live`] and [`reload`]: the catalog being served, swapped on hot reload.

mod address;
pub(crate) mod bindings;
pub(crate) mod budget;
pub(crate) mod catalog;
pub mod compile;
mod descriptors;
pub mod engine;
mod guest_io;
mod idle;
mod invoke;
pub(crate) mod limits;
mod linker;
pub(crate) mod live;
mod load;
mod network;
mod plain;
pub(crate) mod plugin;
pub(crate) mod plugin_config;
pub(crate) mod policy;
mod principal_dirs;
pub(crate) mod reload;
pub(crate) mod requested;
pub(crate) mod roots;
pub(crate) mod sandbox;
mod special_purpose;
pub(crate) mod tasks;

pub use catalog::Catalog;
pub(crate) use catalog::{CompletionTarget, LoadProblem};
pub use limits::Limits;
pub(crate) use linker::interface_names;
pub(crate) use live::{Change, LiveCatalog};
pub(crate) use load::plugin_name;
pub(crate) use plugin_config::PluginConfig;
pub use sandbox::{CallError, CallScope, Caller};
