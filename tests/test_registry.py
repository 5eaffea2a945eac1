"""The REST registry in process, with a fake clock and sequential UIDs: exact responses."""

from __future__ import annotations

import orjson
import pytest

from mockapi import app as app_
from mockapi import errors
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry import rest
from mockapi.registry.options import DeleteOptions, ListOptions, WriteOptions


@pytest.fixture
def server():
    return app_.build(clock=FakeClock(), uids=SequentialUIDs())


def kind(server, group, kind_name, version="v1alpha1"):
    return server.types.by_kind(group, version, kind_name)


def test_create_sets_exactly_the_system_fields(server):
    pools = kind(server, "devmgmtproto.k8s.io", "DevicePool")
    written = server.registry.create(pools, "", {"metadata": {"name": "p"}, "spec": {"driver": "d", "devices": []}}, WriteOptions())
    obj = orjson.loads(written.raw)
    rv = obj["metadata"]["resourceVersion"]
    managed = obj["metadata"].pop("managedFields")
    assert managed == [
        {
            "manager": "unknown",
            "operation": "Update",
            "apiVersion": "devmgmtproto.k8s.io/v1alpha1",
            "time": "2024-01-01T00:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {".": {}, "f:devices": {}, "f:driver": {}}},
        }
    ]
    assert obj == {
        "apiVersion": "devmgmtproto.k8s.io/v1alpha1",
        "kind": "DevicePool",
        "metadata": {"name": "p", "uid": obj["metadata"]["uid"], "creationTimestamp": "2024-01-01T00:00:00Z", "generation": 1, "resourceVersion": rv},
        "spec": {"driver": "d", "devices": []},
    }
    assert obj["metadata"]["uid"].startswith("00000000-0000-0000-0000-")


def test_the_default_namespaces_and_our_crds_are_seeded(server):
    namespaces = kind(server, "", "Namespace", "v1")
    names = [s.name for s in server.registry.list(namespaces, "", ListOptions()).items]
    assert names == ["default", "kube-public", "kube-system"]
    crds = kind(server, "apiextensions.k8s.io", "CustomResourceDefinition", "v1")
    assert len(server.registry.list(crds, "", ListOptions()).items) == 6


def test_status_strategy_keeps_spec_and_main_strategy_keeps_status(server):
    claims = kind(server, "devmgmtproto.k8s.io", "DeviceClaim")
    body = {"metadata": {"name": "c"}, "spec": {"claims": [{"deviceClass": "x"}]}}
    server.registry.create(claims, "default", body, WriteOptions())
    server.registry.patch(claims, "default", "c", rest.MERGE_PATCH, {"status": {"nodeName": "n"}, "spec": {"matchAttributes": ["a"]}}, WriteOptions(), subresource="status")
    obj = server.registry.get(claims, "default", "c").load()
    assert obj["status"] == {"nodeName": "n"} and "matchAttributes" not in obj["spec"]
    server.registry.patch(claims, "default", "c", rest.MERGE_PATCH, {"status": None}, WriteOptions())
    assert server.registry.get(claims, "default", "c").load()["status"] == {"nodeName": "n"}


def test_secret_string_data_folds_and_type_defaults(server):
    secrets = kind(server, "", "Secret", "v1")
    written = server.registry.create(secrets, "default", {"metadata": {"name": "s"}, "stringData": {"a": "b"}}, WriteOptions())
    obj = orjson.loads(written.raw)
    assert obj["data"] == {"a": "Yg=="} and obj["type"] == "Opaque" and "stringData" not in obj


