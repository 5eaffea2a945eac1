"""What apiextensions-apiserver does to a custom resource on every write, for any kind we serve.

As kube-apiserver does it: prune unknown fields (recording their paths), drop nulls of
non-nullable fields, apply defaults, then validate with kube-openapi's semantics and messages.
A schema is compiled once (:func:`compile`, cached by identity) into a tree of :class:`_Node`;
``Validator.apply(obj)`` mutates ``obj`` in place and returns an :class:`Outcome`.

For speed the object is walked once: each value is pruned and defaulted and then validated before
its parent's own checks run (``required`` after the parent's defaults), which gives the results of
kube's prune-everything, default-everything, validate-everything order. Where kube-openapi checks a
whole object or array before its members (allOf/anyOf/oneOf/not, enum, min/maxProperties) that
value is shaped first and validated afterwards. Each node precomputes the Python types for which
validating it is a no-op (``_Node.quick``), so most scalars cost one set lookup.

Anchors (k8s.io/apiextensions-apiserver ``pkg/apiserver``): ``schema/pruning/algorithm.go``,
``schema/defaulting/{prunenulls,algorithm}.go``, ``schema/listtype/validation.go``,
``schema/objectmeta/validation.go``, ``validation/validation.go`` (kubeOpenAPIResultToFieldErrors,
which turns kube-openapi results into field errors) and ``validation/formats.go`` (the formats a CRD
may use; others are ignored). kube-openapi ``pkg/validation/validate`` fixes the order of checks on
one value — type, allOf/anyOf/oneOf/not, string, format, number, array, enum, object — and the
wording of every message. ``x-kubernetes-validations`` (CEL) is ignored here.

The tree is walked only where the schema goes: values below fields that preserve unknown fields
are never visited, so the walk is as deep as the schema, whatever the object holds.
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime
import ipaddress
import math
import re

import re2
from collections import OrderedDict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable

from mockapi import errors
from mockapi.schema import meta

_MAX_SCHEMA_DEPTH = 100  # deeper schema nodes accept anything
_CACHE_SIZE = 256
_TYPE_META_KEYS = frozenset({"apiVersion", "kind", "metadata"})
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MAX_JSON_INTEGER = float(2**53 - 1)


@dataclass
class Outcome:
    """What one apply did: the unknown fields it pruned (kube's order) and every validation failure."""

    unknown_fields: list[str] = field(default_factory=list)
    errors: list[errors.FieldError] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Go's renderings, because kube-apiserver's messages are printed by Go's fmt and encoding/json.


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """strconv.Quote / ``%q``."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest round-tripping digits of a positive float and the decimal point's position."""
    _, digits, exponent = Decimal(repr(value)).as_tuple()
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exponent += 1
    return "".join(map(str, digits)), len(digits) + exponent


def _format_e(digits: str, point: int) -> str:
    exponent = point - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


def _format_f(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def _go_float_parts(value: float) -> tuple[str, str, int] | str:
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    digits, point = _shortest_digits(abs(value))
    return ("-" if value < 0 else ""), digits, point


def go_float(value: float) -> str:
    """``%v`` of a float64 (``%g`` with the shortest digits): 1.5, 1e+06, 1e-05."""
    parts = _go_float_parts(float(value))
    if isinstance(parts, str):
        return parts
    sign, digits, point = parts
    if point - 1 < -4 or point - 1 >= 6:
        return sign + _format_e(digits, point)
    return sign + _format_f(digits, point)


def _go_json_float(value: float) -> str:
    parts = _go_float_parts(value)
    if isinstance(parts, str):
        return parts
    sign, digits, point = parts
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        return sign + re.sub(r"e-0(\d)$", r"e-\1", _format_e(digits, point))
    return sign + _format_f(digits, point)


def _go_json_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ord(ch) < 0x20 or ch in "<>&\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def go_json(value: Any) -> str:
    """encoding/json.Marshal of a decoded JSON value (sorted keys, Go's number format)."""
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        return _go_json_float(value)
    if kind is dict:
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{_go_json_string(k)}:{go_json(v)}" for k, v in items) + "}"
    if kind is list:
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return _go_json_string(str(value))


def go_sharp(value: Any) -> str:
    """``%#v`` of a decoded JSON value, e.g. ``map[string]interface {}{"name":"x"}``."""
    kind = type(value)
    if value is None:
        return "interface {}(nil)"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        return go_float(value)
    if kind is dict:
        items = sorted((str(k), v) for k, v in value.items())
        return "map[string]interface {}{" + ", ".join(f"{go_quote(k)}:{go_sharp(v)}" for k, v in items) + "}"
    if kind is list:
        return "[]interface {}{" + ", ".join(go_sharp(v) for v in value) + "}"
    return go_quote(str(value))


def _bad_value(value: Any) -> Any:
    """field.Error renders a nil bad value as the string "null"."""
    return "null" if value is None else value


# ---------------------------------------------------------------------------------------------
# Formats: the ones apiextensions keeps (validation/formats.go), checked as go-openapi/strfmt does.

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATE_TIME_CLOCK = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")
_GO_DURATION = re.compile(r"[-+]?(0|((\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)")
_LOOSE_DURATION = re.compile(r"(\d+)\s*([A-Za-z\u00b5]+)")
_DURATION_UNITS = (("ns", "nano"), ("us", "\u00b5s", "micro"), ("ms", "milli"), ("s", "sec"), ("m", "min"),
                   ("h", "hr", "hour"), ("d", "day"), ("w", "wk", "week"))  # fmt: skip
_UUID = r"[0-9a-f]{8}-?[0-9a-f]{4}-?%s[0-9a-f]{3}-?%s[0-9a-f]{3}-?[0-9a-f]{12}"
_HOST_LABEL = r"[^\W_](?:(?:[^\W_]|-){0,61}[^\W_])?"
_HOSTNAME = re.compile(rf"[^\W_](?:-?[^\W_]{{0,62}})?|(?:{_HOST_LABEL}\.)+[^\W\d_]{{2,63}}")
_OCTET = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_REGEX_FORMATS = {
    "uuid": re.compile(_UUID % ("[0-9a-f]", "[0-9a-f]"), re.I),
    "uuid3": re.compile(_UUID % ("3", "[0-9a-f]"), re.I),
    "uuid4": re.compile(_UUID % ("4", "[89ab]"), re.I),
    "uuid5": re.compile(_UUID % ("5", "[89ab]"), re.I),
    "hexcolor": re.compile(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})"),
    "rgbcolor": re.compile(rf"rgb\({_OCTET},{_OCTET},{_OCTET}\)"),
    "bsonobjectid": re.compile(r"[0-9a-fA-F]{24}"),
    "email": re.compile(r"(?:[^<>]*<)?[^@\s<>]+@[^@\s<>]+>?"),
}


