"""The token vault from a user's side: the official MCP Python SDK calls a tool over Streamable
HTTP with the user's own mcpbox token, and a scripted person opens the link mcpbox answers with.

usage:
  link_flow.py call MCP_URL TOKEN TOOL ARGUMENTS_JSON [plain]
      prints one JSON line: {"link": URL, "how": "-32042" | "elicitation" | "isError"} when mcpbox asks for a
      link first, else {"text": ..., "isError": ...}
  link_flow.py browse LINK USER
      opens LINK in a fresh browser signed in as USER at the provider (oidc-provider's
      development pages: login, then consent), following every redirect; prints one JSON line:
      {"status": ..., "text": ..., "callback": the last mcpbox callback URL it followed}
"""

import asyncio
import json
import os
import re
import sys
from urllib.parse import urljoin

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from oauth_flow import filled_form


async def call(url, token, tool, arguments, client="elicits"):
    async def elicit(context, params):
        # A client that shows URL elicitations (2026-07-28: mcpbox's question in an
        # InputRequiredResult): it would open the URL; here the test does, after this client
        # is gone, and calls again.
        print(json.dumps({"link": params.url, "how": "elicitation"}), flush=True)
        os._exit(0)

    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=60)
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            # A `plain` client has no elicitation callback, so declares no elicitation at all.
            callback = {"elicitation_callback": elicit} if client == "elicits" else {}
            async with ClientSession(read, write, **callback) as session:
                await session.initialize()
                try:
                    result = await session.call_tool(tool, json.loads(arguments))
                except MCPError as error:
                    if error.error.code == -32042:
                        link = error.error.data["elicitations"][0]["url"]
                        print(json.dumps({"link": link, "how": "-32042"}))
                        return
                    raise
                text = result.content[0].text
                found = re.search(r"Link: (\S+)", text)
                if result.is_error and found:
                    print(json.dumps({"link": found.group(1), "how": "isError"}))
                    return
                print(json.dumps({"text": text, "isError": result.is_error}))


async def browse(link, user):
    callback = None
    async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as browser:
        response = await browser.get(link)
        for _ in range(30):
            if response.is_redirect:
                location = urljoin(str(response.url), response.headers["location"])
                if "/link/callback" in location or "/link/signed-in" in location:
                    callback = location
                response = await browser.get(location)
                continue
            submitted = filled_form(response, user)
            if not submitted:
                print(json.dumps({"status": response.status_code, "text": response.text.strip(), "callback": callback}))
                return
            response = await browser.post(submitted[0], data=submitted[1])
        raise SystemExit("link flow: too many pages")


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    asyncio.run({"call": call, "browse": browse}[command](*rest))