def test_update_keeps_uid_and_creation_timestamp_even_if_the_body_omits_them(server):
    maps = kind(server, "", "ConfigMap", "v1")
    created = orjson.loads(server.registry.create(maps, "default", {"metadata": {"name": "m"}, "data": {"a": "1"}}, WriteOptions()).raw)
    server.registry.clock.advance(60)
    updated = orjson.loads(server.registry.update(maps, "default", "m", {"metadata": {"name": "m"}, "data": {"a": "2"}}, WriteOptions()).raw)
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    assert updated["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"
    assert "generation" not in updated["metadata"]


def test_a_crd_registers_its_kind_and_unregisters_it_on_delete(server):
    crds = kind(server, "apiextensions.k8s.io", "CustomResourceDefinition", "v1")
    crd = {
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "kind": "Widget"},
            "scope": "Cluster",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}],
        },
    }
    generation = server.types.generation
    obj = orjson.loads(server.registry.create(crds, "", crd, WriteOptions()).raw)
    assert [c["type"] for c in obj["status"]["conditions"]] == ["NamesAccepted", "Established"]
    assert obj["status"]["acceptedNames"] == {"plural": "widgets", "kind": "Widget", "singular": "widget", "listKind": "WidgetList"}
    widgets = server.types.by_kind("example.com", "v1", "Widget")
    assert widgets is not None and server.types.generation > generation
    server.registry.create(widgets, "", {"metadata": {"name": "w"}}, WriteOptions())
    server.registry.delete(crds, "", "widgets.example.com", DeleteOptions())
    assert server.types.by_kind("example.com", "v1", "Widget") is None
    assert server.store.count(widgets.group_resource) == 0


def widget_crd(plural, kind_name, **names):
    return {
        "metadata": {"name": f"{plural}.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": plural, "kind": kind_name, **names},
            "scope": "Cluster",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}],
        },
    }


def test_a_crd_whose_names_are_taken_is_not_established_and_not_served(server):
    crds = kind(server, "apiextensions.k8s.io", "CustomResourceDefinition", "v1")
    server.registry.create(crds, "", widget_crd("widgets", "Widget", shortNames=["wd"]), WriteOptions())
    same_kind = orjson.loads(server.registry.create(crds, "", widget_crd("gadgets", "Widget"), WriteOptions()).raw)
    assert {c["type"]: (c["status"], c["reason"]) for c in same_kind["status"]["conditions"]} == {
        "NamesAccepted": ("False", "KindConflict"),
        "Established": ("False", "NotAccepted"),
    }
    assert server.types.find("example.com", "v1", "gadgets") is None
    short = orjson.loads(server.registry.create(crds, "", widget_crd("doodads", "Doodad", shortNames=["wd"]), WriteOptions()).raw)
    assert short["status"]["conditions"][0]["reason"] == "ShortNamesConflict"
    assert short["status"]["conditions"][0]["message"] == '"wd" is already in use'


def test_unknown_fields_are_pruned_and_reported_per_field_validation(server):
    classes = kind(server, "devmgmtproto.k8s.io", "DeviceClass")
    body = {"metadata": {"name": "c", "bogus": 1}, "spec": {"driver": "d", "deviceType": "t", "extra": True}}
    with pytest.raises(errors.StatusError) as caught:
        server.registry.create(classes, "", orjson.loads(orjson.dumps(body)), WriteOptions(field_validation="Strict"))
    assert caught.value.code == 400 and 'unknown field "metadata.bogus", unknown field "spec.extra"' in caught.value.message
    opts = WriteOptions(field_validation="Warn")
    obj = orjson.loads(server.registry.create(classes, "", orjson.loads(orjson.dumps(body)), opts).raw)
    assert opts.warnings == ['unknown field "metadata.bogus"', 'unknown field "spec.extra"']
    assert "extra" not in obj["spec"] and "bogus" not in obj["metadata"]


def test_empty_metadata_maps_are_dropped_like_go_omitempty(server):
    classes = kind(server, "devmgmtproto.k8s.io", "DeviceClass")
    server.registry.create(classes, "", {"metadata": {"name": "c", "labels": {"a": "b"}}, "spec": {"driver": "d", "deviceType": "t"}}, WriteOptions())
    written = server.registry.patch(classes, "", "c", rest.MERGE_PATCH, {"metadata": {"labels": {"a": None}, "annotations": {}}}, WriteOptions())
    meta = orjson.loads(written.raw)["metadata"]
    assert "labels" not in meta and "annotations" not in meta


