"""FastMCP (`mcp.server.fastmcp`, `mcp.server.mcpserver`, the standalone `fastmcp`) over
mcpbox: the decorators register tools, resources and prompts as the SDK does (schemas from
type hints as its pydantic models write them, the same results and error texts), `run()` hands
the server to the bridge instead of serving a transport, and `Context` speaks to the host."""

import base64
import inspect
import json
import re

from mcpbox_compat import schema
from mcpbox_compat.served import Served, constructed
from mcp import types


class ToolError(Exception):
    """An error a tool reports to the model."""


class ResourceError(Exception):
    pass


class InvalidSignature(Exception):
    pass


class Image:
    """Image content from a file or bytes (`mcp.server.fastmcp.Image`)."""
    __mcpbox_content__ = True

    def __init__(self, path=None, data=None, format=None):  # noqa: A002 - the SDK's name
        self.path, self.data, self._format = path, data, format

    def _mime(self):
        if self._format:
            return f"image/{self._format.lower()}"
        suffix = (self.path or "").rsplit(".", 1)[-1].lower()
        return {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
                "webp": "image/webp"}.get(suffix, "application/octet-stream")

    def to_image_content(self):
        data = self.data if self.data is not None else open(self.path, "rb").read()
        return types.ImageContent(type="image", data=base64.b64encode(data).decode(), mimeType=self._mime())


class Audio(Image):
    def to_audio_content(self):
        data = self.data if self.data is not None else open(self.path, "rb").read()
        mime = f"audio/{self._format}" if self._format else "audio/wav"
        return types.AudioContent(type="audio", data=base64.b64encode(data).decode(), mimeType=mime)


def _is_context(annotation) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Context)


def _context_parameter(function):
    try:
        hints = __import__("typing").get_type_hints(function)
    except Exception:
        hints = {}
    for name, parameter in inspect.signature(function).parameters.items():
        annotation = hints.get(name, parameter.annotation)
        origin = getattr(annotation, "__origin__", None)
        if _is_context(annotation) or _is_context(origin):
            return name
    return None


