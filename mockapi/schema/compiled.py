"""A structural schema compiled into a tree of :class:`_Node`, everything the walk needs precomputed.

Each node precomputes the Python types for which validating it is a no-op (``_Node.quick``), so
most scalars cost one set lookup.
"""

from __future__ import annotations

from typing import Any, Callable

from mockapi.schema.formats import Pattern, PatternError, _format_checker, compile_schema_pattern
from mockapi.schema.goformat import go_json, go_quote

_MAX_SCHEMA_DEPTH = 100  # deeper schema nodes accept anything
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

class _Node:
    """One schema node with everything the walk needs precomputed."""

    __slots__ = (
        "types", "type_label", "nullable", "format", "format_check", "props", "additional",
        "additional_forbidden", "items", "preserve", "embedded", "default", "has_default", "defaulted",
        "required", "enum", "enum_strings", "enum_detail", "maximum", "exclusive_maximum", "minimum",
        "exclusive_minimum", "multiple_of", "max_length", "min_length", "pattern", "pattern_text",
        "max_items", "min_items", "unique_items", "max_properties", "min_properties", "list_type",
        "list_map_keys", "all_of", "any_of", "one_of", "not_", "junctors", "string_checks",
        "number_checks", "has_list_type", "has_embedded", "inert", "trivial", "ok_kinds", "quick",
        "bare_object", "bare_list", "direct_object",
    )  # fmt: skip

    def __init__(self) -> None:
        self.types: tuple[str, ...] | None = None
        self.type_label = ""
        self.nullable = False
        self.format: str | None = None
        self.format_check: Callable[[str], bool] | None = None
        self.props: dict[str, _Node] = {}
        self.additional: _Node | None = None
        self.additional_forbidden = False
        self.items: _Node | None = None
        self.preserve = False
        self.embedded = False
        self.default: Any = None
        self.has_default = False
        self.defaulted: tuple[tuple[str, _Node], ...] = ()
        self.required: tuple[str, ...] = ()
        self.enum: tuple[Any, ...] | None = None
        self.enum_strings: frozenset[str] | None = None
        self.enum_detail = ""
        self.maximum = self.minimum = self.multiple_of = None
        self.exclusive_maximum = self.exclusive_minimum = False
        self.max_length = self.min_length = self.max_items = self.min_items = None
        self.max_properties = self.min_properties = None
        self.pattern: Pattern | None = None
        self.pattern_text = ""
        self.unique_items = False
        self.list_type: str | None = None
        self.list_map_keys: tuple[str, ...] = ()
        self.all_of: tuple[_Node, ...] = ()
        self.any_of: tuple[_Node, ...] = ()
        self.one_of: tuple[_Node, ...] = ()
        self.not_: _Node | None = None
        self.junctors = self.string_checks = self.number_checks = False
        self.has_list_type = self.has_embedded = self.inert = self.trivial = False
        self.ok_kinds: frozenset[type] = frozenset()  # Python types that pass the type check outright
        self.quick: frozenset[type] = frozenset()  # Python types for which validating is a no-op
        self.bare_object = False  # a dict here needs only the object checks (no type, enum, allOf...)
        self.bare_list = False  # a list here needs only the array checks
        self.direct_object = False  # a dict here is walked straight away (see _visit)


def _number(value: Any) -> int | float | None:
    return value if type(value) in (int, float) else None


def _integer(value: Any) -> int | None:
    return value if type(value) is int else None


def _compile(schema: Any, depth: int = 0) -> _Node:
    node = _Node()
    if not isinstance(schema, dict) or depth > _MAX_SCHEMA_DEPTH:
        node.preserve = True  # nothing to go on: keep whatever is there
        _compile_flags(node)
        return node
    _compile_type(node, schema)
    _compile_children(node, schema, depth)
    _compile_value_checks(node, schema)
    _compile_junctors(node, schema, depth)
    _compile_flags(node)
    return node


def _compile_type(node: _Node, schema: dict) -> None:
    if schema.get("x-kubernetes-int-or-string") is True:
        node.types = ("integer", "string")
    elif isinstance(schema.get("type"), str) and schema["type"]:
        node.types = (schema["type"],)
    node.type_label = ",".join(node.types or ())
    node.nullable = schema.get("nullable") is True
    node.format_check = _format_checker(schema.get("format"))
    node.format = schema["format"] if node.format_check else None


def _compile_children(node: _Node, schema: dict, depth: int) -> None:
    props = schema.get("properties")
    if isinstance(props, dict):
        node.props = {key: _compile(sub, depth + 1) for key, sub in props.items()}
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        node.additional = _compile(additional, depth + 1)
    elif isinstance(additional, bool):
        # a bare true/false keeps the keys but prunes what is inside them, as kube's prune(v, nil) does
        node.additional = _UNSPECIFIED
        node.additional_forbidden = not additional
    if isinstance(schema.get("items"), dict):
        node.items = _compile(schema["items"], depth + 1)
    node.preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    node.embedded = schema.get("x-kubernetes-embedded-resource") is True
    if schema.get("default") is not None:
        node.default, node.has_default = schema["default"], True
    node.defaulted = tuple((key, sub) for key, sub in node.props.items() if sub.has_default)


