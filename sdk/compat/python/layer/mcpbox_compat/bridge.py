"""The WIT exports of a built Python server. Each call runs in a fresh instance: the call's
environment and arguments are read from WASI, the server's entry point runs (its module-level
code and its `main()`, as `python -m` or its console script would) until it asks its SDK to
serve, and the one request is answered by the server's own handlers."""

import asyncio
import base64
import importlib
import inspect
import json
import os
import random
import sys
import tempfile

import mcpbox
from componentize_py_types import Err
from mcp import types
from mcpbox_compat.served import SERVERS, Served
from mcpbox_compat.server import FastMCP, ResourceError, ToolError
from wit_world import exports
from wit_world.exports import completion as wit_completion
from wit_world.exports import prompts as wit_prompts
from wit_world.exports import resources as wit_resources
from wit_world.exports import tools as wit_tools
from wit_world.imports import environment

ENTRY = {"target": None, "name": "server"}


def _fresh():
    """The call's environment, arguments and randomness, never the build's."""
    os.environ.clear()
    os.environ.update(dict(environment.get_environment()))
    arguments = list(environment.get_arguments())
    sys.argv = [ENTRY["name"], *arguments[1:]] if arguments else [ENTRY["name"]]
    random.seed()
    _temporary_files()


def _temporary_files():
    """`tempfile` finds no /tmp in a sandbox: without TMPDIR, temporary files go to `.tmp` in
    the first writable directory the operator granted (none granted: tempfile's own error)."""
    tempfile.tempdir = None
    if any(os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")):
        return
    for granted in mcpbox.granted_dirs():
        if granted.writable:
            path = os.path.join(granted.guest_path, ".tmp")
            try:
                os.makedirs(path, exist_ok=True)
            except OSError:
                continue
            tempfile.tempdir = path
            return


_SERVER = []


def server():
    if _SERVER:
        return _SERVER[0]
    _fresh()
    target = ENTRY["target"]
    module_name, _, attribute = target.partition(":")
    status = None
    try:
        if attribute:
            function = importlib.import_module(module_name)
            for part in attribute.split("."):
                function = getattr(function, part)
            result = function()
            if inspect.isawaitable(result):
                asyncio.run(result)
        else:
            _run_as_main(module_name)
    except Served as served:
        _SERVER.append(served.server)
        return served.server
    except BaseExceptionGroup as group:  # anyio's task groups wrap it
        served = group.subgroup(lambda e: isinstance(e, Served))
        if served is None:
            raise
        first = served.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        _SERVER.append(first.server)
        return first.server
    except SystemExit as exit_:
        status = exit_.code
    # It returned or exited without serving (a command-line program that wants its
    # subcommand): the one server it made is the one to serve.
    if len(SERVERS) == 1:
        _SERVER.append(SERVERS[0])
        return SERVERS[0]
    raise RuntimeError(f"the server's entry point ({target}) ended without serving"
                       + (f" (exit status {status})" if status not in (None, 0) else "")
                       + f" and made {len(SERVERS)} servers: give it its arguments (`args` in [plugin.NAME])")


def _run_as_main(module_name):
    spec = importlib.util.find_spec(module_name)
    module = importlib.util.module_from_spec(spec)
    module.__name__ = "__main__"
    sys.modules["__main__"] = module
    spec.loader.exec_module(module)


def _run(coroutine):
    return asyncio.run(coroutine)


# --- conversions ----------------------------------------------------------------------------

def _block(item):
    kind = getattr(item, "type", None)
    if kind == "text":
        return mcpbox.text(item.text)
    if kind == "image":
        return mcpbox.image(base64.b64decode(item.data), item.mimeType)
    if kind == "audio":
        return mcpbox.audio(base64.b64decode(item.data), item.mimeType)
    if kind == "resource_link":
        return mcpbox.link(str(item.uri), item.name)
    if kind == "resource":
        contents = item.resource
        if getattr(contents, "blob", None) is not None:
            return mcpbox.blob_resource(str(contents.uri), contents.mimeType, base64.b64decode(contents.blob))
        return mcpbox.text_resource(str(contents.uri), contents.mimeType, contents.text)
    return mcpbox.text(json.dumps(item.model_dump(mode="json") if hasattr(item, "model_dump") else str(item)))


def _call_result(content, structured, is_error):
    return wit_tools.CallResult([_block(c) for c in content],
                                None if structured is None else json.dumps(structured), bool(is_error))


def _annotations(value):
    if value is None:
        return None
    get = (lambda k: value.get(k)) if isinstance(value, dict) else (lambda k: getattr(value, k, None))
    return wit_tools.ToolAnnotations(get("title"), get("readOnlyHint"), get("destructiveHint"),
                                     get("idempotentHint"), get("openWorldHint"))


def _tool(tool):
    return wit_tools.Tool(tool.name, tool.title, tool.description or None, json.dumps(tool.inputSchema),
                          None if tool.outputSchema is None else json.dumps(tool.outputSchema),
                          _annotations(tool.annotations))


def _lowlevel(s):
    return not isinstance(s, FastMCP)


class Tools(exports.Tools):
    def list_tools(self):
        s = server()
        tools = _run(s.list_tools_now() if _lowlevel(s) else s.list_tools())
        return [_tool(t) for t in tools]

    def call_tool(self, name, arguments):
        s = server()
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except ValueError as error:
            raise Err(wit_tools.ToolError_InvalidArguments(str(error))) from None
        try:
            if _lowlevel(s):
                result = _run(s.call_tool_now(name, parsed))
            else:
                result = _run(s.call_tool(name, parsed))
        except ToolError as error:
            return _call_result([types.TextContent(type="text", text=str(error))], None, True)
        except Exception as error:  # the SDK turns any failure into an error result
            return _call_result([types.TextContent(type="text", text=str(error))], None, True)
        if isinstance(result, types.CallToolResult):
            return _call_result(result.content, result.structuredContent, result.isError)
        content, structured = result[0], result[1]
        return _call_result(content, structured, len(result) > 2 and result[2])


class Resources(exports.Resources):
    def list_resources(self):
        s = server()
        if _lowlevel(s):
            listed = _run(s._list("resources/list"))
            return [wit_resources.Resource(str(r.uri), r.name, r.title, r.description, r.mimeType, r.size, None)
                    for r in listed]
        return [wit_resources.Resource(r.uri, r.name or "", r.title, r.description, r.mime_type, None, None)
                for r in s._resources.values()]

    def list_resource_templates(self):
        s = server()
        if _lowlevel(s):
            listed = _run(s._list("resources/templates/list"))
            return [wit_resources.ResourceTemplate(t.uriTemplate, t.name, t.title, t.description, t.mimeType, None)
                    for t in listed]
        return [wit_resources.ResourceTemplate(t.uri, t.name or "", t.title, t.description, t.mime_type, None)
                for t in s._templates.values()]

    def read_resource(self, uri):
        s = server()
        try:
            contents = _run(s.read_resource_now(uri) if _lowlevel(s) else s.read_resource(uri))
        except ResourceError as error:
            kind = wit_resources.ResourceError_NotFound if str(error).startswith("Unknown resource") \
                else wit_resources.ResourceError_Failed
            raise Err(kind(str(error))) from None
        except Exception as error:
            raise Err(wit_resources.ResourceError_Failed(str(error))) from None
        return [mcpbox._contents(uri, mime, body) for body, mime in contents]


class Prompts(exports.Prompts):
    def list_prompts(self):
        s = server()
        if _lowlevel(s):
            listed = _run(s._list("prompts/list"))
            return [wit_prompts.Prompt(p.name, p.title, p.description,
                                       [wit_prompts.PromptArgument(a.name, a.title, a.description, bool(a.required))
                                        for a in (p.arguments or [])]) for p in listed]
        out = []
        for p in s._prompts.values():
            arguments = [wit_prompts.PromptArgument(a.name, None, a.field.description if a.field else None,
                                                    a.required) for a in p.params]
            out.append(wit_prompts.Prompt(p.name, p.title, p.description or None, arguments))
        return out

    def get_prompt(self, name, arguments):
        s = server()
        try:
            result = _run(s.get_prompt_now(name, dict(arguments)) if _lowlevel(s) else s.get_prompt(name, dict(arguments)))
        except Exception as error:
            raise Err(wit_prompts.PromptError_Failed(str(error))) from None
        role = lambda r: mcpbox.wit_types.Role.ASSISTANT if r == "assistant" else mcpbox.wit_types.Role.USER
        return wit_prompts.PromptResult(result.description,
                                        [wit_prompts.PromptMessage(role(m.role), _block(m.content))
                                         for m in result.messages])


class Completion(exports.Completion):
    def complete(self, request):
        return wit_completion.CompletionResult([], None, False)
