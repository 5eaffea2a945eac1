"""The HTTP/1.1 connection, guarded: the limits that have to sit below ASGI.

uvicorn's httptools protocol, subclassed (:func:`protocol_class`), with what Go's ``http.Server``
does for kube-apiserver and uvicorn does not:

* **ReadHeaderTimeout** (``--read-header-timeout``, 32 s as kube): a connection must finish its
  request line and headers that long after it opened, or after the first byte of a request that
  follows an idle keep-alive; else it is closed without an answer, as Go does. A connection that
  sends nothing, half a request line or one header byte per second no longer stays forever.
* **MaxHeaderBytes** (``--max-header-bytes``, 1 MiB as kube): the request line and headers are
  counted as they arrive, before the parser buffers them; past the bound the answer is Go's 431
  and the connection closes. A 64 MiB header never reaches memory.
* **IdleTimeout** (``--idle-timeout``, 90 s as kube): uvicorn's keep-alive timeout.
* **A bound on connections** (``--max-connections``): past it, a new connection closes the oldest
  connection that has no request running (idle keep-alive, or still sending its headers); if every
  connection is busy, the new one is closed at once. So a probe gets in even when a flood of
  silent connections fills the bound, and the process never runs out of file descriptors.
* **A write stall bound**: a client that stops reading its response has its connection aborted
  when the transport has stayed paused (its buffer over the high-water mark) for the request
  timeout: a slow client cannot hold a response's memory without bound.
* **Admission** (:class:`mockapi.http.overload.Admission`): each request is admitted when the
  protocol starts it, so a 429 costs no queueing behind the requests in flight.
"""

from __future__ import annotations

import functools
import logging

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from mockapi.http.overload import TIMED_OUT, Admission, Answer, Counted

log = logging.getLogger("mockapi.http")

# Go's answer when the headers are over MaxHeaderBytes (net/http server.go), then it closes.
HEADERS_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"431 Request Header Fields Too Large"
)
LINGER_SECONDS = 0.5  # Go's rstAvoidanceDelay: the client reads the 431 before the close resets it
BIG_HEADERS = 64 * 1024
RETRY_AFTER_SECONDS = 1.0  # the Retry-After of a 429 (mockapi.http.overload): the connection is not read before it  # a connection that buffered more header bytes than this gives memory back when it ends


def _malloc_trim():
    """glibc's ``malloc_trim(0)``, or None elsewhere. Partial headers are buffered in growing bytes
    objects; freed, they stay in the C heap (glibc raises its mmap threshold after each large free),
    so RSS would never come down after a burst of half-sent large headers (issue 13: +200 MiB)."""
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return None


malloc_trim = _malloc_trim()


class Guard:
    """What the connections of one server share: the bounds, the admission counters and the idle
    connections in the order they became idle (oldest first), for eviction."""

    def __init__(self, admission: Admission, *, max_connections: int, read_header_timeout: float, max_header_bytes: int, write_stall_timeout: float) -> None:
        self.admission = admission
        self.max_connections = max_connections
        self.read_header_timeout = read_header_timeout
        self.max_header_bytes = max_header_bytes
        self.write_stall_timeout = write_stall_timeout
        self.idle: dict[HttpToolsProtocol, None] = {}
        # Connections sending their headers -> when they must be done. One sweep every
        # sweep_seconds closes the late ones: a timer per request (armed, then cancelled) would cost
        # more than everything else here together.
        self.reading: dict[HttpToolsProtocol, float] = {}
        self.sweep_seconds = min(1.0, read_header_timeout / 4)
        self._sweeping = None
        self.evicted = 0
        self.refused = 0
        self._trimming = False

    def trim_soon(self, loop) -> None:
        """Give freed header buffers back to the OS, at most once a second."""
        if malloc_trim is not None and not self._trimming:
            self._trimming = True
            loop.call_later(1.0, self._trim)

    def _trim(self) -> None:
        self._trimming = False
        malloc_trim(0)

    def reading_headers(self, connection: HttpToolsProtocol, loop) -> None:
        self.reading[connection] = loop.time() + self.read_header_timeout
        if self._sweeping is not loop:
            self._sweeping = loop
            loop.call_later(self.sweep_seconds, self._sweep, loop)

    def _sweep(self, loop) -> None:
        now = loop.time()
        for connection in [c for c, deadline in self.reading.items() if deadline <= now]:
            del self.reading[connection]
            connection.header_timeout()
        if self.reading:
            loop.call_later(self.sweep_seconds, self._sweep, loop)
        else:
            self._sweeping = None


