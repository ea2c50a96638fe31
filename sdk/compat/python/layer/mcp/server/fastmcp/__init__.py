"""`mcp.server.fastmcp`: FastMCP over mcpbox (mcpbox_compat/server.py)."""

from mcpbox_compat.server import Audio, Context, FastMCP, Image

__all__ = ["FastMCP", "Context", "Image", "Audio"]
