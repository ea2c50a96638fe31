"""The standalone `fastmcp` package (2.x) over mcpbox: the same decorators as the SDK's
FastMCP, which mcpbox's stand-in implements once (mcpbox_compat/server.py)."""

from mcpbox_compat.server import Audio, Context, FastMCP, Image

__version__ = "2.14.7+mcpbox"
__all__ = ["FastMCP", "Context", "Image", "Audio"]

