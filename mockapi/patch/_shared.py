"""Helpers shared by the three patch kinds: deep copies, Go-style identities and renderings."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

_TOO_DEEP = "exceeded max depth"
_ABSENT = object()
_MAP = "map[string]interface {}"
_SLICE = "[]interface {}"



def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _freeze(value: Any) -> Any:
    """A hashable identity with Go's interface equality: same dynamic type and equal value."""
    if isinstance(value, dict):
        return ("map", tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("slice", tuple(_freeze(v) for v in value))
    return (type(value).__name__, value)


def _json_kind(value: Any) -> str:
    """How encoding/json names a value's JSON type in an UnmarshalTypeError."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    return "number"




_GO_TYPES = {dict: _MAP, list: _SLICE, str: "string", bool: "bool", int: "int64", float: "float64"}


def _bad_arg_type(expected: str, actual: Any) -> str:
    return f"expected a {expected}, but received a {_GO_TYPES.get(type(actual), '%!s(<nil>)')}"


def _no_merge_key(item: dict, merge_key: str) -> str:
    return f"map: {_go(item)} does not contain declared merge key: {merge_key}"


def _bad_patch_type(directive: Any, item: dict) -> str:
    return f"unknown patch type: {_go(directive, verb='s')} in map: {_go(item)}"


def _go(value: Any, *, verb: str = "v") -> str:
    """fmt's %v (or %s) of a decoded JSON value."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(value[k], verb=verb)}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go(v, verb=verb) for v in value) + "]"
    if isinstance(value, str):
        return value
    if value is None:
        text, kind = "<nil>", ""
    elif isinstance(value, bool):
        text, kind = ("true" if value else "false"), "bool"
    elif isinstance(value, float):
        text, kind = _go_float(value), "float64"
    else:
        text, kind = str(value), "int64"
    if verb == "s":
        return f"%!s({kind}={text})" if kind else "%!s(<nil>)"
    return text


def _go_float(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64): shortest digits, exponent form outside [1e-4, 1e6)."""
    if value == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # position of the decimal point in the digit string
    prefix = "-" if sign else ""
    if point - 1 < -4 or point - 1 >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        power = point - 1
        return f"{prefix}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return f"{prefix}{text[:point]}.{text[point:]}"
