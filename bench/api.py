"""The API benchmark: mockapi against a bare ASGI ceiling twin, measured in the same run.

    python3 bench/api.py [--quick] [--out results.json] [--only http,watch,memory]
    python3 bench/api.py --modes default,rbac,masters,tls-rbac [--cases get,create,patch,status] [--runs 3]
    python3 bench/api.py --code /tmp/old-checkout [--code ...] [--cases ...] [--runs 5]

Method (PERF.md §1, §6, §7): the server under test runs on core 0 (``taskset -c 0``, ``nice -n -10``
as root), the load generator on core 1: ``wrk -t1 -c16`` for HTTP, ``bench/watch_client.py`` for
watch fan-out. HTTP runs are interleaved (run index outermost, then endpoint) after a warm-up, and
each figure is the median over the runs; ratios are taken against the ceiling twin
(``bench/ceiling.py``) measured in the same run. Every watch run starts a fresh server. The memory
figure is taken in a fresh process that builds the mockapi store in-process.

The compare suite (``--modes``, ``--code``) runs the HTTP cases against one mockapi per variant
instead — this checkout in several authentication modes (bearer tokens, RBAC, TLS), or other
checkouts in the default mode — interleaved (run, case, variant), as ratios to the first variant.
See bench/README.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import resource
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SERVER_CORE, CLIENT_CORE = "0", "1"
CONCURRENCY = 16
OBJECTS = 1000
WATCH_NS = "bench-watch"
STAMP_KEY = "bench.mockapi/w"
DISTURBED = 0.25  # cores of foreign CPU above which a run is set aside when cleaner ones exist
BUDGET_S = 230  # no watch re-runs after this many seconds (the whole run stays near 5 minutes)

GOALS = {
    "get": ("ratio", 0.40, "GET ≥ 0.40x ceiling GET"),
    "list": ("ratio", 1.5, "LIST ≥ 1.5x ceiling orjson LIST"),
    # writes against the POST twin that parses and echoes the same ~2 KB body (issue 9)
    "create": ("ratio", 0.35, "≥ 0.35x ceiling POST"),
    "create_pool": ("ratio", 0.35, "≥ 0.35x ceiling POST"),
    "patch": ("ratio", 0.30, "≥ 0.30x ceiling POST"),
    "update": ("ratio", 0.30, "≥ 0.30x ceiling POST"),
    "status": ("ratio", 0.35, "≥ 0.35x ceiling POST"),
}
# rows that are references, not goals: what their ratio says
REFERENCES = {"floor_create": "no goal: the floor of a create (bench/ceiling.py Floor)"}
GROUP = "/apis/devmgmtproto.k8s.io/v1alpha1"


# --- the fixture -------------------------------------------------------------------------------


def make_pod(name: str, i: int = 0, *, namespace: str | None = "default", stamp: str | None = None, automount: bool = True) -> dict:
    """A realistic ~2 KB Pod (PERF.md §1): labels, annotations, an owner, one container with ports,
    env, resources and a probe, a volume, tolerations. ``stamp`` adds the watch annotation;
    ``namespace=None`` leaves it to the request's URL. ``automount=False`` opts out of the
    ServiceAccount admission's token volume (as many controllers' pods do): a PUT of the same body
    then changes nothing of the spec — with the volume the server added, it would be kube's 422
    (a pod's volumes are immutable), so the update case's pods opt out."""
    app = f"app-{i % 10}"
    annotations = {"kubectl.kubernetes.io/default-container": "api", "prometheus.io/scrape": "true", "prometheus.io/port": "9090"}
    if stamp is not None:
        annotations[STAMP_KEY] = stamp
    probe = {"httpGet": {"path": "/readyz", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 5, "periodSeconds": 10,
             "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3}
    field_env = [{"name": n, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": p}}}
                 for n, p in (("POD_NAME", "metadata.name"), ("POD_NAMESPACE", "metadata.namespace"))]
    container = {
        "name": "api",
        "image": "registry.example.com/platform/api-server:1.4.2",
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}, {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
        "env": field_env + [{"name": "LOG_FORMAT", "value": "json"}, {"name": "CACHE_SIZE_MB", "value": "256"}],
        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
        "readinessProbe": probe,
        "volumeMounts": [{"name": "config", "mountPath": "/etc/api", "readOnly": True}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/name": app, "app.kubernetes.io/instance": f"{app}-prod", "app.kubernetes.io/version": "1.4.2",
                       "app.kubernetes.io/component": "api", "pod-template-hash": f"7d9c8b{i % 10000:04d}", "tier": "backend"},
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-7d9c8b6f5",
                                 "uid": f"6f1c2a4e-0b7d-4c1e-9a3f-{i % 1000000:012d}", "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            "containers": [container],
            "volumes": [{"name": "config", "configMap": {"name": "api-config", "defaultMode": 420}}],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "api",
            "schedulerName": "default-scheduler",
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 2000},
            "tolerations": [{"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                            for k in ("not-ready", "unreachable")],
        },
    }
    if not automount:
        pod["spec"]["automountServiceAccountToken"] = False
    if namespace is not None:
        pod["metadata"]["namespace"] = namespace
    return pod


def service_account(name: str) -> dict:
    """The ServiceAccount ``make_pod``'s pods run as: kube's admission refuses a pod whose
    ServiceAccount does not exist."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}


def make_pool(name: str, i: int = 0) -> dict:
    """A ~2 KB DevicePool: pool attributes, two shared resources and six devices with their own
    attributes and requests (the shape of testdata's mixed pools)."""
    devices = [{"name": f"gpu-{d}", "attributes": [{"name": "profile", "stringValue": "3g.20gb"},
                                                   {"name": "memory", "quantityValue": "19968Mi"},
                                                   {"name": "uuid", "stringValue": f"GPU-{i:08d}-{d:04d}-4c1e-9a3f"}],
                "requests": {"memory": "19968Mi", "slices": "3"}} for d in range(6)]
    return {
        "apiVersion": "devmgmtproto.k8s.io/v1alpha1",
        "kind": "DevicePool",
        "metadata": {"name": name, "labels": {"example.com/rack": f"r{i % 16}", "example.com/zone": "zone-a"}},
        "spec": {
            "driver": "example.com-barzer",
            "nodeName": f"node-{i % 500:03d}",
            "attributes": [{"name": "vendor", "stringValue": "example.com"}, {"name": "model", "stringValue": "barzer-8000"},
                           {"name": "firmwareVersion", "semVerValue": "3.0.0"}, {"name": "numa", "stringValue": "0"}],
            "resources": [{"name": "memory", "capacity": "120Gi", "blockSize": "1Gi"}, {"name": "slices", "capacity": "21"}],
            "devices": devices,
        },
    }


def make_claim(name: str, namespace: str) -> dict:
    """A DeviceClaim of a class no pool serves (the bench server runs the allocator in manual mode)."""
    return {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"claims": [{"deviceClass": "bench-class", "limits": {"count": 1}}]}}


