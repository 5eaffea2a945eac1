"""Read request bodies within a size limit and decode them by Content-Type.

No Content-Type means JSON (the Python client 37 sends none); ``application/yaml`` and
``application/apply-patch+yaml`` are YAML (JSON is YAML, and is tried first). Bodies larger than
the configured limit are refused with 413 before they are read whole. Decoding itself (and its
defences) lives in :mod:`mockapi.decoding`.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from mockapi import decoding, errors

DEFAULT_MAX_BODY = 3 * 1024 * 1024  # etcd's default request limit, as kube-apiserver enforces
YAML_TYPES = ("application/yaml", "application/apply-patch+yaml", "text/yaml", "application/x-yaml")
ACCEPTED = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
# What Go's mime.ParseMediaType accepts: type[/subtype] then ;name=value parameters (token or
# quoted value), a trailing ";" allowed. kube-apiserver answers 415 for anything else.
_TOKEN = r"[!#$%&'*+\-.^_`{|}~0-9A-Za-z]+"
_MEDIA_TYPE = re.compile(rf'\s*{_TOKEN}(?:/{_TOKEN})?\s*(?:;\s*{_TOKEN}\s*=\s*(?:{_TOKEN}|"(?:[^"\\]|\\.)*")\s*)*(?:;\s*)?')


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


def is_json(content_type: str | None) -> bool:
    """Whether a body with this Content-Type is decoded as JSON (not YAML)."""
    return media_type(content_type) not in YAML_TYPES


@functools.lru_cache(maxsize=256)
def parses_as_media_type(content_type: str) -> bool:
    return _MEDIA_TYPE.fullmatch(content_type) is not None


def decode(raw: bytes, content_type: str | None, kind: str | None = None) -> Any:
    """The body as a JSON-like value. Empty body → None. No Content-Type means JSON; one Go
    cannot parse is 415, as kube-apiserver's input negotiation answers. ``kind``: the
    :func:`media_type` of ``content_type`` when the caller has it already."""
    if kind is None:
        kind = media_type(content_type)
    if content_type and not parses_as_media_type(content_type):
        raise errors.unsupported_media_type(content_type, ACCEPTED)
    if not raw.strip():
        return None
    if kind in YAML_TYPES:
        return decoding.decode_yaml_or_json(raw)
    if kind and kind != "application/json" and not kind.endswith("+json") and kind != "*/*":
        raise errors.unsupported_media_type(kind, ACCEPTED)
    return decoding.decode_json(raw)
