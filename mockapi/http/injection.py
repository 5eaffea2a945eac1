"""Apply a matched fault rule (:mod:`mockapi.faults`) to one request, before its handler runs.

Latency is an ``asyncio.sleep`` (a watch starts late; a write's body is read first, so the write
lands even if the client gave up meanwhile); an error answers the request itself (a
watch gets the error as its HTTP response, not as a 200 with an ERROR event); a dropped connection
lets the handler run with a ``send`` that passes the response headers and half of the first piece
of body, then aborts: the client sees a response cut short (``IncompleteRead``, ``Connection
broken``) and uvicorn closes the connection. uvicorn logs an abandoned response as an error; a
logging filter keeps that line out for the requests dropped on purpose (a context variable set in
the request's task, which uvicorn's log call runs in).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging

import orjson

from mockapi import errors, faults
from mockapi.http import responses
from mockapi.http.verbs import Call

_DROPPED = contextvars.ContextVar("mockapi_fault_dropped", default=False)
_ABANDONED = "ASGI callable returned without completing response."
_WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Dropped(ConnectionAbortedError):
    """Raised through the handler once the partial response is out: the dispatcher lets it go."""


async def intercept(fault_set: faults.FaultSet, call: Call) -> bool:
    """Consult the rules for this request; True when a rule answered it (the handler must not run)."""
    rule = fault_set.match(call.info, call.headers)
    if rule is None:
        return False
    if rule.latency:
        fault_set.injected(rule, "latency")
        if call.info.method in _WITH_BODY and rule.error is None:
            await _buffer_body(call)
        await asyncio.sleep(rule.latency)
    if rule.error is not None:
        fault_set.injected(rule, "error")
        await _answer(rule, call)
        return True
    if rule.drop:
        fault_set.injected(rule, "dropConnection")
        call.send = _dropping(call.send)
    return False


async def _buffer_body(call: Call) -> None:
    """Read the body before the delay, as kube-apiserver has it before a slow storage call: a
    client that gives up meanwhile does not stop the write (it lands; a retry meets AlreadyExists
    or a Conflict)."""
    raw, _ = await call.body()
    original, pending = call.receive, [{"type": "http.request", "body": raw, "more_body": False}]

    async def receive():
        return pending.pop() if pending else await original()

    call.receive = receive


async def _answer(rule: faults.Rule, call: Call) -> None:
    if rule.plain_limiter:
        retry = str(rule.error.get("retryAfterSeconds", 1)).encode()
        headers = [(b"retry-after", retry), (b"x-content-type-options", b"nosniff")]
        await responses.send_bytes(call.send, 429, (faults.LIMITER_MESSAGE + "\n").encode(), content_type=b"text/plain; charset=utf-8", headers=headers)
        return
    raise rule.status_error(call.rt.group_resource, call.info.name or await _body_name(call))


async def _body_name(call: Call) -> str:
    """The name a create names in its body (for a Conflict's message), best effort."""
    if call.info.verb != "create":
        return ""
    try:
        raw, _ = await call.body()
        metadata = orjson.loads(raw).get("metadata") or {}
        return metadata.get("name") or ""
    except (errors.StatusError, orjson.JSONDecodeError, AttributeError):
        return ""


def _dropping(send):
    async def sending(message):
        if message["type"] == "http.response.start":
            await send(message)
            return
        body = message.get("body", b"")
        await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
        _DROPPED.set(True)
        raise Dropped("connection dropped by a fault rule")

    return sending


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (_DROPPED.get() and record.getMessage() == _ABANDONED)


logging.getLogger("uvicorn.error").addFilter(_QuietDrops())
