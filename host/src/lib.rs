//! mcpbox: serves MCP tools, resources and prompts from sandboxed WebAssembly components.
//!
//! Layers, top to bottom, each importing only from the layers below it (`docs/architecture.md`
//! draws them and says where every concern lives; `layering/` checks them in the tests):
//!
//! - [`cli`]: the commands (`serve`, `check`, `compile`, `inspect`, `new`, `build`, and the
//!   registry's `pull`, `add`, `update`, `publish`, `sign`, `keygen`);
//! - `mcp`: the protocol layer, the only code that touches rmcp;
//! - `access`: who a request's token stands for and what that principal may use, called by
//!   `mcp` and naming none of the protocol's types;
//! - `config`: the command line and the config file, merged and checked;
//! - `audit`: a line per call, chained and signed, written by `mcp` and configured by
//!   `config`, knowing neither;
//! - `fleet`: the state replicas share through Redis, behind the runtime's traits;
//! - [`runtime`]: plugins, the sandbox and the catalog, which know nothing of MCP's wire types;
//! - `registry`: `oci://` plugins pulled, pinned and verified (beside the runtime);
//! - `telemetry`: metrics, traces and the log subscriber, used by every layer, using none;
//! - [`failpoint`]: the switches that turn a protection off in the test suite's build only,
//!   used by every layer, using none.
//!
//! Beside them, used by any layer: `hex` (digests and ids written as lowercase hex) and
//! `readable` (text others wrote, escaped and cut before a person reads it). In the tests only:
//! `layering` (these rules, and the map's) and `fuzzing` (the fuzz targets).

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
