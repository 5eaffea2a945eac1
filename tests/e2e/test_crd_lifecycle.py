"""Applying a CustomResourceDefinition serves its kind at once; deleting it stops serving it."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.e2e

FOOZER_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "foozerconfigs.foozer.example.com"},
    "spec": {
        "group": "foozer.example.com",
        "names": {"plural": "foozerconfigs", "singular": "foozerconfig", "kind": "FoozerConfig", "listKind": "FoozerConfigList"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"superfast": {"type": "boolean", "default": False}, "level": {"type": "integer"}}}
                        },
                    }
                },
            }
        ],
    },
}


def foozer(name, **spec):
    return {"apiVersion": "foozer.example.com/v1alpha1", "kind": "FoozerConfig", "metadata": {"name": name}, "spec": spec}


def test_our_kinds_are_listed_as_established_crds(api):
    crds = client.ApiextensionsV1Api(api).list_custom_resource_definition().items
    names = {c.metadata.name: c for c in crds}
    assert "deviceclaims.devmgmtproto.k8s.io" in names
    conditions = {c.type: c.status for c in names["deviceclaims.devmgmtproto.k8s.io"].status.conditions}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}


def test_a_crd_applied_at_run_time_is_served_with_defaults_and_validation(api, custom, http):
    extensions = client.ApiextensionsV1Api(api)
    created = extensions.create_custom_resource_definition(FOOZER_CRD)
    assert {c.type: c.status for c in created.status.conditions} == {"NamesAccepted": "True", "Established": "True"}
    made = custom.create_namespaced_custom_object("foozer.example.com", "v1alpha1", "default", "foozerconfigs", foozer("fast", level=3))
    assert made["spec"] == {"level": 3, "superfast": False}
    bad = http.post("/apis/foozer.example.com/v1alpha1/namespaces/default/foozerconfigs", json=foozer("bad", level="high"))
    assert bad.status_code == 422 and "spec.level" in bad.json()["message"]
    assert http.get("/apis/foozer.example.com/v1alpha1").json()["resources"][0]["name"] == "foozerconfigs"


def test_deleting_a_crd_deletes_its_objects_and_stops_serving_the_kind(api, custom, http):
    extensions = client.ApiextensionsV1Api(api)
    extensions.create_custom_resource_definition(FOOZER_CRD)
    custom.create_namespaced_custom_object("foozer.example.com", "v1alpha1", "default", "foozerconfigs", foozer("one"))
    extensions.delete_custom_resource_definition("foozerconfigs.foozer.example.com")
    response = http.get("/apis/foozer.example.com/v1alpha1/namespaces/default/foozerconfigs")
    assert response.status_code == 404 and response.json()["kind"] == "Status"
    extensions.create_custom_resource_definition(FOOZER_CRD)
    assert custom.list_namespaced_custom_object("foozer.example.com", "v1alpha1", "default", "foozerconfigs")["items"] == []


def test_an_invalid_crd_is_rejected(api):
    broken = json.loads(json.dumps(FOOZER_CRD))
    broken["metadata"]["name"] = "wrong.foozer.example.com"
    with pytest.raises(ApiException) as caught:
        client.ApiextensionsV1Api(api).create_custom_resource_definition(broken)
    assert caught.value.status == 422


def test_dynamic_client_discovers_and_uses_our_kinds(api):
    from kubernetes.dynamic import DynamicClient

    dynamic = DynamicClient(api)
    classes = dynamic.resources.get(api_version="devmgmtproto.k8s.io/v1alpha1", kind="DeviceClass")
    classes.create(body={"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClass", "metadata": {"name": "dyn"}, "spec": {"driver": "d", "deviceType": "gpu"}})
    assert [i.metadata.name for i in classes.get().items] == ["dyn"]


def _gizmos_crd(storage="v2"):
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    versions = [{"name": v, "served": True, "storage": v == storage, "schema": schema} for v in ("v1", "v2")]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"}, "versions": versions},
    }


def test_a_multi_version_crd_serves_each_object_in_the_version_asked_for(http, live):
    http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=_gizmos_crd()).raise_for_status()
    v1, v2 = "/apis/example.com/v1/namespaces/default/gizmos", "/apis/example.com/v2/namespaces/default/gizmos"
    start = http.get(v1).json()["metadata"]["resourceVersion"]
    created = http.post(v1, json={"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "a"}, "spec": {"n": 1}})
    assert created.json()["apiVersion"] == "example.com/v1"
    http.post(v2, json={"apiVersion": "example.com/v2", "kind": "Gizmo", "metadata": {"name": "b"}}).raise_for_status()
    stored = live.registry.store.get(live.registry.types.lookup("example.com", "v2", "gizmos").group_resource, "default", "a")
    assert json.loads(stored.raw)["apiVersion"] == "example.com/v2"  # kept in the storage version
    for url, version in ((v1, "example.com/v1"), (v2, "example.com/v2")):
        assert http.get(f"{url}/a").json()["apiVersion"] == version
        listed = http.get(url).json()
        assert [listed["apiVersion"], *(i["apiVersion"] for i in listed["items"])] == [version, version, version]
        table = http.get(f"{url}?includeObject=Object", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
        assert {row["object"]["apiVersion"] for row in table["rows"]} == {version}
        watched = http.get(url, params={"watch": "1", "resourceVersion": start, "timeoutSeconds": "1"})
        assert {json.loads(line)["object"]["apiVersion"] for line in watched.text.splitlines()} == {version}
    patched = http.patch(f"{v2}/a", json={"spec": {"n": 2}}, headers={"Content-Type": "application/merge-patch+json"})
    assert (patched.json()["apiVersion"], patched.json()["spec"]) == ("example.com/v2", {"n": 2})
    current = http.get(f"{v1}/b").json()
    current["spec"] = {"n": 3}
    assert http.put(f"{v1}/b", json=current).json()["apiVersion"] == "example.com/v1"
    assert http.delete(f"{v1}/a").json()["apiVersion"] == "example.com/v1"
