"""Write mcpbox plugins in Python: tools, resources and prompts as decorated functions.

    from mcpbox import Plugin

    plugin = Plugin()

    @plugin.tool
    def greet(name: str, excited: bool = False) -> str:
        \"\"\"Greets someone by name.

        Args:
            name: Who to greet.
            excited: End with an exclamation mark.
        \"\"\"
        return f"Hello, {name}" + ("!" if excited else ".")

    Tools, Resources, Prompts, Completion = plugin.exports()

Build with componentize-py against mcpbox's WIT package (world `plugin`):

    componentize-py -d wit -w plugin componentize app -o app.wasm

The input schema comes from the parameters' type hints and defaults, descriptions from the
docstring (its first paragraph for the function, its `Args:` section for the parameters). A tool
that returns a dataclass advertises it as its output schema and returns it as structured
content; one that returns a dict returns structured content; anything else is sent as text.
An exception becomes a tool result with `isError: true` carrying its message.
"""

import dataclasses
import gc
import inspect
import json
import re
import types as pytypes
import typing

from componentize_py_types import Err, Ok
from wit_world import exports
from wit_world.exports import completion as wit_completion
from wit_world.exports import prompts as wit_prompts
from wit_world.exports import resources as wit_resources
from wit_world.exports import tools as wit_tools
from wit_world.imports import host as wit_host
try:
    from wit_world.imports import types as wit_types
except ImportError:  # a world that also imports wasi:http's `types` names mcpbox's by its package
    from wit_world.imports import mcpbox_plugin_types as wit_types

__all__ = [
    "Plugin", "InvalidArguments", "NotFound", "LogLevel",
    "text", "image", "audio", "text_resource", "blob_resource", "link",
    "log", "progress", "cancelled", "granted_dirs", "caller", "resource_updated", "sample", "sample_text", "elicit",
    "Question", "ask", "list_roots", "can_ask", "save_state", "saved_state", "detach",
    "result_meta", "contents_meta", "APP_MIME_TYPE",
]

APP_MIME_TYPE = "text/html;profile=mcp-app"
"""The MIME type of an MCP App's HTML."""


def result_meta(meta: dict) -> None:
    """Sets the `_meta` of this call's result (WIT 0.1.3); raises with the host's reason when a
    key is under a prefix MCP reserves or the output limit is reached."""
    wit_host.result_meta(json.dumps(meta))


def contents_meta(uri: str, meta: dict) -> None:
    """Sets the `_meta` of the contents at `uri` this read returns (WIT 0.1.3), e.g. an MCP
    App's `{"ui": {"csp": {...}}}`, which must stay within the plugin's grants."""
    wit_host.contents_meta(uri, json.dumps(meta))

LogLevel = wit_types.LogLevel

# CPython's copy-on-write recipe (the `gc.freeze` documentation): no collection while the
# plugin initializes, everything it made frozen at the end of initialization (`exports()`), the
# collector on again for each call. componentize-py snapshots the initialized heap; every call
# runs in a fresh instance mapped from it, and a collection that walked the frozen objects would
# write their headers and copy their pages in every call.
gc.disable()


class InvalidArguments(Exception):
    """The arguments were wrong beyond what the schema says; the model sees the message."""


class NotFound(Exception):
    """A resource read found nothing at that URI."""


# --- content blocks ------------------------------------------------------------------------

def text(value: str) -> wit_types.ContentBlock:
    """A text block."""
    return wit_types.ContentBlock_Text(wit_types.TextContent(str(value), None))


def image(data: bytes, mime_type: str) -> wit_types.ContentBlock:
    """An image from its raw bytes, e.g. `image(png, "image/png")`."""
    return wit_types.ContentBlock_Image(wit_types.MediaContent(bytes(data), mime_type, None))


def audio(data: bytes, mime_type: str) -> wit_types.ContentBlock:
    """An audio clip from its raw bytes, e.g. `audio(wav, "audio/wav")`."""
    return wit_types.ContentBlock_Audio(wit_types.MediaContent(bytes(data), mime_type, None))


def _contents(uri: str, mime_type, body) -> wit_types.ResourceContents:
    if isinstance(body, (bytes, bytearray)):
        return wit_types.ResourceContents(uri, mime_type, wit_types.ResourceBody_Blob(bytes(body)))
    return wit_types.ResourceContents(uri, mime_type, wit_types.ResourceBody_Text(str(body)))


