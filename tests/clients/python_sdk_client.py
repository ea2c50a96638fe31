"""Drives mcpbox with the official MCP Python SDK, over stdio or Streamable HTTP, in one era.

usage:
  python_sdk_client.py stdio MCPBOX_BINARY PLUGIN_DIR ROOT_DIR legacy|modern
  python_sdk_client.py http URL ROOT_NAME legacy|modern
  python_sdk_client.py http-roots URL CLIENT_ROOT_DIR OTHER_ROOT_NAME
  python_sdk_client.py rounds URL
  python_sdk_client.py sse URL ROOT_NAME
  python_sdk_client.py approvals MCPBOX_BINARY CONFIG URL
The first two list and call tools, read resources and get prompts of the bundled plugins. The
third declares CLIENT_ROOT_DIR as the session's only root and checks that the session sees it
(file notes.txt) and not OTHER_ROOT_NAME. The fourth connects in discover mode and calls
`rounds.publish`, which asks the user (elicitation) in one round and the model (sampling) in
the next; the SDK answers both through its callbacks and retries with the sealed requestState. The
fifth speaks the 2024-11-05 HTTP+SSE transport (`sse_client`, URL the stream's): what the first
two do, plus progress notifications and a sampling request from a plugin, answered.
The sixth answers mcpbox's approval questions (`rounds.publish` needs one, docs/approvals.md):
in legacy sessions over stdio (the SDK launches mcpbox with CONFIG, whose `[approvals]
timeout_ms` is 500) and Streamable HTTP (URL): decline, cancel, an answer too late, allow once,
allow for the session; a session without elicitation; then as a 2026-07-28 client (discover
mode) on both transports, where the approval is a round of its own.
Exits non-zero, with the reason, on any difference.
"""

import asyncio
import os
import sys

from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def check(condition, message):
    if not condition:
        raise SystemExit(f"python sdk client: {message}")


