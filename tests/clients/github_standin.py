"""A stand-in for the part of the GitHub REST API the tests' calls reach, over HTTPS with a
certificate for api.github.com (signed by the test's CA), on loopback: the built GitHub server
reaches it through mcpbox's `[network] hosts` and `ca_file`, the native one inside a network
namespace whose /etc/hosts points api.github.com at it. Every request is appended to LOG as a
JSON line (method, path, the Authorization header), so the test sees which token arrived.

usage: github_standin.py PORT CERT KEY LOG   (prints "ready" once listening)
"""

import json
import sys
from http.server import BaseHTTPRequestHandler
from standin import serve
from urllib.parse import parse_qs, urlparse

OWNER = {
    "login": "ada", "id": 1, "node_id": "U_1", "avatar_url": "https://avatars.example/u/1",
    "url": "https://api.github.com/users/ada", "html_url": "https://github.com/ada", "type": "User",
}


def repository(name):
    return {
        "id": 42, "node_id": "R_42", "name": name, "full_name": f"ada/{name}", "private": False,
        "owner": OWNER, "html_url": f"https://github.com/ada/{name}", "description": "a sandbox for MCP tools",
        "fork": False, "url": f"https://api.github.com/repos/ada/{name}", "created_at": "2026-01-02T03:04:05Z",
        "updated_at": "2026-11-20T10:00:00Z", "pushed_at": "2026-11-25T09:30:00Z",
        "git_url": f"git://github.com/ada/{name}.git", "ssh_url": f"git@github.com:ada/{name}.git",
        "clone_url": f"https://github.com/ada/{name}.git", "default_branch": "main",
    }


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with open(sys.argv[4], "a") as log:
            log.write(json.dumps({"method": "GET", "path": self.path, "authorization": self.headers.get("Authorization")}) + "\n")
        url = urlparse(self.path)
        query = parse_qs(url.query)
        if url.path == "/search/repositories":
            term = query.get("q", [""])[0]
            self.answer(200, {"total_count": 1, "incomplete_results": False, "items": [repository(term)]})
        elif url.path == "/search/users":
            self.answer(200, {"total_count": 1, "incomplete_results": False, "items": [OWNER]})
        else:
            self.answer(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})


if __name__ == "__main__":
    serve(Handler)
