"""The HTTP clients servers use, over wasi:http (`wasi_http.request`): httpx (a transport
under its clients, sync and async), requests (an adapter under its sessions), and urllib
(an opener handler). Each client keeps its own API, redirects, cookies and errors; only the
connection is the host's. Installed at start by `boot` where the package is present."""

import io
import sys
import zlib

from mcpbox_compat import wasi_http


def _httpx():
    import httpx

    def send(request, timeout):
        try:
            status, headers, body = wasi_http.request(request.method, str(request.url),
                                                      request.headers.raw, request.read(), timeout)
        except wasi_http.HTTPError as error:
            raise httpx.ConnectError(str(error), request=request) from None
        # The body as the server sent it: httpx decodes Content-Encoding itself.
        return httpx.Response(status, headers=[(k, v) for k, v in headers], content=body, request=request)

    def timeout_of(request):
        value = request.extensions.get("timeout", {})
        return value.get("read") or value.get("connect") if isinstance(value, dict) else None

    class Transport(httpx.BaseTransport):
        def __init__(self, *args, **kwargs):
            pass

        def handle_request(self, request):
            return send(request, timeout_of(request))

    class AsyncTransport(httpx.AsyncBaseTransport):
        def __init__(self, *args, **kwargs):
            pass

        async def handle_async_request(self, request):
            await request.aread()
            return send(request, timeout_of(request))

    import httpx._client as client
    client.HTTPTransport = Transport
    client.AsyncHTTPTransport = AsyncTransport
    httpx.HTTPTransport = Transport
    httpx.AsyncHTTPTransport = AsyncTransport


def _requests():
    import requests
    import requests.adapters

    class Adapter(requests.adapters.BaseAdapter):
        def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
            body = request.body or b""
            if isinstance(body, str):
                body = body.encode("utf-8")
            elif hasattr(body, "read"):
                body = body.read()
            if isinstance(timeout, tuple):
                timeout = timeout[-1]
            try:
                status, headers, content = wasi_http.request(request.method, request.url,
                                                             list(request.headers.items()), body, timeout)
            except wasi_http.HTTPError as error:
                raise requests.exceptions.ConnectionError(str(error), request=request) from None
            response = requests.Response()
            response.status_code = status
            response.headers = requests.structures.CaseInsensitiveDict(
                {k: v.decode("latin-1") for k, v in headers})
            response.encoding = requests.utils.get_encoding_from_headers(response.headers)
            encoding = response.headers.get("content-encoding", "").lower()
            if encoding in ("gzip", "deflate"):
                content = zlib.decompress(content, 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
            response.raw = io.BytesIO(content)
            response._content = content
            response.url = request.url
            response.request = request
            response.reason = ""
            response.connection = self
            return response

        def close(self):
            pass

    requests.adapters.HTTPAdapter = Adapter
    requests.sessions.HTTPAdapter = Adapter


def _urllib():
    import email.message
    import urllib.request
    import urllib.response

    class Handler(urllib.request.BaseHandler):
        handler_order = 100

        def _open(self, request):
            headers = list(request.header_items())
            try:
                status, response_headers, body = wasi_http.request(
                    request.get_method(), request.full_url, headers, request.data or b"", request.timeout)
            except wasi_http.HTTPError as error:
                raise urllib.error.URLError(str(error)) from None
            message = email.message.Message()
            for name, value in response_headers:
                message[name] = value.decode("latin-1")
            response = urllib.response.addinfourl(io.BytesIO(body), message, request.full_url, status)
            response.msg = ""
            return response

        http_open = https_open = _open

    urllib.request.install_opener(urllib.request.build_opener(Handler))
    # build_opener() elsewhere gets the handler too (it precedes the socket handlers).
    original = urllib.request.build_opener

    def build_opener(*handlers):
        return original(Handler, *handlers)
    urllib.request.build_opener = build_opener


def install():
    for name, install_one in (("httpx", _httpx), ("requests", _requests), ("urllib.request", _urllib)):
        try:
            install_one()
        except ImportError:
            pass
        except Exception as error:  # a version whose internals moved: say so, the rest still works
            print(f"mcpbox: the {name} transport is not installed: {error}", file=sys.stderr)