def _is_date(text: str) -> bool:
    match = _DATE.fullmatch(text)
    if not match:
        return False
    try:
        datetime.date(*(int(part) for part in match.groups()))
    except ValueError:
        return False
    return True


def _is_date_time(text: str) -> bool:
    """strfmt.IsDateTime: an RFC 3339 date, 'T', and hh:mm:ss[.frac] with Z or ±hh:mm."""
    parts = text.lower().split("t")
    if len(text) < 4 or len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = _DATE_TIME_CLOCK.fullmatch(parts[1])
    return bool(match) and match[1] <= "23" and match[2] <= "59" and match[3] <= "59"


def _is_duration(text: str) -> bool:
    """strfmt.ParseDuration: a Go duration, or any '<n> <unit>' it can make sense of."""
    if _GO_DURATION.fullmatch(text):
        return True
    for _, unit in _LOOSE_DURATION.findall(text):
        unit = unit.lower()
        for variants in _DURATION_UNITS:
            if unit in variants or unit.startswith(variants[-1]):
                return True
    return False


def _is_byte(text: str) -> bool:
    try:
        base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _parses_as_ip(text: str) -> bool:
    if "%" in text:
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _is_cidr(text: str) -> bool:
    address, slash, prefix = text.rpartition("/")
    if not slash or not (prefix.isascii() and prefix.isdigit()) or not _parses_as_ip(address):
        return False
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return True


def _is_mac(text: str) -> bool:
    """net.ParseMAC: 6, 8 or 20 octets as xx:xx or xx-xx, or 3, 4 or 10 groups as xxxx.xxxx."""
    for separator, width, counts in ((":", 2, (6, 8, 20)), ("-", 2, (6, 8, 20)), (".", 4, (3, 4, 10))):
        groups = text.split(separator)
        if len(groups) in counts and all(len(g) == width and _is_hex(g) for g in groups):
            return True
    return False


def _is_hex(text: str) -> bool:
    return all(ch in "0123456789abcdefABCDEF" for ch in text)


def _is_uri(text: str) -> bool:
    """url.ParseRequestURI: an absolute URI or an absolute path, without control characters."""
    if not text or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        return False
    return text.startswith("/") or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", text) is not None


def _is_hostname(text: str) -> bool:
    return len(text) <= 255 and _HOSTNAME.fullmatch(text) is not None


_FORMATS: dict[str, Callable[[str], bool]] = {
    "date": _is_date,
    "datetime": _is_date_time,
    "duration": _is_duration,
    "byte": _is_byte,
    "ipv4": lambda text: "." in text and _parses_as_ip(text),
    "ipv6": lambda text: ":" in text and _parses_as_ip(text),
    "cidr": _is_cidr,
    "mac": _is_mac,
    "uri": _is_uri,
    "hostname": _is_hostname,
    "password": lambda text: True,
    **{name: (lambda text, rx=rx: rx.fullmatch(text) is not None) for name, rx in _REGEX_FORMATS.items()},
}


