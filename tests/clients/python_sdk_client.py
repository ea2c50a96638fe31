"""Drives mcpbox over stdio with the official MCP Python SDK, in one protocol era.

usage: python_sdk_client.py MCPBOX_BINARY PLUGIN_DIR ROOT_DIR legacy|modern
Lists and calls tools, reads resources and gets prompts of the bundled plugins; exits non-zero
(with the reason) if anything differs from what the plugins must return.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def check(condition, message):
    if not condition:
        raise SystemExit(f"python sdk client: {message}")


async def main(binary, plugins, root, era):
    params = StdioServerParameters(
        command=binary,
        args=["serve", plugins, "--root", root],
        env={**os.environ, "MCPBOX_LOG": "warn"},
    )
    root_name = os.path.basename(root.rstrip("/"))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            if era == "legacy":
                result = await session.initialize()
                check(result.server_info.name == "mcpbox", f"server info {result.server_info}")
            else:
                result = await session.discover()
                check("2026-07-28" in result.supported_versions, f"supported {result.supported_versions}")
            tools = (await session.list_tools()).tools
            names = {tool.name for tool in tools}
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
    print(f"python sdk client ({era}): ok")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
