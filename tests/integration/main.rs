//! Integration tests: the real `mcpbox` binary over stdio, driven as an MCP client, with real
//! components built from `plugins/` and `tests/fixtures/`.

mod common;
mod framing;
mod loading;
mod protocol;
mod roots;
mod sandbox;
