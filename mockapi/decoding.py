"""Decode JSON and YAML from untrusted bytes: every failure is a 400 with a clear message.

Nesting deeper than :data:`MAX_DEPTH` is refused (so every later layer may recurse safely), and
so are YAML aliases (which could expand exponentially when re-serialized), non-string map keys and
values JSON cannot represent. Timestamps stay strings, as sigs.k8s.io/yaml leaves them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import yaml

from mockapi import errors

MAX_DEPTH = 100
# libyaml's composer (PyYAML's C loader) recurses in C, one frame per level: 30,000 levels of
# ``[[[…`` overflow the C stack (SIGSEGV, no exception). It survives >10,000 levels on an 8 MB stack,
# so text whose depth *could* exceed SAFE_COMPOSE_DEPTH is first measured with the (iterative) event
# parser. Depth ≤ 2·(flow brackets) + 2·(longest block prefix + 1) + 1 (below).
SAFE_COMPOSE_DEPTH = 1000
_MAX_SAFE_FLOW = 250
_MAX_SAFE_PREFIX = 240  # 2·250 + 2·(240 + 1) + 1 = 983
# Flow nesting needs a bracket per level (two levels for ``[a: [...]]``, an implicit pair). A block
# collection nested in another starts at a greater column, or at the same column once (a sequence as
# a mapping's value); a column is reached by a line's indentation plus the compact indicators that
# open block nodes after it (``- - x``, ``? ? x``): the line's "block prefix". Lines break at any of
# YAML's line breaks.
_LONG_BLOCK_PREFIX = re.compile("\n[ \t?:-]{%d}" % _MAX_SAFE_PREFIX)  # a literal first: a fast scan
_OTHER_BREAKS = "\r\x85\u2028\u2029"
_OPEN = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSE = (yaml.SequenceEndEvent, yaml.MappingEndEvent)

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is ~10x faster


class _YamlLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """A safe loader that, like sigs.k8s.io/yaml, leaves timestamps as strings."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


def decode_json(raw: bytes) -> Any:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise errors.bad_request(f"error decoding JSON body: {exc}") from None
    if raw.count(b"{") + raw.count(b"[") > MAX_DEPTH:  # cheap bound: only then can it be too deep
        check_depth(value)
    return value


def duplicate_fields(raw: bytes, value: Any) -> list[str]:
    """The paths of keys repeated within one object of the JSON text ``raw`` (decoded as ``value``),
    as kube's strict decoding names them (``duplicate field "metadata.labels.a"``).

    The screen is exact and cheap: outside strings, JSON has one colon per key, and re-encoding
    keeps one per distinct key and never escapes a colon in a string; so unless ``raw`` has more
    colons (escaped ones counted) than its re-encoding, no object repeats a key. A body that is its
    own re-encoding (compact JSON, as orjson and most clients write it) repeats none: no counting.
    """
    if not isinstance(value, (dict, list)):
        return []
    encoded = orjson.dumps(value)
    if encoded == raw:
        return []
    colons = raw.count(b":")
    if b"\\" in raw:
        colons += raw.count(b"\\u003a") + raw.count(b"\\u003A")
    if colons <= encoded.count(b":"):
        return []
    return _duplicate_paths(json.loads(raw, object_pairs_hook=_Pairs))


class _Pairs(list):
    """A JSON object as the list of its (key, value) pairs, repeats kept."""


def _duplicate_paths(root: Any) -> list[str]:
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Pairs):
            seen: set[str] = set()
            for key, child in node:
                child_path = f"{path}.{key}" if path else key
                if key in seen and child_path not in found:
                    found.append(child_path)
                seen.add(key)
                stack.append((child, child_path))
        elif isinstance(node, list):
            stack.extend((child, f"{path}[{index}]") for index, child in enumerate(node))
    return sorted(found)


