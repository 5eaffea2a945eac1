"""A pod naming (``claimName``) a user's DeviceClaim the allocator has not allocated yet, driven
with the official ``kubernetes`` client (``DynamicClient`` for the pod: the typed model knows no
``spec.deviceClaims``): the pod is unschedulable with a FailedScheduling Event
naming the claim, the scheduler never allocates that claim itself (the allocator owns it), and
the pod is scheduled as soon as the allocator allocates it — on the claim's node, listed in its
``podNames``, the allocator's allocation untouched."""

from __future__ import annotations

import time

import pytest
from kubernetes import client, dynamic

from mockapi.testing import MockAPIServer
from tests.e2e.conftest import wait_for

GROUP, VERSION = "devmgmtproto.k8s.io", "v1alpha1"
pytestmark = pytest.mark.e2e
WAITING = 'device claim "shared" is not allocated yet'




@pytest.fixture(scope="module")
def apis():
    with MockAPIServer(kubelet=False) as mockapi, mockapi.api_client() as api:
        yield client.CoreV1Api(api), client.CustomObjectsApi(api), dynamic.DynamicClient(api).resources.get(api_version="v1", kind="Pod")


def device(kind: str, name: str, spec: dict, namespace: str | None = None) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind, "metadata": meta, "spec": spec}


def pod_scheduled(core, name: str) -> dict | None:
    found = core.read_namespaced_pod(name, "default")
    return next((c for c in found.status.conditions or () if c.type == "PodScheduled"), None)


def test_a_pod_waits_for_the_allocator_to_allocate_its_shared_claim(apis):
    core, custom, pods = apis
    for name in ("n1", "n2"):
        capacity = {"cpu": "8", "memory": "32Gi", "pods": "110"}
        core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "status": {"capacity": capacity, "allocatable": capacity}})
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device("DeviceClass", "gpu", {"driver": "example.com-foozer", "deviceType": "gpu"}))
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", device("DeviceClaim", "shared", {"claims": [{"deviceClass": "gpu"}]}, "default"))
    container = {"name": "c", "image": "pause", "devices": [{"name": "gpu"}]}
    pods.create(namespace="default", body={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "user"}, "spec": {"containers": [container], "deviceClaims": [{"name": "gpu", "claimName": "shared"}]}})

    # No device anywhere: the allocator cannot allocate "shared", and the scheduler waits for it.
    condition = wait_for(lambda: pod_scheduled(core, "user"))
    assert condition is not None and (condition.status, condition.reason) == ("False", "Unschedulable")
    assert condition.message == f"0/2 nodes are available: {WAITING}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    failed = [e for e in core.list_namespaced_event("default").items if e.involved_object.name == "user" and e.reason == "FailedScheduling"]
    assert failed and failed[0].type == "Warning" and failed[0].message == condition.message
    claim = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "shared")
    assert not (claim.get("status") or {}).get("allocations")  # the scheduler allocated nothing itself

    # A pool appears on n2: the allocator allocates the claim, and its update brings the pod back
    # at once (not at the periodic flush, a minute later).
    pool = device("DevicePool", "n2-gpus", {"nodeName": "n2", "driver": "example.com-foozer", "devices": [{"name": "dev-0"}]})
    custom.create_cluster_custom_object(GROUP, VERSION, "devicepools", pool)
    started = time.monotonic()
    allocated = wait_for(lambda: (custom.get_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "shared").get("status") or {}).get("allocations"))
    assert allocated
    bound = wait_for(lambda: core.read_namespaced_pod("user", "default").spec.node_name)
    assert bound == "n2" and time.monotonic() - started < 8.0  # the pod's 1 s backoff, on a busy machine; the flush is 60 s
    claim = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "shared")
    assert claim["status"]["nodeName"] == "n2" and claim["status"]["allocations"] == allocated  # the allocator's, as it wrote it
    assert wait_for(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "shared")["status"].get("podNames") == ["user"])
    owned = custom.list_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims")["items"]
    assert [c["metadata"]["name"] for c in owned] == ["shared"]  # no claim made for the pod
    scheduled = [e.message for e in core.list_namespaced_event("default").items if e.involved_object.name == "user" and e.reason == "Scheduled"]
    assert scheduled == ["Successfully assigned default/user to n2"]
