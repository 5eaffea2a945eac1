"""Small wire-format rules shared by every layer."""

from __future__ import annotations

from mockapi import errors


def exact(data: bytes) -> bytes:
    """``data`` in a bytes object of its own size: for JSON kept beyond the request (a stored
    object, a memo's key). orjson's result keeps the whole buffer it wrote into, at least 4 KB however
    short the JSON (a 7-byte ``{"a":0}`` holds 4,097 bytes), so a memo of a few thousand short keys
    would hold tens of MB. Copy where a value is kept, not where it is only looked up."""
    return memoryview(data).tobytes()


def parse_bool(value: str | None) -> bool:
    """A query boolean as kube-apiserver converts it (apimachinery ``Convert_Slice_string_To_bool``):
    absent, ``0`` or ``false`` in any case is false; anything else, even ``maybe`` or empty, is true.
    (Not Go's strconv.ParseBool: ``f`` is true, and nothing is refused.)"""
    return value is not None and value != "0" and value.lower() != "false"


def query_bool(query: dict[str, str], name: str, *, default: bool = False) -> bool:
    """A boolean query parameter: absent → ``default``, else :func:`parse_bool`."""
    raw = query.get(name)
    return default if raw is None else parse_bool(raw)


_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def strict_query_bool(query, name: str, *, default: bool = False) -> bool:
    """A boolean of mockapi's own control API, where a misread one could destroy state: Go's
    strconv.ParseBool spellings only; absent or empty → ``default``; anything else → 400."""
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    if raw not in _GO_TRUE and raw not in _GO_FALSE:
        raise errors.bad_request(f'{name}: Invalid value: "{raw}": must be a boolean')
    return raw in _GO_TRUE


def parse_int64(raw: str) -> int:
    """An integer query parameter as kube converts it (Go ``strconv.ParseInt(raw, 10, 64)``): ASCII
    digits with an optional sign, within int64 — ``1_0``, `` 1`` or 23 digits are a 400."""
    body = raw[1:] if raw[:1] in ("+", "-") else raw
    if not body or not body.isascii() or not body.isdigit():
        raise errors.bad_request(f"strconv.ParseInt: parsing {_go_quote(raw)}: invalid syntax")
    value = int(raw)
    if not -(2**63) <= value < 2**63:
        raise errors.bad_request(f"strconv.ParseInt: parsing {_go_quote(raw)}: value out of range")
    return value


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
