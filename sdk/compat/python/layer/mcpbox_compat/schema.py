"""JSON schemas from type hints, as pydantic writes them for the MCP Python SDK (FastMCP's
`func_metadata`: an `fnArguments` model's schema, an `fnOutput` wrapper for results that are
not objects), and arguments checked and coerced the way pydantic's lax mode does, without
pydantic (its core is a native extension). Titles follow pydantic's; clients compare schemas
without them."""

import dataclasses
import enum
import inspect
import json
import types as pytypes
import typing

from pydantic import FieldInfo

_PRIMITIVES = {str: "string", int: "integer", float: "number", bool: "boolean"}
_EMPTY = inspect.Parameter.empty


class ValidationError(ValueError):
    """Arguments that do not fit the signature; the message lists each problem as pydantic's."""

    def __init__(self, model: str, errors: list):
        self.errors = errors
        lines = [f"{len(errors)} validation error{'s' if len(errors) != 1 else ''} for {model}"]
        for location, message, kind, value in errors:
            lines.append(location or "__root__")
            lines.append(f"  {message} [type={kind}, input_value={value!r}, input_type={type(value).__name__}]")
        super().__init__("\n".join(lines))


def title_of(name: str) -> str:
    return name.replace("_", " ").strip().title()


def _split_annotated(hint):
    """`Annotated[T, Field(...), ...]` -> (T, the FieldInfo or None)."""
    field = None
    while typing.get_origin(hint) is typing.Annotated:
        args = typing.get_args(hint)
        hint = args[0]
        for extra in args[1:]:
            if isinstance(extra, FieldInfo):
                field = extra if field is None else field.merged(extra)
    return hint, field


def _is_typeddict(hint) -> bool:
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__total__")


def _is_model(hint) -> bool:
    from pydantic import BaseModel
    return isinstance(hint, type) and issubclass(hint, BaseModel)


class Schemas:
    """One schema with its `$defs` (named classes: dataclasses, TypedDicts, models, enums)."""

    def __init__(self):
        self.defs = {}

    def of(self, hint, field=None) -> dict:
        hint, annotated = _split_annotated(hint)
        field = annotated if field is None else (field.merged(annotated) if annotated else field)
        schema = self._of(hint)
        if field is not None:
            schema = {**schema, **field.constraints(schema)}
        return schema

    def _of(self, hint) -> dict:
        if hint is _EMPTY or hint is typing.Any or hint is object:
            return {}
        if hint is None or hint is type(None):
            return {"type": "null"}
        if hint in _PRIMITIVES:
            return {"type": _PRIMITIVES[hint]}
        if hint is bytes:
            return {"format": "binary", "type": "string"}
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return self._named(hint, lambda: self._enum(hint))
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin is typing.Literal:
            values = list(args)
            kinds = {type(v) for v in values}
            schema = {"const": values[0]} if len(values) == 1 else {"enum": values}
            if len(kinds) == 1 and next(iter(kinds)) in _PRIMITIVES:
                schema["type"] = _PRIMITIVES[next(iter(kinds))]
            return schema
        if origin in (typing.Union, pytypes.UnionType):
            options = [self.of(a) for a in args]
            return {"anyOf": options}
        if hint in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, typing.Sequence,
                                                              __import__("collections.abc").abc.Sequence):
            items = {} if not args else self.of(args[0])
            schema = {"items": items, "type": "array"}
            if hint in (set, frozenset) or origin in (set, frozenset):
                schema["uniqueItems"] = True
            return schema
        if hint is dict or origin in (dict, typing.Mapping, __import__("collections.abc").abc.Mapping):
            value = self.of(args[1]) if len(args) == 2 else {}
            return {"additionalProperties": value if value else True, "type": "object"}
        if dataclasses.is_dataclass(hint) or _is_typeddict(hint) or _is_model(hint):
            return self._named(hint, lambda: self.object(hint))
        return {}

    def _named(self, cls, build) -> dict:
        name = cls.__name__
        if name not in self.defs:
            self.defs[name] = {}
            self.defs[name] = build()
        return {"$ref": f"#/$defs/{name}"}

    def _enum(self, cls) -> dict:
        values = [member.value for member in cls]
        schema = {"enum": values, "title": cls.__name__}
        kinds = {type(v) for v in values}
        if len(kinds) == 1 and next(iter(kinds)) in _PRIMITIVES:
            schema["type"] = _PRIMITIVES[next(iter(kinds))]
        return schema

    def object(self, cls, title=None) -> dict:
        """A class with fields: properties, required, title."""
        properties, required = {}, []
        for name, hint, default, field in fields_of(cls):
            prop = {**self.of(hint, field), "title": title_of(name)}
            if default is _EMPTY:
                required.append(name)
            else:
                prop["default"] = jsonable(default)
            properties[name] = prop
        schema = {"properties": properties, "title": title or cls.__name__, "type": "object"}
        if required:
            schema["required"] = required
        return schema

    def finish(self, schema: dict) -> dict:
        if self.defs:
            schema = {"$defs": dict(self.defs), **schema}
        return schema