def _compile_value_checks(node: _Node, schema: dict) -> None:
    required = schema.get("required")
    if isinstance(required, list):
        node.required = tuple(key for key in required if isinstance(key, str))
    _compile_enum(node, schema.get("enum"))
    node.maximum, node.minimum = _number(schema.get("maximum")), _number(schema.get("minimum"))
    node.multiple_of = _number(schema.get("multipleOf"))
    node.exclusive_maximum = schema.get("exclusiveMaximum") is True
    node.exclusive_minimum = schema.get("exclusiveMinimum") is True
    node.max_length, node.min_length = _integer(schema.get("maxLength")), _integer(schema.get("minLength"))
    node.max_items, node.min_items = _integer(schema.get("maxItems")), _integer(schema.get("minItems"))
    node.max_properties = _integer(schema.get("maxProperties"))
    node.min_properties = _integer(schema.get("minProperties"))
    node.unique_items = schema.get("uniqueItems") is True
    _compile_pattern(node, schema.get("pattern"))
    if isinstance(schema.get("x-kubernetes-list-type"), str):
        node.list_type = schema["x-kubernetes-list-type"]
    keys = schema.get("x-kubernetes-list-map-keys")
    if isinstance(keys, list):
        node.list_map_keys = tuple(key for key in keys if isinstance(key, str))


def _compile_enum(node: _Node, enum: Any) -> None:
    if not isinstance(enum, list) or not enum:
        return
    node.enum = tuple(enum)
    if all(type(value) is str for value in enum):
        node.enum_strings = frozenset(enum)
    shown = (value if type(value) is str else go_json(value) for value in enum)
    node.enum_detail = "supported values: " + ", ".join(go_quote(value) for value in shown)


def _compile_pattern(node: _Node, pattern: Any) -> None:
    if not isinstance(pattern, str) or not pattern:
        return
    node.pattern_text = pattern
    try:
        node.pattern = compile_schema_pattern(pattern)
    except PatternError:
        node.pattern = None  # only reachable for schemas that bypassed validate_crd (built-ins)


def _compile_junctors(node: _Node, schema: dict, depth: int) -> None:
    for key, attr in (("allOf", "all_of"), ("anyOf", "any_of"), ("oneOf", "one_of")):
        subs = schema.get(key)
        if isinstance(subs, list):
            setattr(node, attr, tuple(_compile(sub, depth + 1) for sub in subs))
    if isinstance(schema.get("not"), dict):
        node.not_ = _compile(schema["not"], depth + 1)


_KINDS_OF = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "object": (dict,),
             "array": (list,)}  # fmt: skip
_ALL_KINDS = frozenset({str, int, float, bool, dict, list, type(None)})


def _compile_flags(node: _Node) -> None:
    children = [*node.props.values(), *(c for c in (node.additional, node.items) if c is not None)]
    node.junctors = bool(node.all_of or node.any_of or node.one_of or node.not_ is not None)
    node.string_checks = node.max_length is not None or node.min_length is not None or node.pattern is not None
    node.number_checks = any(v is not None for v in (node.maximum, node.minimum, node.multiple_of))
    node.has_list_type = node.list_type in ("set", "map") or any(c.has_list_type for c in children)
    node.has_embedded = any(c.embedded or c.has_embedded for c in children)
    node.inert = node.preserve and not children and not node.embedded
    any_of_kinds = _any_of_kinds(node)
    checks = (
        (node.junctors and any_of_kinds is None) or node.enum or node.string_checks or node.number_checks
        or node.format_check or node.required or node.unique_items or node.additional_forbidden
        or any(v is not None for v in (node.max_items, node.min_items, node.max_properties, node.min_properties))
    )  # fmt: skip
    node.trivial = not (children or node.types or node.format or node.junctors or checks)
    if node.types is not None:
        node.ok_kinds = frozenset(kind for name in node.types for kind in _KINDS_OF.get(name, ()))
    elif node.format is not None:
        node.ok_kinds = frozenset({str, list})  # kube-openapi lets these through a format check
    node.bare_object = (not node.ok_kinds or dict in node.ok_kinds) and not node.junctors and node.enum is None
    node.bare_list = (not node.ok_kinds or list in node.ok_kinds) and not node.junctors and node.enum is None
    node.direct_object = node.bare_object and node.min_properties is None and node.max_properties is None
    if node.trivial:
        node.quick = _ALL_KINDS
    elif not checks and not children:
        quick = (node.ok_kinds or _ALL_KINDS) & (any_of_kinds or _ALL_KINDS)
        nulls_pass = node.nullable or node.types is None  # a null is checked for its type (and enum) only
        node.quick = (quick | {type(None)}) if nulls_pass else (quick - {type(None)})


def _any_of_kinds(node: _Node) -> frozenset[type] | None:
    """When the only junctor is an anyOf whose branches only check types (int-or-string's
    ``anyOf: [{type: integer}, {type: string}]``), the kinds that satisfy it outright."""
    if not node.any_of or node.all_of or node.one_of or node.not_ is not None:
        return None
    if not all(sub.quick for sub in node.any_of):
        return None
    return frozenset().union(*(sub.quick for sub in node.any_of)) - {type(None)}


_EMPTY = _Node()  # no fields at all: every key below it is pruned
_compile_flags(_EMPTY)
_UNSPECIFIED = _Node()  # additionalProperties: true/false, no schema: like _EMPTY, but nulls stay
_UNSPECIFIED.nullable = True
_compile_flags(_UNSPECIFIED)

