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

import asyncio
import logging
import sys
import weakref

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from mockapi.http.overload import READ_ONLY, SWEEP_SECONDS, TIMED_OUT, Admission, Answer, Counted

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


class _QuietCancel(logging.Filter):
    """Drops uvicorn's "Exception in ASGI application" for a request cancelled at the end of the
    shutdown grace period (the connection is gone; GracefulServer says it in one line): the
    protocol runs uvicorn's run_asgi without a wrapper around the app that could catch it."""

    def __init__(self) -> None:
        super().__init__()
        self.admissions: weakref.WeakSet[Admission] = weakref.WeakSet()

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, asyncio.CancelledError) and any(admission.closing for admission in self.admissions))


_quiet_cancel = _QuietCancel()


class Guard:
    """What the connections of one server share: the bounds and the admission counters. The
    per-request state lives on each connection (plain attributes, no shared dict to insert into and
    remove from on every request); one sweep looks at every connection now and then."""

    def __init__(self, admission: Admission, *, max_connections: int, read_header_timeout: float, max_header_bytes: int, write_stall_timeout: float) -> None:
        self.admission = admission
        _quiet_cancel.admissions.add(admission)
        uvicorn_log = logging.getLogger("uvicorn.error")
        if _quiet_cancel not in uvicorn_log.filters:
            uvicorn_log.addFilter(_quiet_cancel)
        self.max_connections = max_connections
        self.read_header_timeout = read_header_timeout
        self.max_header_bytes = max_header_bytes
        self.write_stall_timeout = write_stall_timeout
        # The header clock of a request after the first on a connection is started by the sweep that
        # first sees its bytes, so a deadline is kept to within two sweeps: at most 1 s late.
        self.sweep_seconds = min(0.5, read_header_timeout / 8)
        self.connections: set = set()  # uvicorn's set of the server's connections (ServerState.connections)
        self._sweeping = None  # the event loop the sweep is scheduled on
        self._timing = None  # the event loop the deadline sweep is scheduled on
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

    def opened(self, connection: "GuardedHttpToolsProtocol") -> None:
        self.connections = connection.connections
        loop = connection.loop
        if self.read_header_timeout and self._sweeping is not loop:
            self._sweeping = loop
            loop.call_later(self.sweep_seconds, self._sweep, loop)

    def _sweep(self, loop) -> None:
        """Close the connections late with their headers; start the clock of those that began a
        request's headers since the last sweep (the first byte after an idle keep-alive)."""
        now = loop.time()
        late = []
        for connection in self.connections:
            if not isinstance(connection, GuardedHttpToolsProtocol) or not connection._reading_headers or connection._lingering:
                continue
            deadline = connection._header_deadline
            if deadline is None:
                if connection._header_bytes:
                    connection._header_deadline = now + self.read_header_timeout
            elif deadline <= now:
                late.append(connection)
        for connection in late:
            connection.header_timeout()
        if self.connections:
            loop.call_later(self.sweep_seconds, self._sweep, loop)
        else:
            self._sweeping = None


    def time_requests(self, loop) -> None:
        """Start the sweep that keeps the deadlines of the requests running (every SWEEP_SECONDS,
        while any runs): one look at each connection, instead of a timer or a set entry per request."""
        self._timing = loop
        loop.call_later(SWEEP_SECONDS, self._sweep_deadlines, loop)

    def _sweep_deadlines(self, loop) -> None:
        now = loop.time()
        late = []
        for connection in self.connections:
            if isinstance(connection, GuardedHttpToolsProtocol) and (cycle := connection._timed_cycle) is not None:
                if cycle.response_complete:
                    connection._timed_cycle = None
                elif connection.deadline <= now:
                    late.append(connection)
        for connection in late:
            connection.expire()
        if self.admission.readonly or self.admission.mutating:
            loop.call_later(SWEEP_SECONDS, self._sweep_deadlines, loop)
        else:
            self._timing = None