def _format_checker(fmt: Any) -> Callable[[str], bool] | None:
    """The check for a format a CRD may use (go-openapi drops '-': date-time is datetime), else None."""
    if not isinstance(fmt, str):
        return None
    return _FORMATS.get(fmt.replace("-", ""))


def compile_pattern(pattern: str):
    """A schema ``pattern``, compiled with RE2 — the regexp engine kube-apiserver uses (Go's
    regexp), so the same syntax is accepted and matching takes linear time whatever a hostile CRD
    and object combine (Python's backtracking ``re`` could be made to run for hours).
    Searched, not fully matched, as JSON Schema says. Raises ``PatternError``."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        message = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(message) from None


class PatternError(ValueError):
    """A pattern RE2 (and so kube-apiserver) cannot compile."""


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


# ---------------------------------------------------------------------------------------------
# The compiled schema.


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
        self.pattern: re.Pattern | None = None
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
        node.pattern = compile_pattern(pattern)
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


# ---------------------------------------------------------------------------------------------
# The walk: pruning, null pruning, defaulting and validating.


class _Run:
    """What one apply collects."""

    __slots__ = ("unknown", "meta_unknown", "embedded_unknown", "errors", "embedded_errors", "list_errors")

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.meta_unknown: list[str] = []
        self.embedded_unknown: list[str] = []
        self.errors: list[errors.FieldError] = []
        self.embedded_errors: list[errors.FieldError] = []
        self.list_errors: list[errors.FieldError] = []


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else f"{key}"


def copy_json(value: Any) -> Any:
    """A deep copy of a decoded JSON value."""
    kind = type(value)
    if kind is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if kind is list:
        return [copy_json(item) for item in value]
    return value


def _default_value(node: _Node, path: str, run: _Run, errs: list) -> Any:
    """A fresh copy of node's default, with the defaults below it applied, validated."""
    value = copy_json(node.default)
    _visit(node, value, path, run, False, errs)
    return value


def _visit(node: _Node, value: Any, path: str, run: _Run, keep: bool, errs: list) -> None:
    """Everything apiextensions does to one value, in one walk: prune unknown fields and
    non-nullable nulls below it, default, validate. ``keep`` is kube's skipPrune (unknown keys of
    this value survive because a preserve-unknown-fields array holds it)."""
    kind = type(value)
    if kind is dict:
        if node.direct_object:
            _walk_object(node, value, path, run, keep or node.preserve, errs)
            return
        # checks on the whole object come first in kube-openapi: shape it, then validate it
        _walk_object(node, value, path, run, keep or node.preserve, [])
    elif kind is list:
        if node.bare_list:
            _walk_list(node, value, path, run, keep or node.preserve, errs)
            return
        _walk_list(node, value, path, run, keep or node.preserve, [])
    elif _skippable(node, value):
        return
    _validate(node, value, path, errs)


def _walk_object(node: _Node, obj: dict, path: str, run: _Run, keep: bool, errs: list, *, root: bool = False) -> None:
    props, additional = node.props, node.additional
    embedded = node.embedded or root
    unknown = nulls = None
    for key, value in obj.items():
        if embedded and key in _TYPE_META_KEYS:
            _visit_type_meta(node, key, value, path, run, errs, root=root)
            continue
        child = props.get(key)
        if child is None:
            child = additional
            if child is None:
                if not keep:
                    unknown = unknown or []
                    unknown.append(key)
                continue
            if node.additional_forbidden:
                errs.append(_invalid(path, key, f"{path}.{key} in body is a forbidden property"))
        kind = type(value)
        if kind is dict or kind is list:
            if child.inert:
                if kind not in child.quick:
                    _validate(child, value, f"{path}.{key}" if path else f"{key}", errs)
            elif kind is dict and child.direct_object:
                _walk_object(child, value, f"{path}.{key}" if path else f"{key}", run, child.preserve, errs)
            else:
                _visit(child, value, f"{path}.{key}" if path else f"{key}", run, False, errs)
        elif value is None and not child.nullable:
            if child.has_default:
                obj[key] = _default_value(child, f"{path}.{key}" if path else f"{key}", run, errs)
            else:
                nulls = nulls or []
                nulls.append(key)
        elif kind not in child.quick or (kind is int and not _INT64_MIN <= value <= _INT64_MAX):
            _validate(child, value, f"{path}.{key}" if path else f"{key}", errs)
    if unknown:
        for key in unknown:
            del obj[key]
            run.unknown.append(f"{path}.{key}" if path else f"{key}")
    if nulls:
        for key in nulls:
            del obj[key]
    for key, child in node.defaulted:
        if key not in obj:
            obj[key] = _default_value(child, f"{path}.{key}" if path else key, run, errs)
    for key in node.required:
        if key not in obj:
            errs.append(errors.FieldError("required", f"{path}.{key}" if path else key))