class Tool:
    def __init__(self, function, name, title, description, annotations, structured_output, meta=None):
        self.fn = function
        self.name = name or function.__name__
        if self.name == "<lambda>":
            raise ValueError("You must provide a name for lambda functions")
        self.title, self.annotations, self.meta = title, annotations, meta
        self.description = description or function.__doc__ or ""
        self.context_kwarg = _context_parameter(function)
        self.params = schema.parameters(function, skip=(self.context_kwarg,) if self.context_kwarg else ())
        self.model = f"{function.__name__}Arguments"
        self.parameters = schema.arguments_schema(self.model, self.params)
        self.output_schema, self.wrap = (None, False)
        if structured_output is not False:
            try:
                hints = __import__("typing").get_type_hints(function, include_extras=True)
            except Exception:
                hints = {}
            self.output_schema, self.wrap = schema.output_schema(
                function.__name__, hints.get("return", inspect.signature(function).return_annotation))

    async def run(self, arguments, context):
        try:
            kwargs = schema.bind(self.model, self.params, arguments)
            if self.context_kwarg:
                kwargs[self.context_kwarg] = context
            result = self.fn(**kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result
        except Exception as error:
            raise ToolError(f"Error executing tool {self.name}: {error}") from error

    def convert(self, result):
        """(content, structured): FastMCP's conversion of a return value."""
        if isinstance(result, types.CallToolResult):
            return result
        content = to_content(result)
        if self.output_schema is None:
            return content, None
        structured = {"result": schema.jsonable(result)} if self.wrap else schema.jsonable(result)
        return content, structured


def to_content(result) -> list:
    """FastMCP's `_convert_to_content`: content blocks, images, lists of them, else JSON text."""
    if result is None:
        return []
    if isinstance(result, types._Model) and getattr(result, "type", None) in (
            "text", "image", "audio", "resource", "resource_link"):
        return [result]
    if isinstance(result, Audio):
        return [result.to_audio_content()]
    if isinstance(result, Image):
        return [result.to_image_content()]
    if isinstance(result, (list, tuple)):
        return [block for item in result for block in to_content(item)]
    if not isinstance(result, str):
        result = json.dumps(schema.jsonable(result), indent=2, ensure_ascii=False, default=str)
    return [types.TextContent(type="text", text=result)]


class Resource:
    def __init__(self, function, uri, name, title, description, mime_type):
        self.fn, self.uri = function, uri
        self.name = name or function.__name__
        self.title = title
        self.description = description or function.__doc__
        self.mime_type = mime_type or "text/plain"
        self.variables = re.findall(r"{(\w+)}", uri)
        self.pattern = None
        if self.variables:
            pattern = re.escape(uri).replace(r"\{", "{").replace(r"\}", "}")
            self.pattern = re.compile("^" + re.sub(r"{(\w+)}", r"(?P<\1>[^/]+)", pattern) + "$")

    async def read(self, **kwargs):
        result = self.fn(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result


class Prompt:
    def __init__(self, function, name, title, description):
        self.fn = function
        self.name = name or function.__name__
        self.title = title
        self.description = description or function.__doc__ or ""
        self.context_kwarg = _context_parameter(function)
        self.params = schema.parameters(function, skip=(self.context_kwarg,) if self.context_kwarg else ())

    async def render(self, arguments, context):
        kwargs = schema.bind(f"{self.fn.__name__}Arguments", self.params, arguments)
        if self.context_kwarg:
            kwargs[self.context_kwarg] = context
        result = self.fn(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result


class Settings:
    """`server.settings`: what the SDK's settings hold, for code that reads them."""

    def __init__(self, **values):
        self.host, self.port, self.debug, self.log_level = "127.0.0.1", 8000, False, "INFO"
        self.sse_path, self.message_path, self.streamable_http_path = "/sse", "/messages/", "/mcp"
        self.mount_path, self.json_response, self.stateless_http = "/", False, False
        for key, value in values.items():
            setattr(self, key, value)


class FastMCP:
    """The SDK's `FastMCP` (and `MCPServer`): register with the decorators, then `run()`."""

    def __init__(self, name=None, instructions=None, *args, **settings):
        self.name = name or "FastMCP"
        self.instructions = instructions
        self.settings = Settings(**{k: v for k, v in settings.items() if not callable(v)})
        self.version = settings.get("version")
        self.lifespan = settings.get("lifespan")
        self._tools, self._resources, self._templates, self._prompts = {}, {}, {}, {}
        constructed(self)

    # --- registration ----------------------------------------------------------------
    def add_tool(self, fn, name=None, title=None, description=None, annotations=None, icons=None, meta=None,
                 structured_output=None, **_):
        tool = Tool(fn, name, title, description, annotations, structured_output, meta)
        self._tools[tool.name] = tool
        return tool

    def tool(self, name=None, title=None, description=None, annotations=None, icons=None, meta=None,
             structured_output=None, **extra):
        if callable(name):  # `@mcp.tool` without parentheses (fastmcp allows it)
            self.add_tool(name)
            return name

        def decorator(fn):
            self.add_tool(fn, name=name, title=title, description=description, annotations=annotations,
                          structured_output=structured_output)
            return fn
        return decorator

    def resource(self, uri, *, name=None, title=None, description=None, mime_type=None, **_):
        def decorator(fn):
            resource = Resource(fn, str(uri), name, title, description, mime_type)
            (self._templates if resource.variables else self._resources)[resource.uri] = resource
            return fn
        return decorator

    def add_prompt(self, prompt):
        self._prompts[prompt.name] = prompt

    def prompt(self, name=None, title=None, description=None, **_):
        if callable(name):
            self._prompts[name.__name__] = Prompt(name, None, None, None)
            return name

        def decorator(fn):
            prompt = Prompt(fn, name, title, description)
            self._prompts[prompt.name] = prompt
            return fn
        return decorator

    def custom_route(self, *args, **kwargs):
        return lambda fn: fn

    def completion(self):
        return lambda fn: fn

    # --- serving: handed to the bridge ------------------------------------------------
    def run(self, transport="stdio", *args, **kwargs):
        raise Served(self)

    async def run_stdio_async(self, *args, **kwargs):
        raise Served(self)

    async def run_async(self, *args, **kwargs):
        raise Served(self)

    async def run_sse_async(self, *args, **kwargs):
        raise Served(self)

    async def run_streamable_http_async(self, *args, **kwargs):
        raise Served(self)

    def sse_app(self, *args, **kwargs):
        raise RuntimeError("mcpbox: a built server serves through mcpbox, not its own HTTP app")

    streamable_http_app = sse_app
    http_app = sse_app

    # --- what the bridge asks -----------------------------------------------------------
    def context(self):
        return Context(fastmcp=self)

    async def list_tools(self):
        return [types.Tool(name=t.name, title=t.title, description=t.description, inputSchema=t.parameters,
                           outputSchema=t.output_schema, annotations=t.annotations) for t in self._tools.values()]

    async def call_tool(self, name, arguments):
        tool = self._tools.get(name)
        if tool is None:
            raise ToolError(f"Unknown tool: {name}")
        return tool.convert(await tool.run(arguments, self.context()))

    async def read_resource(self, uri):
        """[(content, mime_type)] of the resource or template at `uri`."""
        resource, kwargs = self._resources.get(uri), {}
        if resource is None:
            for template in self._templates.values():
                match = template.pattern.match(uri)
                if match:
                    resource, kwargs = template, match.groupdict()
                    break
        if resource is None:
            raise ResourceError(f"Unknown resource: {uri}")
        try:
            value = await resource.read(**kwargs)
        except Exception as error:
            raise ResourceError(f"Error reading resource {uri}: {error}") from error
        if not isinstance(value, (str, bytes)):
            value = json.dumps(schema.jsonable(value), indent=2)
        return [(value, resource.mime_type)]

    async def get_prompt(self, name, arguments):
        prompt = self._prompts.get(name)
        if prompt is None:
            raise ValueError(f"Unknown prompt: {name}")
        result = await prompt.render(arguments or {}, self.context())
        messages = []
        for item in result if isinstance(result, (list, tuple)) else [result]:
            if isinstance(item, types.PromptMessage):
                messages.append(item)
            elif isinstance(item, dict):
                content = item.get("content")
                if isinstance(content, dict):
                    content = types.TextContent(**content)
                elif isinstance(content, str):
                    content = types.TextContent(type="text", text=content)
                messages.append(types.PromptMessage(role=item.get("role", "user"), content=content))
            elif isinstance(item, str):
                messages.append(types.PromptMessage(role="user", content=types.TextContent(type="text", text=item)))
            else:
                messages.append(types.PromptMessage(role="user", content=item))
        return types.GetPromptResult(description=prompt.description, messages=messages)


class _Session:
    """`ctx.session`: what servers call on it, mapped to the host."""

    async def send_log_message(self, level, data, logger=None, related_request_id=None):
        from mcpbox_compat import host
        host.log(level, data, logger)

    async def send_progress_notification(self, progress_token=None, progress=0.0, total=None, message=None, **_):
        from mcpbox_compat import host
        host.progress(progress, total, message)

    async def create_message(self, messages, *, max_tokens=500, system_prompt=None, **extra):
        from mcpbox_compat import host
        return host.sample(messages, max_tokens, system_prompt, extra)

    async def elicit(self, message, requestedSchema=None, **_):  # noqa: N803 - the SDK's name
        from mcpbox_compat import host
        return host.elicit(message, requestedSchema or {})

    async def list_roots(self):
        from mcpbox_compat import host
        return host.list_roots()

    async def send_resource_updated(self, uri):
        from mcpbox_compat import host
        host.resource_updated(str(uri))

    async def send_resource_list_changed(self):
        pass

    async def send_tool_list_changed(self):
        pass

    async def send_prompt_list_changed(self):
        pass

    def check_client_capability(self, capability):
        return True


class Context:
    """What a tool receives as `ctx`: logging, progress, resources, elicitation, sampling."""

    def __init__(self, fastmcp=None, **_):
        self.fastmcp = fastmcp
        self.session = _Session()
        self.request_id = "0"
        self.client_id = None

    @property
    def request_context(self):
        return self

    @property
    def lifespan_context(self):
        return {}

    async def log(self, level, message, *, logger_name=None, **_):
        await self.session.send_log_message(level, message, logger_name)

    async def debug(self, message, **kw):
        await self.log("debug", message, **kw)

    async def info(self, message, **kw):
        await self.log("info", message, **kw)

    async def warning(self, message, **kw):
        await self.log("warning", message, **kw)

    async def error(self, message, **kw):
        await self.log("error", message, **kw)

    async def report_progress(self, progress, total=None, message=None):
        await self.session.send_progress_notification(progress=progress, total=total, message=message)

    async def read_resource(self, uri):
        return [ReadResourceContents(content, mime) for content, mime in await self.fastmcp.read_resource(str(uri))]

    async def elicit(self, message, schema=None, response_type=None, **_):
        from mcpbox_compat import host
        return host.elicit_typed(message, schema if schema is not None else response_type)

    async def sample(self, messages, **kwargs):
        from mcpbox_compat import host
        return host.sample(messages, kwargs.get("max_tokens", 500), kwargs.get("system_prompt"), {})


class ReadResourceContents:
    def __init__(self, content, mime_type):
        self.content, self.mime_type = content, mime_type
