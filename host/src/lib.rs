//! mcpbox: serves MCP tools, resources and prompts from sandboxed WebAssembly components.
//!
//! The runtime (`engine`, `plugin`, `sandbox`, `catalog`, `roots`) knows nothing of MCP's wire
//! types; `mcp` is the only module that touches rmcp.

pub mod bindings;
pub mod catalog;
pub mod check;
pub mod config;
pub mod engine;
pub mod guest_io;
pub mod inspect;
pub mod mcp;
pub mod network;
pub mod plain;
pub mod plugin;
pub mod policy;
pub mod reload;
pub mod roots;
pub mod sandbox;
pub mod template;
