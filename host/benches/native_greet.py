# The native baseline of the interpreter rows of benches/compare.rs: the `greet` tool of
# `mcpbox new --lang python`, served by the official Python SDK over stdio.
from mcp.server.mcpserver import MCPServer

server = MCPServer("native-greet")


@server.tool()
def greet(name: str) -> str:
    """Greets someone by name."""
    return f"Hello, {name}."


server.run()
