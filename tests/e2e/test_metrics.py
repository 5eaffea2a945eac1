"""Observability: /metrics in Prometheus format, request log lines, JSON logs and the banner."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from mockapi.controllers.gate import ClaimKey

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
CM = "/api/v1/namespaces/default/configmaps"
PATIENT = 60  # seconds: a hang guard, for waits a loaded machine makes long


@pytest.fixture
def http(live):
    with httpx.Client(base_url=live.url, timeout=PATIENT) as session:
        yield session


def samples(http, name: str) -> list:
    families = text_string_to_metric_families(http.get("/metrics").text)
    return [s for family in families for s in family.samples if s.name == name]


def value(http, name: str, **labels) -> float:
    found = [s.value for s in samples(http, name) if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_requests_are_counted_with_kube_apiservers_names_and_labels(http):
    http.post(CM, json={"metadata": {"name": "a"}})
    http.get(CM)
    http.get(f"{CM}/a")
    http.get(f"{CM}/missing")
    http.patch(f"{CM}/a?fieldManager=me", content="data: {x: y}", headers={"content-type": "application/apply-patch+yaml"})
    http.patch(f"{CM}/a?dryRun=All", json={"data": {"z": "1"}}, headers={"content-type": "application/merge-patch+json"})
    http.get(f"{CM}?watch=1&timeoutSeconds=1")
    common = {"group": "", "version": "v1", "resource": "configmaps", "component": "apiserver", "subresource": ""}
    assert value(http, "apiserver_request_total", verb="POST", scope="resource", code="201", **common) == 1
    assert value(http, "apiserver_request_total", verb="LIST", scope="namespace", code="200", **common) == 1
    assert value(http, "apiserver_request_total", verb="GET", scope="resource", code="200", **common) == 1
    assert value(http, "apiserver_request_total", verb="GET", scope="resource", code="404", **common) == 1
    assert value(http, "apiserver_request_total", verb="APPLY", code="200", **common) == 1
    assert value(http, "apiserver_request_total", verb="PATCH", dry_run="All", code="200", **common) == 1
    assert value(http, "apiserver_request_total", verb="WATCH", code="200", **common) == 1
    watch_seconds = value(http, "apiserver_request_duration_seconds_sum", verb="WATCH", **common)
    assert 0.9 < watch_seconds < 5
    buckets = [s for s in samples(http, "apiserver_request_duration_seconds_bucket") if s.labels["verb"] == "LIST"]
    assert [s.labels["le"] for s in buckets][:3] == ["0.005", "0.025", "0.05"] and buckets[-1].labels["le"] == "+Inf"


def test_stored_objects_and_open_watches_are_gauges(http, live):
    assert value(http, "apiserver_storage_objects", resource="namespaces") == 3
    assert value(http, "apiserver_storage_objects", resource="customresourcedefinitions.apiextensions.k8s.io") == 6
    before = value(http, "mockapi_registered_watchers")
    # open until the client leaves (a watch's own timeoutSeconds could pass before a busy machine
    # reads the gauge): registered before its headers come, unregistered once the server sees it go
    with httpx.stream("GET", f"{live.url}{CM}?watch=1&timeoutSeconds=300", timeout=PATIENT):
        assert value(http, "mockapi_registered_watchers") == before + 1
    deadline = time.monotonic() + PATIENT
    while value(http, "mockapi_registered_watchers") != before:
        assert time.monotonic() < deadline, "the watch stayed registered after its client left"
        time.sleep(0.02)


def test_allocation_attempts_reported_to_the_gate_are_counted(http, live):
    gate = live.server.gate
    gate.finished(ClaimKey("default", "a"), reason="Allocated", seconds=0.002)
    gate.finished(ClaimKey("default", "b"), reason="Unsatisfiable", seconds=0.004)
    assert value(http, "mockapi_allocator_attempts_total") == 2
    assert value(http, "mockapi_allocator_results_total", reason="Unsatisfiable") == 1
    assert value(http, "mockapi_allocator_duration_seconds_count") == 2
    assert value(http, "mockapi_allocator_waiting_claims") == 0


def test_process_metrics_include_the_resident_memory(http):
    assert value(http, "process_resident_memory_bytes") > 10 * 2**20


def test_openmetrics_is_served_when_asked_for(http):
    response = http.get("/metrics", headers={"accept": "application/openmetrics-text; version=1.0.0"})
    assert response.headers["content-type"].startswith("application/openmetrics-text") and response.text.endswith("# EOF\n")
    assert http.get("/metrics").headers["content-type"].startswith("text/plain; version=0.0.4")


# ---------------------------------------------------------------- logs and the banner
def serve(*args: str, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    """``mockapi serve --port 0 ARGS`` and its banner line. Its first requests may wait seconds on
    a busy machine (the controllers' and cold endpoints' imports run after ready): this module's
    requests to it use :data:`PATIENT` as their timeout, a hang guard."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mockapi", "serve", "--port", "0", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1", **(env or {})),
    )
    return process, process.stdout.readline()


