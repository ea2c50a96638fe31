#!/usr/bin/env python3
"""The bundled plugins against the reference servers they replace (scripts/bench.sh reference):
each plugin's size and compile time; start-up (spawn to the first tools/list answer) and RSS of
each reference server next to mcpbox serving all the plugins from its cache; call latency of one
typical call of each, on both. Medians of interleaved repetitions; prints a Markdown table.

usage: bench-reference.py MCPBOX_BINARY"""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
REPEAT = 5
CALLS = 200


def reference_servers():
    out = subprocess.run([ROOT / "scripts/setup-reference-servers.sh"], check=True, capture_output=True, text=True)
    node, directory = out.stdout.split()
    return node, pathlib.Path(directory)


class Stdio:
    """A server over stdio, spoken to line by line (legacy handshake)."""

    def __init__(self, command, env=None):
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})}
        )
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.request("tools/list", {})
        self.startup_ms = (time.perf_counter() - self.started) * 1000

    def send(self, message):
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == self.next_id:
                if "error" in message or message.get("result", {}).get("isError"):
                    raise SystemExit(f"{method} failed: {message}")
                return message

    def rss_mib(self):
        status = pathlib.Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]) / 1024

    def call_ms(self, tool, arguments):
        start = time.perf_counter()
        for _ in range(CALLS):
            self.request("tools/call", {"name": tool, "arguments": arguments})
        return (time.perf_counter() - start) * 1000 / CALLS

    def stop(self):
        self.process.kill()
        self.process.wait()


def main(mcpbox):
    node, servers = reference_servers()
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-reference-"))
    tree = work / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text("hello\n" * 100)
    (work / "memory").mkdir()
    plugins = ROOT / "target/plugins"
    config = work / "mcpbox.toml"
    # A page for fetch, on loopback (both sides are allowed private addresses for this).
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/robots.txt":
                self.send_error(404)
                return
            body = ("<html><body><h1>Bench</h1>" + "<p>Some text of a page.</p>" * 50 + "</body></html>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    page_url = f"http://127.0.0.1:{web.server_address[1]}/page.html"
    config.write_text(
        f'plugins = [{", ".join(json.dumps(str(plugins / f"{name}.wasm")) for name in ("filesystem", "memory", "time", "sequential-thinking", "fetch"))}]\n'
        "[cache]\n" f'dir = {json.dumps(str(work / "cache"))}\n'
        "[plugin.filesystem]\nhost_paths = true\n"
        f'[plugin.memory]\nroots = false\n[[plugin.memory.dirs]]\npath = {json.dumps(str(work / "memory"))}\nwritable = true\n'
        f'[plugin.sequential-thinking]\nroots = false\n[[plugin.sequential-thinking.dirs]]\npath = {json.dumps(str(work / "thinking"))}\nwritable = true\ncreate = true\n'
        '[plugin.fetch]\nnetwork = ["*"]\nallow_private_network = true\nroots = false\n'
    )
    npm = lambda package, *args: [node, str(servers / "node_modules/@modelcontextprotocol" / package / "dist/index.js"), *args]
    thought = {"thought": "x", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False}
    cases = [
        ("filesystem", npm("server-filesystem", str(tree)), {}, "read_text_file", {"path": str(tree / "a.txt")}),
        ("memory", npm("server-memory"), {"MEMORY_FILE_PATH": str(work / "reference-memory.jsonl")}, "search_nodes", {"query": "x"}),
        ("time", [str(servers / "venv/bin/mcp-server-time")], {}, "convert_time",
         {"source_timezone": "Europe/Paris", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
        ("sequential-thinking", npm("server-sequential-thinking"), {"DISABLE_THOUGHT_LOGGING": "true"}, "sequentialthinking", thought),
        # Without Node.js on its PATH, as the compatibility test runs it.
        ("fetch", [str(servers / "venv/bin/mcp-server-fetch"), "--allow-private-ips"], {"PATH": str(servers / "venv/bin")},
         "fetch", {"url": page_url}),
    ]

    # Compile time of each plugin: `mcpbox compile` into an empty cache, one plugin at a time.
    compile_ms = {name: [] for name, *_ in cases}
    for _ in range(3):
        for name, *_ in cases:
            cache = tempfile.mkdtemp(dir=work)
            start = time.perf_counter()
            subprocess.run([mcpbox, "compile", "--cache-dir", cache, plugins / f"{name}.wasm"], check=True, capture_output=True)
            compile_ms[name].append((time.perf_counter() - start) * 1000)
    subprocess.run([mcpbox, "compile", "--config", config], check=True, capture_output=True)

    startup, rss, latency = {}, {}, {}
    ours = ["mcpbox", [mcpbox, "serve", "--no-watch", "--config", str(config), "--root", str(tree)], {}]
    for _ in range(REPEAT):  # interleaved: each repetition starts every server once
        for name, command, env, *_ in cases + [tuple(ours)]:
            server = Stdio(command, env)
            startup.setdefault(name, []).append(server.startup_ms)
            rss.setdefault(name, []).append(server.rss_mib())
            server.stop()
    for name, command, env, tool, arguments in cases:
        for side, (cmd, side_env, side_tool) in {
            "reference": (command, env, tool),
            "mcpbox": (ours[1], {}, f"{name}.{tool}"),
        }.items():
            server = Stdio(cmd, side_env)
            server.call_ms(side_tool, arguments)  # warm-up
            latency[(name, side)] = statistics.median(server.call_ms(side_tool, arguments) for _ in range(3))
            server.stop()

    median = statistics.median
    print("| plugin | size | compile | call, mcpbox | call, reference | reference start-up | reference RSS |")
    print("|---|---|---|---|---|---|---|")
    for name, *_ in cases:
        size = (plugins / f"{name}.wasm").stat().st_size / 1e6
        print(
            f"| {name} | {size:.2f} MB | {median(compile_ms[name]):.0f} ms | {latency[(name, 'mcpbox')]:.2f} ms "
            f"| {latency[(name, 'reference')]:.2f} ms ({latency[(name, 'reference')] / latency[(name, 'mcpbox')]:.1f}x) "
            f"| {median(startup[name]):.0f} ms | {median(rss[name]):.1f} MiB |"
        )
    total_startup = sum(median(startup[name]) for name, *_ in cases)
    total_rss = sum(median(rss[name]) for name, *_ in cases)
    print(
        f"| **mcpbox, all five from the cache** | | | | | {median(startup['mcpbox']):.0f} ms "
        f"(the five references: {total_startup:.0f} ms in sequence, {total_startup / median(startup['mcpbox']):.1f}x) "
        f"| {median(rss['mcpbox']):.1f} MiB (the five: {total_rss:.1f} MiB, {total_rss / median(rss['mcpbox']):.1f}x) |"
    )


if __name__ == "__main__":
    main(sys.argv[1])