def claim_status_template(namespace: str) -> dict:
    """The claim as a controller PUTs it to …/status: an allocation and an Allocated condition, the
    resourceVersion it read (``__RV__``) and a message new on every pass (``__FLIP__``)."""
    claim = make_claim("__NAME__", namespace)
    claim["metadata"]["resourceVersion"] = "__RV__"
    claim["status"] = {
        "allocations": [{"devicePoolName": "node-017-barzer-gpu-0", "deviceName": "gpu-3"}],
        "nodeName": "node-017",
        "conditions": [{"type": "Allocated", "status": "True", "observedGeneration": 1, "lastTransitionTime": "2026-11-24T00:01:53Z",
                        "reason": "Allocated", "message": "allocated 1 device on node node-017: node-017-barzer-gpu-0/gpu-3 (__FLIP__)"}],
    }
    return claim


# --- processes and placement -------------------------------------------------------------------


def pinned(cmd: list[str], core: str) -> list[str]:
    """``cmd`` on one core at raised priority, where the machine allows it."""
    prefix: list[str] = []
    if shutil.which("taskset") and (os.cpu_count() or 1) >= 2:
        prefix += ["taskset", "-c", core]
    if os.geteuid() == 0 and shutil.which("nice"):
        prefix += ["nice", "-n", "-10"]
    return prefix + cmd


@dataclass
class Server:
    name: str
    proc: subprocess.Popen
    port: int

    @property
    def pid(self) -> int:
        return self.proc.pid


def start_server(name: str, cmd: list[str], *, banner: str, timeout: float = 60.0, code: Path = ROOT) -> Server:
    """Start a server process on the server core and wait for its ``… serving on http(s)://…:PORT``
    line. ``code``: the checkout whose ``mockapi`` it imports (its working directory and PYTHONPATH:
    ``python -m`` puts the working directory first on sys.path)."""
    # stderr to a file, never an unread pipe: a server that logs a lot must not block on a full pipe
    log = tempfile.NamedTemporaryFile("w+", prefix=f"bench-{name}-", suffix=".log", delete=False)
    proc = subprocess.Popen(pinned(cmd, SERVER_CORE), cwd=code, stdout=subprocess.PIPE, stderr=log, text=True,
                            env={**os.environ, "PYTHONPATH": str(code)})
    deadline = time.monotonic() + timeout
    line = proc.stdout.readline()
    while line and banner not in line and time.monotonic() < deadline:
        line = proc.stdout.readline()
    if banner not in line:
        proc.kill()
        log.seek(0)
        raise RuntimeError(f"{name} did not start: {line!r} {log.read()[-3000:]}")
    port = int(line.split("://", 1)[1].split()[0].rsplit(":", 1)[1].rstrip("/"))
    return Server(name, proc, port)


# --- authentication variants and other checkouts (the compare suite) ------------------------------

ADMIN_TOKEN, USER_TOKEN = "bench-admin-token", "bench-user-token"
TOKEN_FILE = (f'{ADMIN_TOKEN},bench-admin,bench-admin-uid,"system:masters"\n'
              f'{USER_TOKEN},bench-user,bench-user-uid,"bench-writers"\n')
# What a workload controller holds: its pods' and claims' writes after a few rules it does not use
# here. Bound to a group under a name that sorts after the bootstrap bindings of system:authenticated
# (system:basic-user, system:discovery, system:public-info-viewer), so an allowed request first walks
# their rules and this role's first rules: RBAC evaluates, as for any user outside system:masters.
BENCH_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "workload-writer"},
    "rules": [
        {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
        {"apiGroups": ["apps"], "resources": ["deployments", "replicasets"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
        {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["update", "patch"]},
        {"apiGroups": ["devmgmtproto.k8s.io"], "resources": ["deviceclaims"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["devmgmtproto.k8s.io"], "resources": ["deviceclaims/status"], "verbs": ["update", "patch"]},
        {"apiGroups": ["devmgmtproto.k8s.io"], "resources": ["devicepools"], "verbs": ["get", "list", "watch", "create", "delete"]},
    ],
}
BENCH_BINDING = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "workload-writer"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "workload-writer"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "bench-writers"}],
}


@dataclass(frozen=True)
class Endpoint:
    """How the bench reaches one server: TLS or not, the set-up's bearer token, wrk's."""

    tls: bool = False
    token: str | None = None  # set-up requests (an admin in system:masters)
    load_token: str | None = None  # the measured requests (wrk)


_endpoints: dict[int, Endpoint] = {}


@dataclass(frozen=True)
class Variant:
    """One server of the compare suite: a checkout and an authentication mode (MODES)."""

    key: str
    label: str
    code: Path = ROOT
    mode: str = "default"

    @property
    def auth(self) -> bool:
        return self.mode != "default"

    @property
    def rbac(self) -> bool:
        return self.mode in ("rbac", "masters", "tls-rbac")

    @property
    def tls(self) -> bool:
        return self.mode.startswith("tls")

    @property
    def load_token(self) -> str | None:
        return None if not self.auth else ADMIN_TOKEN if self.mode == "masters" else USER_TOKEN

    def server_args(self, tmp: Path | None) -> list[str]:
        if not self.auth:
            return []
        assert tmp is not None
        tokens = tmp / "tokens.csv"
        tokens.write_text(TOKEN_FILE)
        args = ["--token-auth-file", str(tokens)]
        if self.rbac:
            args += ["--authorization-mode", "RBAC"]
        if self.tls:
            args += ["--generate-certs", str(tmp / f"certs-{self.key}")]
        return args


MODES = {
    "default": "default mode (no credentials, no filter)",
    "token": "bearer token, AlwaysAllow",
    "rbac": "token + RBAC (rule walk)",
    "masters": "token + RBAC, user in system:masters",
    "tls-rbac": "TLS + token + RBAC (rule walk)",
}


