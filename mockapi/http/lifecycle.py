"""Serving and stopping: the uvicorn server with mockapi's connection guard and a graceful shutdown.

On SIGTERM or SIGINT (or ``should_exit`` from a test), in kube-apiserver's order:

1. ``/readyz`` answers 503 for ``--shutdown-delay`` seconds while everything else is still served
   (kube's ``--shutdown-delay-duration``: time for a load balancer or kubelet to notice);
2. the listener closes (no new connections); idle keep-alive connections close, busy ones close
   after their response (``Connection: close``);
3. every watch ends with a clean end of stream (its final chunk), as kube ends them;
4. in-flight requests get up to ``--shutdown-grace-period`` seconds to finish; what is left then is
   cancelled (one log line, no traceback);
5. the ASGI lifespan shuts down: controllers stop, then ``Server.on_shutdown`` hooks run (a
   persistence layer flushes there: :meth:`mockapi.app.Server.shutdown`);
6. the process exits 0 — uvicorn would re-raise the signal after its shutdown (exit −15): a
   server stopped as asked has not failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import time
from typing import Callable

import uvicorn

from mockapi.http import connections
from mockapi.http.overload import Admission

log = logging.getLogger("mockapi")


def protocol(guard: connections.Guard):
    """uvicorn's ``http=``: the guarded httptools protocol, or "auto" without httptools (then
    only the ASGI-level protections apply)."""
    try:
        import httptools  # noqa: F401
    except ImportError:  # pragma: no cover - uvicorn[standard] brings it
        log.warning("httptools is not installed: header size and read-header timeouts are not enforced")
        return "auto"
    return connections.protocol_class(guard)


class _WebSocketsOnFirstUpgrade:
    """uvicorn's ``ws=``: its ``auto`` WebSocket protocol, imported on the first upgrade request
    rather than when uvicorn starts (``websockets`` costs ~15 ms and ~2.2 MiB of start-up and
    mockapi serves no WebSocket route). Constructing this class makes and returns the ``auto``
    protocol, so an upgrade is answered exactly as with ``ws="auto"``: the app refuses the
    ``websocket`` scope, uvicorn answers 403 (tests/test_startup.py)."""

    def __new__(cls, *args, **kwargs):
        from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

        return AutoWebSocketsProtocol(*args, **kwargs)


def websocket_protocol():
    """uvicorn's ``ws=``: "auto" resolved on the first upgrade, or "auto" itself (no WebSocket
    support, so it costs nothing) when neither websockets nor wsproto is installed."""
    if importlib.util.find_spec("websockets") is None and importlib.util.find_spec("wsproto") is None:  # pragma: no cover - uvicorn[standard] brings websockets
        return "auto"
    return _WebSocketsOnFirstUpgrade


def uvicorn_server(
    app, settings, *, admission: Admission, streams: set, tls_options: dict | None = None, on_ready: Callable[[], None] | None = None, server_class: type | None = None
) -> "GracefulServer":
    """The uvicorn server for ``app`` with the bounds of ``settings`` (:class:`mockapi.settings.Settings`).

    ``tls_options``: uvicorn's ``ssl_*`` options for HTTPS (:func:`mockapi.auth.tls.prepare`), and
    under ``"wrap_protocol"`` a function that derives the TLS protocol class from the guarded one
    (so a TLS connection has the same bounds)."""
    tls_options = dict(tls_options or {})
    wrap_protocol = tls_options.pop("wrap_protocol", None)
    guard = connections.Guard(
        admission, max_connections=settings.max_connections, read_header_timeout=settings.read_header_timeout,
        max_header_bytes=settings.max_header_bytes, write_stall_timeout=settings.request_timeout,
    )  # fmt: skip
    config = uvicorn.Config(
        app,
        log_level=settings.log_level,
        log_config=None,  # logs.configure() did it; uvicorn's loggers propagate to the root
        access_log=False,
        loop="auto",
        http=wrap_protocol(protocol(guard)) if wrap_protocol is not None else protocol(guard),
        ws=websocket_protocol(),
        lifespan="on",
        timeout_keep_alive=settings.idle_timeout,
        timeout_graceful_shutdown=settings.shutdown_grace_period,
        **tls_options,
    )
    return (server_class or GracefulServer)(
        config, admission=admission, streams=streams, grace_period=settings.shutdown_grace_period, delay=settings.shutdown_delay, on_ready=on_ready
    )


class GracefulServer(uvicorn.Server):
    """A uvicorn server that drains as described above; ``on_ready()`` is called once it accepts."""

    def __init__(self, config: uvicorn.Config, *, admission: Admission, streams: set[Callable[[], None]], grace_period: float, delay: float = 0.0, on_ready: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.admission = admission
        self.streams = streams
        self.grace_period = grace_period
        self.delay = delay
        self.on_ready = on_ready

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets=sockets)
        if not self.should_exit and self.on_ready is not None:
            self.on_ready()

    @contextlib.contextmanager
    def capture_signals(self):
        with super().capture_signals():
            try:
                yield
            finally:
                self._captured_signals.clear()  # stopped as asked: exit normally, not by the signal again

    async def shutdown(self, sockets=None) -> None:
        started = time.monotonic()
        self.admission.draining = True
        if self.delay > 0:
            log.info("Shutting down in %gs (/readyz fails meanwhile)", self.delay)
            await self._sleep_unless_forced(self.delay)
        log.info("Shutting down")
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        self.admission.closing = True
        for connection in list(self.server_state.connections):
            connection.shutdown()
        for end in list(self.streams):
            end()
        await self._drain(started)
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def _drain(self, started: float) -> None:
        deadline = time.monotonic() + self.grace_period
        state = self.server_state
        while (state.tasks or state.connections) and time.monotonic() < deadline and not self.force_exit:
            await asyncio.sleep(0.01)
        for connection in list(state.connections):
            connection.transport.abort()  # first: a cancelled request then has no client to answer
        if state.tasks:
            log.warning("Cancelling %d request(s) still running after the %gs grace period", len(state.tasks), self.grace_period)
            for task in list(state.tasks):
                task.cancel()
            await asyncio.gather(*state.tasks, return_exceptions=True)
        log.info("Drained in %.2fs", time.monotonic() - started)

    async def _sleep_unless_forced(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.force_exit:
            await asyncio.sleep(min(0.05, end - time.monotonic()))
