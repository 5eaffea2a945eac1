"""The cold endpoints, on FastAPI: ``/version``, health checks, OpenAPI v2, and Status-shaped 404s.

Everything under ``/api`` and ``/apis`` goes through the thin dispatcher in
:mod:`mockapi.http.kube` instead (PERF.md: a decorated FastAPI route costs 30-60 µs a request).
"""

from __future__ import annotations

import platform

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import PlainTextResponse, Response

from mockapi import __version__, errors
from mockapi.http import responses
from mockapi.http.health import HEALTH_CHECKS, health_report

KUBE_MINOR = "32"
JSON = "application/json"


def version_info() -> dict:
    machine = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return {
        "major": "1",
        "minor": KUBE_MINOR,
        "gitVersion": f"v1.{KUBE_MINOR}.0-mockapi.{__version__}",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-22T00:00:00Z",
        "goVersion": "go1.23",
        "compiler": "gc",
        "platform": f"linux/{machine}",
    }


def create_app(openapi) -> FastAPI:
    app = FastAPI(title="mockapi", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return responses.error_response(errors.StatusError(404, "NotFound", "the server could not find the requested resource", {}))
        if exc.status_code == 405:
            return responses.error_response(errors.method_not_allowed())
        return responses.error_response(errors.StatusError(exc.status_code, "Unknown", str(exc.detail)))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return responses.error_response(errors.bad_request(str(exc.errors()[0].get("msg", "invalid request"))))

    @app.get("/version")
    async def version() -> Response:
        import orjson

        return Response(orjson.dumps(version_info()), media_type=JSON)

    def health(name: str):
        async def check(request: Request) -> Response:
            report = health_report(name, excluded=request.query_params.getlist("exclude"))
            return PlainTextResponse(report if "verbose" in request.query_params else "ok")

        return check

    async def single_check(request: Request) -> Response:
        return PlainTextResponse("ok")  # every check passes while the process serves requests

    for name in ("healthz", "livez", "readyz"):
        app.add_api_route(f"/{name}", health(name), methods=["GET"])
        for check_name in HEALTH_CHECKS:
            app.add_api_route(f"/{name}/{check_name}", single_check, methods=["GET"])

    @app.get("/openapi/v3")
    async def openapi_v3_root() -> Response:
        return Response(openapi.root(), media_type=JSON)

    @app.get("/openapi/v3/{path:path}")
    async def openapi_v3(path: str) -> Response:
        try:
            return Response(openapi.document(path), media_type=JSON)
        except errors.StatusError as exc:
            return responses.error_response(exc)

    @app.get("/openapi/v2")
    async def openapi_v2() -> Response:
        # kubectl only accepts protobuf here; an empty document is what works (PROTOCOL.md a.3).
        return Response(b"", media_type="application/com.github.proto-openapi.spec.v2.v1.0+protobuf")

    return app