def text_resource(uri: str, mime_type: str, value: str) -> wit_types.ContentBlock:
    """A text resource embedded in a result."""
    return wit_types.ContentBlock_Embedded(wit_types.EmbeddedResource(_contents(uri, mime_type, value), None))


def blob_resource(uri: str, mime_type: str, data: bytes) -> wit_types.ContentBlock:
    """A binary resource embedded in a result."""
    return wit_types.ContentBlock_Embedded(wit_types.EmbeddedResource(_contents(uri, mime_type, bytes(data)), None))


def link(uri: str, name: str) -> wit_types.ContentBlock:
    """A link to a resource the client can read later."""
    return wit_types.ContentBlock_ResourceLink(wit_types.ResourceLink(uri, name, None, None, None, None, None))


# --- host services -------------------------------------------------------------------------

def log(level: LogLevel, message, logger: typing.Optional[str] = None) -> None:
    """Logs to the client (if it asked for this level) and to the host's log; `message` may be
    a string or any JSON value."""
    wit_host.log(level, logger, json.dumps(message))


def progress(done: float, total: typing.Optional[float] = None, message: typing.Optional[str] = None) -> None:
    """Reports progress of the current call; sent only if the client asked for progress."""
    wit_host.progress(float(done), None if total is None else float(total), message)


def cancelled() -> bool:
    """True once the client cancelled the current call; stop early when it is."""
    return wit_host.cancelled()


def granted_dirs() -> list:
    """The directories granted to this call (`name`, `guest_path`, `writable`)."""
    return wit_host.granted_dirs()


def caller():
    """Who this call is made for (`issuer`, `subject`, `scopes` of the client's access token), if
    the operator lets this plugin know (`[plugin.NAME] caller = true`) and the server authorizes
    its clients with OAuth; None otherwise."""
    return wit_host.caller()


def resource_updated(uri: str) -> None:
    """Tells subscribed clients that the resource at `uri` (one this plugin serves) changed."""
    wit_host.resource_updated(uri)


def _ask(function, request: dict) -> dict:
    try:
        return json.loads(function(json.dumps(request)))
    except Err as error:
        raise RuntimeError(error.value) from None


class Question:
    """One question for `ask`: what to ask the client, under which key.

    The key is what the question and its answer travel under in a 2026-07-28 request: 1 to 64
    characters of `[A-Za-z0-9_.-]`, unique in the call. Without one, the host numbers the
    questions (`elicitation-0`, `sampling-1`, ...).
    """

    def __init__(self, method, params: dict, key: str | None = None):
        self.method, self.params, self.key = method, params, key

    @staticmethod
    def elicit(message: str, requested_schema: dict, key: str | None = None) -> "Question":
        """Asks the user for input matching `requested_schema` (MCP `elicitation/create`)."""
        params = {"message": message, "requestedSchema": requested_schema}
        return Question(wit_host.ClientMethod.ELICIT, params, key)

    @staticmethod
    def sample(request: dict, key: str | None = None) -> "Question":
        """Asks the client's model (MCP `sampling/createMessage` params)."""
        return Question(wit_host.ClientMethod.SAMPLE, request, key)

    @staticmethod
    def sample_text(prompt: str, max_tokens: int = 500, key: str | None = None) -> "Question":
        """Asks the client's model one question in text."""
        return Question.sample(_text_request(prompt, max_tokens), key)

    @staticmethod
    def list_roots(key: str | None = None) -> "Question":
        """Asks for the client's roots (MCP `roots/list`): the client's word only; the call
        may still open only `granted_dirs()`."""
        return Question(wit_host.ClientMethod.LIST_ROOTS, {}, key)


def ask(questions: list) -> list:
    """Asks the client several `Question`s at once; returns one answer per question, in order:
    the client's result as a dict, or a `RuntimeError` saying why there is none. A 2026-07-28
    client gets every unanswered question in one round, and the call then runs again with the
    answers: do what must happen once after asking, or keep a state with `save_state`."""
    wit_questions = [wit_host.Question(q.key, q.method, json.dumps(q.params)) for q in questions]
    try:
        answers = wit_host.ask(wit_questions)
    except Err as error:
        raise RuntimeError(error.value) from None
    return [json.loads(a.value) if isinstance(a, Ok) else RuntimeError(a.value) for a in answers]