def _visit_type_meta(node: _Node, key: str, value: Any, path: str, run: _Run, errs: list, *, root: bool) -> None:
    """apiVersion, kind and metadata of a resource are never pruned by the schema; metadata loses
    what ObjectMeta does not know. At the root, metadata is meta.py's to validate."""
    if key == "metadata":
        if type(value) is dict:
            sink = run.meta_unknown if root else run.embedded_unknown
            _prune_metadata(value, f"{path}.metadata" if path else "metadata", sink)
        if root:
            return
    child = node.props.get(key)
    if child is not None and not _skippable(child, value):
        _validate(child, value, f"{path}.{key}" if path else key, errs)


def _walk_list(node: _Node, items: list, path: str, run: _Run, keep: bool, errs: list) -> None:
    child = node.items
    if child is None and not keep:
        child = _EMPTY  # kube's prune(v, nil): objects in here lose every field
    if child is not None:
        _walk_items(child, items, path, run, keep, errs)
    count = len(items)
    if node.min_items is not None and count < node.min_items:
        errs.append(_invalid(path, count, f"{path} in body should have at least {node.min_items} items"))
    if node.max_items is not None and count > node.max_items:
        errs.append(_too_many(path, count, node.max_items))
    if node.unique_items and len({canonical(item) for item in items}) != count:
        errs.append(_invalid(path, "", f"{path} in body shouldn't contain duplicates"))


def _walk_items(child: _Node, items: list, path: str, run: _Run, keep: bool, errs: list) -> None:
    quick, replace_nulls = child.quick, child.has_default and not child.nullable
    for i, item in enumerate(items):
        kind = type(item)
        if kind is dict or kind is list:
            if child.inert:
                if kind not in quick:
                    _validate(child, item, f"{path}[{i}]", errs)
            elif kind is dict and child.direct_object:
                _walk_object(child, item, f"{path}[{i}]", run, keep or child.preserve, errs)
            else:
                _visit(child, item, f"{path}[{i}]", run, keep, errs)
        elif item is None and replace_nulls:
            items[i] = _default_value(child, f"{path}[{i}]", run, errs)
        elif kind not in quick or (kind is int and not _INT64_MIN <= item <= _INT64_MAX):
            _validate(child, item, f"{path}[{i}]", errs)


def _prune_metadata(metadata: dict, path: str, unknown: list[str]) -> None:
    """What the round trip through metav1.ObjectMeta drops: unknown keys (reported) and nulls."""
    for key in [key for key, value in metadata.items() if value is None or key not in meta.OBJECT_META_FIELDS]:
        if key not in meta.OBJECT_META_FIELDS:
            unknown.append(f"{path}.{key}")
        del metadata[key]
    _prune_entries(metadata.get("ownerReferences"), meta.OWNER_REFERENCE_FIELDS, f"{path}.ownerReferences", unknown)
    _prune_entries(metadata.get("managedFields"), meta.MANAGED_FIELDS_ENTRY_FIELDS, f"{path}.managedFields", unknown)


def _prune_entries(entries: Any, known: frozenset, path: str, unknown: list[str]) -> None:
    if type(entries) is not list:
        return
    for i, entry in enumerate(entries):
        if type(entry) is dict:
            for key in [key for key in entry if key not in known]:
                del entry[key]
                unknown.append(f"{path}[{i}].{key}")


# ---------------------------------------------------------------------------------------------
# Validation (kube-openapi) of one value already shaped. A parent skips a child outright when the
# child's type is one of ``child.quick`` (nothing else to check there).

_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array"}
_GO_NUMBER_FORMATS = {"integer": "int64", "number": "float64"}


def _type_invalid(path: str, expected: str, actual: str) -> errors.FieldError:
    return errors.FieldError(
        "type_invalid", path, f"{path} in body must be of type {expected}: {go_quote(actual)}", value=actual
    )


def _invalid(path: str, value: Any, detail: str) -> errors.FieldError:
    return errors.FieldError("invalid", path, detail, value=_bad_value(value))


def _too_many(path: str, actual: int, limit: int) -> errors.FieldError:
    # field.TooMany prints the count as the bad value; errors.FieldError omits values of too_many.
    detail = f"{actual}: must have at most {limit} {'item' if limit == 1 else 'items'}"
    return errors.FieldError("too_many", path, detail)


def _too_long(path: str, limit: int) -> errors.FieldError:
    return errors.FieldError("too_long", path, f"may not be more than {limit} {'byte' if limit == 1 else 'bytes'}")


def _composite(message: str) -> errors.FieldError:
    """allOf/anyOf/oneOf/not failures are not field-level: kube reports them on the root path."""
    return errors.FieldError("invalid", "", message, value="")


def _is_json_integer(value: float) -> bool:
    """swag.IsFloat64AJSONInteger: integral within 1e-9 relative error and within ±(2^53-1)."""
    if not math.isfinite(value) or abs(value) > _MAX_JSON_INTEGER:
        return False
    whole = float(int(value))
    if value == whole:
        return True
    if whole == 0:
        return False
    return abs(value - whole) / (abs(value) + abs(whole)) < 1e-9


