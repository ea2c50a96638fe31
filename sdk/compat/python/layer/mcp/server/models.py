from mcp.types import _Model


class InitializationOptions(_Model):
    server_name: str
    server_version: str = None
    capabilities: object = None
    instructions: str = None
