"""The official MCP Python SDK's OAuth client against mcpbox and an OpenID provider, the whole
way a user's client goes (MCP basic/authorization): the first request is refused with 401, the
SDK reads the Protected Resource Metadata and the authorization server's metadata, registers
itself (RFC 7591), sends the user to log in and consent (authorization code with PKCE, the
resource named: RFC 8707), takes the code, and calls a tool with its token.

The person in the browser is scripted: `sign_in` fills in the provider's login and consent
pages (scripts/oidc-provider.mjs: oidc-provider's development pages) as USER would.

usage: oauth_flow.py MCP_URL USER TOOL ARGUMENTS_JSON
Prints the tool's text. Exits non-zero, with the reason, on any failure.
"""

import asyncio
import html
import json
import re
import sys
from urllib.parse import parse_qs, urljoin, urlparse

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://127.0.0.1:1/callback"


class Memory(TokenStorage):
    """Tokens and the registration, kept for this run."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client = client_info


def filled_form(response, user):
    """The page's form as a person signing in as `user` submits it (oidc-provider's development
    pages: the login, then the consent): its action URL and fields; None without a form."""
    page = response.text
    form = re.search(r'<form[^>]*action="([^"]+)"', page)
    if not form:
        return None
    fields = {}
    for tag in re.findall(r"<input[^>]*>", page):
        name, value = re.search(r'name="([^"]*)"', tag), re.search(r'value="([^"]*)"', tag)
        if name:
            fields[name.group(1)] = html.unescape(value.group(1)) if value else ""
    # A submit button that names the choice (the consent page's) counts too.
    for name, value in re.findall(r'<button[^>]*name="([^"]*)"[^>]*value="([^"]*)"', page):
        fields[name] = html.unescape(value)
    if "login" in fields:
        fields.update(login=user, password="any")
    return urljoin(str(response.url), html.unescape(form.group(1))), fields


async def sign_in(authorization_url: str, user: str) -> AuthorizationCodeResult:
    """What a person does in the browser the SDK opens: follows the redirects, submits each page's
    form (the login as `user`, then the consent), until the provider redirects to the client."""
    async with httpx2.AsyncClient(follow_redirects=False) as browser:
        response = await browser.get(authorization_url)
        for _ in range(20):
            if response.is_redirect:
                location = urljoin(str(response.url), response.headers["location"])
                if location.startswith(REDIRECT_URI):
                    query = parse_qs(urlparse(location).query)
                    if "code" not in query:
                        raise SystemExit(f"oauth flow: the provider refused: {query}")
                    return AuthorizationCodeResult(
                        code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
                    )
                response = await browser.get(location)
                continue
            submitted = filled_form(response, user)
            if response.status_code != 200 or not submitted:
                raise SystemExit(f"oauth flow: no form at {response.url} ({response.status_code}): {response.text[:500]}")
            response = await browser.post(submitted[0], data=submitted[1])
        raise SystemExit("oauth flow: too many pages")


async def main(url, user, tool, arguments):
    signed_in = asyncio.get_running_loop().create_future()

    async def open_browser(authorization_url):
        signed_in.set_result(await sign_in(authorization_url, user))

    async def wait_for_callback():
        return await signed_in

    oauth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="mcpbox oauth test",
            redirect_uris=[REDIRECT_URI],
        ),
        storage=Memory(),
        redirect_handler=open_browser,
        callback_handler=wait_for_callback,
    )
    async with httpx2.AsyncClient(auth=oauth) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(tool, json.loads(arguments))
                if result.is_error:
                    raise SystemExit(f"oauth flow: {tool} failed: {result}")
                print(result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
