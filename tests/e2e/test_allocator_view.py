"""The allocator's view against a real server: Nodes deleted, pools edited under allocations,
pools refused at admission as Kubernetes refuses ResourceSlices, explanations that name the
cause, and ``kubectl get devicepools`` showing each pool's available devices."""

from __future__ import annotations

import json
import subprocess

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from tests.e2e.conftest import GROUP, VERSION
from tests.e2e.test_allocator import claim, reason, wait_for

pytestmark = pytest.mark.e2e
DRIVER = "example.com-viewer"


@pytest.fixture
def cluster(make_live):
    server = make_live(allocator=True)
    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    custom = client.CustomObjectsApi(api)
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "DeviceClass", "metadata": {"name": "viewer"}, "spec": {"driver": DRIVER, "deviceType": "viewer"},
    })
    yield server, custom, client.CoreV1Api(api)
    api.close()


def pool(name: str, devices: list, *, node: str | None = "node-a", resources: list | None = None) -> dict:
    spec: dict = {"driver": DRIVER, "devices": [d if isinstance(d, dict) else {"name": d} for d in devices]}
    if node:
        spec["nodeName"] = node
    if resources:
        spec["resources"] = resources
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "DevicePool", "metadata": {"name": name}, "spec": spec}


def create_pool(custom, obj: dict) -> dict:
    return custom.create_cluster_custom_object(GROUP, VERSION, "devicepools", obj)


def replace_pool(custom, obj: dict) -> dict:
    current = custom.get_cluster_custom_object(GROUP, VERSION, "devicepools", obj["metadata"]["name"])
    return custom.replace_cluster_custom_object(GROUP, VERSION, "devicepools", obj["metadata"]["name"], {**current, "spec": obj["spec"]})


def create_claim(custom, name: str) -> None:
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", claim(name, {"deviceClass": "viewer"}))


def held(obj: dict) -> list[str]:
    return [f"{e['devicePoolName']}/{e['deviceName']}" for e in obj["status"]["allocations"]]


def wait_for_pool(custom, name: str, available: int, *, timeout: int = 15) -> dict:
    stream = watch.Watch()
    for event in stream.stream(custom.list_cluster_custom_object, GROUP, VERSION, "devicepools", field_selector=f"metadata.name={name}", timeout_seconds=timeout):
        if (event["object"].get("status") or {}).get("availableDevices") == available:
            stream.stop()
            return event["object"]
    raise AssertionError(f"DevicePool {name} did not get availableDevices={available} in {timeout}s")


def test_after_every_node_is_deleted_the_pools_of_other_nodes_are_used(cluster):
    _, custom, core = cluster
    for name in ("node-a", "node-b"):
        core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    create_pool(custom, pool("on-a", ["dev-00"], node="node-a"))
    create_pool(custom, pool("on-c", ["dev-00"], node="node-c"))
    create_claim(custom, "first")
    assert held(wait_for(custom, "default", "first", reason("Allocated"))) == ["on-a/dev-00"]
    create_claim(custom, "second")
    wait_for(custom, "default", "second", reason("Unsatisfiable"))  # node-c has no Node object
    for name in ("node-a", "node-b"):
        core.delete_node(name)
    assert held(wait_for(custom, "default", "second", reason("Allocated"))) == ["on-c/dev-00"]


def test_a_pool_edited_under_an_allocation_keeps_its_free_device_and_the_held_one_stays_held(cluster):
    _, custom, _ = cluster
    create_pool(custom, pool("edited", ["dev-00"]))
    create_claim(custom, "a")
    assert held(wait_for(custom, "default", "a", reason("Allocated"))) == ["edited/dev-00"]
    replace_pool(custom, pool("edited", ["dev-01"]))
    create_claim(custom, "b")
    assert held(wait_for(custom, "default", "b", reason("Allocated"))) == ["edited/dev-01"]
    replace_pool(custom, pool("edited", ["dev-00", "dev-01"]))
    create_claim(custom, "c")
    wait_for(custom, "default", "c", reason("Unsatisfiable"))
    assert wait_for_pool(custom, "edited", 0)["spec"]["devices"] == [{"name": "dev-00"}, {"name": "dev-01"}]


def test_an_undeclared_pool_resource_is_named_in_the_explanation(cluster):
    _, custom, _ = cluster
    create_pool(custom, pool("undeclared", [{"name": "dev-00", "requests": {"memory": "1Gi"}}]))
    create_claim(custom, "wants")
    found = wait_for(custom, "default", "wants", reason("Unsatisfiable"))
    message = next(c for c in found["status"]["conditions"] if c["type"] == "Allocated")["message"]
    assert 'undeclared/dev-00: spec.devices[0].requests.memory: requests pool resource "memory", which the pool does not declare' in message


@pytest.mark.parametrize(
    ("devices", "attributes", "field", "words"),
    [
        (["dev-00", "dev-01", "dev-00"], None, "spec.devices[2]", 'Duplicate value: map[string]interface {}{"name":"dev-00"}'),
        (["dev-00"], [{"name": "model", "stringValue": "x" * 65}], "spec.attributes[0].stringValue", "Too long: may not be more than 64 bytes"),
        (["dev-00"], [{"name": "firmware", "semVerValue": "1.2.3-" + "a" * 59}], "spec.attributes[0].semVerValue", "Too long: may not be more than 64 bytes"),
        (["dev-00"], [{"name": "not-a-c-identifier", "intValue": 1}], "spec.attributes[0].name", "should match"),
        (["dev-00"], [{"name": "example.com/" + "n" * 33, "intValue": 1}], "spec.attributes[0].name", "should match"),
    ],
)
def test_pools_are_refused_at_admission_as_kubernetes_refuses_resource_slices(cluster, devices, attributes, field, words):
    _, custom, _ = cluster
    obj = pool("refused", devices)
    if attributes:
        obj["spec"]["attributes"] = attributes
    with pytest.raises(ApiException) as refused:
        create_pool(custom, obj)
    status = json.loads(refused.value.body)
    assert refused.value.status == 422 and status["reason"] == "Invalid"
    assert any(cause["field"] == field and words in cause["message"] for cause in status["details"]["causes"]), status
    with pytest.raises(ApiException) as missing:
        custom.get_cluster_custom_object(GROUP, VERSION, "devicepools", "refused")
    assert missing.value.status == 404


def test_qualified_attribute_names_and_64_character_values_are_accepted(cluster):
    _, custom, _ = cluster
    obj = pool("accepted", ["dev-00"])
    obj["spec"]["attributes"] = [{"name": "example.com/model_2", "stringValue": "x" * 64}, {"name": "_numa", "intValue": 0}]
    assert create_pool(custom, obj)["spec"]["attributes"][0]["stringValue"] == "x" * 64


def test_kubectl_get_devicepools_shows_each_pools_available_devices(cluster):
    server, custom, _ = cluster
    create_pool(custom, pool("shown", ["dev-00", "dev-01", "dev-02"]))
    wait_for_pool(custom, "shown", 3)
    create_claim(custom, "takes-one")
    wait_for(custom, "default", "takes-one", reason("Allocated"))
    wait_for_pool(custom, "shown", 2)
    out = subprocess.run(["kubectl", "--kubeconfig", str(server.kubeconfig), "get", "devicepools"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    header, row = out.stdout.splitlines()[:2]
    assert header.split()[:4] == ["NAME", "NODE", "DRIVER", "DEVICES"]
    assert row.split()[:4] == ["shown", "node-a", DRIVER, "2"]
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaims", "takes-one")
    wait_for_pool(custom, "shown", 3)
