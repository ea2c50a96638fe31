//! Integration tests: the real `mcpbox` binary over stdio, driven as an MCP client, with real
//! components built from `plugins/` and `tests/fixtures/`.

mod common;
mod framing;
mod http;
mod loading;
mod protocol;
mod real_client;
mod roots;
mod sandbox;
