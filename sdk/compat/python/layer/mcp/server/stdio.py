"""`stdio_server()`: no streams in a plugin; the lowlevel server's `run()` hands it to mcpbox."""

import contextlib


@contextlib.asynccontextmanager
async def stdio_server(stdin=None, stdout=None):
    yield None, None
