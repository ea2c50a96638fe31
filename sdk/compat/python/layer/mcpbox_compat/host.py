"""The SDK's server-to-client traffic as mcpbox host calls (sdk/python/mcpbox.py): logging,
progress, sampling, elicitation, roots, resource updates."""

import json

import mcpbox
from mcp import types

_LEVELS = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}


def log(level, data, logger=None):
    level = str(level).lower()
    level = level if level in _LEVELS else "info"
    mcpbox.log(getattr(mcpbox.LogLevel, level.upper()), data if isinstance(data, (str, int, float, bool, list, dict)) else str(data), logger)


def progress(done, total=None, message=None):
    mcpbox.progress(float(done), None if total is None else float(total), message)


def _content(block):
    return block.model_dump(exclude_none=True) if hasattr(block, "model_dump") else block


def sample(messages, max_tokens=500, system_prompt=None, extra=None):
    if isinstance(messages, str):
        messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
    request = {"messages": [_content(m) if not isinstance(m, str) else
                            {"role": "user", "content": {"type": "text", "text": m}} for m in messages],
               "maxTokens": int(max_tokens)}
    if system_prompt:
        request["systemPrompt"] = system_prompt
    for key, wire in (("temperature", "temperature"), ("stop_sequences", "stopSequences"),
                      ("model_preferences", "modelPreferences"), ("include_context", "includeContext")):
        if extra and extra.get(key) is not None:
            request[wire] = _content(extra[key])
    result = mcpbox.sample(request)
    content = result.get("content") or {}
    block = types.TextContent(**content) if content.get("type") == "text" else types._Model(**content)
    return types.CreateMessageResult(role=result.get("role", "assistant"), content=block,
                                     model=result.get("model"), stopReason=result.get("stopReason"))


class ElicitResult:
    def __init__(self, action, data=None, content=None):
        self.action, self.data, self.content = action, data, content


def elicit(message, requested_schema):
    answer = mcpbox.elicit(message, requested_schema)
    return types._Model(action=answer.get("action"), content=answer.get("content"))


def elicit_typed(message, schema):
    """FastMCP's `ctx.elicit(message, schema=Model)`: the model's fields asked, an instance back."""
    from mcpbox_compat.schema import Schemas
    if isinstance(schema, dict):
        requested, build = schema, None
    else:
        schemas = Schemas()
        requested = schemas.object(schema)
        requested.pop("title", None)
        build = schema
    answer = mcpbox.elicit(message, requested)
    action, content = answer.get("action"), answer.get("content")
    if action != "accept":
        return ElicitResult(action)
    data = build(**(content or {})) if build is not None else content
    return ElicitResult(action, data, content)


def list_roots():
    return types._Model(roots=[types.Root(**root) for root in mcpbox.list_roots()])


def resource_updated(uri):
    mcpbox.resource_updated(uri)


def as_json(value):
    return json.dumps(value)