def load_embedded_json(text: str) -> Any:
    """JSON held in a string of a body (a managedFields key, the last-applied annotation), with
    Python's semantics; ValueError when malformed or nested deeper than MAX_DEPTH, so whatever
    walks the result recursively stays bounded."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return json.loads(text)  # cannot nest deeper than its brackets
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nesting deeper than {MAX_DEPTH} levels") from None
    if depth_exceeds(value, MAX_DEPTH):
        raise ValueError(f"nesting deeper than {MAX_DEPTH} levels")
    return value


def decode_yaml_or_json(raw: bytes) -> Any:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = load_yaml(raw)
    check_depth(value)
    return value


def load_yaml(raw: bytes | str) -> Any:
    """One YAML document, safely (no aliases, no tags beyond JSON's types)."""
    documents = load_yaml_documents(raw)
    if len(documents) > 1:
        raise errors.bad_request("error decoding YAML body: expected a single document, found several")
    return documents[0] if documents else None


def load_yaml_documents(raw: bytes | str) -> list[Any]:
    try:
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8")
        _refuse_deep_yaml(raw)
        documents = list(yaml.load_all(raw, Loader=_YamlLoader))
    except UnicodeDecodeError as exc:
        raise errors.bad_request(f"error decoding YAML body: invalid UTF-8: {exc}") from None
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):  # PyYAML ≥ 6.0.4's own bound, met while scanning ahead
            raise errors.bad_request(f"error decoding YAML body: nesting deeper than {MAX_DEPTH} levels") from None
        raise errors.bad_request(f"error decoding YAML body: {_one_line(exc)}") from None
    except RecursionError:
        raise errors.bad_request(f"error decoding YAML body: nesting deeper than {MAX_DEPTH} levels") from None
    for document in documents:
        _check_yaml_value(document)
    return documents


def _composing_is_safe(text: str) -> bool:
    """Whether the depth bound is within SAFE_COMPOSE_DEPTH: two counts and one regex scan."""
    if text.count("[") + text.count("{") > _MAX_SAFE_FLOW:
        return False
    if any(brk in text for brk in _OTHER_BREAKS):
        text = re.sub(f"[{_OTHER_BREAKS}]", "\n", text)  # rare: line breaks other than LF
    return _LONG_BLOCK_PREFIX.search(text) is None and _LONG_BLOCK_PREFIX.match("\n" + text[:_MAX_SAFE_PREFIX]) is None


def _refuse_deep_yaml(text: str) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH before anything recursive composes it."""
    if _composing_is_safe(text):
        return  # the common case: the composer is safe, and _check_yaml_value bounds the result
    depth = 0
    for event in yaml.parse(text, Loader=_YamlLoader):
        if isinstance(event, _OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                raise errors.bad_request(f"error decoding YAML body: nesting deeper than {MAX_DEPTH} levels")
        elif isinstance(event, _CLOSE):
            depth -= 1


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def _check_yaml_value(value: Any) -> None:
    """Reject shared nodes (aliases), non-JSON scalars and excessive depth, without recursion."""
    seen: set[int] = set()
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise errors.bad_request(f"error decoding YAML body: nesting deeper than {MAX_DEPTH} levels")
            if id(node) in seen:
                raise errors.bad_request("error decoding YAML body: YAML aliases are not supported")
            seen.add(id(node))
            if isinstance(node, dict):
                for key, child in node.items():
                    if not isinstance(key, str):
                        raise errors.bad_request(f"error decoding YAML body: map keys must be strings, got {key!r}")
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in node)
        elif not isinstance(node, (str, int, float, bool, type(None))):
            raise errors.bad_request(f"error decoding YAML body: unsupported value {type(node).__name__} {str(node)[:40]!r}; quote it to make it a string")


def check_depth(value: Any) -> None:
    """Nesting beyond MAX_DEPTH is refused (every later layer may then recurse safely)."""
    if depth_exceeds(value, MAX_DEPTH):
        raise errors.bad_request(f"error decoding body: nesting deeper than {MAX_DEPTH} levels")


def object_depth_exceeds(value: Any, limit: int) -> bool:
    """:func:`depth_exceeds`, screened first at C speed: nothing nests deeper than its encoding
    has brackets (the common case for a write: no walk at all)."""
    try:
        encoded = orjson.dumps(value)
    except orjson.JSONEncodeError:  # deeper than orjson's 255 levels, or not JSON: the walk decides
        return depth_exceeds(value, limit)
    if encoded.count(b"{") + encoded.count(b"[") <= limit:
        return False
    return depth_exceeds(value, limit)


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` objects/arrays deep (the root is level 1). The
    recursion stops at ``limit`` levels, so it is bounded whatever ``value`` holds."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return False
    return _deeper(value, limit)


def _deeper(node: Any, budget: int) -> bool:
    """Whether the container ``node`` needs more than ``budget`` levels."""
    if budget <= 0:
        return True
    budget -= 1
    for child in node.values() if type(node) is dict else node:
        kind = type(child)
        if (kind is dict or kind is list) and _deeper(child, budget):
            return True
    return False
