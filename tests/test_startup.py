"""Start-up stays light, and stored objects stay out of the garbage collector's way.

Not timed tests (bench/startup.py and bench/memory.py measure): what a fresh process imports to
build a server is checked through ``sys.modules`` in a subprocess, and the collector's view of the
store through ``gc.is_tracked``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mockapi import cli
from mockapi.http import cold, endpoints, health
from mockapi.store import Store

ROOT = Path(__file__).resolve().parent.parent
# Heavy packages no start-up needs: FastAPI (the cold endpoints, built on their first request), the
# official client (``mockapi allocator``/``explain`` against a remote server), test-only packages;
# starlette (the control routes, built with the cold endpoints), prometheus_client (the first
# scrape of /metrics: the counters count without it), the Table printers (the first Table asked
# for), protobuf decoding (the first protobuf body), the reset's rules (the first reset or snapshot),
# the in-process client (the controllers' tasks), the HPA's conversion (its first use).
NOT_AT_START_UP = (
    "fastapi", "pydantic", "mockapi.models.devmgmt_v1alpha1", "mockapi.http.endpoints", "kubernetes", "urllib3", "hypothesis", "pytest", "httpx",
    "starlette", "prometheus_client", "mockapi.http.control_routes", "mockapi.registry.printers", "mockapi.protobuf", "mockapi.registry.reset",
    "mockapi.client", "mockapi.registry.autoscaling",
)  # fmt: skip


def _modules_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_building_a_server_imports_none_of_what_start_up_does_not_need():
    loaded = _modules_after("from mockapi import app\nfrom mockapi.settings import Settings\napp.build(Settings(allocator=True))")
    assert not loaded & set(NOT_AT_START_UP)


def test_the_cel_runtime_is_loaded_by_the_first_expression_not_by_start_up():
    assert "cel_expr_python" not in _modules_after("from mockapi import app\nfrom mockapi.settings import Settings\napp.build(Settings(allocator=True))")
    assert "cel_expr_python" in _modules_after("from mockapi import cel\ncel.compile('device.numa == \"0\"')")


def test_the_command_line_imports_no_server_until_a_command_runs():
    loaded = _modules_after("import mockapi.cli")
    assert not loaded & {"uvicorn", "mockapi.app", *NOT_AT_START_UP}


# ------------------------------------------------------------------ health checks without FastAPI
def _call(app, method: str, path: str, query: bytes = b"") -> list[dict]:
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http", "path": path,
        "raw_path": path.encode(), "root_path": "", "query_string": query, "headers": [], "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
    }
    asyncio.run(app(scope, receive, send))
    return sent


HEALTH_REQUESTS = [
    ("GET", "/readyz", b""),
    ("GET", "/healthz", b"verbose"),
    ("GET", "/livez", b"verbose=1&exclude=store&exclude=etcd&exclude=%C3%A9"),
    ("GET", "/readyz", b"exclude=ping"),
    ("GET", "/readyz/ping", b"verbose"),
    ("GET", "/livez/store", b""),
]


@pytest.mark.parametrize(("method", "path", "query"), HEALTH_REQUESTS)
def test_health_checks_are_answered_byte_for_byte_as_the_cold_endpoints_answer_them_without_building_them(method, path, query):
    built = []
    deferred = cold.Deferred(lambda: built.append(1) or endpoints.create_app(None))
    assert _call(deferred, method, path, query) == _call(endpoints.create_app(None), method, path, query)
    assert not built


@pytest.mark.parametrize(("method", "path"), [("HEAD", "/readyz"), ("POST", "/healthz"), ("GET", "/readyz/"), ("GET", "/version"), ("GET", "/nowhere")])
def test_every_other_request_builds_the_cold_endpoints_once_and_gets_their_answer(method, path):
    built = []
    deferred = cold.Deferred(lambda: built.append(1) or endpoints.create_app(None))
    assert _call(deferred, method, path) == _call(endpoints.create_app(None), method, path)
    _call(deferred, method, path)
    assert built == [1]


def test_what_is_mounted_before_the_build_is_applied_in_order_and_afterwards_at_once():
    done = []
    deferred = cold.Deferred(lambda: "app")
    deferred.mount(lambda app: done.append(("first", app)))
    deferred.mount(lambda app: done.append(("second", app)))
    assert done == []
    assert deferred.app == "app" and done == [("first", "app"), ("second", "app")]
    deferred.mount(lambda app: done.append(("late", app)))
    assert done[-1] == ("late", "app")


def test_the_build_runs_with_the_collector_off_and_leaves_it_as_it_was():
    seen = []
    cold.Deferred(lambda: seen.append(gc.isenabled())).app
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        cold.Deferred(lambda: "app").app
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_health_report_is_the_one_the_cold_endpoints_render():
    assert endpoints.health_report is health.health_report


# ------------------------------------------------------------------ the store and the collector
def _pod(name: str, labels: dict | None) -> dict:
    meta = {"name": name, "namespace": "default"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def test_stored_objects_and_their_events_are_not_tracked_by_the_cyclic_collector():
    store = Store()
    created = store.create("pods", _pod("a", {"app": "x"}), fields=lambda obj: ("", "Pending"))
    updated = store.update("pods", _pod("a", {"app": "y"}), fields=lambda obj: ("node-1", "Running"))
    deleted = store.delete("pods", "default", "a")
    events = list(store.events_since("pods", 0))
    assert len(events) == 3
    assert not any(gc.is_tracked(x) for x in (created, updated, deleted, *events))
    assert not any(gc.is_tracked(x.labels) for x in (created, updated, deleted))


def test_objects_with_equal_labels_and_field_values_share_them_and_keep_them_apart_from_the_written_dict():
    store = Store()
    labels = {"app": "web", "tier": "backend"}
    first = store.create("pods", _pod("a", dict(labels)), fields=lambda obj: ("", "Pending"))
    written = _pod("b", dict(labels))
    second = store.create("pods", written, fields=lambda obj: ("", "Pending"))
    other = store.create("pods", _pod("c", {"app": "db"}), fields=lambda obj: ("n", "Running"))
    assert first.labels is second.labels and first.fields is second.fields
    assert other.labels == {"app": "db"} and other.fields == ("n", "Running")
    written["metadata"]["labels"]["app"] = "changed"
    assert second.labels == labels and first.labels == labels
    assert store.create("pods", _pod("d", {}), fields=None).labels is None


def test_labels_of_a_caller_that_skipped_validation_are_kept_as_given():
    store = Store()
    odd = {"app": ["not", "a", "string"]}
    assert store.create("pods", _pod("a", odd)).labels == odd


# ------------------------------------------------------------------ the command's collector settings
@pytest.fixture
def root_logging():
    """``mockapi serve`` configures the root logger: put this process's back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_serve_leaves_the_collector_on_when_start_up_fails(root_logging):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["serve", "--port", str(port), "--log-level", "critical"]) == 2
    assert gc.isenabled()


