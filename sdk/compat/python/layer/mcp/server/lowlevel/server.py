"""The SDK's low-level `Server` over mcpbox: handlers registered by decorator, as the SDK
does; `run()` hands the server to the bridge, which calls the handlers per WIT call."""

import json

from mcpbox_compat.served import Served, constructed
from mcpbox_compat.server import Context, ReadResourceContents
from mcp import types
from mcp.server.models import InitializationOptions


class NotificationOptions:
    def __init__(self, prompts_changed=False, resources_changed=False, tools_changed=False):
        self.prompts_changed, self.resources_changed, self.tools_changed = prompts_changed, resources_changed, tools_changed


class _RequestContext(Context):
    def __init__(self):
        super().__init__()
        self.meta = None
        self.lifespan_context = {}


class Server:
    def __init__(self, name, version=None, instructions=None, lifespan=None, **_):
        self.name, self.version, self.instructions = name, version, instructions
        self.handlers = {}
        self.request_context = _RequestContext()
        constructed(self)

    def _register(self, key):
        def decorator(fn):
            self.handlers[key] = fn
            return fn
        return decorator

    def list_tools(self):
        return self._register("tools/list")

    def call_tool(self, *, validate_input=True):
        return self._register("tools/call")

    def list_resources(self):
        return self._register("resources/list")

    def list_resource_templates(self):
        return self._register("resources/templates/list")

    def read_resource(self):
        return self._register("resources/read")

    def list_prompts(self):
        return self._register("prompts/list")

    def get_prompt(self):
        return self._register("prompts/get")

    def completion(self):
        return self._register("completion/complete")

    def set_logging_level(self):
        return self._register("logging/setLevel")

    def subscribe_resource(self):
        return self._register("resources/subscribe")

    def unsubscribe_resource(self):
        return self._register("resources/unsubscribe")

    def progress_notification(self):
        return self._register("notifications/progress")

    def get_capabilities(self, notification_options=None, experimental_capabilities=None):
        return types.ServerCapabilities()

    def create_initialization_options(self, notification_options=None, experimental_capabilities=None):
        return InitializationOptions(server_name=self.name, server_version=self.version,
                                     capabilities=self.get_capabilities(), instructions=self.instructions)

    async def run(self, read_stream=None, write_stream=None, initialization_options=None, *args, **kwargs):
        raise Served(self)

    # --- what the bridge asks -----------------------------------------------------------
    async def _list(self, key):
        handler = self.handlers.get(key)
        result = await handler() if handler else []
        for attribute in ("tools", "resources", "resourceTemplates", "prompts"):
            if hasattr(result, attribute) and not isinstance(result, list):
                return list(getattr(result, attribute))
        return list(result)

    async def list_tools_now(self):
        return await self._list("tools/list")

    async def call_tool_now(self, name, arguments):
        """(content, structured, is_error) or a CallToolResult, as the SDK's handler builds it."""
        handler = self.handlers.get("tools/call")
        if handler is None:
            return [types.TextContent(type="text", text=f"Unknown tool: {name}")], None, True
        try:
            results = await handler(name, arguments)
        except Exception as error:
            return [types.TextContent(type="text", text=str(error))], None, True
        if isinstance(results, types.CallToolResult):
            return results
        if isinstance(results, tuple) and len(results) == 2:
            return list(results[0]), results[1], False
        if isinstance(results, dict):
            return [types.TextContent(type="text", text=json.dumps(results, indent=2))], results, False
        return list(results), None, False

    async def read_resource_now(self, uri):
        handler = self.handlers.get("resources/read")
        if handler is None:
            raise ValueError(f"Unknown resource: {uri}")
        result = await handler(uri)
        if isinstance(result, (str, bytes)):
            return [(result, "text/plain" if isinstance(result, str) else "application/octet-stream")]
        if hasattr(result, "contents"):
            result = result.contents
        out = []
        for item in result:
            if isinstance(item, ReadResourceContents):
                out.append((item.content, item.mime_type))
            elif hasattr(item, "text"):
                out.append((item.text, getattr(item, "mimeType", None)))
            elif hasattr(item, "blob"):
                import base64
                out.append((base64.b64decode(item.blob), getattr(item, "mimeType", None)))
            else:
                out.append((getattr(item, "content", item), getattr(item, "mime_type", None)))
        return out

    async def get_prompt_now(self, name, arguments):
        handler = self.handlers.get("prompts/get")
        if handler is None:
            raise ValueError(f"Unknown prompt: {name}")
        return await handler(name, arguments)
