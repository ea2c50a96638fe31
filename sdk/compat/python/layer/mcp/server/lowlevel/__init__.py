from mcp.server.lowlevel.server import NotificationOptions, Server

__all__ = ["Server", "NotificationOptions"]
