"""What the test stand-ins share: an HTTPS server on loopback with the test CA's certificate.

usage (by a stand-in): serve(Handler) with argv PORT CERT KEY LOG; prints "ready" once listening."""

import ssl
import sys
from http.server import ThreadingHTTPServer


def serve(handler):
    port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("ready", flush=True)
    server.serve_forever()
