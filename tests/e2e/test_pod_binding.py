"""Pods through real clients: the binding subresource, device-claim validation, DeviceClaimTemplate."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.e2e.conftest import GROUP, VERSION


def _pod(name, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "pause"}], **spec}}


def test_binding_through_the_python_client(core):
    core.create_namespaced_pod("default", _pod("web"))
    binding = client.V1Binding(metadata=client.V1ObjectMeta(name="web"), target=client.V1ObjectReference(kind="Node", name="n1"))
    # kube answers a binding with a Status (201), which the client cannot read as a V1Binding: as
    # against a real cluster, callers skip deserialization
    answer = core.create_namespaced_pod_binding("web", "default", binding, _preload_content=False)
    assert answer.status == 201 and json.loads(answer.data)["status"] == "Success"
    pod = core.read_namespaced_pod("web", "default")
    assert pod.spec.node_name == "n1"
    assert [(c.type, c.status) for c in pod.status.conditions] == [("PodScheduled", "True")]
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod_binding("web", "default", binding, _preload_content=False)
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["message"] == 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"'


def test_binding_is_in_discovery_and_other_kinds_have_none(http):
    resources = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}
    assert resources["pods/binding"] == {"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding", "verbs": ["create"]}
    assert http.post("/api/v1/namespaces/default/configmaps/x/binding", json={}).status_code == 404


def test_invalid_device_claims_are_refused_with_field_paths(http):
    # the typed client refuses the prototype's PodSpec extension itself: send it as JSON
    body = _pod("bad", deviceClaims=[{"name": "gpu"}])
    body["spec"]["containers"][0]["devices"] = [{"name": "nic"}]
    answer = http.post("/api/v1/namespaces/default/pods", json=body)
    status = answer.json()
    assert answer.status_code == 422 and status["reason"] == "Invalid"
    assert [c["field"] for c in status["details"]["causes"]] == ["spec.deviceClaims[0]", "spec.containers[0].devices[0].name"]


def test_a_claim_template_is_served_with_its_schema(custom):
    template = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "DeviceClaimTemplate",
        "metadata": {"name": "one-gpu"},
        "spec": {"metadata": {"labels": {"team": "a"}}, "spec": {"claims": [{"deviceClass": "gpu"}]}},
    }
    made = custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaimtemplates", template)
    assert made["spec"]["spec"]["claims"] == [{"deviceClass": "gpu"}]
    bad = {**template, "metadata": {"name": "bad"}, "spec": {"metadata": {"name": "x"}, "spec": {"claims": [{"deviceClass": "gpu"}]}}}
    with pytest.raises(ApiException) as caught:
        custom.create_namespaced_custom_object(GROUP, VERSION, "default", "deviceclaimtemplates", bad, field_validation="Strict")
    assert caught.value.status in (400, 422)
    assert "spec.metadata.name" in caught.value.body
