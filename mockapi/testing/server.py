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
    """A handle on a running mockapi at ``url``: kubeconfig, API client, and the control endpoints.

    ``token``: the bearer token to send (a server with authentication on: an admin's, in
    ``system:masters``, for the control endpoints); ``ca_file``: the CA to trust over HTTPS.
    """

    def __init__(self, url: str, *, token: str | None = None, ca_file: StrPath | None = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.ca_file = str(ca_file) if ca_file is not None else None
        self._directory: str | None = None
        self._kubeconfig: Path | None = None
        self._ssl = None

    # ------------------------------------------------------------ connecting
    @property
    def kubeconfig_path(self) -> Path:
        """A kubeconfig for this server in a temporary directory (removed by :meth:`close`)."""
        if self._kubeconfig is None:
            self._kubeconfig = self._write_kubeconfig("kubeconfig", self._kubeconfig_query(self.token))
        return self._kubeconfig

    def api_client(self):
        """A new ``kubernetes.client.ApiClient`` for this server (close it, or use it in ``with``), as
        the admin when authentication is on."""
        return self._client(self.token)

    # ------------------------------------------------------------ users (authentication on)
    def user_token(self, name: str, *, groups: Iterable[str] = (), uid: str = "") -> str:
        """A new bearer token for user ``name`` in ``groups`` (``system:authenticated`` is added)."""
        body = json.dumps({"name": name, "groups": list(groups), "uid": uid}).encode()
        return self._json("POST", "/mockapi/v1/users", body)["token"]

    def user_client(self, name: str, *, groups: Iterable[str] = (), uid: str = ""):
        """A ``kubernetes.client.ApiClient`` authenticated as ``name`` in ``groups``."""
        return self._client(self.user_token(name, groups=groups, uid=uid))

    def service_account_client(self, namespace: str, name: str):
        """A client authenticated as the ServiceAccount ``namespace/name`` (user
        ``system:serviceaccount:NS:NAME``, groups ``system:serviceaccounts``, ``system:serviceaccounts:NS``)."""
        user, groups = service_account_identity(namespace, name)
        return self.user_client(user, groups=groups)

    def kubeconfig_for(self, name: str, *, groups: Iterable[str] = ()) -> Path:
        """A kubeconfig file (``kubectl --kubeconfig``) authenticated as ``name`` in ``groups``."""
        token = self.user_token(name, groups=groups)
        return self._write_kubeconfig(f"kubeconfig-{_file_name(name)}-{token[:8]}", self._kubeconfig_query(token))

    def service_account_kubeconfig(self, namespace: str, name: str) -> Path:
        user, groups = service_account_identity(namespace, name)
        return self.kubeconfig_for(user, groups=groups)

    # ------------------------------------------------------------ the audit log
    def audit_events(self, *, limit: int | None = None) -> list[dict]:
        """Recent audit events (``audit.k8s.io/v1`` Event objects), oldest first."""
        return self._json("GET", "/mockapi/v1/audit" + (f"?limit={limit}" if limit else ""))["items"]

    def clear_audit(self) -> None:
        self._json("DELETE", "/mockapi/v1/audit")

    def _client(self, token: str | None):
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.url
        if token:
            configuration.api_key = {"authorization": token}
            configuration.api_key_prefix = {"authorization": "Bearer"}
        if self.ca_file:
            configuration.ssl_ca_cert = self.ca_file
        return client.ApiClient(configuration)

    def _kubeconfig_query(self, token: str | None) -> str:
        return "" if token is None else "?" + urllib.parse.urlencode({"token": token})

    def _write_kubeconfig(self, name: str, query: str) -> Path:
        if self._directory is None:
            self._directory = tempfile.mkdtemp(prefix="mockapi-")
        path = Path(self._directory) / name
        path.write_text(self._text("GET", "/mockapi/v1/kubeconfig" + query))
        path.chmod(0o600)
        return path

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
        """Delete every object except the CRDs and the default namespaces; forget recent requests,
        remove the fault rules and go back to the start-up allocation mode. Returns how many objects
        were deleted."""
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

    # ------------------------------------------------------------ faults
    @property
    def faults(self) -> "Faults":
        """Fault injection: ``mockapi.faults.inject(verb="update", resource="pods", error=409, count=2)``
        (docs/fault-injection.md)."""
        return Faults(self)

    # ------------------------------------------------------------ HTTP
    def _json(self, method: str, path: str, body: bytes | None = None) -> Any:
        return json.loads(self._request(method, path, body))

    def _text(self, method: str, path: str) -> str:
        return self._request(method, path, None).decode()

    def _request(self, method: str, path: str, body: bytes | None) -> bytes:
        request = urllib.request.Request(self.url + path, data=body, method=method)
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        if self.ca_file and self._ssl is None:
            import ssl

            self._ssl = ssl.create_default_context(cafile=self.ca_file)
        try:
            with urllib.request.urlopen(request, timeout=30, context=self._ssl) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            raise _status_error(exc) from None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


class Faults:
    """The fault rules of a mockapi (``POST/GET/DELETE /mockapi/v1/faults``) and its one-shot faults."""

    def __init__(self, api: MockAPI) -> None:
        self._api = api

    def inject(
        self,
        *,
        verb: str | list[str] | None = None,
        resource: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        user_agent: str | None = None,
        error: int | None = None,
        reason: str | None = None,
        message: str | None = None,
        retry_after: int | None = None,
        latency: float | None = None,
        drop_connection: bool = False,
        count: int | None = None,
        id: str | None = None,
    ) -> "Fault":
        """Add a rule: requests matching every given field (``resource`` is ``plural[.group][/subresource]``,
        ``user_agent`` a substring) get ``error`` (409, 429, 500, 503 or 504; ``reason``, ``message``,
        ``retry_after`` override kube's), wait ``latency`` seconds first, or have their connection
        dropped mid-response — the next ``count`` of them, or all until the rule is removed.
        Returns a :class:`Fault` (a context manager that removes it)."""
        match = {"verb": verb, "resource": resource, "namespace": namespace, "name": name, "userAgent": user_agent}
        action: dict[str, Any] = {}
        if error is not None:
            action["error"] = {"code": error, "reason": reason, "message": message, "retryAfterSeconds": retry_after}
        if latency is not None:
            action["latencySeconds"] = latency
        if drop_connection:
            action["dropConnection"] = True
        rule = {"id": id, "match": _present(match), "action": {k: _present(v) if isinstance(v, dict) else v for k, v in action.items()}, "count": count}
        return Fault(self._api, self._api._json("POST", "/mockapi/v1/faults", json.dumps(_present(rule)).encode()))

    def add(self, rule: dict) -> "Fault":
        """Add a rule in its JSON form (``{"match": {...}, "action": {...}, "count": n}``)."""
        return Fault(self._api, self._api._json("POST", "/mockapi/v1/faults", json.dumps(rule).encode()))

    def list(self) -> list[dict]:
        return self._api._json("GET", "/mockapi/v1/faults")["items"]

    def clear(self) -> int:
        """Remove every rule; returns how many there were."""
        return self._api._json("DELETE", "/mockapi/v1/faults")["deleted"]

    def close_watches(self) -> int:
        """End every open watch now, cleanly (clients watch again); returns how many were open."""
        return self._api._json("POST", "/mockapi/v1/faults/close-watches")["closed"]

    def compact(self) -> str:
        """Forget the watch history: resumes and lists at older resourceVersions get 410 Expired.
        Returns the oldest resourceVersion still served (the current one)."""
        return self._api._json("POST", "/mockapi/v1/faults/compact")["oldestResourceVersion"]


class Fault:
    """One rule on the server: ``hits``, ``remaining`` (read fresh), ``remove()``; ``with`` removes it."""

    def __init__(self, api: MockAPI, rule: dict) -> None:
        self._api = api
        self.id: str = rule["id"]
        self.rule = rule

    def refresh(self) -> dict:
        self.rule = self._api._json("GET", f"/mockapi/v1/faults/{self.id}")
        return self.rule

    @property
    def hits(self) -> int:
        """How many requests the rule has acted on so far."""
        return self.refresh()["hits"]

    @property
    def remaining(self) -> int | None:
        """How many more requests it will act on (None: until removed)."""
        return self.refresh()["remaining"]

    def remove(self) -> None:
        """Remove the rule (no error if it is gone already, e.g. after a reset)."""
        try:
            self.rule = self._api._json("DELETE", f"/mockapi/v1/faults/{self.id}")
        except errors.StatusError as exc:
            if exc.code != 404:
                raise

    def __enter__(self) -> "Fault":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"Fault({self.id!r}, {self.rule['match']!r}, {self.rule['action']!r})"


def _present(values: dict) -> dict:
    return {key: value for key, value in values.items() if value is not None}


class MockAPIServer(MockAPI):
    """A real mockapi in a background thread of this process, on a free port.

    Keyword arguments are :class:`mockapi.settings.Settings` fields (``allocation_mode="manual"``,
    ``history_size=...``, ``data_dir=path`` to keep the objects in a directory across restarts, as
    ``mockapi serve --data-dir``); ``load`` is applied at start-up like ``mockapi serve --load``. The
    allocator, the scheduler, the simulated kubelet and the garbage collector run, as in ``mockapi
    serve`` (``allocator=False`` turns them all off; ``scheduler=False``, ``kubelet=False``,
    ``garbage_collector=False`` one by one).
    ``server`` is the composition root (:class:`mockapi.app.Server`): its registry lives in the
    server's thread, so use the HTTP API or the methods here to change state.

    Authentication (docs/auth.md): ``authentication=True`` makes every request need a token;
    ``rbac=True`` also authorizes with RBAC. Then :meth:`api_client`, :meth:`kubeconfig_path` and the
    control methods act as an admin (``system:masters``), and :meth:`user_client`,
    :meth:`kubeconfig_for` and :meth:`service_account_client` as anyone else. ``authorizer=`` puts
    any :class:`mockapi.auth.authz.Authorizer` in RBAC's place. ``tls=True`` serves HTTPS with a CA
    generated for the run (``ca_file``), trusted by every client and kubeconfig given out here; it is
    the default with authentication, as kubectl sends no credentials over plain HTTP.
    """

    def __init__(
        self, *, load: StrPath | Iterable[StrPath] = (), host: str = "127.0.0.1", port: int = 0, log_level: str = "warning",
        rbac: bool = False, tls: bool | None = None, authorizer: Any = None, **settings: Any,
    ) -> None:  # fmt: skip
        super().__init__("")
        self._options = dict(settings, host=host, port=port, log_level=log_level)
        if rbac:
            self._options["authorization_mode"] = "RBAC"
        authenticating = rbac or authorizer is not None or any(settings.get(k) for k in ("authentication", "token_auth_file", "client_ca_file"))
        # kubectl (client-go) sends credentials over HTTPS only: with authentication, TLS unless told otherwise
        self._tls = authenticating if tls is None else tls
        self._authorizer = authorizer
        self._load = load
        self.server = None
        self._uvicorn = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._certificates: str | None = None

    def start(self) -> "MockAPIServer":
        settings, tls_options = self._build()
        from mockapi.http import lifecycle

        # the same connection guard, bounds and graceful stop as `mockapi serve`
        started = threading.Event()
        self._uvicorn = lifecycle.uvicorn_server(
            self.server.app, settings, admission=self.server.admission, streams=self.server.streams, tls_options=tls_options, on_ready=started.set
        )  # fmt: skip
        self._thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [self._socket]}, name=f"mockapi:{settings.port}", daemon=True)
        self._thread.start()
        self._wait_started(started)
        self.url = f"{'https' if tls_options else 'http'}://{settings.host}:{settings.port}"
        try:
            if self._load:
                self.load(self._load)
        except BaseException:
            self.stop()
            raise
        return self

    def _build(self):
        """Bind the socket and build the server. The collector is off meanwhile (as it was, after):
        the first build imports (the server, then uvicorn) and allocates only what stays, and ~180
        collections on the way (~30 ms; ~10 of them in uvicorn's import) would find nothing."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            from mockapi import uvicorn_lean

            uvicorn_lean.install()  # uvicorn's Server and Config without its command line (click, supervisors)
            from mockapi import app as app_
            from mockapi.http import lifecycle  # noqa: F401 - uvicorn, imported here with the collector off
            from mockapi.settings import Settings

            options = dict(self._options)
            if self._tls:
                self._certificates = tempfile.mkdtemp(prefix="mockapi-certs-")
                options["generate_certs"] = Path(self._certificates)
            if "allocator" in {f.name for f in dataclasses.fields(Settings)}:
                options.setdefault("allocator", True)
                # as in `mockapi serve`: the controllers run with the allocator (allocator=False: the API alone)
                for controller in ("scheduler", "kubelet", "garbage_collector"):
                    options.setdefault(controller, options["allocator"])
            settings = Settings(**options)
            self._socket = _bind(settings.host, settings.port)
            settings.port = self._socket.getsockname()[1]
            tls_options = _tls_options(settings)
            self.server = app_.build(settings, authorizer=self._authorizer)
            if self.server.tokens is not None:
                from mockapi.auth import tls

                self.token = self.server.tokens.mint(tls.ADMIN_USER, groups=tls.ADMIN_GROUPS)
            if self._tls:
                self.ca_file = str(Path(self._certificates) / "ca.crt")
            return settings, tls_options
        finally:
            if collecting:
                gc.enable()

    def _wait_started(self, started: threading.Event) -> None:
        """Until uvicorn accepts (told at once, not polled), or its thread has ended."""
        deadline = time.monotonic() + 30
        while not started.wait(0.02):
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("mockapi did not start (see the log above)")

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
            self._thread.join(timeout=10)
            self._uvicorn = self._thread = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._certificates is not None:
            shutil.rmtree(self._certificates, ignore_errors=True)
            self._certificates = None
        self.close()

    def __enter__(self) -> "MockAPIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def connect(url: str, *, token: str | None = None, ca_file: StrPath | None = None) -> MockAPI:
    """A handle on a mockapi that is already running (``mockapi serve``, a container); ``token``:
    an admin's bearer token when it authenticates, ``ca_file``: its CA over HTTPS."""
    return MockAPI(url, token=token, ca_file=ca_file)


def service_account_identity(namespace: str, name: str) -> tuple[str, list[str]]:
    """The user name and groups a ServiceAccount's token authenticates as."""
    return f"system:serviceaccount:{namespace}:{name}", ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]


def _file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


_TLS_SETTINGS = ("generate_certs", "tls_cert_file", "tls_private_key_file", "client_ca_file")


def _tls_options(settings) -> dict:
    """uvicorn's TLS options (:func:`mockapi.auth.tls.prepare`); without any TLS setting, what it
    would answer (none) without importing it (``ipaddress``, ``ssl`` contexts: ~4 ms of a start)."""
    if all(getattr(settings, name, None) is None for name in _TLS_SETTINGS):
        return {}
    from mockapi.auth import tls

    return tls.prepare(settings)


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
