"""Logging: text or JSON lines, one line per API request at debug level, and the start-up banner.

``mockapi serve --log-format json`` makes every log line (uvicorn's too) one JSON object with
``time``, ``level``, ``logger`` and ``message``; a request line adds ``verb``, ``method``, ``path``,
``resource``, ``namespace``, ``name``, ``code``, ``latencyMs`` and ``userAgent``.
"""

from __future__ import annotations

import logging
import os
import sys
from datetime import datetime, timezone

import orjson

FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
REQUESTS = logging.getLogger("mockapi.requests")


class JSONFormatter(logging.Formatter):
    """One JSON object per line; a record's ``fields`` extra is merged in."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(line, default=str).decode()


def configure(*, level: str = "info", fmt: str = "text", stream=None) -> None:
    """Configure the root logger once for the process (uvicorn's loggers propagate to it)."""
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JSONFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True


def log_request(info, code: int, seconds: float, headers: dict) -> None:
    """The KubeAPI observer: one readable line per request, only when debug logging is on."""
    if not REQUESTS.isEnabledFor(logging.DEBUG):
        return
    agent = headers.get(b"user-agent", b"").decode("latin-1")
    path = info.path + ("?" + _query(info.query) if info.query else "")
    what = " ".join(p for p in (info.verb, info.resource + (f"/{info.subresource}" if info.subresource else ""), _where(info)) if p)
    fields = {
        "verb": info.verb,
        "method": info.method,
        "path": info.path,
        "resource": info.resource,
        "namespace": info.namespace,
        "name": info.name,
        "code": code,
        "latencyMs": round(seconds * 1000, 3),
        "userAgent": agent,
    }
    REQUESTS.debug("%s %s %d %.1fms (%s) %s", info.method, path, code, seconds * 1000, what or "non-resource", agent, extra={"fields": fields})


def banner(*, url: str, objects: int, load_seconds: float, ready_seconds: float | None, fmt: str = "text") -> str:
    """The start-up line: where to connect, what was loaded, how long start-up took."""
    if fmt == "json":
        line = {"time": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"), "level": "info", "logger": "mockapi"}
        line.update(message=f"mockapi serving on {url}", url=url, objectsLoaded=objects, loadSeconds=round(load_seconds, 3))
        if ready_seconds is not None:
            line["readySeconds"] = round(ready_seconds, 3)
        return orjson.dumps(line).decode()
    ready = f", ready {ready_seconds:.2f}s after process start" if ready_seconds is not None else ""
    return f"mockapi serving on {url} ({objects} objects loaded in {load_seconds:.2f}s{ready})"


def process_age() -> float | None:
    """Seconds since this process started (Linux ``/proc``), or None where that cannot be read."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as uptime:
            up = float(uptime.read().split()[0])
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, up - started)


def _where(info) -> str:
    if info.namespace and info.name:
        return f"{info.namespace}/{info.name}"
    return info.name or (f"-n {info.namespace}" if info.namespace else "")


def _query(query: dict) -> str:
    return "&".join(f"{k}={v}" if v else k for k, v in query.items())