def _json_type(value: Any, kind: type) -> str:
    if kind is int and not _INT64_MIN <= value <= _INT64_MAX:
        return "number"  # Go decodes integers beyond int64 as float64
    return _JSON_TYPES.get(kind, "")


def _skippable(node: _Node, value: Any) -> bool:
    kind = type(value)
    return kind in node.quick and (kind is not int or _INT64_MIN <= value <= _INT64_MAX)


def _validate(node: _Node, value: Any, path: str, errs: list) -> None:
    if value is None:
        if node.types is not None and not node.nullable:
            errs.append(_type_invalid(path, node.type_label, "null"))
        if node.enum is not None:
            errs.append(errors.FieldError("not_supported", path, node.enum_detail, value="null"))
        return
    kind = type(value)
    if node.ok_kinds and (kind not in node.ok_kinds or (kind is int and not _INT64_MIN <= value <= _INT64_MAX)):
        _check_type(node, value, kind, path, errs)
    if node.junctors:
        _check_junctors(node, value, path, errs)
    if kind is str:
        if node.string_checks:
            _check_string(node, value, path, errs)
        if node.format_check is not None and not _format_ok(node, value):
            errs.append(_type_invalid(path, node.format, value))
    elif kind is int or kind is float:
        if node.number_checks:
            _check_number(node, value, kind, path, errs)
    elif kind is list:
        _validate_list(node, value, path, errs)
    if node.enum is not None and not _in_enum(node, value, kind):
        errs.append(errors.FieldError("not_supported", path, node.enum_detail, value=value))
    if kind is dict:
        _validate_object(node, value, path, errs)


def _format_ok(node: _Node, value: str) -> bool:
    try:
        return node.format_check(value)
    except (ValueError, TypeError, OverflowError, RecursionError):
        return False


def _check_type(node: _Node, value: Any, kind: type, path: str, errs: list) -> None:
    actual = _json_type(value, kind)
    types = node.types or ()
    if actual in types:
        return
    if actual == "number" and "integer" in types and _is_json_integer(float(value)):
        return
    if actual == "integer" and "number" in types:
        return
    if node.format is not None:
        if actual not in ("string", "array"):
            # kube-openapi names the format, and Go's own format of the value, in this case
            errs.append(_type_invalid(path, node.format, _GO_NUMBER_FORMATS.get(actual, "")))
            return
        if "number" not in types and "integer" not in types:
            return  # kube-openapi lets strings and arrays through a formatted non-number field
    if types:
        errs.append(_type_invalid(path, node.type_label, actual))


def _sub_errors(node: _Node, value: Any, path: str) -> list[errors.FieldError]:
    errs: list[errors.FieldError] = []
    if not _skippable(node, value):
        _validate(node, value, path, errs)
    return errs


def _check_junctors(node: _Node, value: Any, path: str, errs: list) -> None:
    if node.any_of and not any(_skippable(sub, value) for sub in node.any_of):
        failures = []
        for sub in node.any_of:
            result = _sub_errors(sub, value, path)
            if not result:
                break
            failures.append(result)
        else:
            errs.append(_composite(f"{go_quote(path)} must validate at least one schema (anyOf)"))
            errs.extend(min(failures, key=len))
    if node.one_of:
        results = [_sub_errors(sub, value, path) for sub in node.one_of]
        valid = sum(1 for result in results if not result)
        if valid != 1:
            found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            errs.append(_composite(f"{go_quote(path)} must validate one and only one schema (oneOf). {found}"))
            if valid == 0:
                errs.extend(min(results, key=len))
    if node.all_of:
        results = [_sub_errors(sub, value, path) for sub in node.all_of]
        for result in results:
            errs.extend(result)
        failed = sum(1 for result in results if result)
        if failed:
            none = ". None validated" if failed == len(results) else ""
            errs.append(_composite(f"{go_quote(path)} must validate all the schemas (allOf){none}"))
    if node.not_ is not None and not _sub_errors(node.not_, value, path):
        errs.append(_composite(f"{go_quote(path)} must not validate the schema (not)"))


def _check_string(node: _Node, value: str, path: str, errs: list) -> None:
    """maxLength, minLength, pattern: kube-openapi stops at the first failure. Lengths count characters."""
    if node.max_length is not None and len(value) > node.max_length:
        errs.append(_too_long(path, node.max_length))
    elif node.min_length is not None and len(value) < node.min_length:
        errs.append(_invalid(path, value, f"{path} in body should be at least {node.min_length} chars long"))
    elif node.pattern is not None and node.pattern.search(value) is None:
        errs.append(_invalid(path, value, f"{path} in body should match '{node.pattern_text}'"))


def _as_int_bound(bound: int | float) -> int | None:
    """Integer data is compared with int64(bound), truncated, as kube-openapi does."""
    if type(bound) is int:
        return bound
    return int(bound) if math.isfinite(bound) else None


