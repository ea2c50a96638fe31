from mcpbox_compat.server import InvalidSignature, ResourceError, ToolError


class FastMCPError(Exception):
    pass


class ValidationError(FastMCPError):
    pass


__all__ = ["FastMCPError", "ValidationError", "ResourceError", "ToolError", "InvalidSignature"]
