#!/usr/bin/env python3
"""The example plugin in each language, measured the way its guide builds it (scripts/bench.sh
examples): component size, build time (cold: a fresh project with its toolchain installed from
the package caches; warm: rebuilt after a change), mcpbox's compile time (start-up to the first
`tools/list` answer with an empty compile cache) against the cached start-up, and the median
latency of a call. Usage: bench-examples.py MCPBOX_BINARY"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCPBOX = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/mcpbox")
CALLS = 50
CACHED_STARTS = 5


def timed(command, cwd, env=None):
    started = time.monotonic()
    subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})}, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


class Client:
    def __init__(self, wasm, cache):
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [MCPBOX, "serve", wasm, "--no-watch", "--cache-dir", cache],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        while True:
            reply = json.loads(self.process.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def start_to_list(wasm, cache):
    """Seconds from spawn to the first tools/list answer (the server lists once all plugins
    are loaded, so this includes compiling or loading from the cache)."""
    client = Client(wasm, cache)
    client.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "bench", "version": "1"}})
    client.request("tools/list", {})
    elapsed = time.monotonic() - client.started
    return elapsed, client


def measure(lang, name, build_cold, build_warm, wasm_of, touch):
    work = tempfile.mkdtemp(prefix=f"mcpbox-bench-{lang}-")
    try:
        subprocess.run([MCPBOX, "new", name, "--lang", lang, "--dir", work], check=True, stdout=subprocess.DEVNULL)
        project = os.path.join(work, name)
        cold = sum(timed(command, project, env) for command, env in build_cold(project))
        touch(project)
        warm = sum(timed(command, project, env) for command, env in build_warm(project))
        wasm = wasm_of(project)
        size = os.path.getsize(wasm)
        cache = os.path.join(work, "cache")
        compile_cold, client = start_to_list(wasm, cache)
        client.close()
        cached = []
        for _ in range(CACHED_STARTS):
            elapsed, client = start_to_list(wasm, cache)
            cached.append(elapsed)
            client.close()
        _, client = start_to_list(wasm, cache)
        latencies = []
        for i in range(CALLS):
            started = time.monotonic()
            reply = client.request("tools/call", {"name": f"{name}.greet", "arguments": {"name": f"n{i}"}})
            latencies.append(time.monotonic() - started)
            assert not reply["result"]["isError"], reply
        client.close()
        return {"lang": lang, "size": size, "cold": cold, "warm": warm, "compile": compile_cold,
                "cached": statistics.median(cached), "call": statistics.median(latencies)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def rust_builds(project):
    env = {"CARGO_TARGET_DIR": os.path.join(project, "target")}
    return [([os.path.join(ROOT, "scripts/cargo-wasip2"), "build", "--release", "--quiet"], env)]


def touch_file(relative):
    def touch(project):
        path = os.path.join(project, relative)
        with open(path, "a", encoding="utf-8") as file:
            file.write("\n")
    return touch


def main():
    npm_install = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"]
    rows = [
        measure("rust", "hello_rs", rust_builds, rust_builds,
                lambda p: os.path.join(p, "target/wasm32-wasip2/release/hello_rs.wasm"), touch_file("src/lib.rs")),
        measure("python", "hello_py", lambda p: [(["./build.sh"], None)], lambda p: [(["./build.sh"], None)],
                lambda p: os.path.join(p, "hello_py.wasm"), touch_file("app.py")),
        measure("js", "hello_js", lambda p: [(npm_install, None), (["npm", "run", "build"], None)],
                lambda p: [(["npm", "run", "build"], None)], lambda p: os.path.join(p, "hello_js.wasm"),
                touch_file("app.js")),
    ]
    print(f"example plugins, release mcpbox ({os.cpu_count()} cores); cold build = fresh project incl. toolchain "
          "install from the package caches; start-up = spawn to first tools/list answered\n")
    print("| language | component | build cold | build warm | start-up, compiled (no cache) | "
          "start-up, cached (median of 5) | compiled / cached | call, median of 50 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['lang']} | {r['size'] / 1e6:.2f} MB | {r['cold']:.1f} s | {r['warm']:.1f} s | "
              f"{r['compile']:.2f} s | {r['cached'] * 1000:.0f} ms | {r['compile'] / r['cached']:.0f}x | "
              f"{r['call'] * 1000:.2f} ms |")


if __name__ == "__main__":
    main()
