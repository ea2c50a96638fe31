#!/usr/bin/env python3
"""The same task done by a client calling each tool, and in code mode (scripts/bench.sh
code-mode): list a directory, read three files of it, count their words. Direct: the client
calls `filesystem.list_directory` and `filesystem.read_text_file` three times and counts
itself; code mode: one `code.run` whose script does the same and returns the count. Rows: round
trips, bytes the server sent the client (every JSON-RPC line of the calls' answers), and the
median wall time of the task over interleaved repetitions, with the ratio to direct.
Usage: bench-code-mode.py MCPBOX_BINARY"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCPBOX = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/mcpbox")
REPETITIONS = 15
WORDS = ["tide", "ebb", "flow", "salt", "shore", "wave", "moon", "sand"]

SCRIPT = """
const { content } = await tools.filesystem.list_directory({ path: ROOT });
const files = content.split('\\n').filter((l) => l.startsWith('[FILE] ')).map((l) => l.slice(7)).sort().slice(0, 3);
let words = 0;
for (const file of files) {
  const read = await tools.filesystem.read_text_file({ path: `${ROOT}/${file}` });
  words += read.content.split(/\\s+/).filter(Boolean).length;
}
return { files: files.length, words };
"""


class Client:
    def __init__(self, config):
        self.process = subprocess.Popen(
            [MCPBOX, "serve", "--config", config, "--no-watch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.next_id = 0
        self.received = 0

    def request(self, method, params):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            self.received += len(line.encode())
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply

    def call(self, name, arguments):
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        result = reply["result"]
        assert not result.get("isError"), (name, result)
        return result

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def direct(client, root):
    listed = client.call("filesystem.list_directory", {"path": root})["structuredContent"]["content"]
    files = sorted(line[7:] for line in listed.splitlines() if line.startswith("[FILE] "))[:3]
    words = 0
    for name in files:
        read = client.call("filesystem.read_text_file", {"path": f"{root}/{name}"})
        words += len(read["structuredContent"]["content"].split())
    return words, 1 + len(files)


def code_mode(client, root):
    ran = client.call("code.run", {"script": SCRIPT.replace("ROOT", json.dumps(root))})
    return ran["structuredContent"]["result"]["words"], 1


def main():
    with tempfile.TemporaryDirectory() as home:
        project = os.path.join(home, "project")
        os.mkdir(project)
        for index in range(3):
            # About 20 KB of text each: what a model would otherwise read to count it.
            text = " ".join(WORDS[(index + n) % len(WORDS)] for n in range(4000))
            with open(os.path.join(project, f"part{index}.txt"), "w") as file:
                file.write(text + "\n")
        config = os.path.join(home, "mcpbox.toml")
        plugins = os.path.join(ROOT, "target/plugins")
        with open(config, "w") as file:
            file.write(f"""plugins = ["{plugins}/code.wasm", "{plugins}/filesystem.wasm"]
[[roots]]
path = "{project}"
[plugin.filesystem]
host_paths = true
[plugin.code]
roots = false
may_call = ["filesystem.list_*", "filesystem.read_*"]
""")
        client = Client(config)
        client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "bench", "version": "1"}})
        client.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        root = os.path.realpath(project)
        runs = {"direct": [], "code mode": []}
        trips, sent, counted = {}, {}, set()
        for _ in range(REPETITIONS):
            for name, task in (("direct", direct), ("code mode", code_mode)):
                before = client.received
                started = time.monotonic()
                words, round_trips = task(client, root)
                runs[name].append(time.monotonic() - started)
                trips[name], sent[name] = round_trips, client.received - before
                counted.add(words)
        client.close()
        assert len(counted) == 1, counted
        base = statistics.median(runs["direct"])
        print(f"task: list a directory, read its 3 files (~20 KB each), count {counted.pop()} words")
        print(f"{'':<10} {'round trips':>11} {'bytes to client':>15} {'wall time (median of ' + str(REPETITIONS) + ')':>24} {'ratio':>6}")
        for name in ("direct", "code mode"):
            median = statistics.median(runs[name])
            print(f"{name:<10} {trips[name]:>11} {sent[name]:>15} {median * 1000:>21.1f} ms {median / base:>6.2f}")


if __name__ == "__main__":
    main()