# ------------------------------------------------------------------ WebSocket support on first use
_UPGRADE = (
    "GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def test_a_running_server_imports_websockets_on_the_first_upgrade_request_which_it_refuses_as_before():
    script = f"""
import json, socket, sys
from mockapi.testing import MockAPIServer
server = MockAPIServer().start()
at_start = sorted(m for m in sys.modules if m.startswith(("websockets", "wsproto", "uvicorn.protocols.websockets", "starlette", "prometheus_client")))
host, port = server.url.split("//")[1].split(":")
answers = []
for path in ("/api/v1/namespaces", "/healthz"):
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall({_UPGRADE!r}.format(path=path).encode())
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    answers.append(answer.split(b"\\r\\n")[0].decode())
server.stop()
print(json.dumps({{"at_start": at_start, "answers": answers, "websockets": "uvicorn.protocols.websockets.auto" in sys.modules}}))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["at_start"] == []
    # uvicorn's ws="auto" answer: the app does not accept the websocket scope (kube-apiserver would
    # serve a non-streaming path as plain HTTP; mockapi never did).
    assert report["answers"] == ["HTTP/1.1 403 Forbidden"] * 2
    assert report["websockets"]


# ------------------------------------------------------------ our CRDs, validated by this test rather than at every start
def test_the_known_crd_digests_are_those_of_our_crds_each_validated_by_every_rule():
    from mockapi import app
    from mockapi.registry import known_crds

    computed = app.known_crd_digests()  # runs every rule on each (the seed refuses an invalid one)
    assert len(computed) == len(set(computed)) == 6
    assert computed == json.loads(known_crds.PATH.read_text()), "rewrite it: python3 -c 'from mockapi import app; app.write_known_crds()'"


def test_a_server_seeds_our_crds_without_importing_the_crd_rules_and_validates_any_other():
    loaded = _modules_after("from mockapi import app\napp.build()")
    assert "mockapi.schema.crd" not in loaded
    from mockapi import app, errors
    from mockapi.registry.options import WriteOptions

    server = app.build()
    rt = server.types.by_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    changed = app.our_crds()[0]
    changed["metadata"]["name"] = "widgets.devmgmtproto.k8s.io"  # not plural.group any more: refused
    with pytest.raises(errors.StatusError) as refused:
        server.registry.create(rt, "", changed, WriteOptions())
    assert refused.value.code == 422 and 'must be spec.names.plural+"."+spec.group' in str(refused.value)


# ------------------------------------------------------------ uvicorn without its command line
def test_a_server_runs_uvicorn_without_its_command_line_and_uvicorn_is_whole_to_whoever_uses_it_after():
    script = """
import json, sys
from mockapi.testing import MockAPIServer
server = MockAPIServer().start()
lean = sorted(m for m in ("uvicorn.main", "click", "uvicorn.supervisors", "watchfiles") if m in sys.modules)
import uvicorn
from uvicorn import Config, Server, main, run
import uvicorn.server
whole = [uvicorn.__version__ == uvicorn.config.__dict__.get("__version__", uvicorn.__version__), Server is uvicorn.server.Server,
         Config is uvicorn.config.Config, main is sys.modules["uvicorn.main"].main, sorted(uvicorn.__all__)]
server.stop()
print(json.dumps({"lean": lean, "whole": whole}))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"lean": [], "whole": [True, True, True, True, ["Config", "Server", "main", "run"]]}
