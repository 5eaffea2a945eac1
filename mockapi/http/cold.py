"""The cold endpoints' application, built when a request first needs it.

Importing FastAPI (with pydantic's OpenAPI models) costs ~150 ms and ~7 MiB, a third of
``mockapi serve``'s start-up, and no Kubernetes request needs it: ``/api`` and ``/apis`` go through
the thin dispatcher (:mod:`mockapi.http.kube`). So :class:`Deferred` stands where that app stands
and builds it on the first request that reaches it — ``/version``, ``/openapi``, ``/metrics``, the
control endpoints, a 404 — which then waits once for the build. The health checks a readiness probe
polls are answered without it (:mod:`mockapi.http.health`). What is mounted on the app before it
exists (``mount``, ``add_route``) is applied, in order, when it is built.
"""

from __future__ import annotations

import gc
from typing import Any, Callable

from mockapi.http import health

ASGIApp = Any


class Deferred:
    """An ASGI application built on its first request by ``build()``."""

    def __init__(self, build: Callable[[], ASGIApp]) -> None:
        self._build = build
        self._steps: list[Callable[[ASGIApp], None]] = []
        self._app: ASGIApp | None = None

    def mount(self, step: Callable[[ASGIApp], None]) -> None:
        """Run ``step(app)`` on the application once it is built (at once if it is)."""
        if self._app is not None:
            step(self._app)
        else:
            self._steps.append(step)

    def add_route(self, *args, **kwargs) -> None:
        """The application's ``add_route``, deferred like :meth:`mount`."""
        self.mount(lambda app: app.add_route(*args, **kwargs))

    @property
    def app(self) -> ASGIApp:
        """The application, built now if it was not yet (with the collector off, as start-up:
        the build only allocates what stays, and collections on the way would find nothing)."""
        if self._app is None:
            collecting = gc.isenabled()
            gc.disable()
            try:
                app = self._build()
                for step in self._steps:
                    step(app)
            finally:
                if collecting:
                    gc.enable()
            self._steps.clear()
            self._app = app
        return self._app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and await health.respond(scope, send):
            return
        await self.app(scope, receive, send)
