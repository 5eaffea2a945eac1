"""Go's renderings of values, because kube-apiserver's messages are printed by Go's fmt and encoding/json.

``go_quote`` is strconv.Quote (``%q``), ``go_float`` is ``%v`` of a float64, ``go_json`` is
encoding/json.Marshal of a decoded JSON value and ``go_sharp`` is ``%#v`` of one.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

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
