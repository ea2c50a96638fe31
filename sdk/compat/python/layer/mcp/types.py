"""The MCP types servers build results from (the subset of the Python SDK's `mcp.types` that
servers use), as plain classes: keyword construction, field names as on the wire."""

import typing

LATEST_PROTOCOL_VERSION = "2025-11-25"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603

LoggingLevel = typing.Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
Role = typing.Literal["user", "assistant"]
AnyUrl = str


class _Model:
    """Fields from class annotations (default None unless set), extra keywords kept."""

    def __init__(self, **data):
        for klass in reversed(type(self).__mro__):
            for name in getattr(klass, "__annotations__", {}):
                if not name.startswith("_") and name not in data:
                    default = getattr(type(self), name, None)
                    setattr(self, name, list(default) if isinstance(default, list) else default)
        for name, value in data.items():
            setattr(self, name, value)

    def _fields(self):
        return [k for k in vars(self) if not k.startswith("_")]

    def model_dump(self, *, exclude_none=False, mode="python", **_):
        out = {}
        for name in self._fields():
            value = getattr(self, name)
            if exclude_none and value is None:
                continue
            out["_meta" if name == "meta" else name] = _dump(value, exclude_none, mode)
        return out

    def model_dump_json(self, **kwargs):
        import json
        return json.dumps(self.model_dump(mode="json", **kwargs))

    @classmethod
    def model_validate(cls, data):
        return data if isinstance(data, cls) else cls(**data)

    def __eq__(self, other):
        return type(self) is type(other) and self.model_dump() == other.model_dump()

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self._fields())})"


def _dump(value, exclude_none, mode):
    if isinstance(value, _Model):
        return value.model_dump(exclude_none=exclude_none, mode=mode)
    if isinstance(value, list):
        return [_dump(v, exclude_none, mode) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v, exclude_none, mode) for k, v in value.items()}
    return value


class Annotations(_Model):
    audience: list = None
    priority: float = None


class Icon(_Model):
    src: str
    mimeType: str = None
    sizes: list = None


class TextContent(_Model):
    type: str = "text"
    text: str
    annotations: Annotations = None


class ImageContent(_Model):
    type: str = "image"
    data: str
    mimeType: str
    annotations: Annotations = None


class AudioContent(_Model):
    type: str = "audio"
    data: str
    mimeType: str
    annotations: Annotations = None


class TextResourceContents(_Model):
    uri: str
    mimeType: str = None
    text: str


class BlobResourceContents(_Model):
    uri: str
    mimeType: str = None
    blob: str


class EmbeddedResource(_Model):
    type: str = "resource"
    resource: _Model
    annotations: Annotations = None


class ResourceLink(_Model):
    type: str = "resource_link"
    uri: str
    name: str
    title: str = None
    description: str = None
    mimeType: str = None
    size: int = None


ContentBlock = typing.Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]
Content = ContentBlock


class ToolAnnotations(_Model):
    title: str = None
    readOnlyHint: bool = None
    destructiveHint: bool = None
    idempotentHint: bool = None
    openWorldHint: bool = None


class Tool(_Model):
    name: str
    title: str = None
    description: str = None
    inputSchema: dict
    outputSchema: dict = None
    annotations: ToolAnnotations = None


class CallToolResult(_Model):
    content: list = []
    structuredContent: dict = None
    isError: bool = False


class Resource(_Model):
    uri: str
    name: str
    title: str = None
    description: str = None
    mimeType: str = None
    size: int = None
    annotations: Annotations = None


class ResourceTemplate(_Model):
    uriTemplate: str
    name: str
    title: str = None
    description: str = None
    mimeType: str = None
    annotations: Annotations = None


class ReadResourceResult(_Model):
    contents: list = []


class PromptArgument(_Model):
    name: str
    title: str = None
    description: str = None
    required: bool = None


class Prompt(_Model):
    name: str
    title: str = None
    description: str = None
    arguments: list = None


class PromptMessage(_Model):
    role: str
    content: _Model


class GetPromptResult(_Model):
    description: str = None
    messages: list = []


class ErrorData(_Model):
    code: int
    message: str
    data: object = None


class SamplingMessage(_Model):
    role: str
    content: _Model


class CreateMessageResult(_Model):
    role: str = "assistant"
    content: _Model = None
    model: str = None
    stopReason: str = None


class ServerCapabilities(_Model):
    tools: dict = None
    resources: dict = None
    prompts: dict = None
    logging: dict = None


class Implementation(_Model):
    name: str
    version: str = None


class ListToolsResult(_Model):
    tools: list = []


class ListResourcesResult(_Model):
    resources: list = []


class ListPromptsResult(_Model):
    prompts: list = []


class Root(_Model):
    uri: str
    name: str = None