def fields_of(cls) -> list:
    """(name, hint, default or _EMPTY, FieldInfo or None) of a dataclass, TypedDict or model."""
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else _EMPTY)
            out.append((f.name, hints.get(f.name, _EMPTY), default, None))
        return out
    if _is_typeddict(cls):
        required = getattr(cls, "__required_keys__", set(hints))
        return [(n, h, _EMPTY if n in required else None, None) for n, h in hints.items()]
    for name, hint in hints.items():
        if name.startswith("_") or typing.get_origin(hint) is typing.ClassVar:
            continue
        default = getattr(cls, name, _EMPTY)
        field = None
        if isinstance(default, FieldInfo):
            field, default = default, default.default
        out.append((name, hint, default, field))
    return out


def jsonable(value):
    """A value as pydantic's `mode="json"` dumps it."""
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


# --- arguments -----------------------------------------------------------------------------

class Parameter:
    def __init__(self, name, hint, default, field):
        self.name, self.hint, self.default, self.field = name, hint, default, field
        self.required = default is _EMPTY


def parameters(function, skip=()) -> list:
    """The parameters a tool's arguments fill, with `Field(...)` defaults unpacked."""
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception:  # an annotation that does not evaluate: pydantic fails the same way later
        hints = {}
    out = []
    for name, parameter in signature.parameters.items():
        if name in skip or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        default, field = parameter.default, None
        if isinstance(default, FieldInfo):
            field, default = default, default.default
        hint = hints.get(name, parameter.annotation)
        out.append(Parameter(name, hint, default, field))
    return out


def arguments_schema(model: str, params: list) -> dict:
    schemas = Schemas()
    properties, required = {}, []
    for p in params:
        if p.hint is _EMPTY:
            prop = {"title": p.name, "type": "string"}
        else:
            prop = {**schemas.of(p.hint, p.field), "title": title_of(p.name)}
        if p.required:
            required.append(p.name)
        else:
            prop["default"] = jsonable(p.default)
        properties[p.name] = prop
    schema = {"properties": properties, "title": model, "type": "object"}
    if required:
        schema["required"] = required
    return schemas.finish(schema)


def output_schema(function_name: str, annotation):
    """(schema, wrap): FastMCP's structured output for a return annotation; (None, False) when
    the result is unstructured (no annotation, content types, classes without fields)."""
    if annotation is _EMPTY:
        return None, False
    hint, _ = _split_annotated(annotation)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    schemas = Schemas()
    model = f"{function_name}Output"
    wrapped = lambda: (schemas.finish({"properties": {"result": {**schemas.of(annotation), "title": "Result"}},
                                       "required": ["result"], "title": model, "type": "object"}), True)
    if hint is None or hint is type(None):
        return wrapped()
    if origin is dict:
        if len(args) == 2 and args[0] is str:
            return schemas.finish({"additionalProperties": schemas.of(args[1]) or True,
                                   "title": f"{function_name}DictOutput", "type": "object"}), False
        return wrapped()
    if origin is not None:
        return wrapped()
    if isinstance(hint, type):
        from mcp.types import _Model
        if issubclass(hint, _Model) or getattr(hint, "__mcpbox_content__", False):
            return None, False
        if _is_model(hint) or _is_typeddict(hint) or dataclasses.is_dataclass(hint):
            return schemas.finish(schemas.object(hint)), False
        if hint in (str, int, float, bool, bytes):
            return wrapped()
        try:
            if typing.get_type_hints(hint):
                return schemas.finish(schemas.object(hint)), False
        except Exception:
            pass
        return None, False
    return wrapped()


def _json_kind(value) -> str:
    return {dict: "dict", list: "list", str: "str", int: "int", float: "float", bool: "bool"}.get(type(value), type(value).__name__)


def coerce(value, hint, location, errors):
    """`value` made to fit `hint` the way pydantic's lax mode would; problems appended."""
    hint, field = _split_annotated(hint)
    result = _coerce(value, hint, location, errors)
    if field is not None and result is not _BAD:
        field.check(result, location, errors)
    return result


