//! Integration tests: the real `mcpbox` binary over stdio, driven as an MCP client, with real
//! components built from `plugins/` and `tests/fixtures/`.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

mod approvals;
mod apps;
mod audit;
mod authorization;
mod browser;
mod budget;
mod build_hygiene;
mod cli;
mod code_mode;
mod common;
mod compile_bounds;
mod composition;
mod credentials;
mod deploy;
mod descriptors;
mod docs;
mod existing_python;
mod existing_sdk_v2;
mod existing_servers;
mod fleet;
mod fleet_kill;
mod fleet_support;
mod framing;
mod hostile;
mod http;
mod keep_alive;
mod languages;
mod legacy_sse;
mod limits;
mod loading;
mod network;
mod operations;
mod operations_support;
mod ownership;
mod pins;
mod plain;
mod principals;
mod protections;
mod protocol;
mod proxy;
mod real_client;
mod reference_servers;
mod registry;
mod registry_lifecycle;
mod registry_support;
mod reload;
mod request_state;
mod resident;
mod roots;
mod rounds;
mod sandbox;
mod sdk_transports;
mod skills;
mod tasks;
mod tls;
mod tool_search;
mod vault;
mod websocket;
mod write_budgets;