def grant_bench_role(port: int) -> None:
    """The ClusterRole and binding wrk's user (bench-user in group bench-writers) works under."""
    expect(port, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", orjson.dumps(BENCH_ROLE))
    expect(port, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", orjson.dumps(BENCH_BINDING))


LAUNCH = {"cli": "python3 -m mockapi serve (the CLI, as users start it)",
          "uvicorn": "mockapi.app.build() on uvicorn.Server.run, uvloop + httptools (diagnostic, not the CLI)"}
_launch = ["cli"]
_controllers = [False]  # --controllers: the compare suite's servers run their controllers, as `mockapi serve` does
CONTROLLER_CASES = ("create", "create_pool")  # what stays meaningful then (the others write objects the controllers write too)


def start_mockapi(variant: Variant | None = None, tmp: Path | None = None) -> Server:
    """mockapi as the CLI starts it (or on the bench's uvicorn set-up, ``--launch uvicorn``); a
    ``variant`` (the compare suite) names the checkout and the authentication flags."""
    code, extra = ROOT, []
    if variant is not None:
        code, extra = variant.code, variant.server_args(tmp)
    if _launch[0] == "cli" or variant is not None:
        # manual allocation: the status case's claims stay the benchmark's alone; no scheduler, kubelet
        # or garbage collector: the benchmark's pods are the API's load, not theirs (and, like its
        # ReplicaSet owners, stay as written)
        # --controllers: all but the garbage collector, which would delete the bench's pods (their ReplicaSet owners do not exist)
        alone = ("--no-gc",) if _controllers[0] and variant is not None else ("--allocation-mode", "manual", "--no-scheduler", "--no-kubelet", "--no-gc")
        cmd = [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--log-level", "warning", *alone, *extra]
    else:
        cmd = [sys.executable, str(BENCH / "api.py"), "--serve-mockapi"]
    server = start_server("mockapi" if variant is None else f"mockapi-{variant.key}", cmd, banner="mockapi serving on", code=code)
    if variant is not None:
        _endpoints[server.port] = Endpoint(tls=variant.tls, token=ADMIN_TOKEN if variant.auth else None,
                                           load_token=variant.load_token)
    wait_ready(server.port)
    if variant is not None and variant.rbac:
        grant_bench_role(server.port)
    return server


def serve_mockapi_on_uvicorn() -> int:
    """``--launch uvicorn``: the mockapi app on the ceiling's exact uvicorn set-up, to tell the app's
    cost from the launcher's."""
    import uvicorn

    from mockapi import app as app_
    from mockapi.settings import Settings

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    settings = Settings(port=sock.getsockname()[1], log_level="warning")
    config = uvicorn.Config(app_.build(settings).app, loop="uvloop", http="httptools", access_log=False, log_level="warning", lifespan="off")
    print(f"mockapi serving on http://127.0.0.1:{settings.port} (bench launcher)", flush=True)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def start_ceiling(*, get_body: str | None = None, list_body: str | None = None) -> Server:
    cmd = [sys.executable, str(BENCH / "ceiling.py"), "--port", "0"]
    if get_body:
        cmd += ["--get-body", get_body]
    if list_body:
        cmd += ["--list-body", list_body]
    return start_server("ceiling", cmd, banner="ceiling serving on")


def stop(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(5)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait()
    stderr = server.proc.stderr.read() if server.proc.stderr else ""
    if "Traceback" in stderr or "ERROR" in stderr:
        print(f"[{server.name} stderr]\n{stderr[-3000:]}", file=sys.stderr)


def wait_ready(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if call(port, "GET", "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"/readyz on port {port} never returned 200")


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU time used so far on all cores by processes (user, nice, system) and by other tenants of
    the host (steal), from /proc/stat. Interrupt time is left out: with loopback traffic it is mostly
    our own packets, charged to no process."""
    values = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    user, nice, system, _idle, _iowait, _irq, _softirq, steal = values[:8]
    return (user + nice + system + steal) / os.sysconf("SC_CLK_TCK")


# --- plain HTTP for set-up ---------------------------------------------------------------------


class RequestFailed(RuntimeError):
    pass


_connections: dict[tuple[int, int], http.client.HTTPConnection] = {}


def call(port: int, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"):
    """(status, headers, body) of one request over a kept-alive connection (one per thread)."""
    key = (port, threading.get_ident())
    headers = {"Content-Type": content_type} if body is not None else {}
    endpoint = _endpoints.get(port)
    if endpoint is not None and endpoint.token:
        headers["Authorization"] = f"Bearer {endpoint.token}"
    for attempt in (1, 2):
        reused = key in _connections
        conn = _connections.get(key) or _connect(key)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        except (OSError, http.client.HTTPException):
            _connections.pop(key, None)
            conn.close()
            if not reused or attempt == 2:  # a kept-alive connection the server closed: retry once
                raise
    raise AssertionError("unreachable")


def _connect(key: tuple[int, int]) -> http.client.HTTPConnection:
    endpoint = _endpoints.get(key[0])
    if endpoint is not None and endpoint.tls:  # the bench's own server: its generated CA is not checked
        conn = http.client.HTTPSConnection("127.0.0.1", key[0], timeout=120, context=ssl._create_unverified_context())
    else:
        conn = http.client.HTTPConnection("127.0.0.1", key[0], timeout=120)
    _connections[key] = conn
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # headers and body go out apart
    return conn


def expect(port: int, method: str, path: str, body: bytes | None = None, *, ok=(200, 201), content_type: str = "application/json",
           warnings: list | None = None) -> bytes:
    status, headers, data = call(port, method, path, body, content_type)
    if status not in ok:
        raise RequestFailed(f"{method} {path} -> {status}: {data[:1500].decode('utf-8', 'replace')}")
    warning = headers.get("Warning") or headers.get("warning")
    if warning and warnings is not None and len(warnings) < 5:
        warnings.append(f"{method} {path}: Warning: {warning}")
    return data


def create_namespace(port: int, name: str) -> None:
    body = orjson.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    expect(port, "POST", "/api/v1/namespaces", body)
    expect(port, "POST", f"/api/v1/namespaces/{name}/serviceaccounts", orjson.dumps(service_account("api")))  # make_pod's


def delete_namespace(port: int, name: str, *, timeout: float = 60.0) -> float:
    """Delete a namespace and wait until it is gone; returns the seconds it took."""
    started = time.monotonic()
    expect(port, "DELETE", f"/api/v1/namespaces/{name}", ok=(200, 202))
    while time.monotonic() - started < timeout and call(port, "GET", f"/api/v1/namespaces/{name}")[0] != 404:
        time.sleep(0.05)
    return time.monotonic() - started


def create_pods(port: int, namespace: str, count: int, warnings: list, *, automount: bool = True) -> None:
    """POST pods p-0000… on 16 connections at once (set-up time only)."""
    call(port, "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", orjson.dumps(service_account("api")))  # make_pod's; 409 if there
    create_many(port, f"/api/v1/namespaces/{namespace}/pods",
                [make_pod(f"p-{i:04d}", i, namespace=namespace, automount=automount) for i in range(count)], warnings)


def create_many(port: int, path: str, objects: list[dict], warnings: list) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda obj: expect(port, "POST", path, orjson.dumps(obj), warnings=warnings), objects))


# --- wrk -----------------------------------------------------------------------------------------


def run_wrk(port: int, mode: str, path: str, seconds: float, env: dict | None = None) -> dict:
    """One pinned ``wrk -t1 -c16`` run; returns its counts, rps, percentiles and the foreign CPU."""
    endpoint = _endpoints.get(port) or Endpoint()
    scheme = "https" if endpoint.tls else "http"
    cmd = pinned(["wrk", "-t1", f"-c{CONCURRENCY}", f"-d{max(1, round(seconds))}s", "--timeout", "10s", "-s", str(BENCH / "wrk.lua"),
                  f"{scheme}://127.0.0.1:{port}{path}"], CLIENT_CORE)
    proc_env = {**os.environ, "BENCH_MODE": mode, "BENCH_PATH": path, **(env or {})}
    if endpoint.load_token:
        proc_env["BENCH_TOKEN"] = endpoint.load_token
    server_pid = _server_pid_by_port.get(port)
    busy0, server0, wall0 = busy_seconds(), cpu_seconds(server_pid) if server_pid else 0.0, time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=proc_env, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    out, err = proc.stdout.read(), proc.stderr.read()
    wall = time.monotonic() - wall0
    server_cpu = cpu_seconds(server_pid) - server0 if server_pid else 0.0
    line = next((l for l in out.splitlines() if l.startswith("BENCH_JSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk failed ({proc.returncode}): {out[-1500:]} {err[-1500:]}")
    result = json.loads(line[len("BENCH_JSON "):])
    duration = result["duration_us"] / 1e6
    result["rps"] = result["requests"] / duration
    result["mib_s"] = result["bytes"] / duration / 2**20
    result["errors"] = sum(result[k] for k in ("err_connect", "err_read", "err_write", "err_status", "err_timeout"))
    result["server_core_busy"] = server_cpu / wall
    result["server_cpu_us"] = server_cpu / max(1, result["requests"]) * 1e6  # the server's CPU per request
    result["foreign_cpu"] = max(0.0, (busy_seconds() - busy0) - server_cpu - usage.ru_utime - usage.ru_stime) / wall
    return result


_server_pid_by_port: dict[int, int] = {}


# --- HTTP suite ----------------------------------------------------------------------------------


@dataclass
class Case:
    key: str
    label: str
    server: str  # "mockapi" | "ceiling"
    mode: str
    path: str
    body: str = "create.json"  # the template file (in the run's temporary directory) for create/put
    env: dict | None = None


HTTP_CASES = [
    Case("ceiling_get", "ceiling GET one pod (fixed bytes)", "ceiling", "get", "/api/v1/namespaces/default/pods/p-0000"),
    Case("get", "GET one pod", "mockapi", "get", "/api/v1/namespaces/default/pods/p-0000"),
    Case("ceiling_list", "ceiling LIST 1,000 (orjson per request)", "ceiling", "list", "/api/v1/namespaces/default/pods"),
    Case("list", "LIST 1,000 pods", "mockapi", "list", "/api/v1/namespaces/default/pods"),
    Case("ceiling_post", "ceiling POST (parse and echo)", "ceiling", "create", "/echo"),
    Case("floor_create", "floor CREATE pod (twin, lean steps)", "ceiling", "create", "/floor/namespaces/bench/pods"),
    Case("create", "CREATE pod (POST)", "mockapi", "create", "/api/v1/namespaces/{ns}/pods"),
    Case("create_pool", "CREATE DevicePool (POST)", "mockapi", "create", GROUP + "/devicepools", body="pool.json"),
    Case("patch", "MERGE PATCH pod (label change)", "mockapi", "patch", "/api/v1/namespaces/bench-patch/pods"),
    Case("update", "UPDATE pod (PUT, label change)", "mockapi", "put", "/api/v1/namespaces/bench-patch/pods", body="update.json"),
    Case("status", "UPDATE DeviceClaim status (PUT, with RV)", "mockapi", "put", GROUP + "/namespaces/bench-status/deviceclaims",
         body="status.json", env={"BENCH_NAME_FMT": "c-%04d", "BENCH_SUFFIX": "/status"}),
]
WRITE_CEILING = "ceiling_post"


def prepare_http(mock: Server, tmp: Path, notes: list) -> dict:
    """Load the mockapi state the HTTP cases need and hand the same bytes to the ceiling twin."""
    warnings: list = []
    create_pods(mock.port, "default", OBJECTS, warnings)
    create_namespace(mock.port, "bench-patch")
    create_pods(mock.port, "bench-patch", OBJECTS, warnings, automount=False)
    one = expect(mock.port, "GET", "/api/v1/namespaces/default/pods/p-0000")
    listing = expect(mock.port, "GET", "/api/v1/namespaces/default/pods")
    count = len(orjson.loads(listing)["items"])
    if count != OBJECTS:
        notes.append(f"LIST of default returned {count} items, expected {OBJECTS}")
    (tmp / "get.json").write_bytes(one)
    (tmp / "list.json").write_bytes(listing)
    (tmp / "create.json").write_bytes(orjson.dumps(make_pod("__NAME__", 7, namespace=None)))
    (tmp / "pool.json").write_bytes(orjson.dumps(make_pool("__NAME__", 7)))
    update = make_pod("__NAME__", 7, namespace="bench-patch", automount=False)
    update["metadata"]["labels"]["bench-flip"] = "__FLIP__"
    (tmp / "update.json").write_bytes(orjson.dumps(update))
    create_namespace(mock.port, "bench-status")
    create_many(mock.port, GROUP + "/namespaces/bench-status/deviceclaims", [make_claim(f"c-{i:04d}", "bench-status") for i in range(OBJECTS)],
                warnings)
    (tmp / "status.json").write_bytes(orjson.dumps(claim_status_template("bench-status")))
    claims = orjson.loads(expect(mock.port, "GET", GROUP + "/namespaces/bench-status/deviceclaims"))["items"]
    # the requests wrk will send, once each, so a failure is reported with its response body
    create_namespace(mock.port, "bench-create-check")
    expect(mock.port, "POST", "/api/v1/namespaces/bench-create-check/pods", orjson.dumps(make_pod("check", 7, namespace=None)), warnings=warnings)
    delete_namespace(mock.port, "bench-create-check")
    expect(mock.port, "PATCH", "/api/v1/namespaces/bench-patch/pods/p-0000", b'{"metadata":{"labels":{"bench-flip":"check"}}}',
           content_type="application/merge-patch+json", warnings=warnings)
    expect(mock.port, "PUT", "/api/v1/namespaces/bench-patch/pods/p-0001", (tmp / "update.json").read_bytes().replace(b"__NAME__", b"p-0001")
           .replace(b"__FLIP__", b"check"), warnings=warnings)
    expect(mock.port, "POST", GROUP + "/devicepools", orjson.dumps(make_pool("check-pool")), warnings=warnings)
    expect(mock.port, "DELETE", GROUP + "/devicepools/check-pool")
    first = claims[0]["metadata"]
    status = (tmp / "status.json").read_bytes().replace(b"__NAME__", first["name"].encode()).replace(b"__FLIP__", b"check")
    expect(mock.port, "PUT", GROUP + f"/namespaces/bench-status/deviceclaims/{first['name']}/status",
           status.replace(b"__RV__", first["resourceVersion"].encode()), warnings=warnings)
    notes.extend(warnings)
    return {"get_bytes": len(one), "list_bytes": len(listing), "post_bytes": len(orjson.dumps(make_pod("p-0007", 7))),
            "pool_bytes": len(orjson.dumps(make_pool("node-007-barzer-gpu-0", 7))), "status_bytes": len(status)}


def write_resource_versions(port: int, path: str, out: Path) -> None:
    items = orjson.loads(expect(port, "GET", path))["items"]
    out.write_text("".join(f"{o['metadata']['name']} {o['metadata']['resourceVersion']}\n" for o in items))


def run_case(case: Case, ports: dict, seconds: float, tag: str) -> dict:
    port = ports[case.server]
    env = {"BENCH_TAG": tag, "BENCH_OBJECTS": str(OBJECTS), "BENCH_BODY_FILE": str(ports["tmp"] / case.body),
           "BENCH_RV_FILE": str(ports["tmp"] / "rv.txt"), **(case.env or {})}
    if case.mode in ("patch", "put"):
        env["BENCH_TAG"] = f"{tag}{case.key[0]}"
    if case.key == "status":  # the resourceVersions as they are now (each wrk process starts from this file)
        write_resource_versions(ports["mockapi"], case.path, ports["tmp"] / "rv.txt")
    if case.mode != "create":
        return run_wrk(port, case.mode, case.path, seconds, env)
    if "{ns}" not in case.path:  # cluster-scoped or the twin: names unique per run, objects left in place
        return run_wrk(port, case.mode, case.path, seconds, {**env, "BENCH_TAG": f"{case.key[0]}{tag}-"})
    namespace = f"bench-create-{tag}"
    create_namespace(port, namespace)
    result = run_wrk(port, case.mode, case.path.format(ns=namespace), seconds, {**env, "BENCH_TAG": "c"})
    result["namespace_delete_s"] = delete_namespace(port, namespace)
    return result


def http_suite(*, runs: int, seconds: float, warmup: float, notes: list, retry_until: float) -> dict:
    """Every case ``runs`` times, interleaved; a run that other tenants disturbed is run once more
    while there is time (before ``retry_until``, a monotonic time)."""
    tmp = Path(tempfile.mkdtemp(prefix="mockapi-bench-"))
    mock = start_mockapi()
    ceiling = None
    try:
        sizes = prepare_http(mock, tmp, notes)
        ceiling = start_ceiling(get_body=str(tmp / "get.json"), list_body=str(tmp / "list.json"))
        ports = {"mockapi": mock.port, "ceiling": ceiling.port, "tmp": tmp}
        _server_pid_by_port.update({mock.port: mock.pid, ceiling.port: ceiling.pid})
        for case in HTTP_CASES:
            run_case(case, ports, warmup, "w")
        samples: dict[str, list] = {c.key: [] for c in HTTP_CASES}
        for r in range(runs):
            for case in HTTP_CASES:
                result = run_case(case, ports, seconds, f"r{r}")
                if result["foreign_cpu"] > DISTURBED and time.monotonic() < retry_until:
                    samples[case.key].append(result)
                    result = run_case(case, ports, seconds, f"r{r}b")
                samples[case.key].append(result)
        cases = {c.key: summarize(c, samples[c.key]) for c in HTTP_CASES}
        notes += [f"{c['label']}: wrk counted {c['non_2xx']} non-2xx responses (the pre-flight request of the same kind succeeded)"
                  for c in cases.values() if c["non_2xx"]]
        return {"sizes": sizes, "cases": cases}
    finally:
        for server in (ceiling, mock):
            if server is not None:
                stop(server)
        shutil.rmtree(tmp, ignore_errors=True)


def undisturbed(runs: list[dict]) -> list[dict]:
    """The runs other tenants left alone (foreign CPU ≤ DISTURBED), or all of them if none was."""
    return [r for r in runs if r["foreign_cpu"] <= DISTURBED] or runs


def summarize(case: Case, runs: list[dict]) -> dict:
    """Medians over the undisturbed runs; error counts over all of them."""
    samples = undisturbed(runs)
    med = lambda key: statistics.median(s[key] for s in samples)  # noqa: E731
    return {
        "label": case.label, "server": case.server, "runs": f"{len(samples)}/{len(runs)}",
        "rps": med("rps"), "p50_ms": med("p50_us") / 1000, "p99_ms": med("p99_us") / 1000, "mib_s": med("mib_s"),
        "errors": sum(s["errors"] for s in runs), "non_2xx": sum(s["err_status"] for s in runs),
        "server_core_busy": med("server_core_busy"), "server_cpu_us": med("server_cpu_us"), "foreign_cpu": med("foreign_cpu"),
        "rps_runs": [round(s["rps"]) for s in runs], "cpu_us_runs": [round(s["server_cpu_us"], 1) for s in runs],
        "foreign_runs": [round(s["foreign_cpu"], 2) for s in runs],
        **({"namespace_delete_s": max(s["namespace_delete_s"] for s in runs)} if "namespace_delete_s" in runs[0] else {}),
    }


def http_ratios(cases: dict) -> dict:
    post = cases[WRITE_CEILING]["rps"]
    return {
        "get": cases["get"]["rps"] / cases["ceiling_get"]["rps"],
        "list": cases["list"]["rps"] / cases["ceiling_list"]["rps"],
        **{key: cases[key]["rps"] / post for key in ("floor_create", "create", "create_pool", "patch", "update", "status")},
    }


def http_goals(ratios: dict) -> dict:
    return {text: ratios[key] >= minimum for key, (_, minimum, text) in GOALS.items()}


# --- compare suite: authentication modes, other checkouts ---------------------------------------

COMPARE_CASES = "get,create,patch,status"


def compare_suite(variants: list[Variant], case_keys: list[str], *, runs: int, seconds: float, warmup: float, notes: list,
                  retry_until: float) -> dict:
    """The HTTP cases against one mockapi per variant (no ceiling twin), interleaved: run index
    outermost, then case, then variant; each figure is a ratio to the first variant's in this run."""
    cases = [c for c in HTTP_CASES if c.key in case_keys]
    tmp = Path(tempfile.mkdtemp(prefix="mockapi-bench-"))
    servers: dict[str, Server] = {}
    try:
        sizes = None
        for variant in variants:
            servers[variant.key] = server = start_mockapi(variant, tmp)
            _server_pid_by_port[server.port] = server.pid
            sizes = prepare_http(server, tmp, notes)
        ports = {key: {"mockapi": server.port, "tmp": tmp} for key, server in servers.items()}
        for case in cases:
            for variant in variants:
                run_case(case, ports[variant.key], warmup, "w")
        samples: dict[tuple, list] = {(c.key, v.key): [] for c in cases for v in variants}
        last: dict[tuple, list] = {(c.key, v.key): [] for c in cases for v in variants}  # each run's kept result
        for r in range(runs):
            for case in cases:
                for variant in variants:
                    result = run_case(case, ports[variant.key], seconds, f"r{r}")
                    if result["foreign_cpu"] > DISTURBED and time.monotonic() < retry_until:
                        samples[case.key, variant.key].append(result)
                        result = run_case(case, ports[variant.key], seconds, f"r{r}b")
                    samples[case.key, variant.key].append(result)
                    last[case.key, variant.key].append(result)
        table = {}
        for case in cases:
            row = {v.key: summarize(case, samples[case.key, v.key]) for v in variants}
            base = last[case.key, variants[0].key]
            for v in variants:
                # ratios paired run by run (the variants of one run were measured back to back, under
                # the same foreign load), then the median: steadier than a ratio of medians
                mine = last[case.key, v.key]
                cell = row[v.key]
                cell["ratio_rps"] = statistics.median(m["rps"] / b["rps"] for m, b in zip(mine, base))
                cell["ratio_cpu"] = statistics.median(m["server_cpu_us"] / b["server_cpu_us"] for m, b in zip(mine, base))
                cell["ratio_cpu_runs"] = [round(m["server_cpu_us"] / b["server_cpu_us"], 3) for m, b in zip(mine, base)]
                if cell["non_2xx"]:
                    notes.append(f"{case.label} ({v.label}): wrk counted {cell['non_2xx']} non-2xx responses")
            table[case.key] = row
        return {"sizes": sizes, "variants": [{"key": v.key, "label": v.label, "code": str(v.code), "mode": v.mode} for v in variants],
                "cases": table}
    finally:
        for server in servers.values():
            stop(server)
        shutil.rmtree(tmp, ignore_errors=True)


def compare_table(compare: dict) -> list[str]:
    variants = compare["variants"]
    lines = [f"COMPARE, wrk -t1 -c{CONCURRENCY}, one mockapi per variant, interleaved (run, case, variant), medians; "
             "ratios to the first variant: medians of the ratios within each run",
             "  rps ratio: higher is faster; CPU/req: the server's CPU time per request (µs) and its ratio, lower is cheaper",
             *[f"  [{i}] {v['label']}" for i, v in enumerate(variants)],
             f"{'case':<42} {'variant':<4} {'runs':>4} {'rps':>9} {'p50 ms':>8} {'p99 ms':>8} {'CPU/req':>8} {'foreign':>7} {'rps ratio':>9} "
             f"{'CPU ratio':>9}"]
    for row in compare["cases"].values():
        for i, v in enumerate(variants):
            c = row[v["key"]]
            lines.append(f"{(c['label'] if i == 0 else ''):<42} [{i}]  {c['runs']:>4} {c['rps']:>9,.0f} {c['p50_ms']:>8.2f} {c['p99_ms']:>8.2f} "
                         f"{c['server_cpu_us']:>8.0f} {c['foreign_cpu']:>7.2f} {c['ratio_rps']:>8.2f}x {c['ratio_cpu']:>8.2f}x")
    return lines


def compare_variants(args) -> list[Variant]:
    """``--code DIR`` (repeatable): each checkout in the default mode, in the order given, then this
    one unless it was named (``--code OLD``: OLD is the yardstick, this checkout is measured against
    it); ``--modes``: this checkout in each mode (the first is the yardstick)."""
    variants = []
    if args.code:
        codes = [code.resolve() for code in args.code]
        codes += [] if ROOT in codes else [ROOT]
        for i, code in enumerate(codes):
            name = f"this checkout ({code.name})" if code == ROOT else f"--code {code}"
            variants.append(Variant(f"code{i}", f"{name}, default mode", code=code))
    for mode in (args.modes.split(",") if args.modes else []):
        if mode not in MODES:
            raise SystemExit(f"--modes: unknown mode {mode!r} (one of {', '.join(MODES)})")
        if not (args.code and mode == "default"):
            variants.append(Variant(mode, MODES[mode], mode=mode))
    return variants


# --- watch suite ---------------------------------------------------------------------------------


def watch_run(server_name: str, *, watchers: int, mode: str, seconds: float, warmup: float, rate: float, writers: int, template: Path) -> dict:
    server = start_mockapi() if server_name == "mockapi" else start_ceiling()
    try:
        create_namespace(server.port, WATCH_NS)
        rv = "0"
        if server_name == "mockapi":
            rv = orjson.loads(expect(server.port, "GET", f"/api/v1/namespaces/{WATCH_NS}/pods"))["metadata"]["resourceVersion"]
        cmd = [sys.executable, str(BENCH / "watch_client.py"), "--port", str(server.port), "--namespace", WATCH_NS,
               "--resource-version", rv, "--watchers", str(watchers), "--writers", str(writers), "--mode", mode,
               "--rate", str(rate), "--seconds", str(seconds), "--warmup", str(warmup), "--pod-template", str(template), "--server-pid", str(server.pid)]
        busy0, server0, wall0 = busy_seconds(), cpu_seconds(server.pid), time.monotonic()
        proc = subprocess.Popen(pinned(cmd, CLIENT_CORE), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        watchdog = threading.Timer(180, proc.kill)
        watchdog.start()
        _, status, usage = os.wait4(proc.pid, 0)  # its output is one short line: the pipe cannot fill
        watchdog.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out, err = proc.stdout.read(), proc.stderr.read()
        if proc.returncode != 0:
            raise RuntimeError(f"watch client failed ({proc.returncode}): {err[-3000:]}")
        wall = time.monotonic() - wall0
        client_cpu = usage.ru_utime + usage.ru_stime
        foreign = (busy_seconds() - busy0) - (cpu_seconds(server.pid) - server0) - client_cpu
        return {"server": server_name, **json.loads(out.strip().splitlines()[-1]), "foreign_cpu": max(0.0, foreign) / wall}
    finally:
        stop(server)


def watch_suite(*, sizes: list[int], seconds: float, warmup: float, reps: int, tmp: Path, retry_until: float) -> list[dict]:
    """Every (N, mode, server) cell ``reps`` times, interleaved; a run that other tenants disturbed
    is run once more while there is time (before ``retry_until``, a monotonic time)."""
    template = tmp / "watch-pod.json"
    template.write_bytes(orjson.dumps(make_pod("__NAME__", 3, namespace=WATCH_NS, stamp="__STAMP__")))
    results = []
    for rep in range(reps):
        for n in sizes:
            for mode in ("flood", "paced"):
                for server in ("ceiling", "mockapi"):
                    # paced: 10% above the 100k deliveries/s goal
                    params = {"watchers": n, "mode": mode, "seconds": seconds, "warmup": warmup, "rate": 110_000 / n, "writers": 16,
                              "template": template}
                    result = {"rep": rep, **_watch_attempt(server, params)}
                    if result.get("foreign_cpu", 0) > DISTURBED and time.monotonic() < retry_until:
                        results.append(result)
                        result = {"rep": rep, "retry": True, **_watch_attempt(server, params)}
                    results.append(result)
    return results


def _watch_attempt(server: str, params: dict) -> dict:
    try:
        return watch_run(server, **params)
    except (RuntimeError, RequestFailed) as exc:
        return {"server": server, "watchers": params["watchers"], "mode": params["mode"], "failed": str(exc)}


def watch_summary(results: list[dict]) -> list[dict]:
    """Median per (N, mode, server) over the repetitions, with the mockapi/ceiling ratios."""
    rows = []
    keys = sorted({(r["watchers"], r["mode"]) for r in results}, key=lambda k: (k[0], k[1]))
    for n, mode in keys:
        by_server = {}
        for server in ("ceiling", "mockapi"):
            runs = [r for r in results if r["watchers"] == n and r["mode"] == mode and r["server"] == server]
            finished = [r for r in runs if "failed" not in r]
            if not finished:
                by_server[server] = {"server": server, "watchers": n, "mode": mode, "failed": runs[0]["failed"] if runs else "not run"}
                continue
            good = undisturbed(finished)
            med = lambda k: statistics.median(r[k] for r in good)  # noqa: E731
            by_server[server] = {
                "server": server, "watchers": n, "mode": mode, "runs": f"{len(good)}/{len(runs)}",
                "writes_per_s": med("writes_per_s"), "delivered_per_s": med("delivered_per_s"),
                "p50_ms": med("p50_ms"), "p99_ms": med("p99_ms"), "max_ms": max(r["max_ms"] for r in good),
                "complete": all(r["complete"] for r in finished),
                "failed_runs": [r["failed"].strip().splitlines()[-1][:300] for r in runs if "failed" in r],
                "missing": sum(r["expected_deliveries"] - r["delivered"] for r in finished),
                "out_of_order_or_duplicate": sum(r["out_of_order_or_duplicate"] for r in finished),
                "error_events": [e for r in finished for e in r["error_events"]][:3],
                "write_failures": [f for r in finished for f in r["write_failures"]][:3],
                "server_core_busy": med("server_core_busy"), "client_core_busy": med("client_core_busy"),
                "foreign_cpu": med("foreign_cpu"),
            }
        ceil, mock = by_server["ceiling"], by_server["mockapi"]
        if "failed" not in ceil and "failed" not in mock:
            mock["ratio_delivered"] = mock["delivered_per_s"] / ceil["delivered_per_s"]
            mock["ratio_p99"] = mock["p99_ms"] / ceil["p99_ms"]
        rows += [ceil, mock]
    return rows


# --- memory ------------------------------------------------------------------------------------


def rss_bytes() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def memory_child(count: int) -> dict:
    """Runs in a fresh process: build mockapi in-process, create ``count`` Pods through the registry."""
    import gc

    from mockapi import app
    from mockapi.registry.options import WriteOptions

    server = app.build()
    rt = server.types.by_kind("", "v1", "Pod")
    head, tail = orjson.dumps(make_pod("__NAME__", 0)).split(b"__NAME__")
    gc.collect()
    before = rss_bytes()
    started = time.perf_counter()
    for i in range(count):
        server.registry.create(rt, "default", orjson.loads(head + f"p-{i:06d}".encode() + tail), WriteOptions())
    build_s = time.perf_counter() - started
    gc.collect()
    after = rss_bytes()
    pauses = []
    for _ in range(3):
        t = time.perf_counter()
        gc.collect()
        pauses.append(time.perf_counter() - t)
    sample = server.registry.get(rt, "default", "p-000000").raw
    return {
        "objects": count, "stored_bytes_per_object": len(sample), "rss_before_mb": before / 2**20, "rss_after_mb": after / 2**20,
        "rss_delta_per_object": (after - before) / count, "gc_pause_ms": statistics.median(pauses) * 1000,
        "gc_tracked_objects": len(gc.get_objects()), "creates_per_s_in_process": count / build_s,
    }


def memory_suite(count: int) -> dict:
    cmd = pinned([sys.executable, str(BENCH / "api.py"), "--memory-child", str(count)], SERVER_CORE)
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    if done.returncode != 0:
        return {"failed": done.stderr[-3000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- report --------------------------------------------------------------------------------------


def verdict(ok: bool | None) -> str:
    return "–" if ok is None else ("PASS" if ok else "FAIL")


def http_table(http: dict) -> list[str]:
    cases, ratios, sizes = http["cases"], http["ratios"], http["sizes"]
    lines = [f"HTTP, wrk -t1 -c{CONCURRENCY}, medians of interleaved runs (runs = used/done: a run with foreign CPU > {DISTURBED} "
             "cores is set aside when a cleaner one exists)",
             f"  GET body {sizes['get_bytes']} B, LIST body {sizes['list_bytes']} B, POST body {sizes['post_bytes']} B (pod), "
             f"{sizes['pool_bytes']} B (pool), status PUT body {sizes['status_bytes']} B; writes are ratios to the ceiling POST",
             f"{'case':<42} {'runs':>4} {'rps':>9} {'p50 ms':>8} {'p99 ms':>8} {'MiB/s':>8} {'errors':>6} {'srv busy':>8} {'foreign':>7} "
             f"{'ratio':>6}  goal"]
    for key, case in cases.items():
        ratio = ratios.get(key)
        goal = GOALS.get(key)
        goal_text = f"{goal[2]}: {verdict(ratio >= goal[1])}" if goal else REFERENCES.get(key, "ratio vs ceiling GET" if ratio is not None else "")
        lines.append(f"{case['label']:<42} {case['runs']:>4} {case['rps']:>9,.0f} {case['p50_ms']:>8.2f} {case['p99_ms']:>8.2f} "
                     f"{case['mib_s']:>8.1f} {case['errors']:>6} {case['server_core_busy']:>8.2f} {case['foreign_cpu']:>7.2f} "
                     f"{('%.2fx' % ratio) if ratio is not None else '':>6}  {goal_text}")
    return lines


def watch_table(rows: list[dict]) -> list[str]:
    lines = ["WATCH fan-out: fresh server per run; writes alternate POST of a new pod and merge PATCH of it; latency = write start",
             "  -> receipt; flood = closed-loop writers, paced = 110,000/N writes/s; ratio = mockapi/ceiling deliveries/s",
             f"{'server':<8} {'N':>5} {'mode':<6} {'runs':>4} {'writes/s':>9} {'deliveries/s':>13} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
             f"{'complete':>8} {'srv/cli busy':>12} {'foreign':>7} {'ratio':>6}"]
    for r in rows:
        if "failed" in r:
            lines.append(f"{r['server']:<8} {r['watchers']:>5} {r['mode']:<6} FAILED: {r['failed'][:300]}")
            continue
        ratio = f"{r['ratio_delivered']:.2f}x" if "ratio_delivered" in r else ""
        busy = f"{r['server_core_busy']:.2f}/{r['client_core_busy']:.2f}"
        lines.append(f"{r['server']:<8} {r['watchers']:>5} {r['mode']:<6} {r['runs']:>4} {r['writes_per_s']:>9,.0f} {r['delivered_per_s']:>13,.0f} "
                     f"{r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['max_ms']:>8.1f} {('yes' if r['complete'] else 'NO'):>8} {busy:>12} "
                     f"{r['foreign_cpu']:>7.2f} {ratio:>6}")
        for problem in r["error_events"] + r["write_failures"] + [f"a run failed: {f}" for f in r["failed_runs"]]:
            lines.append(f"    ! {problem[:400]}")
    return lines


def watch_goals(rows: list[dict]) -> dict:
    find = lambda server, mode: next((r for r in rows if r["server"] == server and r["watchers"] == 1000 and r["mode"] == mode  # noqa: E731
                                      and "failed" not in r), None)
    paced, flood = find("mockapi", "paced"), find("mockapi", "flood")
    goals = {}
    if paced:
        goals["N=1000 paced: ≥ 100,000 deliveries/s, p99 ≤ 100 ms, complete"] = (
            paced["delivered_per_s"] >= 100_000 and paced["p99_ms"] <= 100 and paced["complete"])
    if flood and "ratio_delivered" in flood:
        goals["N=1000 flood: deliveries/s ≥ 0.5x ceiling (PERF T7)"] = flood["ratio_delivered"] >= 0.5
    return goals


def memory_lines(mem: dict) -> list[str]:
    if "failed" in mem:
        return ["MEMORY: FAILED", mem["failed"]]
    total = mem["rss_after_mb"]
    return [
        f"MEMORY, {mem['objects']:,} Pods of {mem['stored_bytes_per_object']} B stored, created in-process through registry.create "
        f"({mem['creates_per_s_in_process']:,.0f}/s)",
        f"  RSS per object {mem['rss_delta_per_object']:,.0f} B; process RSS {mem['rss_before_mb']:.0f} -> {total:.0f} MB "
        f"(goal: < 600 MB: {verdict(total < 600)})",
        f"  full gc.collect() {mem['gc_pause_ms']:.1f} ms with {mem['gc_tracked_objects']:,} GC-tracked objects "
        f"(PERF T11 ≤ 50 ms: {verdict(mem['gc_pause_ms'] <= 50)})",
    ]


def report(results: dict) -> str:
    meta_ = results["meta"]
    lines = [f"mockapi API benchmark — {meta_['date']} — {meta_['placement']} — mockapi started by {meta_['launch']}"]
    if "http" in results:
        lines += [""] + http_table(results["http"])
    if "compare" in results:
        lines += [""] + compare_table(results["compare"])
    if "watch" in results:
        lines += [""] + watch_table(results["watch"]["summary"])
        lines += [f"  {goal}: {verdict(ok)}" for goal, ok in results["watch"]["goals"].items()]
    if "memory" in results:
        lines += [""] + memory_lines(results["memory"])
    if results["notes"]:
        lines += ["", "Notes:"] + [f"  - {n}" for n in results["notes"]]
    lines.append(f"\n(total {results['meta']['elapsed_s']:.0f} s)")
    return "\n".join(lines)


# --- main ----------------------------------------------------------------------------------------


def check_tools() -> list[str]:
    missing = []
    if not shutil.which("wrk"):
        missing.append("wrk is not installed: install it with `apt-get install -y wrk` (Debian/Ubuntu) or `brew install wrk`")
    for module in ("uvloop", "httptools"):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"{module} is not installed: `pip install uvloop httptools` (uvicorn[standard] brings both)")
    return missing


def meta(args, started: float) -> dict:
    import uvicorn

    placement = "server on core 0, client on core 1" if shutil.which("taskset") and (os.cpu_count() or 1) >= 2 else "NOT pinned"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"), "placement": placement, "launch": LAUNCH[args.launch], "quick": args.quick,
        "cpus": os.cpu_count(),
        "python": platform.python_version(), "uvicorn": uvicorn.__version__, "orjson": orjson.__version__,
        "wrk": subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split("[")[0].strip(),
        "elapsed_s": time.monotonic() - started,
    }


def parse_args(argv):
    parser = argparse.ArgumentParser(description="mockapi API benchmark (see bench/README.md)")
    parser.add_argument("--quick", action="store_true", help="about a minute: one short run of each")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    parser.add_argument("--only", default="http,watch,memory", help="comma-separated subset of http,watch,memory")
    parser.add_argument("--launch", choices=tuple(LAUNCH), default="cli",
                        help="how mockapi is started: cli (default) or uvicorn (its app on the ceiling's uvicorn set-up, a diagnostic)")
    parser.add_argument("--modes", help=f"compare suite: mockapi in each of these modes ({','.join(MODES)}), the first the yardstick, "
                        "e.g. default,rbac,masters,tls-rbac; replaces the default suites")
    parser.add_argument("--code", type=Path, action="append", metavar="DIR",
                        help="compare suite: also run this checkout's mockapi (default mode; repeatable), against this one")
    parser.add_argument("--cases", default=COMPARE_CASES, help=f"compare suite: the HTTP cases (default {COMPARE_CASES}; "
                        "of get,list,create,create_pool,patch,update,status)")
    parser.add_argument("--runs", type=int, help="compare suite: interleaved runs (default 3, --quick 1)")
    parser.add_argument("--controllers", action="store_true",
                        help="compare suite: the servers run their controllers (allocator, scheduler, kubelet; not the GC, which would "
                             "delete the bench's pods) as `mockapi serve` does, which read every write through their watches; "
                             "cases create,create_pool only")
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-mockapi", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def http_part(*, quick: bool, started: float, notes: list) -> dict | None:
    runs, seconds = (1, 2.0) if quick else (3, 3.0)
    try:
        http = http_suite(runs=runs, seconds=seconds, warmup=1.0, notes=notes, retry_until=started + (20 if quick else 120))
    except (RequestFailed, RuntimeError) as exc:
        notes.append(f"HTTP suite failed: {exc}")
        return None
    http["ratios"] = http_ratios(http["cases"])
    http["goals"] = http_goals(http["ratios"])
    return http


def watch_part(*, quick: bool, started: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="mockapi-bench-") as tmp:
        raw = watch_suite(sizes=[100, 1000], seconds=1.5 if quick else 2.5, warmup=0.5 if quick else 1.0, reps=1 if quick else 3,
                          tmp=Path(tmp), retry_until=started + (60 if quick else BUDGET_S))
    summary = watch_summary(raw)
    return {"runs": raw, "summary": summary, "goals": watch_goals(summary)}


def memory_part() -> dict:
    memory = memory_suite(100_000)
    if "failed" not in memory:
        memory["goals"] = {"process RSS < 600 MB with 100,000 objects": memory["rss_after_mb"] < 600,
                           "full gc.collect() ≤ 50 ms (PERF T11)": memory["gc_pause_ms"] <= 50}
    return memory


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.memory_child:
        print(json.dumps(memory_child(args.memory_child)))
        return 0
    if args.serve_mockapi:
        return serve_mockapi_on_uvicorn()
    _launch[0] = args.launch
    _controllers[0] = args.controllers
    if args.controllers and (not (args.modes or args.code) or set(args.cases.split(",")) - set(CONTROLLER_CASES)):
        print(f"--controllers is for the compare suite (--code or --modes) with --cases among {','.join(CONTROLLER_CASES)}", file=sys.stderr)
        return 2
    missing = check_tools()
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # 1,000 watchers need the file descriptors
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    started = time.monotonic()
    only = set(args.only.split(","))
    results: dict = {"notes": []}
    if args.modes or args.code:
        only = set()
        runs, seconds = (args.runs or (1 if args.quick else 3)), (2.0 if args.quick else 3.0)
        results["compare"] = compare_suite(compare_variants(args), args.cases.split(","), runs=runs, seconds=seconds, warmup=1.0,
                                           notes=results["notes"], retry_until=started + 60 * runs)
    if "http" in only and (http := http_part(quick=args.quick, started=started, notes=results["notes"])):
        results["http"] = http
    if "watch" in only:
        results["watch"] = watch_part(quick=args.quick, started=started)
    if "memory" in only:
        results["memory"] = memory_part()
    results["meta"] = meta(args, started)
    print(report(results))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
