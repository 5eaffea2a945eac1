"""Small wire-format rules shared by every layer."""

from __future__ import annotations

from mockapi import errors

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(value: str | None) -> bool:
    """Go's strconv.ParseBool, which kube uses for query booleans (Python client 31 sends ``True``)."""
    return value in _TRUE


def is_bool(value: str) -> bool:
    return value in _TRUE or value in _FALSE


def query_bool(query: dict[str, str], name: str, *, default: bool = False) -> bool:
    """A boolean query parameter: absent or empty → ``default``; anything ParseBool refuses → 400."""
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    if not is_bool(raw):
        raise errors.bad_request(f'{name}: Invalid value: "{raw}": must be a boolean')
    return parse_bool(raw)
