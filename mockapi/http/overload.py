"""Overload protection, as kube-apiserver does it: bounded requests in flight, bounded watchers, and a
deadline on every request that is not long-running.

:class:`Admission` decides, once per request and before it runs, what answers it:

* read-only and mutating requests have their own bounds (``--max-requests-inflight``,
  ``--max-mutating-requests-inflight``, kube's WithMaxInFlightLimit); over a bound the answer is
  kube's 429 ``TooManyRequests`` Status with ``Retry-After: 1``;
* watches are long-running: not counted there, but bounded in total and per client
  (``--max-watchers``, ``--max-watchers-per-client``; a client is its remote address);
* every other request gets a deadline, kube's WithTimeoutForNonLongRunningRequests: ``?timeout=``
  (a Go duration) or ``--request-timeout`` (60 s); the connection protocol answers a 504
  ``Timeout`` Status at that deadline if the request still runs;
* the health checks are never throttled, and answered at once.

The connection protocol (:mod:`mockapi.http.connections`) calls :meth:`Admission.admit` when it
starts a request, so a request counts from the moment it is queued: what is in flight is what the
event loop has to get through, and a flood is answered with 429s written at once (an
:class:`Answer`, no task) instead of lengthening the queue in front of ``/readyz``. The ASGI app
alone (in process, without that protocol) has none of this. Per request the cost is a few
string tests and an integer comparison (:meth:`Admission.enter`, for the protocol: no wrapper, no
object; the protocol keeps the deadline on the connection, docs/overload-and-shutdown.md).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Callable
from urllib.parse import parse_qsl

import orjson

from mockapi import errors
from mockapi.http import health, requestinfo

MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
HEALTH_PATHS = frozenset({f"/{name}{check}" for name in health.ENDPOINTS for check in ("", *(f"/{c}" for c in health.HEALTH_CHECKS))})
READYZ_PATHS = frozenset(path for path in HEALTH_PATHS if path.startswith("/readyz"))
TOO_MANY_REQUESTS = "Too many requests, please try again later."
SWEEP_SECONDS = 0.05  # how often the requests in flight are checked against their deadlines
TIMEOUT_MESSAGE = "request did not complete within requested timeout - context deadline exceeded"
INVALID_TIMEOUT = "invalid timeout specified in the request URL"
# What a connection, not a request, holds while the process drains: kube answers long-running
# requests that arrive then (on a connection opened before) this way.
SHUTTING_DOWN = "apiserver is shutting down"


@dataclass
class Limits:
    """The bounds, from :class:`mockapi.settings.Settings`; 0 means no bound (as kube's 0)."""

    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    max_watchers: int = 10_000
    max_watchers_per_client: int = 5_000
    request_timeout: float = 60.0


def limits(settings) -> Limits:
    """The bounds a :class:`mockapi.settings.Settings` asks for."""
    return Limits(
        max_requests_inflight=settings.max_requests_inflight, max_mutating_requests_inflight=settings.max_mutating_requests_inflight,
        max_watchers=settings.max_watchers, max_watchers_per_client=settings.max_watchers_per_client, request_timeout=settings.request_timeout,
    )


def is_watch(path: str, query_string: bytes) -> bool:
    """Whether a GET is a watch (``?watch=true`` or the ``/watch/`` prefix): the long-running
    requests this server serves. The common case (no "watch" anywhere) costs two substring tests."""
    if b"watch" not in query_string and "/watch/" not in path:
        return False
    return requestinfo.parse("GET", path, query_string).verb == "watch"


class Answer:
    """A complete, fixed response: an ASGI app, and the same response as HTTP/1.1 bytes that the
    connection protocol writes at once, without a task (:mod:`mockapi.http.connections`): under a
    flood a 429 or a health check then costs no turn behind the requests in flight."""

    __slots__ = ("code", "headers", "body", "close")

    def __init__(self, code: int, headers: list[tuple[bytes, bytes]], body: bytes, *, close: bool = False) -> None:
        self.code = code
        self.headers = [*headers, (b"content-length", str(len(body)).encode())]
        self.body = body
        self.close = close  # the connection closes after it

    @classmethod
    def status(cls, exc: errors.StatusError, *, close: bool = False) -> "Answer":
        headers = [(b"content-type", b"application/json"), *((k.lower().encode(), v.encode()) for k, v in exc.headers.items())]
        status = exc.status()
        if exc.reason == "Timeout":
            status["details"] = exc.details  # kube's NewTimeoutError always has details (retryAfterSeconds 0: "{}")
        return cls(exc.code, headers, orjson.dumps(status), close=close)

    async def __call__(self, scope, receive, send) -> None:
        headers = [*self.headers, (b"connection", b"close")] if self.close else self.headers
        await send({"type": "http.response.start", "status": self.code, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})

    def http_bytes(self, status_line: bytes, default_headers, *, keep_alive: bool) -> bytes:
        parts = [status_line]
        for name, value in (*default_headers, *self.headers):
            parts += (name, b": ", value, b"\r\n")
        if self.close or not keep_alive:
            parts.append(b"connection: close\r\n")
        parts += (b"\r\n", self.body)
        return b"".join(parts)


_TEXT = [(b"content-type", b"text/plain; charset=utf-8"), (b"x-content-type-options", b"nosniff")]
# /readyz while the server drains (kube's "[-]shutdown failed"): 503, so that a load balancer or a
# kubelet probe takes the server out before it stops accepting.
NOT_READY = Answer(503, _TEXT, b"[+]ping ok\n[+]store ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n")


def _health(scope) -> Answer:
    return Answer(200, [(b"content-type", b"text/plain; charset=utf-8")], health.body(scope["path"], scope.get("query_string", b"")))


class Admission:
    """Counts the requests in flight and the open watches of one server; :meth:`admit` is called
    once per request, before it runs, and returns the ASGI app that will answer it."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.readonly = 0
        self.mutating = 0
        self.watchers = 0
        self.watchers_by_client: dict[str, int] = {}
        self.draining = False  # set on SIGTERM: /readyz answers 503
        self.closing = False  # set once the listener is closed: new watches are refused
        self._too_many = Answer.status(errors.too_many_requests(TOO_MANY_REQUESTS))
        # The wrapped requests under a deadline (in process; the connection protocol keeps its
        # requests' deadlines on the connections: mockapi.http.connections.Guard). One sweep every
        # SWEEP_SECONDS finds the late ones, instead of a timer per request (armed and cancelled, a
        # timer costs more than the rest of this module together): a deadline is kept to within that.
        self.running: set[Counted] = set()
        self._sweeping = None  # the event loop the sweep is scheduled on (an app may outlive a loop, in tests)

    def track(self, request: "Counted", loop, on_timeout: Callable[[], None]) -> None:
        """Call ``on_timeout()`` if ``request`` still runs ``request.timeout`` seconds from now."""
        request.deadline = loop.time() + request.timeout
        request.on_timeout = on_timeout
        self.running.add(request)
        if self._sweeping is not loop:
            self._sweeping = loop
            loop.call_later(SWEEP_SECONDS, self._sweep, loop)

    def _sweep(self, loop) -> None:
        now = loop.time()
        for request in [request for request in self.running if request.deadline <= now]:
            self.running.discard(request)
            request.on_timeout()
        if self.running:
            loop.call_later(SWEEP_SECONDS, self._sweep, loop)
        else:
            self._sweeping = None

    def enter(self, scope, app):
        """:meth:`admit` for the connection protocol, which runs the app itself and gives the slot
        back (:meth:`leave`): ``READ_ONLY`` for a read without a query string counted at once (its
        deadline is ``limits.request_timeout``), else what :meth:`admit` returns."""
        path = scope["path"]
        if scope["method"] == "GET" and not scope["query_string"] and path not in HEALTH_PATHS and "/watch/" not in path:
            limit = self.limits.max_requests_inflight
            if limit and self.readonly >= limit:
                return self._too_many
            self.readonly += 1
            return READ_ONLY
        return self.admit(scope, app)

    def leave(self, mutating: bool) -> None:
        if mutating:
            self.mutating -= 1
        else:
            self.readonly -= 1

    def admit(self, scope, app):
        """``app`` wrapped to be counted, an :class:`Answer` (a 429; a health check, never
        throttled), or ``app`` itself (exempt)."""
        path = scope["path"]
        if path in HEALTH_PATHS:
            if scope["method"] != "GET":
                return app
            return NOT_READY if self.draining and path in READYZ_PATHS else _health(scope)
        query_string = scope.get("query_string", b"")
        mutating = scope["method"] in MUTATING_METHODS
        if not mutating and is_watch(path, query_string):
            return self._admit_watch(scope, app)
        timeout = self.limits.request_timeout
        if b"timeout=" in query_string:
            try:
                timeout = requested_timeout(query_string, timeout)
            except errors.StatusError as exc:
                return Answer.status(exc)
        if mutating:
            limit = self.limits.max_mutating_requests_inflight
            if limit and self.mutating >= limit:
                return self._too_many
            self.mutating += 1
        else:
            limit = self.limits.max_requests_inflight
            if limit and self.readonly >= limit:
                return self._too_many
            self.readonly += 1
        return Counted(self, app, mutating, timeout)

    def _admit_watch(self, scope, app):
        if self.closing:
            return Answer.status(errors.StatusError(503, "ServiceUnavailable", SHUTTING_DOWN, headers={"Retry-After": "1"}), close=True)
        client = scope["client"][0] if scope.get("client") else ""
        mine = self.watchers_by_client.get(client, 0)
        limits = self.limits
        if limits.max_watchers and self.watchers >= limits.max_watchers:
            return Answer.status(errors.too_many_requests(f"{TOO_MANY_REQUESTS[:-1]}: the server has {self.watchers} watches open (--max-watchers)"))
        if limits.max_watchers_per_client and mine >= limits.max_watchers_per_client:
            return Answer.status(errors.too_many_requests(f"{TOO_MANY_REQUESTS[:-1]}: this client ({client}) has {mine} watches open (--max-watchers-per-client)"))
        self.watchers += 1
        self.watchers_by_client[client] = mine + 1
        return _Watch(self, app, client)

    def release_watch(self, client: str) -> None:
        self.watchers -= 1
        left = self.watchers_by_client[client] - 1
        if left:
            self.watchers_by_client[client] = left
        else:
            del self.watchers_by_client[client]


READ_ONLY = object()  # Admission.enter: a read-only request was counted


class Counted:
    """One admitted request, run in process (:meth:`Admission.admit`): it gives its slot back when
    it returns (the slot was taken at admission). ``timeout`` is its deadline in seconds
    (:meth:`Admission.track`); the connection protocol runs the app itself instead."""

    __slots__ = ("admission", "app", "mutating", "timeout", "deadline", "on_timeout")

    def __init__(self, admission: Admission, app, mutating: bool, timeout: float) -> None:
        self.admission, self.app, self.mutating, self.timeout = admission, app, mutating, timeout

    async def __call__(self, scope, receive, send) -> None:
        admission = self.admission
        try:
            await self.app(scope, receive, send)
        except asyncio.CancelledError:
            if not admission.closing:
                raise  # cancelled at the end of the shutdown grace period: the connection is gone, say nothing
        finally:
            if self.timeout:
                admission.running.discard(self)
            admission.leave(self.mutating)


class _Watch:
    __slots__ = ("admission", "app", "client")

    def __init__(self, admission: Admission, app, client: str) -> None:
        self.admission, self.app, self.client = admission, app, client

    async def __call__(self, scope, receive, send) -> None:
        try:
            await self.app(scope, receive, send)
        except asyncio.CancelledError:
            if not self.admission.closing:
                raise
        finally:
            self.admission.release_watch(self.client)


# ------------------------------------------------------------------ the per-request deadline
_GO_DURATION = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_go_duration(text: str) -> float:
    """Go's ``time.ParseDuration`` in seconds (``500ms``, ``1m30s``, ``-2s``, ``0``), strictly: a
    number needs a unit. Raises ValueError with Go's message."""
    value, sign = text, 1.0
    if value[:1] in ("+", "-"):
        sign, value = (-1.0 if value[0] == "-" else 1.0), value[1:]
    if value == "0":
        return 0.0
    if not value:
        raise ValueError(f'time: invalid duration "{text}"')
    pos, total = 0, 0.0
    for match in _GO_DURATION.finditer(value):
        number = match.group(1)
        if match.start() != pos or number in ("", "."):
            break
        total += float(number) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(value) or pos == 0:
        if value.replace(".", "", 1).isdigit():
            raise ValueError(f'time: missing unit in duration "{text}"')
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def requested_timeout(query_string: bytes, default: float) -> float:
    """The request's deadline in seconds: ``?timeout=`` when given and shorter than the server's
    ``--request-timeout`` (kube's timeoutParser: 0 or more means the default). Raises a 400 for a
    malformed value, worded as kube-apiserver's."""
    if b"timeout=" not in query_string:
        return default
    value = next((v for k, v in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True) if k == "timeout"), "")
    if not value:
        return default
    try:
        timeout = parse_go_duration(value)
    except ValueError as exc:
        raise errors.bad_request(f"{INVALID_TIMEOUT} - {exc}") from None
    return timeout if 0 < timeout < default else default


def timeout_error() -> errors.StatusError:
    return errors.StatusError(504, "Timeout", f"Timeout: {TIMEOUT_MESSAGE}", {})


TIMED_OUT = Answer.status(timeout_error())
