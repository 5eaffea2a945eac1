"""One thin handler per Kubernetes verb: parse options, call one registry method, render.

Each handler gets a :class:`Call` (the parsed request) and returns nothing: it sends the response.
No kind-specific logic lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import orjson

from mockapi import errors
from mockapi.gvk import ResourceType
from mockapi import decoding
from mockapi.http import bodies, responses, table
from mockapi.http.requestinfo import RequestInfo
from mockapi.registry import rest
from mockapi.registry.options import DeleteOptions, ListOptions, WriteOptions

PROTOBUF = "application/vnd.kubernetes.protobuf"  # mockapi.protobuf.MEDIA_TYPE

PATCH_TYPES = {t: t for t in rest.ALL_PATCH_TYPES}


@dataclass(slots=True)  # one per request: no instance dict to build
class Call:
    info: RequestInfo
    rt: ResourceType
    registry: rest.Registry
    headers: dict[bytes, bytes]
    receive: Any
    send: Any
    max_body: int
    extra: dict = field(default_factory=dict)
    user: Any = None  # who asks (mockapi.auth.user.UserInfo) when authentication is on, else None

    @property
    def namespace(self) -> str:
        return self.info.namespace if self.rt.namespaced else ""

    @property
    def rendering(self) -> str | None:
        """The meta.k8s.io rendering asked for in Accept (Table, metadata), or None for JSON."""
        return table.negotiate(self.headers.get(b"accept", b"").decode("latin-1"))

    async def body(self) -> tuple[bytes, str | None]:
        length = self.headers.get(b"content-length")
        declared = int(length) if length and length.isdigit() else None
        raw = await bodies.read(self.receive, limit=self.max_body, declared_length=declared)
        content_type = self.headers.get(b"content-type")
        return raw, content_type.decode("latin-1") if content_type else None

    async def decoded_body(self, opts: WriteOptions | None = None) -> Any:
        """The body as a JSON-like value; with ``opts``, keys repeated in a JSON object are refused
        (Strict) or warned about (Warn), as kube's strict decoding does."""
        raw, content_type = await self.body()
        kind = bodies.media_type(content_type)  # once: decode and the duplicate check both need it
        if kind == PROTOBUF:
            from mockapi import protobuf  # imported by the first protobuf body, not at start-up

            return protobuf.decode(raw)
        value = bodies.decode(raw, content_type, kind)
        if opts is not None and kind not in bodies.YAML_TYPES:  # bodies.is_json
            if opts.field_validation != "Ignore":
                _check_duplicates(self.rt, decoding.duplicate_fields(raw, value), opts)
            opts.owned = True  # parsed for this request alone, JSON's values only (YAML may hold NaN)
        return value


def _check_duplicates(rt: ResourceType, paths: list[str], opts: WriteOptions) -> None:
    problems = [f'duplicate field "{path}"' for path in paths]
    if problems and opts.field_validation == "Strict":
        raise errors.bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: strict decoding error: {", ".join(problems)}')
    opts.warnings.extend(problems)


def write_options(call: Call, *, default_manager: bool = True) -> WriteOptions:
    """Write options; without ?fieldManager=, the manager is named after the client, as kube does
    (the user agent up to its first "/") — except for apply, where it is required."""
    opts = WriteOptions.parse(call.info.query)
    opts.user = call.user
    if not opts.field_manager and default_manager:
        agent = call.headers.get(b"user-agent", b"").decode("latin-1").split("/", 1)[0]
        opts.field_manager = agent[:128] or "unknown"
    return opts


async def _send_written(call: Call, written: rest.Written, opts: WriteOptions, *, created_code: int = 201) -> None:
    headers = [responses.warning_header(w) for w in dict.fromkeys(opts.warnings)] if opts.warnings else ()
    await responses.send_bytes(call.send, created_code if written.created else 200, written.raw, headers=headers)


async def get(call: Call) -> None:
    if call.info.subresource == "scale":
        await responses.send_bytes(call.send, 200, orjson.dumps(call.registry.get_scale(call.rt, call.namespace, call.info.name)))
        return
    stored = call.registry.get(call.rt, call.namespace, call.info.name)
    rendering = call.rendering
    if rendering == table.TABLE:
        include = table.include_object(call.info.query)
        body = table.table(call.rt, [stored.raw], now=call.registry.clock.now(), include=include, list_meta={"resourceVersion": str(stored.rv)})
        await responses.send_bytes(call.send, 200, body, content_type=table.CONTENT_TYPES[rendering])
    elif rendering == table.METADATA:
        await responses.send_bytes(call.send, 200, table.metadata_object(stored.raw), content_type=table.CONTENT_TYPES[rendering])
    else:
        await responses.send_bytes(call.send, 200, stored.raw)


