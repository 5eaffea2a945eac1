"""The JSONPath subset kube-apiserver evaluates for CRD printer columns (client-go util/jsonpath).

Supported: ``.field``, ``['field']``, ``[N]`` (negative too), ``[*]``, ``..field`` (recursive),
filters ``[?(@.path == "x")]`` with ``== != < > <= >=`` or bare existence ``[?(@.path)]``, and
an optional ``{...}`` wrapper. :func:`compile` parses once; :meth:`Path.find` returns every
match in document order. :func:`format_value` prints a match as kubectl does (scalars as text,
maps and lists as compact JSON).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

_TOKEN = re.compile(
    r"""
    \.\.(?P<recursive>[A-Za-z0-9_\-]+)
  | \.(?P<field>[A-Za-z0-9_\-]+)
  | \[\s*'(?P<quoted>(?:[^'\\]|\\.)*)'\s*\]
  | \[\s*"(?P<dquoted>(?:[^"\\]|\\.)*)"\s*\]
  | \[\s*(?P<index>-?\d+)\s*\]
  | \[\s*\*\s*\]
  | \.\*
  | \[\s*\?\(\s*@(?P<filter_path>(?:\.[A-Za-z0-9_\-]+)+)\s*(?:(?P<op>==|!=|<=|>=|<|>)\s*(?P<literal>'[^']*'|"[^"]*"|-?\d+(?:\.\d+)?|true|false))?\s*\)\s*\]
    """,
    re.VERBOSE,
)


class JSONPathError(ValueError):
    pass


Step = Callable[[Any], list]


@dataclass(frozen=True)
class Path:
    text: str
    steps: tuple[Step, ...]

    def find(self, obj: Any) -> list:
        current = [obj]
        for step in self.steps:
            current = [found for value in current for found in step(value)]
        return current


@lru_cache(maxsize=1024)
def compile(text: str) -> Path:
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    if body.startswith("$"):
        body = body[1:]
    steps, position = [], 0
    while position < len(body):
        match = _TOKEN.match(body, position)
        if match is None:
            raise JSONPathError(f"unrecognized JSONPath at {body[position:]!r} in {text!r}")
        steps.append(_step(match))
        position = match.end()
    return Path(text, tuple(steps))


def _step(match: re.Match) -> Step:
    groups = match.groupdict()
    if groups["recursive"] is not None:
        return _recursive(groups["recursive"])
    name = groups["field"] if groups["field"] is not None else groups["quoted"] if groups["quoted"] is not None else groups["dquoted"]
    if name is not None:
        return lambda value: [value[name]] if isinstance(value, dict) and name in value else []
    if groups["index"] is not None:
        index = int(groups["index"])
        return lambda value: [value[index]] if isinstance(value, list) and -len(value) <= index < len(value) else []
    if groups["filter_path"] is not None:
        return _filter(groups["filter_path"], groups["op"], groups["literal"])
    return lambda value: list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, list) else []


def _recursive(name: str) -> Step:
    def walk(value: Any) -> list:
        found = []
        stack = [value]
        while stack:
            node = stack.pop(0)
            if isinstance(node, dict):
                if name in node:
                    found.append(node[name])
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return found

    return walk


def _filter(path: str, op: str | None, literal: str | None) -> Step:
    inner = compile(path)
    expected = None if literal is None else json.loads(literal.replace("'", '"')) if literal[0] in "'\"" else json.loads(literal)
    compare = {
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
        "<": lambda a, b: a < b,
        ">": lambda a, b: a > b,
        "<=": lambda a, b: a <= b,
        ">=": lambda a, b: a >= b,
    }

    def keep(item: Any) -> bool:
        found = inner.find(item)
        if op is None:
            return bool(found)
        try:
            return any(compare[op](value, expected) for value in found)
        except TypeError:
            return False

    return lambda value: [item for item in (value if isinstance(value, list) else value.values() if isinstance(value, dict) else []) if keep(item)]


def format_value(value: Any) -> str:
    """As client-go's PrintResults: maps and lists as compact JSON, scalars as text."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    return str(value)