def _ask_one(question: Question) -> dict:
    answer = ask([question])[0]
    if isinstance(answer, RuntimeError):
        raise answer
    return answer


def _text_request(prompt: str, max_tokens: int) -> dict:
    return {"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": max_tokens}


def sample(request: dict, key: str | None = None) -> dict:
    """Asks the client's model (MCP `sampling/createMessage` params in, its result out)."""
    if key is not None:
        return _ask_one(Question.sample(request, key))
    return _ask(wit_host.sample, request)


def sample_text(prompt: str, max_tokens: int = 500, key: str | None = None) -> str:
    """Asks the client's model one question and returns the text of its answer."""
    result = sample(_text_request(prompt, max_tokens), key)
    return (result.get("content") or {}).get("text", "")


def elicit(message: str, requested_schema: dict, key: str | None = None) -> dict:
    """Asks the user through the client (MCP `elicitation/create`); returns `action` and `content`."""
    if key is not None:
        return _ask_one(Question.elicit(message, requested_schema, key))
    return _ask(wit_host.elicit, {"message": message, "requestedSchema": requested_schema})


def list_roots(key: str | None = None) -> list:
    """The client's roots (MCP `roots/list`), as dicts with `uri` and maybe `name`."""
    return _ask_one(Question.list_roots(key)).get("roots", [])


_METHODS = {"sample": "SAMPLE", "elicit": "ELICIT", "list_roots": "LIST_ROOTS"}


def can_ask(method: str) -> bool:
    """Whether the client can answer `method` ("sample", "elicit" or "list_roots"): it declared
    the capability. A 2026-07-28 request that did not fails the call when asked."""
    return wit_host.can_ask(getattr(wit_host.ClientMethod, _METHODS[method]))


def save_state(state: bytes) -> None:
    """Keeps `state` (at most 64 KiB) for the next round of a 2026-07-28 request: the host seals
    it into the request's `requestState`, and the retry's `saved_state()` returns it."""
    try:
        wit_host.save_state(state)
    except Err as error:
        raise RuntimeError(error.value) from None


def saved_state() -> bytes | None:
    """The state the previous round of this request kept; None in the first round and in legacy
    sessions."""
    return wit_host.saved_state()


def detach(status: str | None = None) -> None:
    """Goes on with this call as a task (the 2026-07-28 tasks extension), with `status` as its
    status message: the client gets the task's id now and polls it, the call runs on under the
    task deadline, and later questions wait for the client's `tasks/update`. Raises
    RuntimeError with the reason where the operator did not allow tasks for this tool or the
    request cannot receive one; the call may then simply go on."""
    try:
        wit_host.detach(status)
    except Err as error:
        raise RuntimeError(error.value) from None


def callable_tools() -> list:
    """The tools this call may call with `call_tool` (WIT 0.1.4): those the operator lists in
    `[plugin.NAME] may_call` that the caller may use and a model may call, as dicts with
    `name`, `description`, `input_schema` and `output_schema`."""
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": json.loads(tool.input_schema),
            "output_schema": json.loads(tool.output_schema) if tool.output_schema is not None else None,
        }
        for tool in wit_host.callable_tools()
    ]


def call_tool(name: str, arguments: dict | None = None) -> dict:
    """Calls another served tool through the host (WIT 0.1.4), as the client would call it for
    the same principal, and returns its MCP `CallToolResult` as a dict (a tool that failed
    returns `{"isError": True, ...}`). Raises RuntimeError with the host's refusal: a tool not
    in `[plugin.NAME] may_call`, not the caller's to use, unknown, a cycle, too many calls. The
    callee runs with its own grants, never this plugin's."""
    try:
        return json.loads(wit_host.call_tool(name, json.dumps(arguments or {})))
    except Err as error:
        raise RuntimeError(error.value) from None


# --- schemas from type hints ---------------------------------------------------------------