def _check_number(node: _Node, value: int | float, kind: type, path: str, errs: list) -> None:
    if node.multiple_of is not None:
        _check_multiple_of(node.multiple_of, value, kind, path, errs)
    if node.minimum is not None:
        bound, shown = _bound(node.minimum, kind)
        if value < bound or (node.exclusive_minimum and value == bound):
            than = "greater than" if node.exclusive_minimum else "greater than or equal to"
            errs.append(_invalid(path, value, f"{path} in body should be {than} {shown}"))
    if node.maximum is not None:
        bound, shown = _bound(node.maximum, kind)
        if value > bound or (node.exclusive_maximum and value == bound):
            than = "less than" if node.exclusive_maximum else "less than or equal to"
            errs.append(_invalid(path, value, f"{path} in body should be {than} {shown}"))


def _bound(bound: int | float, kind: type) -> tuple[int | float, str]:
    """The bound a value is compared with, and how kube prints it (int64 or float64)."""
    if kind is int:
        as_int = _as_int_bound(bound)
        if as_int is not None:
            return as_int, str(as_int)
    return bound, go_float(float(bound))


def _check_multiple_of(factor: int | float, value: int | float, kind: type, path: str, errs: list) -> None:
    as_int = _as_int_bound(factor) if kind is int else None
    if as_int is not None:
        if as_int < 0:
            errs.append(_invalid(path, as_int, f"factor MultipleOf declared for {path} must be positive: {as_int}"))
        elif as_int == 0 or value % as_int:
            errs.append(_invalid(path, value, f"{path} in body should be a multiple of {as_int}"))
        return
    factor = float(factor)
    if factor < 0:
        msg = f"factor MultipleOf declared for {path} must be positive: {go_float(factor)}"
        errs.append(_invalid(path, factor, msg))
        return
    try:
        ratio = (1 / factor * value) if factor < 1 else (value / factor)
    except (ZeroDivisionError, OverflowError):
        ratio = math.inf
    if not _is_json_integer(ratio):
        errs.append(_invalid(path, value, f"{path} in body should be a multiple of {go_float(factor)}"))


def _validate_list(node: _Node, items: list, path: str, errs: list) -> None:
    child = node.items
    if child is not None and child.quick is not _ALL_KINDS:
        quick = child.quick
        for i, item in enumerate(items):
            kind = type(item)
            if kind is dict and child.bare_object:
                _validate_object(child, item, f"{path}[{i}]", errs)
            elif kind not in quick or (kind is int and not _INT64_MIN <= item <= _INT64_MAX):
                _validate(child, item, f"{path}[{i}]", errs)
    count = len(items)
    if node.min_items is not None and count < node.min_items:
        errs.append(_invalid(path, count, f"{path} in body should have at least {node.min_items} items"))
    if node.max_items is not None and count > node.max_items:
        errs.append(_too_many(path, count, node.max_items))
    if node.unique_items and len({canonical(item) for item in items}) != count:
        errs.append(_invalid(path, "", f"{path} in body shouldn't contain duplicates"))


def _validate_object(node: _Node, obj: dict, path: str, errs: list) -> None:
    count = len(obj)
    if node.min_properties is not None and count < node.min_properties:
        errs.append(_invalid(path, count, f"{path} in body should have at least {node.min_properties} properties"))
        return
    if node.max_properties is not None and count > node.max_properties:
        errs.append(_too_many(path, count, node.max_properties))
        return
    props, additional = node.props, node.additional
    for key, value in obj.items():
        child = props.get(key)
        if child is None:
            if node.additional_forbidden:
                errs.append(_invalid(path, key, f"{path}.{key} in body is a forbidden property"))
                continue
            child = additional
            if child is None:
                continue
        kind = type(value)
        if kind is dict and child.bare_object:
            _validate_object(child, value, f"{path}.{key}" if path else f"{key}", errs)
        elif kind not in child.quick or (kind is int and not _INT64_MIN <= value <= _INT64_MAX):
            _validate(child, value, f"{path}.{key}" if path else f"{key}", errs)
    for key in node.required:
        if key not in obj:
            errs.append(errors.FieldError("required", f"{path}.{key}" if path else key))


def canonical(value: Any) -> Any:
    """A hashable stand-in for a JSON value that keeps Go's distinctions (1 is not 1.0, true is not 1)."""
    kind = type(value)
    if kind is str:
        return value  # nothing else canonicalizes to a bare str
    if kind is dict:
        return ("object", tuple(sorted((str(key), canonical(item)) for key, item in value.items())))
    if kind is list:
        return ("array", tuple(canonical(item) for item in value))
    return (kind.__name__, value)


def _in_enum(node: _Node, value: Any, kind: type) -> bool:
    if node.enum_strings is not None:
        return kind is str and value in node.enum_strings
    return any(_enum_equal(value, kind, allowed) for allowed in node.enum)


