"""mcpbox's pure-Python stand-in for the MCP Python SDK's server side (`mcp.server.fastmcp`,
`mcp.server.mcpserver`, `mcp.server.lowlevel`, `mcp.types`): what a server built by
`mcpbox build` imports instead of the SDK, whose transports and pydantic core cannot run in a
WebAssembly sandbox. The server's code stays as written; its tools become the plugin's."""

from mcp.shared.exceptions import McpError, MCPError
from mcp.types import *  # noqa: F401,F403 - the SDK re-exports its types here

__version__ = "1.30.0+mcpbox"
