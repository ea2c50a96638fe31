"""A stand-in for html.duckduckgo.com, over HTTPS with a certificate for that name (signed by
the test's CA), on loopback: the search form (POST /html) answers a results page in
DuckDuckGo's markup (results, an ad the server skips, redirect links it unwraps), and two
pages serve fetch_content (an article, a missing page). The built duckduckgo-mcp-server
reaches it through mcpbox's `[network] hosts` and `ca_file`, the native one inside a network
namespace whose /etc/hosts points the name at it. Every request is appended to LOG as a JSON
line (method, path, form).

usage: duckduckgo_standin.py PORT CERT KEY LOG   (prints "ready" once listening)
"""

import html
import json
import sys
from http.server import BaseHTTPRequestHandler
from standin import serve
from urllib.parse import parse_qs, quote

RESULTS = [
    ("Sandboxing MCP tools with WebAssembly", "https://example.org/sandbox?x=1&y=2",
     "Run each <b>tool</b> call in a fresh instance &amp; keep the host safe."),
    ("mcpbox — one server from many plugins", "https://example.net/mcpbox",
     "Plugins are components; grants are the operator's."),
    ("Ünïcödé results ✓", "https://example.com/unicode", "Snippets keep their characters: café, naïve."),
]

ARTICLE = """<!DOCTYPE html><html><head><title>Fresh instances</title><style>p{}</style>
<script>var tracking = 1;</script></head><body><nav>Home | About</nav><header>Site header</header>
<main><h1>Fresh instances per call</h1><p>Each call runs in a new sandbox.</p>
<p>Nothing a call leaves behind reaches the next one.</p><ul><li>memory</li><li>files</li></ul></main>
<footer>© 2026</footer></body></html>"""


def results_page(query):
    items = ['<div class="result results_links result--ad"><h2 class="result__title">'
             '<a href="https://duckduckgo.com/y.js?ad_provider=x">An ad</a></h2></div>']
    for title, url, snippet in RESULTS:
        items.append(
            f'<div class="result results_links web-result"><h2 class="result__title">'
            f'<a class="result__a" href="//duckduckgo.com/l/?uddg={quote(url, safe="")}&amp;rut=abc">{html.escape(title)}</a>'
            f'</h2><a class="result__snippet" href="#">{snippet}</a></div>')
    if query == "nothing":
        items = []
    return f"<html><body><div id=links>{''.join(items)}</div></body></html>"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def log(self, form=None):
        with open(sys.argv[4], "a") as log:
            log.write(json.dumps({"method": self.command, "path": self.path, "form": form}) + "\n")

    def answer(self, status, body, kind="text/html; charset=utf-8"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        self.log(form)
        if self.path.startswith("/html"):
            self.answer(200, results_page(form.get("q", "")))
        else:
            self.answer(404, "not found")

    def do_GET(self):
        self.log()
        if self.path == "/article":
            self.answer(200, ARTICLE)
        elif self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/article")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.answer(404, "<html><body>Not here</body></html>")


if __name__ == "__main__":
    serve(Handler)
