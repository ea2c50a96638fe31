from mcpbox_compat.server import ResourceError, ToolError

__all__ = ["ToolError", "ResourceError"]