async def exercise(session, era, root_name):
    if era == "legacy":
        result = await session.initialize()
        check(result.server_info.name == "mcpbox", f"server info {result.server_info}")
    else:
        result = await session.discover()
        check("2026-07-28" in result.supported_versions, f"supported {result.supported_versions}")
    names = {tool.name for tool in (await session.list_tools()).tools}
    for expected in ("fs.read_file", "textstats.stats", "conformance.test_simple_text"):
        check(expected in names, f"{expected} not in {sorted(names)}")
    call = await session.call_tool("fs.read_file", {"path": f"/roots/{root_name}/notes.txt"})
    check(not call.is_error and call.content[0].text == "one two two\n", f"read_file gave {call}")
    stats = await session.call_tool("textstats.stats", {"path": f"/roots/{root_name}/notes.txt"})
    check(stats.structured_content["words"] == 3, f"stats gave {stats}")
    resource = await session.read_resource("test://static-text")
    check(resource.contents[0].text == "This is the content of the static text resource.", f"{resource}")
    prompt = await session.get_prompt("conformance.test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
    check(prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'", f"{prompt}")


async def approvals(binary, config, url):
    decisions = []
    asked = []

    async def elicitation(context, params):
        if "Approve this call" not in params.message:
            # The plugin's own question, once approved.
            return types.ElicitResult(action="accept", content={"topic": "tides"})
        asked.append(params.message)
        decision = decisions.pop(0)
        if decision == "late":
            await asyncio.sleep(1.5)
            decision = "once"
        if decision in ("decline", "cancel"):
            return types.ElicitResult(action=decision)
        return types.ElicitResult(action="accept", content={"decision": decision})

    async def sampling(context, params):
        return types.CreateMessageResult(role="assistant", model="test-model",
                                         content=types.TextContent(type="text", text="ebb"))

    async def publish(client, decision, expected, arguments=None):
        before = len(asked)
        if decision:
            decisions.append(decision)
        result = await client.call_tool("rounds.publish", arguments or {})
        text = result.content[0].text
        if expected:
            check(result.is_error and expected in text, f"{decision}: {result}")
        else:
            check(not result.is_error and text == "published tides; summary: ebb", f"{decision}: {result}")
        check(len(asked) == before + (1 if decision else 0), f"{decision}: asked {len(asked) - before} times")

    stdio = StdioServerParameters(command=binary, args=["serve", "--config", config],
                                  env={**os.environ, "MCPBOX_LOG": "warn"})
    for transport, late in ((stdio, True), (url, False)):
        async with Client(transport, mode="legacy", elicitation_callback=elicitation,
                          sampling_callback=sampling) as client:
            await publish(client, "decline", "the user declined")
            await publish(client, "cancel", "the user cancelled the question")
            if late:
                await publish(client, "late", "the user did not answer within 0.5 s")
            await publish(client, "once", None)
            await publish(client, "session", None)
            # Allowed for the session: not asked again.
            await publish(client, None, None)
        async with Client(transport, mode="legacy", sampling_callback=sampling) as client:
            await publish(client, None, "declares no form elicitation")
        # 2026-07-28: the approval is a round; the SDK answers it and repeats the call.
        async with Client(transport, mode="auto", elicitation_callback=elicitation,
                          sampling_callback=sampling) as client:
            check(client.session.discover_result is not None, "connected without server/discover")
            # `remember`: published once across the call's rounds, not once per round.
            await publish(client, "once", None, {"remember": True})
            await publish(client, "deny", "the user denied it")


async def main(mode, *args):
    if mode == "stdio":
        binary, plugins, root, era = args
        params = StdioServerParameters(command=binary, args=["serve", plugins, "--root", root],
                                       env={**os.environ, "MCPBOX_LOG": "warn"})
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await exercise(session, era, os.path.basename(root.rstrip("/")))
        print(f"python sdk client (stdio, {era}): ok")
    elif mode == "http":
        url, root_name, era = args
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await exercise(session, era, root_name)
        print(f"python sdk client (http, {era}): ok")
    elif mode == "http-roots":
        url, client_root, other = args
        name = os.path.basename(client_root.rstrip("/"))

        async def roots(context):
            return types.ListRootsResult(roots=[types.Root(uri=f"file://{client_root}", name=name)])

        async with streamable_http_client(url) as (read, write), \
                ClientSession(read, write, list_roots_callback=roots) as session:
            await session.initialize()
            mine = await session.call_tool("fs.read_file", {"path": f"/roots/{name}/notes.txt"})
            check(not mine.is_error, f"own root not readable: {mine}")
            theirs = await session.call_tool("fs.list_dir", {"path": f"/roots/{other}"})
            check(theirs.is_error, f"the other session's root is visible: {theirs}")
            # Stay a while, so that both sessions are open at once.
            await asyncio.sleep(0.5)
            again = await session.call_tool("fs.read_file", {"path": f"/roots/{name}/notes.txt"})
            check(not again.is_error, f"own root lost: {again}")
        print(f"python sdk client (http roots {name}): ok")
    elif mode == "rounds":
        (url,) = args
        asked = []

        async def sampling(context, params):
            asked.append("sampling")
            return types.CreateMessageResult(role="assistant", model="test-model",
                                             content=types.TextContent(type="text", text="the sea comes and goes"))

        async def elicitation(context, params):
            asked.append("elicitation")
            return types.ElicitResult(action="accept", content={"topic": "tides"})

        async with Client(url, mode="auto", sampling_callback=sampling, elicitation_callback=elicitation) as client:
            check(client.session.discover_result is not None, "connected without server/discover")
            result = await client.call_tool("rounds.publish", {"remember": True})
            text = result.content[0].text
            check(text == "published tides; summary: the sea comes and goes", f"publish gave {result}")
            check(asked == ["elicitation", "sampling"], f"asked {asked}")
        print("python sdk client (rounds): ok")
    elif mode == "sse":
        url, root_name = args

        async def sampling(context, params):
            return types.CreateMessageResult(role="assistant", model="test-model",
                                             content=types.TextContent(type="text", text="Paris"))

        async with sse_client(url) as (read, write), \
                ClientSession(read, write, sampling_callback=sampling) as session:
            await exercise(session, "legacy", root_name)
            progress = []

            async def on_progress(value, total, message):
                progress.append(value)

            call = await session.call_tool("conformance.test_tool_with_progress", {}, progress_callback=on_progress)
            check(not call.is_error, f"progress tool gave {call}")
            check(progress == [0, 50, 100], f"progress {progress}")
            sampled = await session.call_tool("conformance.test_sampling", {"prompt": "Capital of France?"})
            check(sampled.content[0].text == "LLM response: Paris", f"sampling gave {sampled}")
        print("python sdk client (sse): ok")
    elif mode == "approvals":
        await approvals(*args)
        print("python sdk client (approvals): ok")
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
