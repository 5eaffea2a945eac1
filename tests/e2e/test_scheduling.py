"""Pods with device claims scheduled by a real server: claims made from templates and embedded
specs, allocated with the node in the pod's cycle, no device ever held twice, kube's messages."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from mockapi.testing import MockAPIServer
from tests.e2e.conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]
API = "/apis/devmgmtproto.k8s.io/v1alpha1"
pytestmark = pytest.mark.e2e


def node(name: str, *, cpu: str = "8", pods: str = "110", **labels) -> dict:
    capacity = {"cpu": cpu, "memory": "32Gi", "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def pool(name: str, node_name: str, devices: int) -> dict:
    return {
        "apiVersion": "devmgmtproto.k8s.io/v1alpha1",
        "kind": "DevicePool",
        "metadata": {"name": name},
        "spec": {"nodeName": node_name, "driver": "example.com-foozer", "devices": [{"name": f"dev-{i}"} for i in range(devices)]},
    }


def gpu_class() -> dict:
    return {
        "apiVersion": "devmgmtproto.k8s.io/v1alpha1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"driver": "example.com-foozer", "deviceType": "gpu"},
    }


def pod(name: str, *claims: dict, cpu: str = "100m") -> dict:
    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
    if claims:
        container["devices"] = [{"name": c["name"]} for c in claims]
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": {"containers": [container]}}
    if claims:
        body["spec"]["deviceClaims"] = list(claims)
    return body


ONE_GPU = {"claims": [{"deviceClass": "gpu"}]}




@pytest.fixture
def cluster():
    with MockAPIServer(kubelet=False) as mockapi, httpx.Client(base_url=mockapi.url, timeout=10) as http:
        yield mockapi, http


def create(http, path: str, body: dict) -> dict:
    answer = http.post(path, json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()


def pods(http) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in http.get("/api/v1/namespaces/default/pods").json()["items"]}


def claims(http) -> dict[str, dict]:
    return {c["metadata"]["name"]: c for c in http.get(f"{API}/namespaces/default/deviceclaims").json()["items"]}


def events(http, name: str) -> list[tuple[str, str]]:
    items = http.get("/api/v1/namespaces/default/events").json()["items"]
    return [(e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == name]


def test_the_example_pods_are_bound_where_their_claims_hold_devices():
    with MockAPIServer(load=[ROOT / "testdata"], kubelet=False) as mockapi, httpx.Client(base_url=mockapi.url) as http:
        for item in http.get("/api/v1/nodes").json()["items"]:
            capacity = {"cpu": "32", "memory": "256Gi", "pods": "110"}
            item["status"] = {"capacity": capacity, "allocatable": capacity}
            assert http.put(f"/api/v1/nodes/{item['metadata']['name']}/status", json=item).status_code == 200
        bound = wait_for(lambda: (found := pods(http)) and all(p["spec"].get("nodeName") for p in found.values()) and found)
        assert set(bound) == {"embedded-foozer-claim", "ref-foozer-claim", "template-foozer-claim"}
        by_name = claims(http)
        for name, found in bound.items():
            node_name = found["spec"]["nodeName"]
            assert "PodScheduled" in [c["type"] for c in found["status"]["conditions"]]
            used = {s["name"]: s["deviceClaimName"] for s in found["status"].get("deviceClaimStatuses") or []}
            entry = found["spec"]["deviceClaims"][0]
            claim = by_name[entry.get("claimName") or used[entry["name"]]]
            assert claim["status"]["nodeName"] == node_name and claim["status"]["podNames"] == [name]
            assert claim["status"]["allocations"]
            if "claimName" not in entry:
                meta = claim["metadata"]
                assert meta["generateName"] == f"{name}-foozer-gpu-"
                assert meta["annotations"]["devmgmtproto.k8s.io/pod-claim-name"] == "foozer-gpu"
                assert meta["ownerReferences"] == [
                    {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": found["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
                ]
            # Events are written off the scheduler's path (as client-go's recorder sends them): soon, not before the binding
            scheduled = ("Scheduled", f"Successfully assigned default/{name} to {node_name}")
            assert wait_for(lambda: scheduled in events(http, name))
        template_claim = by_name[bound["template-foozer-claim"]["status"]["deviceClaimStatuses"][0]["deviceClaimName"]]
        assert template_claim["metadata"]["labels"] == {"example.com/made-from": "example.com-foozer-single-superfast-claim"}
        assert template_claim["status"]["claimConfigs"][0]["metadata"]["name"] == "superfast-mode"


def test_every_example_pod_runs_within_a_second_of_start_up():
    started = time.monotonic()
    with MockAPIServer(load=[ROOT / "testdata"]) as mockapi, httpx.Client(base_url=mockapi.url) as http:
        running = wait_for(lambda: (found := pods(http)) and all((p.get("status") or {}).get("phase") == "Running" for p in found.values()) and found, timeout=30)
        assert running, {n: (p.get("status") or {}).get("conditions") for n, p in pods(http).items()}
        # ~1 s on an idle machine, start-up and load included; the bound is the behaviour: no pod
        # waited for the scheduler's 60 s flush (a busy machine takes seconds more, never that)
        assert time.monotonic() - started < 30
        by_name = claims(http)
        for name, found in running.items():
            used = {s["name"]: s["deviceClaimName"] for s in found["status"].get("deviceClaimStatuses") or []}
            entry = found["spec"]["deviceClaims"][0]
            claim = by_name[entry.get("claimName") or used[entry["name"]]]
            assert claim["status"]["nodeName"] == found["spec"]["nodeName"]
            assert found["status"]["podIP"] and found["status"]["containerStatuses"][0]["ready"] is True


def test_no_device_is_held_twice_and_a_freed_device_goes_to_a_waiting_pod(cluster):
    _, http = cluster
    create(http, "/api/v1/nodes", node("n1"))
    create(http, f"{API}/deviceclasses", gpu_class())
    create(http, f"{API}/devicepools", pool("n1-gpus", "n1", 2))
    for i in range(4):
        create(http, "/api/v1/namespaces/default/pods", pod(f"p{i}", {"name": "gpu", "claim": ONE_GPU}))
    two_bound = wait_for(lambda: len([p for p in pods(http).values() if p["spec"].get("nodeName")]) == 2)
    assert two_bound
    time.sleep(0.2)  # the others had their chance
    found = pods(http)
    waiting = sorted(n for n, p in found.items() if not p["spec"].get("nodeName"))
    assert len(waiting) == 2
    held = [(a["devicePoolName"], a["deviceName"]) for c in claims(http).values() for a in (c.get("status") or {}).get("allocations") or []]
    assert sorted(held) == [("n1-gpus", "dev-0"), ("n1-gpus", "dev-1")]
    condition = wait_for(lambda: (pods(http)[waiting[0]]["status"].get("conditions") or [None])[0])
    assert condition["reason"] == "Unschedulable"
    assert condition["message"].startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    # a bound pod goes, the garbage collector deletes its claim, the device is free: a waiting pod binds
    victim = next(n for n, p in found.items() if p["spec"].get("nodeName"))
    claim_name = found[victim]["status"]["deviceClaimStatuses"][0]["deviceClaimName"]
    assert http.delete(f"/api/v1/namespaces/default/pods/{victim}").status_code == 200
    assert wait_for(lambda: claim_name not in claims(http))
    assert wait_for(lambda: len([p for p in pods(http).values() if p["spec"].get("nodeName")]) == 2)
    held = [(a["devicePoolName"], a["deviceName"]) for c in claims(http).values() for a in (c.get("status") or {}).get("allocations") or []]
    assert sorted(held) == [("n1-gpus", "dev-0"), ("n1-gpus", "dev-1")]


def test_a_missing_template_keeps_the_pod_pending_until_it_appears(cluster):
    _, http = cluster
    create(http, "/api/v1/nodes", node("n1"))
    create(http, f"{API}/deviceclasses", gpu_class())
    create(http, f"{API}/devicepools", pool("n1-gpus", "n1", 1))
    create(http, "/api/v1/namespaces/default/pods", pod("web", {"name": "gpu", "claimTemplateName": "one-gpu"}))
    told = wait_for(lambda: [m for r, m in events(http, "web") if r == "FailedDeviceClaimCreation"])
    assert told == ['deviceClaims[gpu]: DeviceClaimTemplate.devmgmtproto.k8s.io "one-gpu" not found']
    # as kube's DynamicResources PreEnqueue: no scheduling attempt (no condition, no FailedScheduling) until the claim exists
    assert "conditions" not in pods(http)["web"]["status"]
    assert not [m for r, m in events(http, "web") if r == "FailedScheduling"]
    template = {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClaimTemplate", "metadata": {"name": "one-gpu"}, "spec": {"spec": ONE_GPU}}
    create(http, f"{API}/namespaces/default/deviceclaimtemplates", template)
    bound = wait_for(lambda: pods(http)["web"]["spec"].get("nodeName"))
    assert bound == "n1"


def test_a_shared_claim_pins_its_pods_to_its_node_and_lists_them_all(cluster):
    _, http = cluster
    for name in ("n1", "n2"):
        create(http, "/api/v1/nodes", node(name))
    create(http, f"{API}/deviceclasses", gpu_class())
    create(http, f"{API}/devicepools", pool("n2-gpus", "n2", 1))
    create(http, f"{API}/namespaces/default/deviceclaims", {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClaim", "metadata": {"name": "shared"}, "spec": ONE_GPU})
    for i in range(2):
        create(http, "/api/v1/namespaces/default/pods", pod(f"user{i}", {"name": "gpu", "claimName": "shared"}))
    assert wait_for(lambda: all(p["spec"].get("nodeName") == "n2" for p in pods(http).values()))
    assert wait_for(lambda: sorted(claims(http)["shared"]["status"].get("podNames") or []) == ["user0", "user1"])
    # a pod that goes is no longer listed
    assert http.delete("/api/v1/namespaces/default/pods/user0").status_code == 200
    assert wait_for(lambda: claims(http)["shared"]["status"].get("podNames") == ["user1"])


def test_kubectl_shows_where_pods_went_and_why_not(cluster, tmp_path):
    mockapi, http = cluster
    binary = shutil.which("kubectl")
    assert binary, "kubectl must be on PATH: the end-to-end suite drives the real client"
    create(http, "/api/v1/nodes", node("n1", cpu="1"))
    create(http, "/api/v1/namespaces/default/pods", pod("small"))
    create(http, "/api/v1/namespaces/default/pods", pod("huge", cpu="4"))
    assert wait_for(lambda: pods(http)["small"]["spec"].get("nodeName") and pods(http)["huge"]["status"].get("conditions"))

    def kubectl(*args):
        done = subprocess.run([binary, "--kubeconfig", str(mockapi.kubeconfig_path), "--cache-dir", str(tmp_path / "cache"), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    wide = kubectl("get", "pods", "-o", "wide")
    assert [line.split()[0] for line in wide.splitlines()[1:]] == ["huge", "small"]
    assert "n1" in wide.splitlines()[2]
    described = kubectl("describe", "pod", "huge")
    assert "FailedScheduling" in described and "0/1 nodes are available: 1 Insufficient cpu." in described


def test_the_server_tells_a_pods_last_scheduling_attempt(cluster):
    _, http = cluster
    create(http, "/api/v1/nodes", node("n1", cpu="1"))
    create(http, "/api/v1/nodes", node("n2", cpu="4"))
    create(http, "/api/v1/namespaces/default/pods", pod("big", cpu="2"))
    assert wait_for(lambda: pods(http)["big"]["spec"].get("nodeName"))
    attempt = wait_for(lambda: (answer := http.get("/mockapi/v1/scheduling/default/big")).status_code == 200 and answer.json())
    assert attempt["outcome"] == "Scheduled" and attempt["node"] == "n2"
    by_node = {row["node"]: row for row in attempt["filter"]}
    assert by_node["n2"]["feasible"] is True
    refused = [v for v in by_node["n1"]["verdicts"] if v["code"] != "Success"]
    assert refused == [{"plugin": "NodeResourcesFit", "code": "UnschedulableAndUnresolvable", "reasons": ["Insufficient cpu"]}]
    missing = http.get("/mockapi/v1/scheduling/default/nobody")
    assert missing.status_code == 404 and missing.json()["reason"] == "NotFound"


def test_a_higher_priority_pod_preempts_the_holder_of_the_device_it_needs(cluster):
    _, http = cluster
    create(http, "/api/v1/nodes", node("n1"))
    create(http, f"{API}/deviceclasses", gpu_class())
    create(http, f"{API}/devicepools", pool("n1-gpus", "n1", 1))
    low = pod("low", {"name": "gpu", "claim": ONE_GPU})
    for name, value in (("low", 1), ("high", 1000)):
        create(http, "/apis/scheduling.k8s.io/v1/priorityclasses", {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value})
    low["spec"]["priorityClassName"] = "low"
    create(http, "/api/v1/namespaces/default/pods", low)
    assert wait_for(lambda: pods(http)["low"]["spec"].get("nodeName") == "n1")
    high = pod("high", {"name": "gpu", "claim": ONE_GPU})
    high["spec"]["priorityClassName"] = "high"
    create(http, "/api/v1/namespaces/default/pods", high)
    # the victim goes (with its claim, by the garbage collector), its device is free: the preemptor binds there
    assert wait_for(lambda: "low" not in pods(http), timeout=10)
    assert wait_for(lambda: pods(http)["high"]["spec"].get("nodeName") == "n1", timeout=10)
    held = [c for c in claims(http).values() if (c.get("status") or {}).get("allocations")]
    assert [c["status"]["podNames"] for c in held] == [["high"]]
    assert wait_for(lambda: any(reason == "Preempted" for reason, _ in events(http, "low")))


def test_no_nodes_is_kubes_no_nodes_available(cluster):
    _, http = cluster
    create(http, "/api/v1/namespaces/default/pods", pod("alone"))
    condition = wait_for(lambda: (pods(http)["alone"]["status"].get("conditions") or [None])[0])
    assert (condition["reason"], condition["message"]) == ("SchedulerError", "no nodes available to schedule pods")
    assert wait_for(lambda: ("FailedScheduling", "no nodes available to schedule pods") in events(http, "alone"))
    create(http, "/api/v1/nodes", node("late"))  # backoff (1 s), then it binds
    assert wait_for(lambda: pods(http)["alone"]["spec"].get("nodeName") == "late", timeout=5)
