"""How a server reaches the bridge: its `run()` raises `Served` (a BaseException, so that the
server's own `except Exception` leaves it alone), and every server object made is remembered
for entry points that exit without serving (a command-line program run without arguments)."""

SERVERS = []


class Served(BaseException):
    def __init__(self, server):
        super().__init__("served by mcpbox")
        self.server = server


def constructed(server):
    SERVERS.append(server)
