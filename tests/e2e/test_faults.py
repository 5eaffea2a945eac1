"""Fault injection as users meet it (docs/fault-injection.md): what the official kubernetes client,
kubectl and raw HTTP see for each fault, on the plugin's shared server (reset before each test,
which clears the rules)."""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
import time

import httpx
import pytest
import urllib3
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from mockapi import errors

pytestmark = pytest.mark.e2e
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def configmap(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


@pytest.fixture
def core(kube_client):
    return client.CoreV1Api(kube_client)


@pytest.fixture
def http(mockapi):
    with httpx.Client(base_url=mockapi.url, timeout=10) as session:
        yield session


def codes(mockapi, **filters) -> list[int]:
    return [r["code"] for r in mockapi.requests(**filters)]


# ------------------------------------------------------------------ errors
def test_a_409_reaches_the_client_as_kubes_conflict_and_only_the_next_n_requests_get_it(mockapi, core):
    core.create_namespaced_config_map("default", configmap("settings", a="1"))
    with mockapi.faults.inject(verb="update", resource="configmaps", name="settings", error=409, count=1) as fault:
        with pytest.raises(ApiException) as conflict:
            core.replace_namespaced_config_map("settings", "default", configmap("settings", a="2"))
        assert (conflict.value.status, conflict.value.reason) == (409, "Conflict")
        assert '"message":"Operation cannot be fulfilled on configmaps \\"settings\\": the object has been modified; please apply your changes to the latest version and try again"' in conflict.value.body
        assert core.replace_namespaced_config_map("settings", "default", configmap("settings", a="2")).data == {"a": "2"}
        assert (fault.hits, fault.remaining) == (1, 0)
    assert mockapi.faults.list() == []  # the with block removed it
    assert codes(mockapi, verb="update") == [409, 200]


def test_the_python_client_retries_a_429_with_retry_after_on_get_but_not_on_create(mockapi, core):
    """urllib3's default Retry honours Retry-After on 429 and 503 for idempotent methods, three times:
    two throttled GETs are invisible to the caller; a throttled POST is not retried."""
    core.create_namespaced_config_map("default", configmap("settings"))
    with mockapi.faults.inject(verb="get", resource="configmaps", error=429, retry_after=0, count=2):
        assert core.read_namespaced_config_map("settings", "default").metadata.name == "settings"
    assert codes(mockapi, verb="get") == [429, 429, 200]
    with mockapi.faults.inject(verb="create", resource="configmaps", error=429, retry_after=0, count=1):
        with pytest.raises(ApiException) as throttled:
            core.create_namespaced_config_map("default", configmap("other"))
    assert (throttled.value.status, throttled.value.body) == (429, "Too many requests, please try again later.\n")
    assert throttled.value.headers["Retry-After"] == "0"


def test_500_and_504_are_not_retried_by_the_python_client(mockapi, core):
    for code, reason, message in ((500, "InternalError", "Internal error occurred: "), (504, "Timeout", "Timeout: request did not complete")):
        with mockapi.faults.inject(verb="list", resource="configmaps", error=code):
            with pytest.raises(ApiException) as failed:
                core.list_namespaced_config_map("default")
        assert failed.value.status == code and f'"reason":"{reason}"' in failed.value.body and message in failed.value.body
    assert codes(mockapi, verb="list") == [500, 504]


def test_kubectl_retries_a_throttled_request_and_prints_kubes_error_for_a_500(mockapi, kubeconfig_path, tmp_path):
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl must be on PATH"
    run = [kubectl, "--kubeconfig", str(kubeconfig_path), "--cache-dir", str(tmp_path), "get", "configmaps", "-n", "default"]
    with mockapi.faults.inject(verb="list", resource="configmaps", error=429, retry_after=0, count=2):
        assert subprocess.run(run, capture_output=True, text=True, timeout=60).returncode == 0
    with mockapi.faults.inject(verb="list", resource="configmaps", error=500, message="etcdserver: leader changed", user_agent="kubectl"):
        failed = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1 and "Error from server (InternalError): etcdserver: leader changed" in failed.stderr


def test_a_user_agent_rule_leaves_other_clients_alone(mockapi, core, http):
    with mockapi.faults.inject(user_agent="my-controller", error=503):
        assert http.get(CONFIGMAPS, headers={"User-Agent": "someone-else"}).status_code == 200
        refused = http.get(CONFIGMAPS, headers={"User-Agent": "my-controller/0.1"})
    assert refused.status_code == 503 and refused.json()["reason"] == "ServiceUnavailable"


# ------------------------------------------------------------------ latency and dropped connections
def test_latency_delays_a_request_then_serves_it(mockapi, core):
    with mockapi.faults.inject(verb="list", resource="configmaps", latency=0.3):
        started = time.monotonic()
        core.list_namespaced_config_map("default")
        assert time.monotonic() - started >= 0.3


def test_a_write_whose_client_timed_out_during_the_latency_still_lands_so_a_retry_meets_already_exists(mockapi, core):
    with mockapi.faults.inject(verb="create", resource="configmaps", latency=0.5, count=1):
        with pytest.raises(urllib3.exceptions.ReadTimeoutError):
            core.create_namespaced_config_map("default", configmap("late"), _request_timeout=0.1)
    wait_for(lambda: mockapi.requests(verb="create"))
    with pytest.raises(ApiException) as retried:
        core.create_namespaced_config_map("default", configmap("late"))
    assert (retried.value.status, retried.value.reason) == (409, "Conflict") and '"reason":"AlreadyExists"' in retried.value.body


def test_a_dropped_connection_cuts_the_body_short_for_every_client(mockapi, core, http, caplog):
    caplog.set_level(logging.ERROR, logger="uvicorn.error")
    core.create_namespaced_config_map("default", configmap("settings", a="1"))
    with mockapi.faults.inject(verb="get", resource="configmaps", drop_connection=True, count=2) as fault:
        with pytest.raises(urllib3.exceptions.ProtocolError, match="IncompleteRead"):
            core.read_namespaced_config_map("settings", "default")
        with pytest.raises(httpx.RemoteProtocolError):
            http.get(f"{CONFIGMAPS}/settings")
        assert fault.hits == 2
    assert core.read_namespaced_config_map("settings", "default").data == {"a": "1"}  # the pool recovers
    assert 'mockapi_faults_injected_total{action="dropConnection",rule="' + fault.id + '"} 2.0' in http.get("/metrics").text
    assert not [r for r in caplog.records if r.name == "uvicorn.error"]  # dropped on purpose: not an error


# ------------------------------------------------------------------ watches
def test_an_error_rule_answers_the_watch_request_itself(mockapi, core):
    with mockapi.faults.inject(verb="watch", resource="configmaps", error=500):
        with pytest.raises(ApiException) as failed:
            list(watch.Watch().stream(core.list_namespaced_config_map, "default", timeout_seconds=1))
    assert failed.value.status == 500


def test_latency_delays_the_start_of_a_watch(mockapi, http):
    with mockapi.faults.inject(verb="watch", latency=0.3):
        started = time.monotonic()
        with http.stream("GET", CONFIGMAPS, params={"watch": "1", "timeoutSeconds": "1"}) as stream:
            assert stream.status_code == 200 and time.monotonic() - started >= 0.3


def test_closed_watches_end_cleanly_and_the_python_client_watches_again_without_missing_an_event(mockapi, core):
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    watcher, seen = watch.Watch(), []

    def follow():  # no timeout_seconds: with one, the client never watches again
        for event in watcher.stream(core.list_namespaced_config_map, "default", resource_version=rv):
            seen.append(event["object"].metadata.name)
            if len(seen) == 2:
                watcher.stop()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    core.create_namespaced_config_map("default", configmap("before"))
    wait_for(lambda: seen == ["before"])
    assert mockapi.faults.close_watches() >= 1
    core.create_namespaced_config_map("default", configmap("after"))
    thread.join(10)
    assert seen == ["before", "after"]
    assert len(mockapi.requests(verb="watch")) >= 1  # the first watch ended (recorded when it ends)


def test_a_raw_watch_ends_with_the_chunked_terminator_when_watches_are_closed(mockapi, http):
    started, ended = threading.Event(), []

    def follow():
        with http.stream("GET", CONFIGMAPS, params={"watch": "1"}) as stream:
            started.set()  # the watch is registered before its headers go out
            ended.append(b"".join(stream.iter_bytes()))  # raises on a broken stream

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    assert started.wait(5)
    mockapi.faults.close_watches()
    thread.join(10)
    assert ended == [b""]


def test_after_compaction_a_resumed_watch_and_an_exact_list_get_410_expired(mockapi, core, http):
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", configmap("after"))
    current = mockapi.faults.compact()
    with pytest.raises(ApiException) as expired:
        list(watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=1))
    assert expired.value.status == 410 and f"too old resource version: {rv} ({current})" in expired.value.reason
    listed = http.get(CONFIGMAPS, params={"resourceVersion": rv, "resourceVersionMatch": "Exact"})
    assert listed.status_code == 410 and listed.json()["reason"] == "Expired"
    assert http.get(CONFIGMAPS, params={"resourceVersion": current, "resourceVersionMatch": "Exact"}).status_code == 200


def wait_for(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# ------------------------------------------------------------------ the Python API
def test_the_python_api_raises_the_servers_400_lists_rules_and_removes_quietly_after_a_reset(mockapi):
    with pytest.raises(errors.StatusError) as refused:
        mockapi.faults.inject(verb="get")
    assert (refused.value.code, refused.value.message) == (400, "invalid fault rule: action: Required value: one of error, latencySeconds (above 0) or dropConnection")
    slow = mockapi.faults.inject(resource="pods/*", latency=0.01, id="slow-pods")
    assert [r["id"] for r in mockapi.faults.list()] == ["slow-pods"] and slow.remaining is None
    assert mockapi.faults.add({"action": {"error": 504}, "count": 1}).rule["remaining"] == 1
    mockapi.reset()
    slow.remove()  # gone already: no error
    assert mockapi.faults.list() == [] and mockapi.faults.clear() == 0