_PRIMITIVES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _schema(hint) -> dict:
    """The JSON schema of a type hint (primitives, Optional, Literal, list, dict, dataclasses)."""
    if hint is inspect.Parameter.empty or hint is typing.Any:
        return {}
    if hint in _PRIMITIVES:
        return {"type": _PRIMITIVES[hint]}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, pytypes.UnionType):
        options = [_schema(a) for a in args if a is not type(None)]
        return options[0] if len(options) == 1 else {"anyOf": options}
    if hint is list or origin in (list, tuple, set, frozenset):
        return {"type": "array", "items": _schema(args[0])} if args else {"type": "array"}
    if hint is dict or origin is dict:
        return {"type": "object", "additionalProperties": _schema(args[1])} if args else {"type": "object"}
    if dataclasses.is_dataclass(hint):
        return _dataclass_schema(hint)
    raise TypeError(f"mcpbox: no JSON schema for the type hint {hint!r}")


def _dataclass_schema(cls) -> dict:
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    required = [f.name for f in fields
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    schema = {"type": "object", "properties": {f.name: _schema(hints[f.name]) for f in fields}}
    if required:
        schema["required"] = required
    return schema


def _docs(function) -> tuple:
    """The description (first paragraph) and the per-parameter texts of a docstring's `Args:`."""
    doc = inspect.getdoc(function) or ""
    description = doc.split("\n\n")[0].strip()
    params = {}
    section = re.search(r"^(?:Args|Arguments|Parameters):\s*\n((?:[ \t]+.*\n?|\s*\n)*)", doc, re.M)
    if section:
        current = None
        for line in section.group(1).splitlines():
            match = re.match(r"\s+(\w+)(?:\s*\(.*?\))?:\s*(.*)", line)
            if match and (current is None or len(line) - len(line.lstrip()) <= params[current][1]):
                current = match.group(1)
                params[current] = [match.group(2).strip(), len(line) - len(line.lstrip())]
            elif current and line.strip():
                params[current][0] += " " + line.strip()
    return description, {name: text for name, (text, _) in params.items()}


def _input_schema(function, param_docs: dict) -> tuple:
    signature = inspect.signature(function)
    hints = typing.get_type_hints(function)
    properties, required = {}, []
    for name, parameter in signature.parameters.items():
        prop = dict(_schema(hints.get(name, inspect.Parameter.empty)))
        if name in param_docs:
            prop["description"] = param_docs[name]
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        elif parameter.default is not None:
            prop["default"] = parameter.default
        properties[name] = prop
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, signature, hints


def _check(value, hint, path: str):
    """Checks (and for dataclasses, builds) an argument against its type hint."""
    if hint is inspect.Parameter.empty or hint is typing.Any:
        return value
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, pytypes.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _check(value, option, path)
            except InvalidArguments as error:
                errors.append(str(error))
        raise InvalidArguments(errors[0] if len(errors) == 1 else f"`{path}` matches none of the allowed types")
    if origin is typing.Literal:
        if value not in args:
            raise InvalidArguments(f"`{path}` must be one of {', '.join(json.dumps(a) for a in args)}")
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in _PRIMITIVES:
        if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
            raise InvalidArguments(f"`{path}` must be of type {_PRIMITIVES[hint]}")
        return value
    if hint is list or origin in (list, tuple, set, frozenset):
        if not isinstance(value, list):
            raise InvalidArguments(f"`{path}` must be an array")
        items = [_check(v, args[0], f"{path}[{i}]") for i, v in enumerate(value)] if args else value
        return (origin or list)(items) if origin in (tuple, set, frozenset) else items
    if hint is dict or origin is dict:
        if not isinstance(value, dict):
            raise InvalidArguments(f"`{path}` must be an object")
        return {k: _check(v, args[1], f"{path}.{k}") for k, v in value.items()} if args else value
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise InvalidArguments(f"`{path}` must be an object")
        return hint(**_bind(value, _dataclass_params(hint), typing.get_type_hints(hint), path + "."))
    return value


def _dataclass_params(cls) -> dict:
    return {f.name: f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            for f in dataclasses.fields(cls)}


def _bind(arguments: dict, params: dict, hints: dict, prefix: str = "") -> dict:
    """Checks `arguments` against parameters `{name: required}` and their hints."""
    unknown = sorted(set(arguments) - set(params))
    if unknown:
        raise InvalidArguments(f"unknown argument `{prefix}{unknown[0]}`")
    missing = [name for name, required in params.items() if required and name not in arguments]
    if missing:
        raise InvalidArguments(f"missing required argument `{prefix}{missing[0]}`")
    return {name: _check(value, hints.get(name, inspect.Parameter.empty), prefix + name)
            for name, value in arguments.items()}


def _jsonable(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def _call_result(value) -> wit_tools.CallResult:
    if isinstance(value, wit_tools.CallResult):
        return value
    if value is None:
        return wit_tools.CallResult([], None, False)
    if isinstance(value, list) and all(isinstance(v, _CONTENT_TYPES) for v in value):
        return wit_tools.CallResult(value, None, False)
    if isinstance(value, _CONTENT_TYPES):
        return wit_tools.CallResult([value], None, False)
    value = _jsonable(value)
    if isinstance(value, dict):
        encoded = json.dumps(value)
        return wit_tools.CallResult([text(encoded)], encoded, False)
    if isinstance(value, (list, int, float, bool)):
        return wit_tools.CallResult([text(json.dumps(value))], None, False)
    return wit_tools.CallResult([text(str(value))], None, False)


_CONTENT_TYPES = (wit_types.ContentBlock_Text, wit_types.ContentBlock_Image, wit_types.ContentBlock_Audio,
                  wit_types.ContentBlock_Embedded, wit_types.ContentBlock_ResourceLink)


# --- the plugin ----------------------------------------------------------------------------

class _Tool:
    def __init__(self, function, name, title, read_only):
        description, param_docs = _docs(function)
        self.function = function
        self.input_schema, signature, self.hints = _input_schema(function, param_docs)
        self.params = {n: p.default is inspect.Parameter.empty for n, p in signature.parameters.items()}
        returns = self.hints.get("return")
        output = _dataclass_schema(returns) if dataclasses.is_dataclass(returns) else None
        annotations = wit_tools.ToolAnnotations(None, True, False, True, False) if read_only else None
        self.descriptor = wit_tools.Tool(name, title, description or None, json.dumps(self.input_schema),
                                         None if output is None else json.dumps(output), annotations)


class _Prompt:
    def __init__(self, function, name, title):
        description, param_docs = _docs(function)
        signature = inspect.signature(function)
        self.function = function
        self.params = {n: p.default is inspect.Parameter.empty for n, p in signature.parameters.items()}
        arguments = [wit_prompts.PromptArgument(n, None, param_docs.get(n), required)
                     for n, required in self.params.items()]
        self.descriptor = wit_prompts.Prompt(name, title, description or None, arguments)


class Plugin:
    """Everything a plugin offers. Register with the decorators, then export with
    `Tools, Resources, Prompts, Completion = plugin.exports()` at the end of the app module."""

    def __init__(self):
        self._tools = {}
        self._resources = {}
        self._templates = []
        self._prompts = {}
        self._completer = None
        self._items = {}
        self._instructions = None
        self._skill_files = []

    def metadata(self, kind: str, name: str, meta: typing.Optional[dict] = None, icons: typing.Sequence[dict] = ()):
        """Gives an item `_meta` and icons (`{"src": ..., "mimeType": ..., "sizes": [...],
        "theme": ...}`; `src` a `data:` URI or an https URL the network grant allows). `kind`:
        "tool", "prompt", "resource" (by URI) or "resource-template". Given twice, `_meta` merges.
        Served when the app module exports `plugin.described_exports()`."""
        item = self._items.setdefault((kind, name), {"meta": None, "icons": []})
        if meta is not None:
            item["meta"] = {**(item["meta"] or {}), **meta}
        item["icons"].extend(icons)
        return self

    def app(self, tool: str, uri: str, html: str, ui: typing.Optional[dict] = None):
        """Ships an MCP App for `tool`: the HTML at `uri` (`ui://...`), served as
        text/html;profile=mcp-app with the resource `_meta.ui` given (checked against the grants)."""
        ui = ui or {}

        def read():
            contents_meta(uri, {"ui": ui})
            return html
        self.resource(uri, name=tool, mime_type=APP_MIME_TYPE)(read)
        return self.metadata("tool", tool, {"ui": {"resourceUri": uri}})

    def instructions(self, text_: str):
        """What this plugin adds to the server's instructions."""
        self._instructions = text_
        return self

    def skill_file(self, path: str, contents: typing.Union[str, bytes]):
        """Ships a skill file: `path` is `<skill>/<path in the skill>`, served at
        `skill://<plugin>/<path>`."""
        self._skill_files.append((path, contents.encode() if isinstance(contents, str) else bytes(contents)))
        return self

    def tool(self, function=None, *, name: typing.Optional[str] = None, title: typing.Optional[str] = None,
             read_only: bool = False):
        """Registers a tool: `@plugin.tool` or `@plugin.tool(name=..., title=..., read_only=True)`."""
        def register(function):
            tool = _Tool(function, name or function.__name__, title, read_only)
            self._tools[tool.descriptor.name] = tool
            return function
        return register(function) if function else register

    def resource(self, uri: str, *, name: typing.Optional[str] = None, mime_type: typing.Optional[str] = "text/plain",
                 description: typing.Optional[str] = None):
        """Registers a resource at a fixed `uri`, or, when `uri` holds `{variables}`, a resource
        template whose variables are passed as keyword arguments. The function returns text
        (`str`) or bytes."""
        def register(function):
            doc = description or _docs(function)[0] or None
            label = name or function.__name__
            if "{" in uri:
                names = re.findall(r"\{(\w+)\}", uri)
                parts = re.split(r"\{\w+\}", uri)
                pattern = "".join(re.escape(p) + (f"(?P<{n}>.+)" if i == len(names) - 1 else f"(?P<{n}>[^/]+)")
                                  for i, (p, n) in enumerate(zip(parts, names))) + re.escape(parts[-1])
                descriptor = wit_resources.ResourceTemplate(uri, label, None, doc, mime_type, None)
                self._templates.append((descriptor, re.compile(pattern + r"\Z"), function))
            else:
                descriptor = wit_resources.Resource(uri, label, None, doc, mime_type, None, None)
                self._resources[uri] = (descriptor, function)
            return function
        return register

    def prompt(self, function=None, *, name: typing.Optional[str] = None, title: typing.Optional[str] = None):
        """Registers a prompt: its parameters are the prompt's arguments (strings); it returns
        the text of one user message, a content block, or a list of `(role, text)` pairs."""
        def register(function):
            prompt = _Prompt(function, name or function.__name__, title)
            self._prompts[prompt.descriptor.name] = prompt
            return function
        return register(function) if function else register

    def completion(self, function):
        """Registers the function `(reference_name, argument, typed_so_far) -> list[str]` that
        completes prompt and resource-template arguments."""
        self._completer = function
        return function

    def exports(self) -> tuple:
        """The classes componentize-py looks for in the app module: `Tools`, `Resources`,
        `Prompts`, `Completion`."""
        plugin = self

        class Tools(exports.Tools):
            def list_tools(self):
                return [tool.descriptor for tool in plugin._tools.values()]

            def call_tool(self, name, arguments):
                return plugin._call_tool(name, arguments)

        class Resources(exports.Resources):
            def list_resources(self):
                return [descriptor for descriptor, _ in plugin._resources.values()]

            def list_resource_templates(self):
                return [descriptor for descriptor, _, _ in plugin._templates]

            def read_resource(self, uri):
                return plugin._read_resource(uri)

        class Prompts(exports.Prompts):
            def list_prompts(self):
                return [prompt.descriptor for prompt in plugin._prompts.values()]

            def get_prompt(self, name, arguments):
                return plugin._get_prompt(name, dict(arguments))

        class Completion(exports.Completion):
            def complete(self, request):
                return plugin._complete(request)

        _warm_dispatch(plugin)
        gc.collect()
        gc.freeze()
        gc.enable()
        return Tools, Resources, Prompts, Completion

    def described_exports(self) -> tuple:
        """`exports()` and `Metadata`, for an app module built with `-w described-plugin`:
        `Tools, Resources, Prompts, Completion, Metadata = plugin.described_exports()`."""
        from wit_world.exports import metadata as wit_metadata
        plugin = self
        subjects = {"tool": wit_metadata.Subject_Tool, "prompt": wit_metadata.Subject_Prompt,
                    "resource": wit_metadata.Subject_Resource,
                    "resource-template": wit_metadata.Subject_ResourceTemplate}
        items = [wit_metadata.ItemMetadata(
            subjects[kind](name),
            json.dumps(item["meta"]) if item["meta"] is not None else None,
            [wit_metadata.Icon(i["src"], i.get("mimeType"), list(i.get("sizes", [])), i.get("theme"))
             for i in item["icons"]]) for (kind, name), item in self._items.items()]
        skills = [wit_metadata.SkillFile(path, contents) for path, contents in self._skill_files]

        class Metadata(exports.Metadata):
            def describe_items(self):
                return items

            def instructions(self):
                return plugin._instructions

            def skills(self):
                return skills

        return (*self.exports(), Metadata)

    def _call_tool(self, name, arguments):
        tool = self._tools.get(name)
        if tool is None:
            raise Err(wit_tools.ToolError_UnknownTool(f"no tool named `{name}`"))
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
            if not isinstance(parsed, dict):
                raise InvalidArguments("arguments must be a JSON object")
            kwargs = _bind(parsed, tool.params, tool.hints)
        except (InvalidArguments, ValueError) as error:
            raise Err(wit_tools.ToolError_InvalidArguments(str(error))) from None
        try:
            return _call_result(tool.function(**kwargs))
        except InvalidArguments as error:
            raise Err(wit_tools.ToolError_InvalidArguments(str(error))) from None
        except Exception as error:  # the model sees the failure; the host never does
            raise Err(wit_tools.ToolError_Failed(_message(error))) from None

    def _read_resource(self, uri):
        try:
            if uri in self._resources:
                descriptor, function = self._resources[uri]
                return [_contents(uri, descriptor.mime_type, function())]
            for descriptor, pattern, function in self._templates:
                match = pattern.match(uri)
                if match:
                    return [_contents(uri, descriptor.mime_type, function(**match.groupdict()))]
        except NotFound as error:
            raise Err(wit_resources.ResourceError_NotFound(str(error))) from None
        except Exception as error:
            raise Err(wit_resources.ResourceError_Failed(_message(error))) from None
        raise Err(wit_resources.ResourceError_NotFound(f"no resource at {uri}"))

    def _get_prompt(self, name, arguments):
        prompt = self._prompts.get(name)
        if prompt is None:
            raise Err(wit_prompts.PromptError_UnknownPrompt(f"no prompt named `{name}`"))
        try:
            kwargs = _bind(arguments, prompt.params, {})
        except InvalidArguments as error:
            raise Err(wit_prompts.PromptError_InvalidArguments(str(error))) from None
        try:
            value = prompt.function(**kwargs)
        except InvalidArguments as error:
            raise Err(wit_prompts.PromptError_InvalidArguments(str(error))) from None
        except Exception as error:
            raise Err(wit_prompts.PromptError_Failed(_message(error))) from None
        if isinstance(value, wit_prompts.PromptResult):
            return value
        if isinstance(value, list):
            roles = {"user": wit_types.Role.USER, "assistant": wit_types.Role.ASSISTANT}
            messages = [wit_prompts.PromptMessage(roles[role], content if isinstance(content, _CONTENT_TYPES)
                                                  else text(content)) for role, content in value]
        else:
            content = value if isinstance(value, _CONTENT_TYPES) else text(value)
            messages = [wit_prompts.PromptMessage(wit_types.Role.USER, content)]
        return wit_prompts.PromptResult(None, messages)

    def _complete(self, request):
        reference = request.reference.value
        values = list(self._completer(reference, request.argument_name, request.argument_value)) \
            if self._completer else []
        return wit_completion.CompletionResult(values[:100], len(values), len(values) > 100)


def _warm(name: str, count: int = 0, loud: bool = False) -> dict:
    return {"name": name, "count": count}


def _warm_dispatch(plugin: "Plugin") -> None:
    """Runs the SDK's own dispatch (arguments parsed and checked, results and errors built)
    on a tool of its own, never a plugin's, a few times before the snapshot: CPython rewrites
    the bytecode it runs into specialized forms after a few runs, and rewritten in the snapshot
    it is not rewritten (its pages written) again in every call's fresh instance."""
    plugin._tools["\0warm"] = _Tool(_warm, "\0warm", None, False)
    try:
        for _ in range(16):
            plugin._call_tool("\0warm", '{"name": "warm", "count": 1}')
            for bad in ('{"nope": 1}', '[]', '{"name": 1}'):
                try:
                    plugin._call_tool("\0warm", bad)
                except Err:
                    pass
            _call_result("text")
            _call_result(None)
    finally:
        del plugin._tools["\0warm"]


def _message(error: Exception) -> str:
    return str(error) or type(error).__name__
