"""mcpbox's stand-in for the part of pydantic that MCP servers use next to the SDK: `Field`
(descriptions, defaults and bounds of tool parameters, also inside `Annotated[...]`) and plain
`BaseModel` data classes. The real pydantic needs pydantic-core, a native extension no
WebAssembly build of the SDK's CPython has: a server that uses more than this fails the build
naming pydantic-core (`mcpbox build` checks the names it imports)."""

import copy
import json
import typing

__all__ = ["Field", "FieldInfo", "BaseModel", "ConfigDict", "ValidationError"]
__version__ = "2.0.0+mcpbox"

_MISSING = __import__("inspect").Parameter.empty

_BOUNDS = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum",
           "multiple_of": "multipleOf", "pattern": "pattern"}


class FieldInfo:
    def __init__(self, default=_MISSING, *, default_factory=None, description=None, title=None, examples=None,
                 alias=None, json_schema_extra=None, **constraints):
        self.default = default_factory() if default_factory is not None and default is _MISSING else default
        if self.default is Ellipsis:
            self.default = _MISSING
        self.description, self.title, self.examples, self.alias = description, title, examples, alias
        self.json_schema_extra = json_schema_extra
        self.bounds = {k: v for k, v in constraints.items() if v is not None}

    def merged(self, other: "FieldInfo") -> "FieldInfo":
        merged = copy.copy(self)
        for key in ("description", "title", "examples", "alias", "json_schema_extra"):
            if getattr(other, key) is not None:
                setattr(merged, key, getattr(other, key))
        merged.bounds = {**self.bounds, **other.bounds}
        if other.default is not _MISSING:
            merged.default = other.default
        return merged

    def constraints(self, schema: dict) -> dict:
        """What this field adds to its type's schema."""
        out = {}
        array = schema.get("type") == "array"
        text = schema.get("type") == "string"
        for key, value in self.bounds.items():
            if key in _BOUNDS:
                out[_BOUNDS[key]] = value
            elif key in ("min_length", "max_length"):
                word = "Items" if array else ("Length" if text else "Length")
                out[("min" if key == "min_length" else "max") + word] = value
        if self.description is not None:
            out["description"] = self.description
        if self.title is not None:
            out["title"] = self.title
        if self.examples is not None:
            out["examples"] = self.examples
        if isinstance(self.json_schema_extra, dict):
            out.update(self.json_schema_extra)
        return out

    def check(self, value, location, errors):
        b = self.bounds
        tests = [("ge", lambda v, x: v >= x, "greater than or equal to", "greater_than_equal"),
                 ("gt", lambda v, x: v > x, "greater than", "greater_than"),
                 ("le", lambda v, x: v <= x, "less than or equal to", "less_than_equal"),
                 ("lt", lambda v, x: v < x, "less than", "less_than")]
        for key, ok, words, kind in tests:
            if key in b and isinstance(value, (int, float)) and not ok(value, b[key]):
                errors.append((location, f"Input should be {words} {b[key]}", kind, value))
        if "min_length" in b and hasattr(value, "__len__") and len(value) < b["min_length"]:
            errors.append((location, f"Value should have at least {b['min_length']} items", "too_short", value))
        if "max_length" in b and hasattr(value, "__len__") and len(value) > b["max_length"]:
            errors.append((location, f"Value should have at most {b['max_length']} items", "too_long", value))


def Field(default=_MISSING, **kwargs):  # noqa: N802 - pydantic's name
    return FieldInfo(default, **kwargs)


def ConfigDict(**kwargs):  # noqa: N802
    return dict(kwargs)


class ValidationError(ValueError):
    pass


class BaseModel:
    """Fields from annotations, keyword construction with checks, `model_dump`."""

    model_config: typing.ClassVar[dict] = {}

    def __init__(self, **data):
        from mcpbox_compat.schema import coerce, fields_of, ValidationError as Invalid
        errors = []
        for name, hint, default, _field in fields_of(type(self)):
            if name in data:
                value = coerce(data[name], hint, name, errors)
            elif default is _MISSING:
                errors.append((name, "Field required", "missing", data))
                continue
            else:
                value = copy.copy(default)
            object.__setattr__(self, name, value)
        if errors:
            raise Invalid(type(self).__name__, errors)

    @classmethod
    def model_validate(cls, data):
        return data if isinstance(data, cls) else cls(**data)

    @classmethod
    def model_json_schema(cls, **_):
        from mcpbox_compat.schema import Schemas
        schemas = Schemas()
        return schemas.finish(schemas.object(cls))

    def model_dump(self, *, mode="python", exclude_none=False, **_):
        from mcpbox_compat.schema import fields_of, jsonable
        out = {}
        for name, *_rest in fields_of(type(self)):
            value = getattr(self, name, None)
            if exclude_none and value is None:
                continue
            out[name] = jsonable(value) if mode == "json" else value
        return out

    def model_dump_json(self, *, indent=None, **kwargs):
        return json.dumps(self.model_dump(mode="json", **kwargs), indent=indent)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self.model_dump().items())
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other):
        return type(self) is type(other) and self.model_dump() == other.model_dump()
