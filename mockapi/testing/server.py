"""mockapi for your own tests: a real server in a background thread, or a handle on a running one.

    from mockapi.testing import MockAPIServer

    with MockAPIServer(load=["testdata/"]) as mockapi:
        core = kubernetes.client.CoreV1Api(mockapi.api_client())
        ...
        mockapi.reset()

:class:`MockAPI` talks to any mockapi over its control endpoints (``/mockapi/v1/``), so the same
calls work on a server in this process, in another process or in a container
(:func:`connect`). :class:`MockAPIServer` also starts one: uvicorn in a daemon thread, on a free
port, with a kubeconfig of its own in a temporary directory (``~/.kube/config`` is never read or
written).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import shutil
import socket
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterable

from mockapi import errors

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
StrPath = str | Path


class MockAPI:
    """A handle on a running mockapi at ``url``: kubeconfig, API client, and the control endpoints."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self._directory: str | None = None
        self._kubeconfig: Path | None = None

    # ------------------------------------------------------------ connecting
    @property
    def kubeconfig_path(self) -> Path:
        """A kubeconfig for this server in a temporary directory (removed by :meth:`close`)."""
        if self._kubeconfig is None:
            self._directory = tempfile.mkdtemp(prefix="mockapi-")
            self._kubeconfig = Path(self._directory) / "kubeconfig"
            self._kubeconfig.write_text(self._text("GET", "/mockapi/v1/kubeconfig"))
        return self._kubeconfig

    def api_client(self):
        """A new ``kubernetes.client.ApiClient`` for this server (close it, or use it in ``with``)."""
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.url
        return client.ApiClient(configuration)

    def close(self) -> None:
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = self._kubeconfig = None

    # ------------------------------------------------------------ state
    def load(self, source: StrPath | Iterable[StrPath]) -> dict:
        """Apply manifests: a file, a directory (its manifests in lexical order), YAML text, or a list
        of those. Returns ``{"created": n, "configured": n, "unchanged": n}``."""
        total = {"created": 0, "configured": 0, "unchanged": 0}
        for name, text in _manifest_texts(source):
            query = urllib.parse.urlencode({"source": name})
            for key, value in self._json("POST", f"/mockapi/v1/load?{query}", text.encode()).items():
                total[key] += value
        return total

    def reset(self, *, keep_crds: bool = True, keep_namespaces: bool = False) -> int:
        """Delete every object except the CRDs and the default namespaces; forget recent requests
        and go back to the start-up allocation mode. Returns how many objects were deleted."""
        query = urllib.parse.urlencode({"keepCRDs": _flag(keep_crds), "keepNamespaces": _flag(keep_namespaces)})
        return self._json("POST", f"/mockapi/v1/reset?{query}")["deleted"]

    def snapshot(self, *, namespace: str = "") -> str:
        """The objects created since start-up, as multi-document YAML a real cluster accepts."""
        return self._text("GET", "/mockapi/v1/snapshot" + (f"?namespace={urllib.parse.quote(namespace)}" if namespace else ""))

    def requests(self, **filters: Any) -> list[dict]:
        """Recent API requests, oldest first, e.g. ``requests(verb="list", resource="deviceclaims")``.
        Filters: verb, group, resource, subresource, namespace, name, code, userAgent (substring), limit."""
        query = urllib.parse.urlencode({("userAgent" if k == "user_agent" else k): v for k, v in filters.items()})
        return self._json("GET", "/mockapi/v1/requests" + (f"?{query}" if query else ""))["items"]

    def clear_requests(self) -> None:
        self._json("DELETE", "/mockapi/v1/requests")

    # ------------------------------------------------------------ allocation progression
    def allocation(self) -> dict:
        """``{"mode", "delaySeconds", "jitterSeconds", "controller", "waiting": [...]}``."""
        return self._json("GET", "/mockapi/v1/allocation")

    def set_allocation(self, mode: str, *, delay: float | None = None, jitter: float | None = None) -> dict:
        """``immediate``, ``delay`` (``delay`` seconds ± ``jitter``) or ``manual`` (claims wait for :meth:`step`)."""
        body = {"mode": mode}
        if delay is not None:
            body["delaySeconds"] = delay
        if jitter is not None:
            body["jitterSeconds"] = jitter
        return self._json("PUT", "/mockapi/v1/allocation", json.dumps(body).encode())

    def step(self, claim: str | None = None, *, all: bool = False) -> list[str]:
        """Let a claim take one allocation attempt in manual mode: ``"NAMESPACE/NAME"`` (allowed before
        the allocator has seen it), the oldest waiting claim when None, or every waiting claim."""
        body: dict = {"all": True} if all else {}
        if claim is not None:
            parts = claim.split("/")
            if len(parts) > 3:
                raise ValueError(f"a claim is NAME, NAMESPACE/NAME or RESOURCE/NAMESPACE/NAME, not {claim!r}")
            body.update(zip(("resource", "namespace", "name")[3 - len(parts):], parts))
        stepped = self._json("POST", "/mockapi/v1/allocation/step", json.dumps(body).encode())["stepped"]
        return [f"{k['namespace']}/{k['name']}" if k["resource"] == "deviceclaims" else f"{k['resource']}/{k['namespace']}/{k['name']}" for k in stepped]

    # ------------------------------------------------------------ HTTP
    def _json(self, method: str, path: str, body: bytes | None = None) -> Any:
        return json.loads(self._request(method, path, body))

    def _text(self, method: str, path: str) -> str:
        return self._request(method, path, None).decode()

    def _request(self, method: str, path: str, body: bytes | None) -> bytes:
        request = urllib.request.Request(self.url + path, data=body, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            raise _status_error(exc) from None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


class MockAPIServer(MockAPI):
    """A real mockapi in a background thread of this process, on a free port.

    Keyword arguments are :class:`mockapi.settings.Settings` fields (``allocation_mode="manual"``,
    ``history_size=...``); ``load`` is applied at start-up like ``mockapi serve --load``. The
    allocator, the scheduler, the simulated kubelet and the garbage collector run, as in ``mockapi
    serve`` (``allocator=False`` turns them all off; ``scheduler=False``, ``kubelet=False``,
    ``garbage_collector=False`` one by one).
    ``server`` is the composition root (:class:`mockapi.app.Server`): its registry lives in the
    server's thread, so use the HTTP API or the methods here to change state.
    """

    def __init__(self, *, load: StrPath | Iterable[StrPath] = (), host: str = "127.0.0.1", port: int = 0, log_level: str = "warning", **settings: Any) -> None:
        super().__init__("")
        self._options = dict(settings, host=host, port=port, log_level=log_level)
        self._load = load
        self.server = None
        self._uvicorn = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    def start(self) -> "MockAPIServer":
        settings = self._build()
        from mockapi.http import lifecycle

        # the same connection guard, bounds and graceful stop as `mockapi serve`
        self._uvicorn = lifecycle.uvicorn_server(self.server.app, settings, admission=self.server.admission, streams=self.server.streams)
        self._thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [self._socket]}, name=f"mockapi:{settings.port}", daemon=True)
        self._thread.start()
        self._wait_started()
        self.url = f"http://{settings.host}:{settings.port}"
        try:
            if self._load:
                self.load(self._load)
        except BaseException:
            self.stop()
            raise
        return self

    def _build(self):
        """Bind the socket and build the server. The collector is off meanwhile (as it was, after):
        the first build imports and allocates only what stays, and ~180 collections on the way
        (~30 ms) would find nothing."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            from mockapi import app as app_
            from mockapi.settings import Settings

            options = dict(self._options)
            if "allocator" in {f.name for f in dataclasses.fields(Settings)}:
                options.setdefault("allocator", True)
                # as in `mockapi serve`: the controllers run with the allocator (allocator=False: the API alone)
                for controller in ("scheduler", "kubelet", "garbage_collector"):
                    options.setdefault(controller, options["allocator"])
            settings = Settings(**options)
            self._socket = _bind(settings.host, settings.port)
            settings.port = self._socket.getsockname()[1]
            self.server = app_.build(settings)
            return settings
        finally:
            if collecting:
                gc.enable()

    def _wait_started(self) -> None:
        deadline = time.monotonic() + 30
        while not self._uvicorn.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("mockapi did not start (see the log above)")
            time.sleep(0.002)

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
            self._thread.join(timeout=10)
            self._uvicorn = self._thread = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        self.close()

    def __enter__(self) -> "MockAPIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def connect(url: str) -> MockAPI:
    """A handle on a mockapi that is already running (``mockapi serve``, a container)."""
    return MockAPI(url)


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def _manifest_texts(source) -> Iterable[tuple[str, str]]:
    """(name, YAML text) to send, one per file: text as is, a directory's manifests in lexical order."""
    if isinstance(source, (str, Path)):
        source = [source]
    for item in source:
        if isinstance(item, str) and ("\n" in item or item.lstrip().startswith(("apiVersion", "{", "kind"))):
            yield "<text>", item
            continue
        path = Path(item)
        if path.is_dir():
            yield from ((str(p), p.read_text()) for p in sorted(path.iterdir()) if p.is_file() and p.suffix in MANIFEST_SUFFIXES)
        elif path.is_file():
            yield str(path), path.read_text()
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _status_error(exc: urllib.error.HTTPError) -> errors.StatusError:
    """The server's metav1.Status, raised as the project's one error type."""
    raw = exc.read()
    try:
        status = json.loads(raw)
        return errors.StatusError(status.get("code", exc.code), status.get("reason", ""), status.get("message", ""), status.get("details") or {})
    except (ValueError, AttributeError):
        return errors.StatusError(exc.code, "Unknown", raw.decode("utf-8", "replace"))
