#!/usr/bin/env python3
"""Servers built by `mcpbox build` against the same servers run natively (scripts/bench.sh
built): the official sequential-thinking server from npm (TypeScript; a call that computes),
and excel-mcp-server from PyPI (Python; a call that reads a small workbook from a directory),
each unmodified, built into a plugin and served by mcpbox, next to itself on Node or CPython
with the official SDK. Start-up (spawn to the first tools/list
answer), RSS after start, one call's p50 at 1 in flight, calls/s at 1 and at 8 in flight (over
stdio, 8 requests kept outstanding). Medians of interleaved repetitions; a Markdown table.

usage: bench-built.py MCPBOX_BINARY"""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
REPEAT = int(os.environ.get("BENCH_REPS", 5))
SEQUENTIAL = 300
IN_FLIGHT = 8
PIPELINED = 800


def thinking_call(number):
    return {
        "name": "sequentialthinking",
        "arguments": {"thought": f"step {number}", "thoughtNumber": 1, "totalThoughts": 3, "nextThoughtNeeded": True},
    }


def excel_call(book):
    return lambda number: {"name": "read_data_from_excel",
                           "arguments": {"filepath": str(book), "sheet_name": "Sheet", "start_cell": "A1", "end_cell": "B3"}}


class Stdio:
    """A server over stdio, spoken to line by line (legacy handshake)."""

    def __init__(self, command, call):
        self.call = call
        started = time.perf_counter()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.request("tools/list", {})
        self.startup_ms = (time.perf_counter() - started) * 1000

    def send(self, message):
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def receive(self):
        while True:
            message = json.loads(self.process.stdout.readline())
            if "id" in message and "method" not in message:
                if "error" in message or message.get("result", {}).get("isError"):
                    raise SystemExit(f"a call failed: {message}")
                return message

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.receive()

    def rss_kib(self):
        for line in open(f"/proc/{self.process.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def sequential(self):
        """(p50 ms, calls/s) of SEQUENTIAL calls one after the other."""
        times = []
        started = time.perf_counter()
        for n in range(SEQUENTIAL):
            before = time.perf_counter()
            self.request("tools/call", self.call(n))
            times.append((time.perf_counter() - before) * 1000)
        return statistics.median(times), SEQUENTIAL / (time.perf_counter() - started)

    def pipelined(self):
        """calls/s with IN_FLIGHT requests outstanding."""
        started = time.perf_counter()
        sent = 0
        for _ in range(IN_FLIGHT):
            self.next_id += 1
            self.send({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": self.call(sent)})
            sent += 1
        for _ in range(PIPELINED):
            self.receive()
            if sent < PIPELINED:
                self.next_id += 1
                self.send({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": self.call(sent)})
                sent += 1
        return PIPELINED / (time.perf_counter() - started)

    def close(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def measure(label, boxed, native, call):
    rows = {side: {k: [] for k in ("startup", "rss", "p50", "one", "eight")} for side in ("mcpbox", "native")}
    for _ in range(REPEAT):
        for side, command in (("mcpbox", boxed), ("native", native)):
            server = Stdio(command, call)
            rows[side]["startup"].append(server.startup_ms)
            rows[side]["rss"].append(server.rss_kib())
            p50, one = server.sequential()
            rows[side]["p50"].append(p50)
            rows[side]["one"].append(one)
            rows[side]["eight"].append(server.pipelined())
            server.close()
    med = {side: {k: statistics.median(v) for k, v in values.items()} for side, values in rows.items()}
    print(f"{label}; medians of {REPEAT} interleaved runs, {SEQUENTIAL} sequential and {PIPELINED} pipelined calls each\n")
    print("| measure | built, in mcpbox | native | ratio |")
    print("|---|---:|---:|---:|")
    for key, name, unit in (
        ("startup", "start-up, spawn to tools/list answered", "ms"),
        ("rss", "RSS after start", "KiB"),
        ("p50", "p50 of a call, 1 in flight", "ms"),
        ("one", "calls/s, 1 in flight", "/s"),
        ("eight", f"calls/s, {IN_FLIGHT} in flight", "/s"),
    ):
        ours, theirs = med["mcpbox"][key], med["native"][key]
        fmt = (lambda v: f"{v:.2f} {unit}") if unit == "ms" else (lambda v: f"{v:.0f} {unit}")
        print(f"| {name} | {fmt(ours)} | {fmt(theirs)} | {ours / theirs:.2f} |")
    print()


def build(mcpbox, source, wasm, env, node):
    started = time.perf_counter()
    subprocess.run([mcpbox, "build", source, "--node", node, "-o", str(wasm)], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return f"{source}, built by mcpbox build in {time.perf_counter() - started:.1f} s ({wasm.stat().st_size / 1e6:.1f} MB)"


def main():
    mcpbox = os.path.abspath(sys.argv[1])
    node, servers = subprocess.run([ROOT / "scripts/setup-reference-servers.sh"], check=True, capture_output=True, text=True).stdout.split()
    work = pathlib.Path(tempfile.mkdtemp(prefix="mcpbox-bench-built-"))
    env = {**os.environ, "MCPBOX_CACHE_DIR": str(work / "cache"), "PATH": f"{os.path.dirname(node)}:{os.environ['PATH']}"}
    serve = lambda config: [mcpbox, "serve", "--no-watch", "--cache-dir", str(work / "cache"), "--config", str(config)]

    # TypeScript: sequential-thinking (the SDK, zod; no I/O).
    package = "@modelcontextprotocol/server-sequential-thinking"
    wasm = work / "sequential-thinking.wasm"
    label = build(mcpbox, f"npm:{package}@2026.8.31", wasm, env, node)
    config = work / "thinking.toml"
    config.write_text(f'plugins = ["{wasm}"]\n[plugin.sequential-thinking]\nprefix = ""\nroots = false\n')
    measure(label + ", against Node 22", serve(config), [node, f"{servers}/node_modules/{package}/dist/index.js"], thinking_call)

    # Python: excel-mcp-server reading a workbook (FastMCP, openpyxl), both on the same file.
    wasm = work / "excel.wasm"
    label = build(mcpbox, "pypi:excel-mcp-server==0.1.8", wasm, env, node)
    sheets = work / "sheets"
    sheets.mkdir()
    book = sheets / "book.xlsx"
    native = [f"{servers}/py-existing/bin/excel-mcp-server", "stdio"]
    maker = Stdio(native, None)
    maker.request("tools/call", {"name": "create_workbook", "arguments": {"filepath": str(book)}})
    maker.request("tools/call", {"name": "write_data_to_excel", "arguments": {
        "filepath": str(book), "sheet_name": "Sheet", "data": [["part", "qty"], ["bolt", 4], ["nut", 10]]}})
    maker.close()
    config = work / "excel.toml"
    config.write_text(f'plugins = ["{wasm}"]\n[plugin.excel]\nprefix = ""\nroots = false\nhost_paths = true\n'
                      f'[[plugin.excel.dirs]]\npath = "{sheets}"\n')
    measure(label + ", against CPython 3.11 with the MCP SDK 1.30", serve(config), native, excel_call(book))


if __name__ == "__main__":
    main()