def protocol_class(guard: Guard) -> type[HttpToolsProtocol]:
    """A uvicorn ``http=`` protocol class bound to ``guard``."""
    attributes = {"guard": guard, "admission": guard.admission, "max_header_bytes": guard.max_header_bytes or sys.maxsize}
    return type("GuardedHttpToolsProtocol", (GuardedHttpToolsProtocol,), attributes)


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """The per-request path costs one attribute test and an addition in ``data_received``, a few
    attribute stores when the headers and the message end, and the admission (no timer, no shared
    dict or set entry): uvicorn's methods are called directly, not via super()."""

    guard: Guard
    admission: Admission
    max_header_bytes: int  # the guard's, or no bound
    # Slots, not the instance dict: uvicorn's protocol already has 28 attributes, and past 30 CPython
    # stops sharing the dict's keys, which makes every attribute of uvicorn's per-request code slower
    # (+2,000 CPU instructions per request, measured with callgrind).
    __slots__ = ("_header_bytes", "_reading_headers", "_lingering", "_stall_timer", "_held", "_opened", "_header_deadline", "_fast_tasks", "_timed_cycle", "deadline")

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        guard = self.guard
        self._header_bytes = 0
        self._reading_headers = True
        self._lingering = False
        self._stall_timer = None
        self._held = None
        self._opened = self.loop.time()
        self._header_deadline = self._opened + guard.read_header_timeout if guard.read_header_timeout else None
        self._fast_tasks = not getattr(self.config, "reset_contextvars", False)
        self._timed_cycle = None  # the cycle of the request under a deadline (Guard._sweep_deadlines)
        self.deadline = 0.0
        guard.opened(self)
        if guard.max_connections and len(self.connections) > guard.max_connections:
            self._make_room()

    def _idle_since(self, now: float) -> float | None:
        """When this connection last had no request running, or None if one runs now."""
        cycle = self.cycle
        if self._lingering or (cycle is not None and not cycle.response_complete):
            return None
        if self.timeout_keep_alive_task is not None:
            return self.timeout_keep_alive_task.when() - self.timeout_keep_alive
        if self._held is not None:
            return self._held.when() - RETRY_AFTER_SECONDS
        if self._header_deadline is not None:
            return self._header_deadline - self.guard.read_header_timeout
        return self._opened if cycle is None else now

    def _make_room(self) -> None:
        """Close the connection idle the longest (an idle keep-alive, or one still sending its
        headers), or this one if every other has a request running. Only past the bound: a scan."""
        guard = self.guard
        now = self.loop.time()
        oldest, since = None, now
        for connection in self.connections:
            if connection is not self and isinstance(connection, GuardedHttpToolsProtocol):
                idle = connection._idle_since(now)
                if idle is not None and (oldest is None or idle < since):
                    oldest, since = connection, idle
        if oldest is None:  # every other connection has a request running: this one waits no turn
            guard.refused += 1
            self.transport.abort()
            return
        guard.evicted += 1
        oldest.transport.abort()

    def connection_lost(self, exc) -> None:
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
            self._header_bytes += len(data)  # the clock of these headers is the sweep's (Guard._sweep)
            if self._header_bytes > self.max_header_bytes:
                self._over_header_bytes(data)
                return
        HttpToolsProtocol.data_received(self, data)

    def _over_header_bytes(self, data: bytes) -> None:
        """The bytes counted may include a body sent with the headers: feed what the bound still
        allows, and refuse only if the headers did not end within it."""
        if self._lingering:
            return  # after a 431: read and drop what the client still sends
        allowed = len(data) - (self._header_bytes - self.max_header_bytes)
        if allowed > 0:
            HttpToolsProtocol.data_received(self, data[:allowed])
            if not self._reading_headers or not self._header_bytes:  # they did (and maybe the whole message)
                if not self.transport.is_closing():
                    self.data_received(data[allowed:])
                return
        if self.transport.is_closing():
            return
        self._lingering = True
        self.transport.write(HEADERS_TOO_LARGE)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def header_timeout(self) -> None:
        if self._reading_headers and not self.transport.is_closing():
            self.transport.close()  # Go answers nothing: a read timeout is "a common network error"

    def on_headers_complete(self) -> None:
        self._reading_headers = False
        HttpToolsProtocol.on_headers_complete(self)

    def on_message_complete(self) -> None:
        HttpToolsProtocol.on_message_complete(self)
        self._reading_headers = True  # whatever comes next is the next request's headers
        self._header_bytes = 0
        self._header_deadline = None  # its clock starts with its first byte

    # ------------------------------------------------------------ admission
    def _start_asgi_task(self, cycle, app) -> None:
        if app is not self.app:  # uvicorn's own 503
            HttpToolsProtocol._start_asgi_task(self, cycle, app)
            return
        admission = self.admission
        admitted = admission.enter(cycle.scope, app)
        if admitted is READ_ONLY:
            mutating, timeout = False, admission.limits.request_timeout
        elif type(admitted) is Counted:
            mutating, timeout = admitted.mutating, admitted.timeout
        elif type(admitted) is Answer:
            self._answer_now(cycle, admitted)
            return
        else:  # a watch (counted by its wrapper), or exempt
            HttpToolsProtocol._start_asgi_task(self, cycle, admitted)
            return
        if not self._fast_tasks:  # uvicorn's reset_contextvars: its own way of creating the task
            self._start_wrapped(cycle, Counted(admission, app, mutating, timeout))
            return
        # uvicorn's task, on uvicorn's cycle.run_asgi(app) (which catches everything) followed by the
        # slot's release, in the task's last step: a done-callback would run one loop pass later,
        # after the I/O of that pass, and a client that sends its next request as soon as it has
        # its answer would find the slot still taken.
        task = self.loop.create_task(self._run_read(cycle, app) if not mutating else self._run_mutating(cycle, app))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        if timeout:  # two attributes that the guard's deadline sweep reads: nothing to undo when it ends
            self.deadline = self.loop.time() + timeout
            self._timed_cycle = cycle
            if self.guard._timing is not self.loop:
                self.guard.time_requests(self.loop)

    async def _run_read(self, cycle, app) -> None:
        try:
            await cycle.run_asgi(app)
        finally:
            self.admission.readonly -= 1

    async def _run_mutating(self, cycle, app) -> None:
        try:
            await cycle.run_asgi(app)
        finally:
            self.admission.mutating -= 1

    def _start_wrapped(self, cycle, counted: Counted) -> None:
        if counted.timeout:
            self.admission.track(counted, self.loop, lambda: self._timed_out(cycle))
        HttpToolsProtocol._start_asgi_task(self, cycle, counted)

    def expire(self) -> None:
        """The deadline of the request running on this connection has passed (the guard's sweep)."""
        cycle, self._timed_cycle = self._timed_cycle, None
        self._timed_out(cycle)

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