async def list_(call: Call) -> None:
    opts = ListOptions.parse(call.info.query)
    page = call.registry.list(call.rt, call.namespace, opts)
    raws = [s.raw for s in page.items]
    rendering = call.rendering
    if rendering in (table.TABLE, table.METADATA_LIST):
        list_meta: dict = {"resourceVersion": str(page.resource_version)}
        if page.continue_token:
            list_meta["continue"] = page.continue_token
            if page.remaining is not None:
                list_meta["remainingItemCount"] = page.remaining
        if rendering == table.TABLE:
            include = table.include_object(call.info.query)
            body = table.table(call.rt, raws, now=call.registry.clock.now(), include=include, list_meta=list_meta)
        else:
            body = table.metadata_list(raws, list_meta=list_meta)
        await responses.send_bytes(call.send, 200, body, content_type=table.CONTENT_TYPES[rendering])
        return
    body = responses.list_body(call.rt, page.resource_version, raws, continue_token=page.continue_token, remaining=page.remaining)
    await responses.send_bytes(call.send, 200, body)


async def create(call: Call) -> None:
    opts = write_options(call)
    body = await call.decoded_body(opts)
    if body is None:
        raise errors.bad_request("the request body is empty: expected an object")
    if call.info.subresource == "binding":
        await responses.send_bytes(call.send, 201, call.registry.bind(call.rt, call.namespace, call.info.name, body, opts))
        return
    await _send_written(call, call.registry.create(call.rt, call.namespace, body, opts), opts)


async def update(call: Call) -> None:
    opts = write_options(call)
    body = await call.decoded_body(opts)
    if body is None:
        raise errors.bad_request("the request body is empty: expected an object")
    if call.info.subresource == "scale":
        await responses.send_bytes(call.send, 200, orjson.dumps(call.registry.update_scale(call.rt, call.namespace, call.info.name, body, opts)))
        return
    written = call.registry.update(call.rt, call.namespace, call.info.name, body, opts, subresource=call.info.subresource)
    await _send_written(call, written, opts)


async def patch(call: Call) -> None:
    raw, content_type = await call.body()
    patch_type = PATCH_TYPES.get(bodies.media_type(content_type))
    opts = write_options(call, default_manager=patch_type != rest.APPLY_PATCH)
    if patch_type is None:
        accepted = rest.ALL_PATCH_TYPES if call.rt.builtin else rest.CUSTOM_PATCH_TYPES
        raise errors.unsupported_media_type(bodies.media_type(content_type) or "(none)", accepted)
    document = decoding.decode_yaml_or_json(raw) if patch_type == rest.APPLY_PATCH else decoding.decode_json(raw) if raw.strip() else None
    if document is None:
        raise errors.bad_request("the request body is empty: expected a patch")
    opts.owned = patch_type != rest.APPLY_PATCH  # parsed for this request alone, from JSON (an apply may be YAML)
    if call.info.subresource == "scale":
        scale = call.registry.patch_scale(call.rt, call.namespace, call.info.name, patch_type, document, opts)
        await responses.send_bytes(call.send, 200, orjson.dumps(scale))
        return
    written = call.registry.patch(call.rt, call.namespace, call.info.name, patch_type, document, opts, subresource=call.info.subresource)
    await _send_written(call, written, opts)


async def delete(call: Call) -> None:
    opts = DeleteOptions.parse(call.info.query, await call.decoded_body())
    written, gone = call.registry.delete(call.rt, call.namespace, call.info.name, opts)
    if gone and not call.registry.strategy(call.rt).return_deleted_object:
        uid = _uid(written.raw)
        await responses.send_bytes(call.send, 200, responses.success_status(call.rt, call.info.name, uid))
        return
    await responses.send_bytes(call.send, 200, written.raw)


async def delete_collection(call: Call) -> None:
    opts = DeleteOptions.parse(call.info.query, await call.decoded_body())
    list_opts = ListOptions.parse(call.info.query)
    deleted = call.registry.delete_collection(call.rt, call.namespace, list_opts, opts)
    body = responses.list_body(call.rt, call.registry.resource_version, deleted)
    await responses.send_bytes(call.send, 200, body)


def _uid(raw: bytes) -> str | None:
    return orjson.loads(raw)["metadata"].get("uid")


Handler = Callable[[Call], Awaitable[None]]
