from mcpbox_compat.server import Context, FastMCP, Settings

__all__ = ["FastMCP", "Context", "Settings"]