def stop(process: subprocess.Popen) -> str:
    process.terminate()
    return process.communicate(timeout=PATIENT)[1]


def test_json_logs_give_a_json_banner_and_one_json_line_per_request():
    started = time.monotonic()
    process, banner = serve("--log-format", "json", "--log-level", "debug", "--load", "testdata/")
    waited = time.monotonic() - started
    try:
        line = json.loads(banner)
        assert line["message"].startswith("mockapi serving on http://127.0.0.1:") and line["objectsLoaded"] > 20
        assert 0 < line["readySeconds"] <= waited + 0.05 and line["url"] in line["message"]  # the process's age (10 ms ticks)
        httpx.get(f"{line['url']}/api/v1/namespaces/default/configmaps?limit=5", headers={"user-agent": "probe/1"}, timeout=PATIENT)
    finally:
        logs = [json.loads(text) for text in stop(process).splitlines()]
    requests = [entry for entry in logs if entry["logger"] == "mockapi.requests"]
    assert len(requests) == 1
    assert {k: requests[0][k] for k in ("level", "verb", "resource", "namespace", "code", "userAgent")} == {
        "level": "debug", "verb": "list", "resource": "configmaps", "namespace": "default", "code": 200, "userAgent": "probe/1"
    }
    assert any(entry["logger"].startswith("uvicorn") for entry in logs)


def test_text_logs_at_debug_give_one_readable_line_per_request_and_none_at_info():
    process, banner = serve("--log-level", "debug")
    url = re.search(r"serving on (\S+) \(0 objects loaded in [\d.]+s, ready [\d.]+s after process start\)", banner).group(1)
    httpx.get(f"{url}/api/v1/namespaces/default/configmaps/missing", timeout=PATIENT)
    lines = [line for line in stop(process).splitlines() if "mockapi.requests" in line]
    assert len(lines) == 1
    assert re.search(r"DEBUG mockapi\.requests: GET /api/v1/namespaces/default/configmaps/missing 404 [\d.]+ms \(get configmaps default/missing\) python-httpx/", lines[0])
    process, banner = serve()
    httpx.get(f"{banner.split()[3]}/api/v1/namespaces", timeout=PATIENT)
    assert "mockapi.requests" not in stop(process)


def test_environment_variables_configure_serve():
    process, banner = serve(env={"MOCKAPI_LOG_FORMAT": "json", "MOCKAPI_LOAD": "testdata/00-namespaces.yaml", "MOCKAPI_ALLOCATION_MODE": "manual"})
    try:
        line = json.loads(banner)
        assert line["objectsLoaded"] == 2
        assert httpx.get(f"{line['url']}/mockapi/v1/allocation", timeout=PATIENT).json()["mode"] == "manual"
    finally:
        stop(process)
