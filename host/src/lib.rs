//! mcpbox: serves MCP tools, resources and prompts from sandboxed WebAssembly components.
//!
//! Four layers, each importing only from the layers below it (`docs/architecture.md` draws
//! them and says where every concern lives):
//!
//! - [`cli`]: the commands (`serve`, `check`, `compile`, `inspect`, `new`, and the registry's
//!   `pull`, `publish`, `sign`, `keygen`);
//! - `config`: the command line and the config file, merged and checked;
//! - `mcp`: the protocol layer, the only code that touches rmcp;
//! - [`runtime`]: plugins, the sandbox and the catalog, which know nothing of MCP's wire types;
//! - `registry`: `oci://` plugins pulled, pinned and verified (beside the runtime);
//! - `fleet`: the state replicas share through Redis, behind the runtime's traits;
//! - `telemetry`: metrics, traces and the log subscriber, used by every layer, using none;
//! - [`failpoint`]: the switches that turn a protection off in the test suite's build only,
//!   used by every layer, using none.

pub(crate) mod access;
pub(crate) mod audit;
pub mod cli;
pub(crate) mod config;
pub mod failpoint;
pub(crate) mod fleet;
mod hex;
pub(crate) mod mcp;
mod readable;
pub(crate) mod registry;
pub mod runtime;
pub(crate) mod telemetry;

#[cfg(test)]
mod fuzzing;
#[cfg(test)]
mod layering;