def _enum_equal(value: Any, kind: type, allowed: Any) -> bool:
    """Equality after converting the value to the enum value's type, as kube-openapi does."""
    allowed_kind = type(allowed)
    if kind is allowed_kind:
        return canonical(value) == canonical(allowed) if kind in (dict, list) else value == allowed
    if kind is int and allowed_kind is float:
        return float(value) == allowed
    if kind is float and allowed_kind is int:
        return math.isfinite(value) and int(value) == allowed
    return False


# ---------------------------------------------------------------------------------------------
# x-kubernetes-list-type set/map uniqueness and embedded resources: separate walks, as in kube,
# taken only where the schema has such fields. Paths here are field.Path's: map keys as [key].


def _list_type_errors(node: _Node, value: Any, path: str, errs: list) -> None:
    if type(value) is dict:
        for key, item in value.items():
            child = node.props.get(key)
            if child is not None:
                if child.has_list_type:
                    _list_type_errors(child, item, _join(path, key), errs)
            elif node.additional is not None and node.additional.has_list_type:
                _list_type_errors(node.additional, item, f"{path}[{key}]", errs)
    elif type(value) is list:
        if node.list_type == "set":
            for i in _second_occurrences([canonical(item) for item in value]):
                errs.append(_duplicate(f"{path}[{i}]", value[i]))
        elif node.list_type == "map":
            errs.extend(_list_map_errors(node, value, path))
        child = node.items
        if child is not None and child.has_list_type:
            for i, item in enumerate(value):
                _list_type_errors(child, item, f"{path}[{i}]", errs)


def _second_occurrences(keys: list) -> list[int]:
    """Indexes where a value is seen for the second time (kube reports each duplicate once)."""
    if len(set(keys)) == len(keys):
        return []
    seen: dict[Any, int] = {}
    found = []
    for i, key in enumerate(keys):
        times = seen.get(key, 0)
        if times == 1:
            found.append(i)
        seen[key] = times + 1
    return found


def _duplicate(path: str, value: Any) -> errors.FieldError:
    if type(value) in (dict, list):
        return errors.FieldError("duplicate", path, go_sharp(value))
    return errors.FieldError("duplicate", path, value=_bad_value(value))


