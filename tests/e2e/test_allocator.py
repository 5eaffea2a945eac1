"""The allocator end to end, driven by the official kubernetes client as users drive it: create
pools, classes and claims, then wait — by watch, never by sleep — for the claim's status. Also the
allocator as its own process (`mockapi allocator --kubeconfig`) against a server started with
`--no-allocator`, and `mockapi explain`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from kubernetes import client, config, watch

from tests.e2e.conftest import GROUP, VERSION

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"


def allocated_condition(obj: dict) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Allocated"), None)


def wait_for(custom, namespace: str, name: str, predicate, *, plural: str = "deviceclaims", timeout: int = 15) -> dict:
    """Watch the claim until ``predicate(claim)``: the current state first, then each change."""
    stream = watch.Watch()
    for event in stream.stream(
        custom.list_namespaced_custom_object, GROUP, VERSION, namespace, plural, field_selector=f"metadata.name={name}", timeout_seconds=timeout
    ):
        if predicate(event["object"]):
            stream.stop()
            return event["object"]
    raise AssertionError(f"{namespace}/{name} did not get there in {timeout}s")


def reason(expected: str):
    return lambda obj: (allocated_condition(obj) or {}).get("reason") == expected


def claim(name: str, *entries: dict, namespace: str = "default") -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "DeviceClaim", "metadata": {"name": name, "namespace": namespace}, "spec": {"claims": list(entries)}}


@pytest.fixture
def allocating(make_live):
    """A server with the allocator in-process and testdata/ loaded, and a CustomObjectsApi for it."""
    server = make_live(allocator=True, load=str(TESTDATA))
    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield server, client.CustomObjectsApi(api)
    api.close()


def test_every_example_claim_in_testdata_is_allocated(allocating):
    _, custom = allocating
    docs = [d for d in yaml.safe_load_all((TESTDATA / "50-claims.yaml").read_text()) if d]
    for doc in docs:
        plural = "deviceclaims" if doc["kind"] == "DeviceClaim" else "deviceprivilegedclaims"
        found = wait_for(custom, doc["metadata"]["namespace"], doc["metadata"]["name"], lambda obj: allocated_condition(obj) is not None, plural=plural)
        condition = allocated_condition(found)
        assert (condition["reason"], condition["status"]) == ("Allocated", "True"), (doc["metadata"]["name"], condition["message"])


def test_a_claim_created_through_the_client_is_allocated_with_configs_and_an_event(allocating):
    server, custom = allocating
    ref = {"apiVersion": "foozer.example.com/v1alpha1", "kind": "FoozerConfig", "name": "superfast-mode"}
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", claim("mine", {"deviceClass": "example.com-foozer-superfast", "configs": [ref]}))
    found = wait_for(custom, "default", "mine", reason("Allocated"))
    assert found["metadata"]["finalizers"] == ["devmgmtproto.k8s.io/allocation"]
    assert [c["metadata"]["name"] for c in found["status"]["classConfigs"]] == ["superfast-mode"]
    assert [c["spec"] for c in found["status"]["claimConfigs"]] == [{"superfast": True}]
    core = client.CoreV1Api(custom.api_client)
    seen: list = []
    deadline = time.monotonic() + 10  # Events are written off the allocator's path (as client-go's recorder sends them): soon after
    while not seen and time.monotonic() < deadline:
        seen = [(e.reason, e.type, e.source.component) for e in core.list_namespaced_event("default", field_selector="involvedObject.name=mine").items]
        time.sleep(0 if seen else 0.02)
    assert seen == [("Allocated", "Normal", "mockapi-allocator")]


def test_an_unsatisfiable_claim_says_why_and_is_allocated_once_a_pool_appears(allocating):
    _, custom = allocating
    entry = {"deviceClass": "example.com-foozer-set", "requests": {"count": 17}}
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", claim("huge", entry))
    failed = wait_for(custom, "default", "huge", reason("Unsatisfiable"))
    assert allocated_condition(failed)["message"].startswith("0/18 nodes can allocate the claim: ")
    devices = [{"name": f"d{i:02d}"} for i in range(17)]
    pool = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "DevicePool", "metadata": {"name": "big"}, "spec": {"driver": "example.com-foozer", "nodeName": "mixed-01", "devices": devices}}
    custom.create_cluster_custom_object(GROUP, VERSION, "devicepools", pool)
    found = wait_for(custom, "default", "huge", reason("Allocated"))
    assert found["status"]["nodeName"] == "mixed-01" and len(found["status"]["allocations"]) == 17


def test_deleting_an_allocated_claim_removes_the_finalizer_after_freeing_its_devices(allocating):
    _, custom = allocating
    wait_for(custom, "default", "foozer-single", reason("Allocated"))
    deleting = custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "foozer-single")
    assert deleting["metadata"]["deletionTimestamp"] and deleting["metadata"]["finalizers"] == ["devmgmtproto.k8s.io/allocation"]
    stream = watch.Watch()
    events = stream.stream(
        custom.list_namespaced_custom_object, GROUP, VERSION, "default", "deviceclaims",
        field_selector="metadata.name=foozer-single", resource_version=deleting["metadata"]["resourceVersion"], timeout_seconds=15,
    )
    for event in events:
        if event["type"] == "DELETED":
            stream.stop()
            break
    else:
        raise AssertionError("the claim was not deleted")
    assert "finalizers" not in event["object"]["metadata"]


def test_the_server_explains_a_claim(allocating):
    server, custom = allocating
    wait_for(custom, "default", "four-foozers-same-numa", reason("Allocated"))
    report = httpx.get(f"{server.url}/mockapi/v1/explain/default/four-foozers-same-numa").json()
    assert report["claim"] == "default/four-foozers-same-numa" and report["result"]["reason"] == "Allocated"
    assert {n["node"] for n in report["nodes"]} >= {"foozer-1000-tiny-00", "foozer-4000-large-01"}
    missing = httpx.get(f"{server.url}/mockapi/v1/explain/default/nope")
    assert missing.status_code == 404 and missing.json()["reason"] == "NotFound"
    privileged = httpx.get(f"{server.url}/mockapi/v1/explain/monitoring/foozer-monitor", params={"kind": "DevicePrivilegedClaim"})
    assert privileged.json()["claim"] == "DevicePrivilegedClaim/monitoring/foozer-monitor"


# ---------------------------------------------------------------- as separate processes
@pytest.fixture
def standalone(tmp_path):
    """`mockapi serve --no-allocator` and `mockapi allocator --kubeconfig` as two processes."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    serve = subprocess.Popen(
        [sys.executable, "-m", "mockapi", "serve", "--port", "0", "--no-allocator", "--log-level", "warning", "--load", str(TESTDATA)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    processes = [serve]
    try:
        url = serve.stdout.readline().split("serving on ", 1)[1].split()[0]
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text((ROOT / "kubeconfig").read_text().replace("http://127.0.0.1:55441", url))
        allocator = subprocess.Popen(
            [sys.executable, "-m", "mockapi", "allocator", "--kubeconfig", str(kubeconfig), "--log-level", "warning"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        processes.append(allocator)
        api = config.new_client_from_config(config_file=str(kubeconfig))
        yield kubeconfig, client.CustomObjectsApi(api)
        api.close()
    finally:
        for process in reversed(processes):
            process.terminate()
            process.communicate(timeout=10)


def test_the_allocator_runs_against_another_server_through_the_kubernetes_client(standalone):
    kubeconfig, custom = standalone
    found = wait_for(custom, "default", "gpu-and-vf-same-numa", reason("Allocated"), timeout=30)
    gpu, vf = [entry["devicePoolName"] for entry in found["status"]["allocations"]]
    assert "barzer-gpu-" in gpu and "-nic-" in vf and gpu[-1] == vf[-1]  # each pool is one NUMA node: the same one
    custom.create_namespaced_custom_object(GROUP, VERSION, "team-a", "deviceclaims", claim("later", {"deviceType": "vlan"}, namespace="team-a"))
    later = wait_for(custom, "team-a", "later", reason("Allocated"), timeout=30)
    assert later["status"]["allocations"][0]["devicePoolName"] == "vlan-interfaces" and "nodeName" not in later["status"]
    out = subprocess.run(
        [sys.executable, "-m", "mockapi", "explain", "--kubeconfig", str(kubeconfig), "-n", "team-a", "later"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    report = yaml.safe_load(out.stdout)
    entry = later["status"]["allocations"][0]
    assert out.returncode == 0, out.stderr
    assert report["result"]["reason"] == "Allocated" and report["holds"] == [f"{entry['devicePoolName']}/{entry['deviceName']}"]
