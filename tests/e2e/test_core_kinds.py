"""Core v1 kinds through CoreV1Api: namespaces, configmaps, secrets, pods, nodes, events."""

from __future__ import annotations

import base64
import json

import pytest
from kubernetes.client.rest import ApiException

from tests.e2e.conftest import GROUP, VERSION, device_claim

pytestmark = pytest.mark.e2e


def test_default_namespaces_exist_and_are_active(core):
    names = {ns.metadata.name: ns for ns in core.list_namespace().items}
    assert {"default", "kube-system", "kube-public"} <= set(names)
    assert names["default"].status.phase == "Active"
    assert names["default"].metadata.labels == {"kubernetes.io/metadata.name": "default"}


def test_deleting_a_namespace_deletes_what_is_in_it(core, custom):
    core.create_namespace({"metadata": {"name": "doomed"}})
    core.create_namespaced_config_map("doomed", {"metadata": {"name": "cm"}, "data": {"a": "b"}})
    custom.create_namespaced_custom_object(GROUP, VERSION, "doomed", "deviceclaims", device_claim("c", "doomed"))
    core.delete_namespace("doomed")
    with pytest.raises(ApiException) as caught:
        core.read_namespace("doomed")
    assert caught.value.status == 404
    assert custom.list_cluster_custom_object(GROUP, VERSION, "deviceclaims")["items"] == []
    with pytest.raises(ApiException):
        core.read_namespaced_config_map("cm", "doomed")


def test_a_namespace_with_a_finalized_object_stays_terminating_and_refuses_new_content(core, custom):
    core.create_namespace({"metadata": {"name": "slow"}})
    body = device_claim("held", "slow")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    custom.create_namespaced_custom_object(GROUP, VERSION, "slow", "deviceclaims", body)
    core.delete_namespace("slow")
    assert core.read_namespace("slow").status.phase == "Terminating"
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_config_map("slow", {"metadata": {"name": "late"}})
    assert caught.value.status == 403 and "because it is being terminated" in caught.value.body
    custom.patch_namespaced_custom_object(GROUP, VERSION, "slow", "deviceclaims", "held", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException):
        core.read_namespace("slow")


def test_the_default_namespace_cannot_be_deleted(core):
    with pytest.raises(ApiException) as caught:
        core.delete_namespace("default")
    assert caught.value.status == 403


def test_configmap_data_must_be_strings(http):
    response = http.post("/api/v1/namespaces/default/configmaps", json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"vlanID": 2000}})
    assert response.status_code == 400 and response.json()["reason"] == "BadRequest"


def test_configmap_round_trips_and_strategic_merge_patch_merges_data(core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}})
    patched = core.patch_namespaced_config_map("cfg", "default", {"data": {"b": None, "c": "3"}})
    assert patched.data == {"a": "1", "c": "3"}


def test_secret_string_data_is_folded_into_data(core):
    created = core.create_namespaced_secret("default", {"metadata": {"name": "s"}, "stringData": {"token": "hunter2"}})
    assert created.type == "Opaque" and created.string_data is None
    assert base64.b64decode(created.data["token"]) == b"hunter2"


def test_pod_keeps_the_prototype_device_fields_and_merges_containers_by_name(core, http):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "main", "image": "pause:3.9", "devices": [{"name": "gpu"}]}, {"name": "side", "image": "busybox"}],
            "deviceClaims": [{"name": "gpu", "claimName": "my-claim"}],
        },
    }
    # The typed client refuses fields its model lacks (the prototype's), so create over raw HTTP.
    response = http.post("/api/v1/namespaces/default/pods", json=pod, params={"fieldValidation": "Strict"})
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["spec"]["deviceClaims"] == [{"name": "gpu", "claimName": "my-claim"}]
    assert created["status"]["phase"] == "Pending"
    patched = core.patch_namespaced_pod("p", "default", {"spec": {"containers": [{"name": "side", "image": "busybox:2"}]}})
    assert [(c.name, c.image) for c in patched.spec.containers] == [("main", "pause:3.9"), ("side", "busybox:2")]
    core.delete_namespaced_pod("p", "default", grace_period_seconds=30)
    with pytest.raises(ApiException):
        core.read_namespaced_pod("p", "default")


def test_pod_field_selector_on_node_name(core):
    for name, node in [("a", "n1"), ("b", "n2")]:
        core.create_namespaced_pod("default", {"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}})
    assert [p.metadata.name for p in core.list_pod_for_all_namespaces(field_selector="spec.nodeName=n2").items] == ["b"]


def test_nodes_are_cluster_scoped(core, http):
    core.create_node({"metadata": {"name": "node-1", "labels": {"zone": "a"}}})
    assert [n.metadata.name for n in core.list_node(label_selector="zone=a").items] == ["node-1"]
    assert http.get("/api/v1/namespaces/default/nodes/node-1").status_code == 404


def test_events_select_by_involved_object(core):
    for name, kind in [("e1", "DeviceClaim"), ("e2", "Pod")]:
        core.create_namespaced_event(
            "default",
            {"metadata": {"name": name}, "involvedObject": {"kind": kind, "name": "x", "namespace": "default"}, "reason": "Test", "message": "m"},
        )
    selected = core.list_namespaced_event("default", field_selector="involvedObject.kind=DeviceClaim,involvedObject.name=x")
    assert [e.metadata.name for e in selected.items] == ["e1"]


def test_delete_of_a_configmap_returns_a_success_status(http, core):
    core.create_namespaced_config_map("default", {"metadata": {"name": "gone"}})
    response = http.delete("/api/v1/namespaces/default/configmaps/gone")
    assert response.status_code == 200 and response.json()["status"] == "Success"
    assert response.json()["details"]["name"] == "gone"