_BAD = object()


def _coerce(value, hint, location, errors):
    if hint is _EMPTY or hint is typing.Any or hint is object:
        return value
    if hint is None or hint is type(None):
        if value is None:
            return None
        errors.append((location, "Input should be None", "none_required", value))
        return _BAD
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, pytypes.UnionType):
        if value is None and type(None) in args:
            return None
        for option in args:
            trial = []
            result = coerce(value, option, location, trial)
            if not trial:
                return result
        errors.append((location, f"Input should match one of {[getattr(a, '__name__', str(a)) for a in args]}",
                       "union_tag_invalid", value))
        return _BAD
    if origin is typing.Literal:
        if value in args:
            return value
        expected = " or ".join(repr(a) for a in args)
        errors.append((location, f"Input should be {expected}", "literal_error", value))
        return _BAD
    if hint is bool:
        if isinstance(value, bool):
            return value
        if value in (0, 1) and isinstance(value, int):
            return bool(value)
        if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "on", "off", "1", "0", "t", "f", "y", "n"):
            return value.lower() in ("true", "yes", "on", "1", "t", "y")
        errors.append((location, "Input should be a valid boolean", "bool_type", value))
        return _BAD
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        errors.append((location, "Input should be a valid integer", "int_type", value))
        return _BAD
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        errors.append((location, "Input should be a valid number", "float_type", value))
        return _BAD
    if hint is str:
        if isinstance(value, str):
            return value
        errors.append((location, "Input should be a valid string", "string_type", value))
        return _BAD
    if hint is bytes:
        if isinstance(value, str):
            return value.encode()
        errors.append((location, "Input should be a valid bytes", "bytes_type", value))
        return _BAD
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            errors.append((location, f"Input should be {' or '.join(repr(m.value) for m in hint)}", "enum", value))
            return _BAD
    if hint in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, typing.Sequence,
                                                          __import__("collections.abc").abc.Sequence):
        if not isinstance(value, (list, tuple)):
            errors.append((location, "Input should be a valid list", "list_type", value))
            return _BAD
        item = args[0] if args else typing.Any
        items = [coerce(v, item, f"{location}.{i}", errors) for i, v in enumerate(value)]
        kind = origin if origin in (tuple, set, frozenset) else (hint if hint in (tuple, set, frozenset) else list)
        return kind(items)
    if hint is dict or origin in (dict, typing.Mapping, __import__("collections.abc").abc.Mapping):
        if not isinstance(value, dict):
            errors.append((location, "Input should be a valid dictionary", "dict_type", value))
            return _BAD
        if len(args) == 2:
            return {k: coerce(v, args[1], f"{location}.{k}", errors) for k, v in value.items()}
        return dict(value)
    if dataclasses.is_dataclass(hint) or _is_typeddict(hint) or _is_model(hint):
        if isinstance(value, hint) if not _is_typeddict(hint) else False:
            return value
        if not isinstance(value, dict):
            errors.append((location, f"Input should be a valid dictionary or instance of {hint.__name__}",
                           "model_type", value))
            return _BAD
        kwargs = {}
        for name, field_hint, default, field in fields_of(hint):
            where = f"{location}.{name}"
            if name in value:
                kwargs[name] = coerce(value[name], field_hint, where, errors)
            elif default is _EMPTY:
                errors.append((where, "Field required", "missing", value))
        if _is_typeddict(hint):
            return kwargs
        try:
            return hint(**kwargs)
        except Exception as error:
            errors.append((location, str(error), "value_error", value))
            return _BAD
    return value


def bind(model: str, params: list, arguments: dict) -> dict:
    """The keyword arguments for the function, or ValidationError. Values that are JSON text
    where the parameter is not a string are parsed first (FastMCP's `pre_parse_json`: models
    often send lists and objects as strings)."""
    errors, kwargs = [], {}
    for p in params:
        if p.name not in arguments:
            if p.required:
                errors.append((p.name, "Field required", "missing", arguments))
            else:
                kwargs[p.name] = p.default
            continue
        value = arguments[p.name]
        base, _ = _split_annotated(p.hint)
        if isinstance(value, str) and base is not str:
            try:
                parsed = json.loads(value)
                if not isinstance(parsed, (str, int, float)):
                    value = parsed
            except ValueError:
                pass
        kwargs[p.name] = coerce(value, p.hint, p.name, errors)
    if errors:
        raise ValidationError(model, errors)
    return kwargs