def protocol_class(guard: Guard) -> type[HttpToolsProtocol]:
    """A uvicorn ``http=`` protocol class bound to ``guard``."""
    return type("GuardedHttpToolsProtocol", (GuardedHttpToolsProtocol,), {"guard": guard})


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    guard: Guard

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_bytes = 0
        self._reading_headers = True
        self._lingering = False
        self._stall_timer = None
        self._held = None
        guard = self.guard
        if guard.read_header_timeout:
            guard.reading_headers(self, self.loop)
        guard.idle[self] = None
        if guard.max_connections and len(self.connections) > guard.max_connections:
            self._make_room()

    def _make_room(self) -> None:
        guard = self.guard
        oldest = next(iter(guard.idle))
        if oldest is self:  # every other connection has a request running: this one waits no turn
            guard.refused += 1
            self.transport.abort()
            return
        guard.evicted += 1
        oldest.transport.abort()

    def connection_lost(self, exc) -> None:
        self.guard.idle.pop(self, None)
        self.guard.reading.pop(self, None)
        if self._header_bytes > BIG_HEADERS:
            self.guard.trim_soon(self.loop)
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None
        if self._held is not None:
            self._held.cancel()
            self._held = None
        super().connection_lost(exc)

    # ------------------------------------------------------------ the headers' time and size
    def data_received(self, data: bytes) -> None:
        if self._reading_headers:
            if self._lingering:
                return  # after a 431: read and drop what the client still sends
            if self not in self.guard.reading and self.guard.read_header_timeout:
                self.guard.reading_headers(self, self.loop)  # the first byte after an idle keep-alive: the headers' clock starts
            self._header_bytes += len(data)
            if self._header_bytes > self.guard.max_header_bytes:
                self._over_header_bytes(data)
                return
        super().data_received(data)

    def _over_header_bytes(self, data: bytes) -> None:
        """The bytes counted may include a body sent with the headers: feed what the bound still
        allows, and refuse only if the headers did not end within it."""
        allowed = len(data) - (self._header_bytes - self.guard.max_header_bytes)
        if allowed > 0:
            super().data_received(data[:allowed])
            if not self._reading_headers:
                super().data_received(data[allowed:])
                return
        if self.transport.is_closing():
            return
        self._lingering = True
        self.guard.reading.pop(self, None)
        self.guard.idle.pop(self, None)
        self.transport.write(HEADERS_TOO_LARGE)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def header_timeout(self) -> None:
        if self._reading_headers and not self.transport.is_closing():
            self.transport.close()  # Go answers nothing: a read timeout is "a common network error"

    def on_headers_complete(self) -> None:
        self._reading_headers = False
        guard = self.guard
        guard.reading.pop(self, None)
        guard.idle.pop(self, None)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._reading_headers = True  # whatever comes next is the next request's headers
        self._header_bytes = 0

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.cycle is not None and self.cycle.response_complete:
            self.guard.idle[self] = None

    # ------------------------------------------------------------ admission
    def _start_asgi_task(self, cycle, app) -> None:
        if app is self.app:  # not uvicorn's own 503
            app = self.guard.admission.admit(cycle.scope, app)
            if type(app) is Answer:
                self._answer_now(cycle, app)
                return
            if type(app) is Counted and app.timeout:
                self.guard.admission.track(app, self.loop, functools.partial(self._timed_out, cycle))
        super()._start_asgi_task(cycle, app)

    def _timed_out(self, cycle) -> None:
        """kube's WithTimeoutForNonLongRunningRequests, at the deadline of a request still running:
        the 504 Status if nothing was sent yet, else the connection is aborted (as Go's timeout
        handler does). The handler sees its client gone (what it sends goes nowhere, a body it
        waits for ends) and finishes on its own, as the handler goroutine does in kube."""
        if cycle.response_complete or cycle.disconnected or self.transport.is_closing():
            return
        if cycle.response_started:
            self.transport.abort()
        else:
            cycle.response_started = cycle.response_complete = True
            self.transport.write(TIMED_OUT.http_bytes(STATUS_LINE[504], self.server_state.default_headers, keep_alive=False))
            self.transport.close()
        cycle.disconnected = True
        cycle.message_event.set()

    def _answer_now(self, cycle, answer: Answer) -> None:
        """Write a fixed answer (a 429, a health check) at once, as uvicorn would have after a task:
        the cycle is complete (a request body still to come is dropped), keep-alive goes on."""
        keep_alive = cycle.keep_alive and not answer.close
        cycle.response_started = cycle.response_complete = True
        cycle.keep_alive = keep_alive
        self.transport.write(answer.http_bytes(STATUS_LINE[answer.code], self.server_state.default_headers, keep_alive=keep_alive))
        if not keep_alive:
            self.transport.close()
        self.on_response_complete()  # (which resumes reading: uvicorn's flow control)
        if keep_alive and answer.code == 429:
            self._hold_off()

    def _hold_off(self) -> None:
        """After a 429, this connection is not read again before the ``Retry-After`` it was told
        (a client that retries at once waits in its socket buffer, not in the event loop): a flood
        that ignores the answer no longer costs a parse and a 429 per request, and the loop's turns
        stay short enough for health checks and the admitted requests (docs/overload-and-shutdown.md)."""
        if self._held is not None:
            return
        self.flow.pause_reading()
        self._unset_keepalive_if_required()  # what the client sent meanwhile is read afterwards: not idle
        self._held = self.loop.call_later(RETRY_AFTER_SECONDS, self._release)

    def _release(self) -> None:
        self._held = None
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        if self.cycle is None or self.cycle.response_complete:  # idle again: uvicorn's keep-alive clock restarts
            self._unset_keepalive_if_required()
            self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    # ------------------------------------------------------------ a client that stops reading
    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stall_timer is None and self.guard.write_stall_timeout:
            self._stall_timer = self.loop.call_later(self.guard.write_stall_timeout, self._write_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None

    def _write_stalled(self) -> None:
        self._stall_timer = None
        log.info("closing the connection of %s: it read nothing of its response for %ss", self.client and self.client[0], self.guard.write_stall_timeout)
        self.transport.abort()
