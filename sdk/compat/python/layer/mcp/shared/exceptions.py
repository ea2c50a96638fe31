"""`McpError`: what a handler raises to answer with a JSON-RPC error."""

from mcp.types import ErrorData


class McpError(Exception):
    def __init__(self, error):
        if not isinstance(error, ErrorData):
            error = ErrorData(code=-32603, message=str(error))
        super().__init__(error.message)
        self.error = error


MCPError = McpError
