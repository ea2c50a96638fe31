"""A second client that holds only a task's id: polls `tasks/get` over Streamable HTTP with
raw JSON-RPC (the official Python SDK 2.3.0 has no tasks client) until the task ends, then
prints the final `tasks/get` result as one JSON line.

    python3 poll_task.py URL TASK_ID [SECONDS]
"""

import json
import sys
import time
import urllib.request

TASKS = "io.modelcontextprotocol/tasks"


def request(url, message_id, method, params):
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "poll-task", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}).encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
        # extensions/tasks §Streamable HTTP: Routing Headers.
        "Mcp-Name": params["taskId"],
    }
    with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=30) as response:
        text = response.read().decode()
        if response.headers.get_content_type() == "text/event-stream":
            data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
            text = next(d for d in data if d and json.loads(d).get("id") == message_id)
    answer = json.loads(text)
    if "error" in answer:
        raise SystemExit(f"{method} failed: {answer['error']}")
    return answer["result"]


def main():
    url, task_id = sys.argv[1], sys.argv[2]
    deadline = time.monotonic() + float(sys.argv[3] if len(sys.argv) > 3 else 60)
    seen = []
    for number in range(1, 100_000):
        task = request(url, number, "tasks/get", {"taskId": task_id})
        if not seen or seen[-1] != task["status"]:
            seen.append(task["status"])
        if task["status"] in ("completed", "failed", "cancelled"):
            task["_statusesSeen"] = seen
            print(json.dumps(task))
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"task {task_id} still {task['status']} at the deadline")
        time.sleep(task.get("pollIntervalMs", 500) / 1000)


main()
