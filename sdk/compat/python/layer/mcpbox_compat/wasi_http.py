"""One HTTP request over `wasi:http/outgoing-handler`, blocking: the host makes the connection
(TLS, the allow-list, the operator's routes and credentials are all the host's), the guest sees
the response. Imported only by servers the build found using HTTP (the host links wasi:http for
plugins granted a network)."""

import urllib.parse

from componentize_py_types import Err, Ok
from wit_world.imports import outgoing_handler, streams
from wit_world.imports import wasi_http_types as http

_METHODS = {"GET": http.Method_Get, "HEAD": http.Method_Head, "POST": http.Method_Post, "PUT": http.Method_Put,
            "DELETE": http.Method_Delete, "CONNECT": http.Method_Connect, "OPTIONS": http.Method_Options,
            "TRACE": http.Method_Trace, "PATCH": http.Method_Patch}
# Headers of the connection, which is the host's (it refuses them). Content-Length stays: the
# host checks the body against it, and servers that read no chunked bodies need it.
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host", "te"}
CHUNK = 64 * 1024


class HTTPError(OSError):
    """The host refused or could not make the request (its reason, e.g. a host not allowed)."""


def _error_text(error) -> str:
    name = type(error).__name__.replace("ErrorCode_", "")
    value = getattr(error, "value", None)
    return f"{name}: {value}" if value not in (None, "") else name


def request(method: str, url: str, headers, body: bytes = b"", timeout=None):
    """(status, [(name, value bytes)], body bytes) of one request."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise HTTPError(f"unsupported URL scheme {parts.scheme!r}")
    entries = []
    for name, value in headers:
        name = (name.decode("latin-1") if isinstance(name, bytes) else str(name)).lower()
        if name not in _HOP_BY_HOP:
            entries.append((name, value if isinstance(value, bytes) else str(value).encode("latin-1")))
    fields = http.Fields.from_list(entries)
    outgoing = http.OutgoingRequest(fields)
    method_class = _METHODS.get(method.upper())
    outgoing.set_method(method_class() if method_class else http.Method_Other(method.upper()))
    outgoing.set_scheme(http.Scheme_Https() if parts.scheme == "https" else http.Scheme_Http())
    outgoing.set_authority(parts.netloc.rsplit("@", 1)[-1])
    outgoing.set_path_with_query((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
    outgoing_body = outgoing.body()
    options = None
    if timeout:
        options = http.RequestOptions()
        nanos = int(float(timeout) * 1e9)
        for setter in (options.set_connect_timeout, options.set_first_byte_timeout,
                       options.set_between_bytes_timeout):
            try:
                setter(nanos)
            except Err:
                pass
    try:
        future = outgoing_handler.handle(outgoing, options)
    except Err as error:
        raise HTTPError(f"request refused: {_error_text(error.value)}") from None
    if body:
        stream = outgoing_body.write()
        for offset in range(0, len(body), 4096):
            stream.blocking_write_and_flush(body[offset:offset + 4096])
        stream.__exit__(None, None, None)
    http.OutgoingBody.finish(outgoing_body, None)
    while True:
        result = future.get()
        if result is not None:
            break
        future.subscribe().block()
    if isinstance(result, Err) or isinstance(result.value, Err):
        error = result.value if isinstance(result, Err) else result.value.value
        raise HTTPError(f"request failed: {_error_text(error)}")
    response = result.value.value
    status = response.status()
    response_headers = response.headers().entries()
    incoming = response.consume()
    stream = incoming.stream()
    chunks = []
    while True:
        try:
            chunks.append(stream.blocking_read(CHUNK))
        except Err as error:
            if isinstance(error.value, streams.StreamError_Closed):
                break
            raise HTTPError(f"reading the response failed: {error.value}") from None
    stream.__exit__(None, None, None)
    http.IncomingBody.finish(incoming)
    return status, response_headers, b"".join(chunks)
