"""Raw ASGI responses: pre-serialized bytes out, no framework on the hot path."""

from __future__ import annotations

from typing import Iterable

import orjson

from mockapi import errors
from mockapi.gvk import ResourceType

JSON = b"application/json"


_CONTROL = {code: " " for code in (*range(0x20), 0x7F) if code != 0x09}  # what no header value may carry


def warning_header(text: str) -> tuple[bytes, bytes]:
    """``Warning: 299 - "text"`` (kubectl prints it once per distinct text); control characters
    (from a client's field names) become spaces, as Go's server does with line breaks."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').translate(_CONTROL)
    return b"warning", f'299 - "{escaped}"'.encode("utf-8", "replace")


def with_headers(send, headers: list[tuple[bytes, bytes]]):
    """An ASGI ``send`` that adds ``headers`` (first) to the response it starts."""

    async def sending(message):
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*headers, *message.get("headers", ())]}
        await send(message)

    return sending


async def send_bytes(send, status: int, body: bytes, *, content_type: bytes = JSON, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_json(send, status: int, value, *, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    await send_bytes(send, status, orjson.dumps(value), headers=headers)


async def send_error(send, exc: errors.StatusError) -> None:
    headers = [(k.lower().encode(), v.encode()) for k, v in exc.headers.items()]
    await send_bytes(send, exc.code, orjson.dumps(exc.status()), headers=headers)


def error_response(exc: BaseException):
    """The same Status as :func:`send_error`, as a Starlette response for the framework-served
    endpoints (control, explain, health, discovery fallbacks); any exception, via ``errors.to_status``."""
    from starlette.responses import Response

    status = errors.to_status(exc)
    return Response(orjson.dumps(status.status()), status_code=status.code, media_type=JSON.decode(), headers=status.headers)


def list_body(rt: ResourceType, rv: int, items: list[bytes], *, continue_token: str = "", remaining: int | None = None) -> bytes:
    """A List around stored bytes, joined once (a 1,000-item list is megabytes: no extra copies)."""
    meta = b'{"resourceVersion":"' + str(rv).encode() + b'"'
    if continue_token:
        meta += b',"continue":"' + continue_token.encode() + b'"'
        if remaining is not None:
            meta += b',"remainingItemCount":' + str(remaining).encode()
    head = b'{"apiVersion":"' + rt.api_version.encode() + b'","kind":"' + rt.list_kind.encode() + b'","metadata":' + meta + b'},"items":['
    parts = [head]
    for item in items:
        parts.append(item)
        parts.append(b",")
    if items:
        parts.pop()
    parts.append(b"]}")
    return b"".join(parts)


def success_status(rt: ResourceType, name: str, uid: str | None) -> bytes:
    details = {"name": name, "kind": rt.plural}
    if rt.group:
        details["group"] = rt.group
    if uid:
        details["uid"] = uid
    return orjson.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
