#!/usr/bin/env python3
"""A server built by `mcpbox build` against the same server run natively (scripts/bench.sh
built): the official sequential-thinking server from npm (TypeScript), unmodified, built into a
plugin and served by mcpbox, next to itself on Node. Start-up (spawn to the first tools/list
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
PACKAGE = "@modelcontextprotocol/server-sequential-thinking"
VERSION = "2026.8.31"
REPEAT = int(os.environ.get("BENCH_REPS", 5))
SEQUENTIAL = 300
IN_FLIGHT = 8
PIPELINED = 800


def call(number):
    return {
        "name": "sequentialthinking",
        "arguments": {"thought": f"step {number}", "thoughtNumber": 1, "totalThoughts": 3, "nextThoughtNeeded": True},
    }


class Stdio:
    """A server over stdio, spoken to line by line (legacy handshake)."""

    def __init__(self, command):
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
            self.request("tools/call", call(n))
            times.append((time.perf_counter() - before) * 1000)
        return statistics.median(times), SEQUENTIAL / (time.perf_counter() - started)

    def pipelined(self):
        """calls/s with IN_FLIGHT requests outstanding."""
        started = time.perf_counter()
        sent = 0
        for _ in range(IN_FLIGHT):
            self.next_id += 1
            self.send({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": call(sent)})
            sent += 1
        for _ in range(PIPELINED):
            self.receive()
            if sent < PIPELINED:
                self.next_id += 1
                self.send({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": call(sent)})
                sent += 1
        return PIPELINED / (time.perf_counter() - started)

    def close(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def main():
    mcpbox = os.path.abspath(sys.argv[1])
    node, servers = subprocess.run([ROOT / "scripts/setup-reference-servers.sh"], check=True, capture_output=True, text=True).stdout.split()
    native = [node, f"{servers}/node_modules/{PACKAGE}/dist/index.js"]
    work = pathlib.Path(tempfile.mkdtemp(prefix="mcpbox-bench-built-"))
    wasm = work / "sequential-thinking.wasm"
    env = {**os.environ, "MCPBOX_CACHE_DIR": str(work / "cache"), "PATH": f"{os.path.dirname(node)}:{os.environ['PATH']}"}
    started = time.perf_counter()
    subprocess.run([mcpbox, "build", f"npm:{PACKAGE}@{VERSION}", "--node", node, "-o", str(wasm)], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    build_s = time.perf_counter() - started
    config = work / "mcpbox.toml"
    config.write_text(f'plugins = ["{wasm}"]\n[plugin.sequential-thinking]\nprefix = ""\nroots = false\n')
    boxed = [mcpbox, "serve", "--no-watch", "--cache-dir", str(work / "cache"), "--config", str(config)]

    rows = {side: {k: [] for k in ("startup", "rss", "p50", "one", "eight")} for side in ("mcpbox", "native")}
    for _ in range(REPEAT):
        for side, command in (("mcpbox", boxed), ("native", native)):
            server = Stdio(command)
            rows[side]["startup"].append(server.startup_ms)
            rows[side]["rss"].append(server.rss_kib())
            p50, one = server.sequential()
            rows[side]["p50"].append(p50)
            rows[side]["one"].append(one)
            rows[side]["eight"].append(server.pipelined())
            server.close()

    med = {side: {k: statistics.median(v) for k, v in values.items()} for side, values in rows.items()}
    print(f"{PACKAGE}@{VERSION}, built by mcpbox build in {build_s:.1f} s ({wasm.stat().st_size / 1e6:.1f} MB); "
          f"medians of {REPEAT} interleaved runs, {SEQUENTIAL} sequential and {PIPELINED} pipelined calls each\n")
    print("| measure | built, in mcpbox | native (Node) | ratio |")
    print("|---|---:|---:|---:|")
    for key, label, unit in (
        ("startup", "start-up, spawn to tools/list answered", "ms"),
        ("rss", "RSS after start", "KiB"),
        ("p50", "p50 of a call, 1 in flight", "ms"),
        ("one", "calls/s, 1 in flight", "/s"),
        ("eight", f"calls/s, {IN_FLIGHT} in flight", "/s"),
    ):
        ours, theirs = med["mcpbox"][key], med["native"][key]
        fmt = (lambda v: f"{v:.2f} {unit}") if unit == "ms" else (lambda v: f"{v:.0f} {unit}")
        print(f"| {label} | {fmt(ours)} | {fmt(theirs)} | {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
