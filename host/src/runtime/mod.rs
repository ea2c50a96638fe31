//! The runtime: everything between a plugin file and a finished call, and nothing of MCP's
//! wire format (no file here names rmcp or the `mcp` module; a test enforces it).
//!
//! - [`engine`]: the one wasmtime engine, every knob with its reason;
//! - [`catalog`]: plugin files found, loaded, merged into one set of names, and calls routed;
//! - `load`, `linker`, `plain`: loading one plugin (imports checked against its policy);
//! - [`plugin`] and `invoke`: a loaded plugin, and the one generic way into its exports;
//! - [`sandbox`]: one call in a fresh store (grants, limits, the host imports, errors);
//! - [`policy`], `address`, `requested`, [`roots`]: what a plugin may touch;
//! - `network`, `guest_io`: outgoing HTTP under the allow-list, guest stdout and stderr;
//! - [`limits`] and `output_size`: the limits and how output counts against them;
//! - [`live`] and [`reload`]: the catalog being served, swapped on hot reload.

mod address;
pub mod bindings;
pub mod catalog;
pub mod engine;
mod guest_io;
mod invoke;
pub mod limits;
mod linker;
pub mod live;
mod load;
mod network;
mod output_size;
mod plain;
pub mod plugin;
pub mod plugin_config;
pub mod policy;
pub mod reload;
pub mod requested;
pub mod roots;
pub mod sandbox;

pub use catalog::{Catalog, CompletionTarget, LoadProblem};
pub use limits::Limits;
pub(crate) use linker::interface_names;
pub use live::{Change, LiveCatalog};
pub use load::{compile, plugin_name};
pub use plugin::Plugin;
pub use plugin_config::{PluginConfig, PluginConfigs};
pub use sandbox::{CallError, CallScope};
