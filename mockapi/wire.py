"""Small wire-format rules shared by every layer."""

from __future__ import annotations

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(value: str | None) -> bool:
    """Go's strconv.ParseBool, which kube uses for query booleans (Python client 31 sends ``True``)."""
    return value in _TRUE


def is_bool(value: str) -> bool:
    return value in _TRUE or value in _FALSE
