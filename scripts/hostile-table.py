#!/usr/bin/env python3
"""Runs each hostile-plugin case once through a real `mcpbox` over stdio and prints a table:
the case, what the host answered, and how long the call took (wall time, this machine).
A report, not a test: the tests in tests/integration/hostile.rs and network.rs assert.

    scripts/build-guests.sh && cargo build --release
    scripts/hostile-table.py [path/to/mcpbox]     # default target/release/mcpbox
"""

import http.server
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/release/mcpbox")


class Mcp:
    def __init__(self, args):
        env = dict(os.environ, MCPBOX_CACHE_DIR=str(ROOT / "target/bench-compile-cache"), MCPBOX_LOG="warn")
        self.proc = subprocess.Popen([BIN, "serve", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        self.next_id = 0
        self.pending = {}
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "hostile-table", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def start(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def wait(self, id):
        while id not in self.pending:
            message = json.loads(self.proc.stdout.readline())
            if "id" in message and "method" not in message:
                self.pending[message["id"]] = message
        return self.pending.pop(id)

    def request(self, method, params):
        return self.wait(self.start(method, params))

    def tool(self, name, arguments):
        started = time.perf_counter()
        response = self.request("tools/call", {"name": name, "arguments": arguments})
        return response, (time.perf_counter() - started) * 1000


def answer(response):
    if "error" in response:
        return f"JSON-RPC {response['error']['code']}: {response['error']['message']}"
    result = response["result"]
    text = " ".join(c.get("text", "") for c in result.get("content", []))
    return ("isError: " if result.get("isError") else "ok: ") + text


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args):
        pass


def main():
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    port = web.server_address[1]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="mcpbox-hostile-"))
    (tmp / "ro").mkdir()
    (tmp / "rw").mkdir()
    (tmp / "ro/inside.txt").write_text("inside")
    (tmp / "secret.txt").write_text("TOP SECRET")
    config = tmp / "mcpbox.toml"
    plugins = [ROOT / "target/test-plugins/chaos.wasm", ROOT / "target/test-plugins/net.wasm",
               ROOT / "target/test-plugins/unknown_import.wasm", ROOT / "target/test-plugins/conformance.wasm",
               tmp / "garbage.wasm", tmp / "core.wasm"]
    (tmp / "garbage.wasm").write_bytes(b"definitely not wasm")
    (tmp / "core.wasm").write_bytes(b"\0asm\x01\0\0\0")
    config.write_text(f"plugins = {json.dumps([str(p) for p in plugins])}\n"
                      f"[limits]\ntimeout_ms = 2000\nmemory_mib = 128\nmax_output_mib = 4\n"
                      f"[plugin.net]\nnetwork = [\"http://127.0.0.1:{port}\", \"http://localhost:{port}\", "
                      f"\"http://169.254.169.254\"]\n")
    started = time.perf_counter()
    mcp = Mcp(["--config", str(config), "--root", str(tmp / "ro"), "--root-rw", str(tmp / "rw")])
    startup = (time.perf_counter() - started) * 1000
    url = f"http://127.0.0.1:{port}/"
    cases = [
        ("infinite loop", "chaos.loop_forever", {}),
        ("deep recursion", "chaos.recurse", {"depth": 10_000_000}),
        ("unbounded memory growth", "chaos.alloc_forever", {}),
        ("memory.grow to the maximum at once", "chaos.memory_grow", {"pages": 65536}),
        ("a 1 GiB string", "chaos.big_output", {"bytes": 1 << 30}),
        ("3 million content blocks", "chaos.many_blocks", {"bytes": 3_000_000}),
        ("100,000 log/progress events", "chaos.log_flood", {"bytes": 100_000}),
        ("stdout and stderr flood (50 MB)", "chaos.stdout_flood", {"bytes": 50_000_000}),
        ("panic", "chaos.panic", {"message": "boom"}),
        ("unreachable", "chaos.unreachable", {}),
        ("read ../secret.txt", "chaos.read_path", {"path": "/roots/ro/../secret.txt"}),
        ("symlink out of a writable grant", "chaos.symlink", {"from": str(tmp / "secret.txt"), "to": "/roots/rw/l"}),
        ("read through that link", "chaos.read_path", {"path": "/roots/rw/l"}),
        ("hard link read-only file into writable grant", "chaos.hard_link",
         {"from": "/roots/ro/inside.txt", "to": "/roots/rw/h"}),
        ("absolute host path", "chaos.read_path", {"path": str(tmp / "secret.txt")}),
        ("/proc/self/environ", "chaos.read_path", {"path": "/proc/self/environ"}),
        ("rename a granted directory", "chaos.rename", {"from": "/roots/rw", "to": "/roots/rw2"}),
        ("write to a read-only grant", "chaos.write_path", {"path": "/roots/ro/x", "content": "x"}),
        ("read the host environment", "chaos.environment", {}),
        ("raw TCP socket", "net.tcp_connect", {"address": f"127.0.0.1:{port}"}),
        ("DNS lookup", "net.resolve", {"name": "localhost"}),
        ("HTTP to a host not allowed", "net.fetch", {"url": "https://example.com/"}),
        ("HTTP to 127.0.0.1 (allow-listed)", "net.fetch", {"url": url}),
        ("HTTP to localhost (allow-listed, resolves to 127.0.0.1)", "net.fetch",
         {"url": f"http://localhost:{port}/"}),
        ("HTTP to 169.254.169.254 (allow-listed)", "net.fetch", {"url": "http://169.254.169.254/latest/meta-data/"}),
        ("unknown interface import", "unknown_import.ping", {}),
    ]
    rows = []
    for case, tool, arguments in cases:
        response, ms = mcp.tool(tool, arguments)
        rows.append((case, answer(response), ms))
    # A call that never returns, while another plugin is called.
    looping = mcp.start("tools/call", {"name": "chaos.loop_forever", "arguments": {}})
    time.sleep(0.2)
    response, ms = mcp.tool("conformance.test_simple_text", {})
    rows.append(("bystander call while chaos loops", answer(response), ms))
    mcp.wait(looping)
    # A thousand concurrent calls to a slow plugin, and a bystander among them.
    started = time.perf_counter()
    ids = [mcp.start("tools/call", {"name": "chaos.sleep", "arguments": {"ms": 1000}}) for _ in range(1000)]
    response, ms = mcp.tool("conformance.test_simple_text", {})
    rows.append(("bystander call amid 1,000 sleeping calls", answer(response), ms))
    answers = [answer(mcp.wait(i)) for i in ids]
    total = (time.perf_counter() - started) * 1000
    rows.append(("1,000 concurrent 1 s calls, all answered", f"{sum(a == 'ok: slept' for a in answers)} ok", total))
    # Startup with a garbage file, a core module and the unknown import in the folder.
    rows.append(("start-up with garbage.wasm, core.wasm, unknown_import.wasm (reported, others load)", "serving", startup))
    mcp.proc.stdin.close()
    mcp.proc.wait(timeout=30)
    print(f"| hostile case | the host answered | ms |\n|---|---|---|")
    for case, text, ms in rows:
        text = text.replace("|", "\\|").replace("\n", " ")
        if len(text) > 150:
            text = text[:147] + "..."
        print(f"| {case} | {text} | {ms:.0f} |")


if __name__ == "__main__":
    main()
