"""Read and decode request bodies, whatever the client sends, without ever trusting them.

No Content-Type means JSON (the Python client 37 sends none); ``application/yaml`` and
``application/apply-patch+yaml`` are YAML (JSON is YAML, and is tried first); anything malformed —
bad JSON or YAML, invalid UTF-8, nesting deeper than :data:`MAX_DEPTH`, YAML aliases (which could
expand exponentially when re-serialized) — is a 400 with a clear message. Bodies larger than the
configured limit are refused with 413 before they are read whole.
"""

from __future__ import annotations

from typing import Any

import orjson
import yaml

from mockapi import errors

MAX_DEPTH = 100
DEFAULT_MAX_BODY = 3 * 1024 * 1024  # etcd's default request limit, as kube-apiserver enforces

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is ~10x faster


class _YamlLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """A safe loader that, like sigs.k8s.io/yaml, leaves timestamps as strings."""


_YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


async def read(receive, *, limit: int, declared_length: int | None) -> bytes:
    if declared_length is not None and declared_length > limit:
        raise errors.request_entity_too_large(limit)
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionAbortedError("client went away while sending the body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise errors.request_entity_too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def decode(raw: bytes, content_type: str | None) -> Any:
    """The body as a JSON-like value. Empty body → None."""
    kind = media_type(content_type)
    if not raw.strip():
        return None
    if kind in ("application/yaml", "application/apply-patch+yaml", "text/yaml", "application/x-yaml"):
        return decode_yaml_or_json(raw)
    if kind and kind != "application/json" and not kind.endswith("+json") and kind != "*/*":
        raise errors.unsupported_media_type(kind, ("application/json", "application/yaml"))
    return decode_json(raw)


def decode_json(raw: bytes) -> Any:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise errors.bad_request(f"error decoding JSON body: {exc}") from None
    if raw.count(b"{") + raw.count(b"[") > MAX_DEPTH:  # cheap bound: only then can it be too deep
        check_depth(value)
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
        documents = list(yaml.load_all(raw, Loader=_YamlLoader))
    except UnicodeDecodeError as exc:
        raise errors.bad_request(f"error decoding YAML body: invalid UTF-8: {exc}") from None
    except yaml.YAMLError as exc:
        raise errors.bad_request(f"error decoding YAML body: {_one_line(exc)}") from None
    except RecursionError:
        raise errors.bad_request(f"error decoding YAML body: nesting deeper than {MAX_DEPTH} levels") from None
    for document in documents:
        _check_yaml_value(document)
    return documents


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
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_DEPTH:
            raise errors.bad_request(f"error decoding body: nesting deeper than {MAX_DEPTH} levels")
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
