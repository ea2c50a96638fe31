"""`mcp.server.mcpserver` (SDK v2's name for FastMCP) over mcpbox."""

from mcpbox_compat.server import Audio, Context, FastMCP, Image


class MCPServer(FastMCP):
    pass


__all__ = ["MCPServer", "Context", "Image", "Audio"]
