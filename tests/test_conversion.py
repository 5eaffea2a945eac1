"""Multi-version CRDs in process: stored in the storage version, served in the version asked for."""

from __future__ import annotations

import orjson
import pytest

from mockapi import app as app_
from mockapi import gvk
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry import conversion, rest
from mockapi.registry.options import DeleteOptions, ListOptions, WriteOptions

SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def gizmos(storage="v2", versions=("v1", "v2")):
    return {
        "metadata": {"name": "gizmos.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [{"name": v, "served": True, "storage": v == storage, "schema": SCHEMA} for v in versions],
        },
    }


@pytest.fixture
def server():
    server = app_.build(clock=FakeClock(), uids=SequentialUIDs())
    crds = server.types.by_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    server.registry.create(crds, "", gizmos(), WriteOptions())
    return server


def versions(server):
    return server.types.lookup("example.com", "v1", "gizmos"), server.types.lookup("example.com", "v2", "gizmos")


def api_version(raw: bytes) -> str:
    return orjson.loads(raw)["apiVersion"]


def test_only_multi_version_crds_name_a_storage_version():
    assert {rt.storage_version for rt in gvk.from_crd(gizmos())} == {"v2"}
    assert [rt.storage_version for rt in gvk.from_crd(gizmos(storage="v1", versions=("v1",)))] == [""]


def test_single_version_kinds_serve_the_stored_bytes_themselves():
    (rt,) = gvk.from_crd(gizmos(storage="v1", versions=("v1",)))
    raw = b'{"kind":"Gizmo","apiVersion":"example.com/v0"}'
    assert conversion.served(rt, raw) is raw
    assert conversion.watch_encoder(rt, None) is None


def test_serving_rewrites_only_the_api_version_and_keeps_bytes_already_in_that_version(server):
    v1, v2 = versions(server)
    in_v2 = b'{"apiVersion":"example.com/v2","kind":"Gizmo","spec":{"apiVersion":"x"}}'
    assert conversion.served(v2, in_v2) is in_v2
    assert orjson.loads(conversion.served(v1, in_v2)) == {"apiVersion": "example.com/v1", "kind": "Gizmo", "spec": {"apiVersion": "x"}}
    late = b'{"kind":"Gizmo","apiVersion":"example.com/v1"}'  # written before the kind had two versions
    assert conversion.served(v1, late) is late
    assert api_version(conversion.served(v2, late)) == "example.com/v2"


def test_writes_through_either_version_are_stored_in_the_storage_version(server):
    v1, v2 = versions(server)
    written = server.registry.create(v1, "default", {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "spec": {}}, WriteOptions())
    assert api_version(written.raw) == "example.com/v1"
    stored = server.store.get(v1.group_resource, "default", "g")
    assert stored.raw.startswith(b'{"apiVersion":"example.com/v2",')
    managed = orjson.loads(stored.raw)["metadata"]["managedFields"]
    assert [m["apiVersion"] for m in managed] == ["example.com/v1"]  # the version the manager wrote
    patched = server.registry.patch(v2, "default", "g", rest.JSON_PATCH, [{"op": "add", "path": "/spec", "value": {"n": 1}}], WriteOptions())
    assert api_version(patched.raw) == "example.com/v2"
    applied = server.registry.patch(v1, "default", "g", rest.MERGE_PATCH, {"spec": {"m": 2}}, WriteOptions())
    assert orjson.loads(applied.raw)["spec"] == {"n": 1, "m": 2}
    assert api_version(server.store.get(v1.group_resource, "default", "g").raw) == "example.com/v2"


def test_an_unchanged_update_through_the_other_version_writes_nothing(server):
    v1, _ = versions(server)
    server.registry.create(v1, "default", {"metadata": {"name": "g"}, "spec": {"n": 1}}, WriteOptions())
    current = orjson.loads(server.registry.get(v1, "default", "g").raw)
    rv = server.store.resource_version
    written = server.registry.update(v1, "default", "g", current, WriteOptions())
    assert server.store.resource_version == rv
    assert api_version(written.raw) == "example.com/v1"


def test_reads_list_watch_and_delete_answer_in_the_version_asked_for(server):
    v1, v2 = versions(server)
    server.registry.create(v1, "default", {"metadata": {"name": "a"}}, WriteOptions())
    server.registry.create(v2, "default", {"metadata": {"name": "b"}}, WriteOptions())
    for rt in (v1, v2):
        assert api_version(server.registry.get(rt, "default", "a").raw) == rt.api_version
        items = server.registry.list(rt, "default", ListOptions()).items
        assert {api_version(s.raw) for s in items} == {rt.api_version}
        page = server.registry.list(rt, "default", ListOptions(limit=1))
        assert [api_version(s.raw) for s in page.items] == [rt.api_version]
    watcher = server.registry.watch(v1, "default", ListOptions(resource_version="0"))
    server.registry.patch(v2, "default", "b", rest.MERGE_PATCH, {"spec": {"n": 1}}, WriteOptions())
    events = [orjson.loads(line) for line in watcher.take().splitlines()]
    server.registry.stop_watch(watcher)
    assert [(e["type"], e["object"]["apiVersion"]) for e in events] == [("ADDED", "example.com/v1")] * 2 + [("MODIFIED", "example.com/v1")]
    deleted, _ = server.registry.delete(v1, "default", "b", DeleteOptions())
    assert api_version(deleted.raw) == "example.com/v1"
