//! The runtime: everything between a plugin file and a finished call, and nothing of MCP's
//! wire format (no file here names rmcp or the `mcp` module; a test enforces it). Eight rooms,
//! each depending only on the ones listed after it (`layering` checks the order):
//!
//! - [`catalog`]: plugin files found, loaded, merged into one set of names, calls routed, the
//!   catalog being served and swapped on hot reload;
//! - [`tasks`]: tool calls that go on as tasks, and where their records are kept;
//! - [`plugin`]: one plugin as loaded (its exports, descriptors, plain functions) and the one
//!   generic way into its exports;
//! - [`sandbox`]: one call in a fresh store: the host imports, linking, limits applied, output
//!   captured and budgeted, errors classified;
//! - [`effects`]: what a guest does to the world beyond its sandbox (outgoing HTTP today);
//! - [`grants`]: what a plugin may touch and use (directories, hosts, environment, limits), as
//!   the operator and the user gave it;
//! - [`skills`]: the skills served (the operator's directories, those plugins ship): entries,
//!   files and digests; nothing in it runs;
//! - [`engine`]: the one wasmtime engine, compilation, the WIT's bindings, idle memory.

pub(crate) mod catalog;
pub(crate) mod effects;
pub mod engine;
pub(crate) mod grants;
pub(crate) mod plugin;
pub(crate) mod sandbox;
pub(crate) mod skills;
pub(crate) mod tasks;

pub(crate) use catalog::live::{Change, LiveCatalog};
pub use catalog::{Catalog, FirstUse, Pins};
pub(crate) use catalog::{CompletionTarget, LoadProblem};
pub use grants::limits::Limits;
pub(crate) use grants::plugin_config::PluginConfig;
pub(crate) use plugin::load::plugin_name;
pub(crate) use sandbox::linker::interface_names;
pub use sandbox::{CallError, CallScope, Caller};
pub use skills::{LiveSkills, SkillSource};