def _list_map_errors(node: _Node, items: list, path: str) -> list[errors.FieldError]:
    for i, item in enumerate(items):
        if item is not None and type(item) is not dict:
            return [_invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map")]
    if len(items) <= 1:
        return []
    keys = node.list_map_keys
    if len(keys) == 1:  # kube compares the single key's value; an item without it is "unspecified"
        key = keys[0]
        values = [canonical(item[key]) if item and key in item else _UNSPECIFIED_KEY for item in items]
        found = _second_occurrences(values)
    else:
        found = _second_occurrences([canonical(_key_entry(keys, item)) for item in items])
    return [errors.FieldError("duplicate", f"{path}[{i}]", go_sharp(_key_entry(keys, items[i]))) for i in found]


_UNSPECIFIED_KEY = ("unspecified",)


def _key_entry(keys: tuple[str, ...], item: dict | None) -> dict:
    return {key: item[key] for key in keys if key in item} if item else {}


def _embedded_errors(node: _Node, value: Any, path: str, errs: list, *, root: bool = False) -> None:
    """objectmeta.Validate: TypeMeta and ObjectMeta of resources embedded below the root."""
    if type(value) is dict:
        if node.embedded and not root:
            errs.extend(_embedded_resource_errors(value, path))
        for key, item in value.items():
            child = node.props.get(key)
            if child is not None:
                if child.embedded or child.has_embedded:
                    _embedded_errors(child, item, _join(path, key), errs)
            elif node.additional is not None and (node.additional.embedded or node.additional.has_embedded):
                _embedded_errors(node.additional, item, f"{path}[{key}]", errs)
    elif type(value) is list and node.items is not None and (node.items.embedded or node.items.has_embedded):
        for i, item in enumerate(value):
            _embedded_errors(node.items, item, f"{path}[{i}]", errs)


def _embedded_resource_errors(obj: dict, path: str) -> list[errors.FieldError]:
    errs = [errors.FieldError("required", _join(path, key)) for key in ("apiVersion", "kind") if key not in obj]
    for key, value in obj.items():
        if key == "apiVersion":
            errs.extend(_api_version_errors(value, _join(path, key)))
        elif key == "kind":
            errs.extend(_kind_errors(value, _join(path, key)))
        elif key == "metadata":
            errs.extend(_embedded_metadata_errors(value, _join(path, key)))
    return errs


def _api_version_errors(value: Any, path: str) -> list[errors.FieldError]:
    if type(value) is not str:
        return [_invalid(path, value, "must be a string")]
    if not value:
        return [_invalid(path, value, "must not be empty")]
    if value.count("/") > 1:
        return [_invalid(path, value, f"unexpected GroupVersion string: {value}")]
    return []


def _kind_errors(value: Any, path: str) -> list[errors.FieldError]:
    if type(value) is not str:
        return [_invalid(path, value, "must be a string")]
    if not value:
        return [_invalid(path, value, "must not be empty")]
    msgs = meta.dns1035_label_errors(value.lower())
    if msgs:
        return [_invalid(path, value, "may have mixed case, but should otherwise match: " + ",".join(msgs))]
    return []


_GO_JSON_KINDS = {str: "string", bool: "bool", int: "number", float: "number", list: "array"}


def _embedded_metadata_errors(value: Any, path: str) -> list[errors.FieldError]:
    if type(value) is not dict:
        go_kind = _GO_JSON_KINDS.get(type(value), "value")
        return [_invalid(path, value, f"json: cannot unmarshal {go_kind} into Go value of type v1.ObjectMeta")]
    metadata = dict(value)
    metadata["name"] = metadata.get("name") or "fakename"  # kube sets one "to avoid an error"
    namespaced = bool(metadata.get("namespace"))
    return meta.validate_object_meta(metadata, namespaced=namespaced, name_rule="path-segment", path=path)


# ---------------------------------------------------------------------------------------------
# The public face.


class Validator:
    """A compiled structural schema for one served version of one kind."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self._root = _compile(schema)
        # metadata is ObjectMeta's business (meta.py); the schema may only constrain its names
        self._validation_root = copy.copy(self._root)
        self._validation_root.props = {k: v for k, v in self._root.props.items() if k != "metadata"}
        metadata = self._root.props.get("metadata")
        names = ("name", "generateName")
        self._name_checks = tuple((k, metadata.props[k]) for k in names if metadata and k in metadata.props)

    def apply(self, obj: dict) -> Outcome:
        """Prune, default and validate ``obj`` in place (metadata itself is checked by meta.py)."""
        if type(obj) is not dict:
            return Outcome([], [meta.type_error("", "object", obj)])
        run = _Run()
        try:
            self._walk(obj, run)
        except RecursionError:
            run.errors.append(errors.FieldError("invalid", "", "object is nested too deeply to validate"))
        unknown = run.meta_unknown + sorted(run.unknown) + run.embedded_unknown
        return Outcome(unknown, run.errors + run.embedded_errors + run.list_errors)

    def _walk(self, obj: dict, run: _Run) -> None:
        root, errs = self._root, run.errors
        if root.direct_object:
            _walk_object(root, obj, "", run, root.preserve, errs, root=True)
        else:
            _walk_object(root, obj, "", run, root.preserve, [], root=True)
            _validate(self._validation_root, obj, "", errs)  # whose props lack metadata
        metadata = obj.get("metadata")
        if type(metadata) is dict:
            for key, node in self._name_checks:
                if key in metadata:
                    _validate(node, metadata[key], f"metadata.{key}", errs)
        if root.has_embedded:
            _embedded_errors(root, obj, "", run.embedded_errors, root=True)
        if root.has_list_type:
            _list_type_errors(root, obj, "", run.list_errors)


_cache: OrderedDict[int, tuple[Any, Validator]] = OrderedDict()


def compile(schema: dict) -> Validator:  # noqa: A001 - the name the registry calls
    """The compiled validator for ``schema``, cached by identity (schemas are not mutated in place)."""
    key = id(schema)
    entry = _cache.get(key)
    if entry is not None and entry[0] is schema:
        _cache.move_to_end(key)
        return entry[1]
    validator = Validator(schema)
    _cache[key] = (schema, validator)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return validator


def apply_schema(schema: dict, obj: dict) -> Outcome:
    """Prune, default and validate ``obj`` (mutated in place) against ``schema``."""
    return compile(schema).apply(obj)


def validate_value(schema: Any, value: Any) -> list[errors.FieldError]:
    """kube-openapi validation alone, from a nameless root, as CRD default validation runs it: the
    paths are relative to the value ("" for the value itself, "a.b" below it)."""
    errs: list[errors.FieldError] = []
    _validate(_compile(schema), value, "", errs)
    return errs


def prune_value(schema: Any, value: Any) -> list[str]:
    """Prune unknown fields below ``value`` in place (no nulls, no defaults); the pruned paths."""
    run = _Run()
    _prune_only(_compile(schema), value, "", run, False)
    return run.unknown


def _prune_only(node: _Node, value: Any, path: str, run: _Run, keep: bool) -> None:
    keep = keep or node.preserve
    if type(value) is dict:
        for key in list(value):
            if node.embedded and key in _TYPE_META_KEYS:
                continue
            child = node.props.get(key) or node.additional
            if child is None:
                if not keep:
                    del value[key]
                    run.unknown.append(_join(path, key))
            elif not child.inert and type(value[key]) in (dict, list):
                _prune_only(child, value[key], _join(path, key), run, False)
    elif type(value) is list:
        child = node.items
        if child is None and keep:
            return
        for i, item in enumerate(value):
            _prune_only(child or _EMPTY, item, f"{path}[{i}]", run, keep)
