//! The benchmark's native baseline: an MCP server written directly on rmcp (the official Rust
//! SDK) with one tool, `echo`, doing what the sandboxed `echo` plugin does. Serves stdio, or
//! Streamable HTTP with `--http ADDR` (TCP_NODELAY set, as mcpbox does, so the comparison is
//! of the servers, not of Nagle's algorithm). Built by `scripts/bench.sh compare`:
//!
//!     cargo run --release --example native_echo --features native-echo [-- --http 127.0.0.1:0]

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test or benchmark stops at the first thing that does not hold"
)]

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

#[derive(Clone)]
struct Echo {
    tools: Arc<Vec<Tool>>,
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities = serde_json::from_value(json!({ "tools": {} })).unwrap();
        ServerConfig::new(capabilities).with_server_info(Implementation::new("native-echo", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items((*self.tools).clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name != "echo" {
            return Err(McpError::invalid_params(format!("unknown tool `{}`", request.name), None));
        }
        let text = request.arguments.as_ref().and_then(|a| a.get("text")).and_then(|t| t.as_str());
        let Some(text) = text else {
            return Ok(CallToolResponse::from(CallToolResult::error(vec![ContentBlock::text("`text` is required")])));
        };
        Ok(CallToolResponse::from(CallToolResult::success(vec![ContentBlock::text(text.to_owned())])))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let schema = json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] });
    let schema = schema.as_object().unwrap().clone();
    let server = Echo { tools: Arc::new(vec![Tool::new("echo", "Returns its text", Arc::new(schema))]) };
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--http") {
        None => {
            let running = rmcp::serve_server(server, (tokio::io::stdin(), tokio::io::stdout())).await?;
            running.waiting().await?;
        }
        Some(i) => {
            let addr = args.get(i + 1).map_or("127.0.0.1:0", String::as_str);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("serving MCP over http://{}/mcp", listener.local_addr()?);
            let service = StreamableHttpService::new(
                move || Ok(server.clone()),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            let app = axum::Router::new().nest_service("/mcp", service);
            let listener = listener.tap_io(|stream| {
                let _ = stream.set_nodelay(true);
            });
            axum::serve(listener, app).await?;
        }
    }
    Ok(())
}