def test_a_pending_finalizer_blocks_deletion_until_removed(server):
    maps = kind(server, "", "ConfigMap", "v1")
    server.registry.create(maps, "default", {"metadata": {"name": "m", "finalizers": ["x.io/y"]}}, WriteOptions())
    written, gone = server.registry.delete(maps, "default", "m", DeleteOptions())
    assert not gone and orjson.loads(written.raw)["metadata"]["deletionTimestamp"] == "2024-01-01T00:00:00Z"
    server.registry.patch(maps, "default", "m", rest.MERGE_PATCH, {"metadata": {"finalizers": None}}, WriteOptions())
    assert server.store.get(maps.group_resource, "default", "m") is None


def test_dry_run_create_does_not_store_or_bump_the_resource_version(server):
    maps = kind(server, "", "ConfigMap", "v1")
    rv = server.store.resource_version
    server.registry.create(maps, "default", {"metadata": {"name": "m"}}, WriteOptions(dry_run=True))
    assert server.store.resource_version == rv and server.store.get(maps.group_resource, "default", "m") is None


def test_to_status_turns_unknown_exceptions_into_a_500():
    status = errors.to_status(KeyError("boom"))
    assert status.code == 500 and status.reason == "InternalError" and "KeyError" in status.message


def _gadget_crd(spec_properties: dict) -> dict:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": spec_properties}}}
    crd = widget_crd("gadgets", "Gadget")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema
    return crd


def test_an_update_that_leaves_spec_as_stored_still_meets_a_changed_schema(server):
    """Fields left as stored are not walked again only while the schema that admitted them serves:
    after a CRD update the same unchanged spec is pruned and defaulted by the new schema."""
    crds = kind(server, "apiextensions.k8s.io", "CustomResourceDefinition", "v1")
    server.registry.create(crds, "", _gadget_crd({"size": {"type": "integer"}, "color": {"type": "string"}}), WriteOptions())
    gadgets = server.types.by_kind("example.com", "v1", "Gadget")
    stored = orjson.loads(server.registry.create(gadgets, "", {"metadata": {"name": "g"}, "spec": {"size": 3, "color": "red"}}, WriteOptions()).raw)
    same = orjson.loads(server.registry.update(gadgets, "", "g", orjson.loads(orjson.dumps(stored)), WriteOptions()).raw)
    assert same["spec"] == {"size": 3, "color": "red"} and same["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]

    crd = orjson.loads(server.registry.get(crds, "", "gadgets.example.com").raw)
    crd["spec"] = _gadget_crd({"size": {"type": "integer"}, "shape": {"type": "string", "default": "round"}})["spec"]
    server.registry.update(crds, "", "gadgets.example.com", crd, WriteOptions())
    gadgets = server.types.by_kind("example.com", "v1", "Gadget")
    opts = WriteOptions(field_validation="Warn")
    updated = orjson.loads(server.registry.update(gadgets, "", "g", orjson.loads(orjson.dumps(stored)), opts).raw)
    assert updated["spec"] == {"size": 3, "shape": "round"}
    assert opts.warnings == ['unknown field "spec.color"']


def test_an_unchanged_field_is_json_equal_not_python_equal(server):
    """``true`` equals ``1`` in Python: a boolean where the stored integer was is validated (422)."""
    crds = kind(server, "apiextensions.k8s.io", "CustomResourceDefinition", "v1")
    server.registry.create(crds, "", _gadget_crd({"size": {"type": "integer"}}), WriteOptions())
    gadgets = server.types.by_kind("example.com", "v1", "Gadget")
    stored = orjson.loads(server.registry.create(gadgets, "", {"metadata": {"name": "g"}, "spec": {"size": 1}}, WriteOptions()).raw)
    stored["spec"]["size"] = True
    with pytest.raises(errors.StatusError) as caught:
        server.registry.update(gadgets, "", "g", stored, WriteOptions())
    assert caught.value.code == 422 and "spec.size" in caught.value.message
