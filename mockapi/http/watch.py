"""The watch stream: newline-delimited JSON events over a chunked 200 response.

A raw ASGI handler: it drains the watcher's mailbox with one ``send`` per wake-up, sends BOOKMARKs
when asked, honours ``timeoutSeconds``, and listens to ``receive()`` for ``http.disconnect`` —
uvicorn's ``send`` silently does nothing once the client has gone, so without that side task dead
watchers would pile up (PERF.md §6). A watch that cannot start (resourceVersion too old) is a 200
with a single ERROR event, as kube-apiserver sends it.
"""

from __future__ import annotations

import asyncio
import functools
import random

import orjson

from mockapi import errors, selectors
from mockapi.http import table
from mockapi.http.verbs import Call
from mockapi.registry.options import ListOptions
from mockapi.watchwire import BOOKMARK, ERROR, event_line

DEFAULT_MIN_TIMEOUT = 1800  # kube-apiserver's --min-request-timeout: watches last 1x-2x of it


async def watch(call: Call) -> None:
    opts = ListOptions.parse(call.info.query, watch=True)
    if call.info.name:
        named = selectors.FieldSelector.parse(f"metadata.name={_escape(call.info.name)}")
        opts.field_selector = named if opts.field_selector is None else selectors.FieldSelector.parse(
            call.info.query.get("fieldSelector", "") + f",metadata.name={_escape(call.info.name)}"
        )
    settings = call.extra
    rendering = call.rendering
    encode = None
    content_type = b"application/json"
    if rendering in (table.TABLE, table.METADATA):
        encode = table.watch_encoder(call.rt, rendering, include=table.include_object(call.info.query), clock=call.registry.clock)
        content_type = table.CONTENT_TYPES[rendering]
    try:
        watcher = call.registry.watch(call.rt, call.namespace, opts, encode=encode)
    except errors.StatusError as exc:
        if exc.code != 410:
            raise
        await _start(call.send, content_type)
        await call.send({"type": "http.response.body", "body": event_line(ERROR, orjson.dumps(exc.status())), "more_body": False})
        return
    if opts.send_initial_events:
        watcher.pending.append(_bookmark(call, call.registry.resource_version, initial_end=True))
        watcher.wakeup.set()
    timeout = opts.timeout_seconds
    if timeout is None or timeout <= 0:
        minimum = settings.get("min_request_timeout", DEFAULT_MIN_TIMEOUT)
        timeout = minimum * (1 + random.random())
    bookmark_every = settings.get("bookmark_interval", 60.0) if opts.allow_bookmarks else None
    await _stream(call, watcher, content_type, timeout=timeout, bookmark_every=bookmark_every)


async def _stream(call: Call, watcher, content_type: bytes, *, timeout: float, bookmark_every: float | None) -> None:
    """Drain the mailbox until the deadline or the client leaves. Timers (not a wait_for per
    wake-up, which costs a task and a timer each time) wake the loop for bookmarks and the end."""
    loop = asyncio.get_running_loop()
    due = {"end": False, "bookmark": False}

    def wake(reason: str) -> None:
        due[reason] = True
        watcher.wakeup.set()

    timers = {"end": loop.call_later(timeout, wake, "end")}
    if bookmark_every:
        timers["bookmark"] = loop.call_later(bookmark_every, wake, "bookmark")
    listener = asyncio.ensure_future(_wait_disconnect(call.receive, watcher))
    # The server's open streams: a graceful shutdown ends each one cleanly (mockapi.http.lifecycle).
    streams = call.extra.get("streams")
    end = functools.partial(wake, "end")
    if streams is not None:
        streams.add(end)
    try:
        await _start(call.send, content_type)
        while not watcher.closed:
            if not watcher.pending and not due["end"] and not due["bookmark"]:
                await watcher.wakeup.wait()
            if watcher.overflowed:
                expired = errors.expired("the watcher fell too far behind and was closed; restart the watch from a fresh list")
                await call.send({"type": "http.response.body", "body": event_line(ERROR, orjson.dumps(expired.status())), "more_body": True})
                break
            chunk = watcher.take()
            watcher.wakeup.clear()
            if watcher.closed:
                break
            if due["bookmark"]:
                due["bookmark"] = False
                chunk += _bookmark(call, call.registry.resource_version)
                timers["bookmark"] = loop.call_later(bookmark_every, wake, "bookmark")
            if chunk:
                await call.send({"type": "http.response.body", "body": chunk, "more_body": True})
            if due["end"]:
                break
        # The end of the stream, also when the server closed the watch (its kind went away, a
        # close-watches fault): clients then watch again. Once the client has gone, uvicorn's send
        # does nothing.
        await call.send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        if streams is not None:
            streams.discard(end)
        for timer in timers.values():
            timer.cancel()
        call.registry.stop_watch(watcher)
        listener.cancel()


async def _start(send, content_type: bytes) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", content_type), (b"cache-control", b"no-cache, private")]})


async def _wait_disconnect(receive, watcher) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            watcher.closed = True
            watcher.wakeup.set()
            return


def _bookmark(call: Call, rv: int, *, initial_end: bool = False) -> bytes:
    meta: dict = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return event_line(BOOKMARK, orjson.dumps({"kind": call.rt.kind, "apiVersion": call.rt.api_version, "metadata": meta}))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
