"""The health checks, ``/healthz``, ``/livez`` and ``/readyz``, worded like kube-apiserver's.

Answered in plain ASGI, without the cold endpoints' FastAPI app (:mod:`mockapi.http.cold`): a
readiness probe polls them from the first moment, and building that app costs a third of start-up.
The bytes are the ones that app sent for them (a test compares the two).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import parse_qsl

HEALTH_CHECKS = ("ping", "store")
ENDPOINTS = ("healthz", "livez", "readyz")
# path -> the endpoint whose report ?verbose asks for, or None for a single check (always "ok")
_PATHS = {f"/{name}": name for name in ENDPOINTS} | {f"/{name}/{check}": None for name in ENDPOINTS for check in HEALTH_CHECKS}
_TEXT = b"text/plain; charset=utf-8"


def health_report(name: str, *, excluded: Iterable[str] = ()) -> str:
    """The verbose body of ``/healthz``, ``/livez`` or ``/readyz`` as kube-apiserver writes it
    (apiserver ``healthz.handleRootHealth``): one line per check, ``exclude``d ones marked."""
    excluded = set(excluded)
    unknown = excluded - set(HEALTH_CHECKS)
    lines = [f"[+]{check} excluded: ok" if check in excluded else f"[+]{check} ok" for check in HEALTH_CHECKS]
    if unknown:
        quoted = ",".join(json.dumps(check) for check in sorted(unknown))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    return "\n".join(lines + [f"{name} check passed"]) + "\n"


def body(path: str, query_string: bytes) -> bytes:
    """What ``GET path?query`` answers (every check passes while the process serves requests)."""
    name = _PATHS[path]
    if name is None:
        return b"ok"
    query = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    if not any(key == "verbose" for key, _ in query):
        return b"ok"
    return health_report(name, excluded=[value for key, value in query if key == "exclude"]).encode()


async def respond(scope, send) -> bool:
    """Answer a health check (True), or leave the request alone (False): other paths, other
    methods (a 405 from the cold endpoints) and paths with a trailing slash (their redirect)."""
    if scope["method"] != "GET" or scope["path"] not in _PATHS:
        return False
    text = body(scope["path"], scope.get("query_string", b""))
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(text)).encode()), (b"content-type", _TEXT)]})
    await send({"type": "http.response.body", "body": text})
    return True
