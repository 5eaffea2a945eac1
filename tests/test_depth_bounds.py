"""What the registry stores never nests deeper than the decoder accepts, however it was written.

Each body is bounded when decoded (100 levels), but a sequence of patches adds up to ~100 levels
each, and managedFields mirror the object a few levels deeper: the result is bounded before it is
stored, so every stored object can be read, re-sent (GET then PUT) and serialized.
"""

from __future__ import annotations

import orjson
import pytest

from mockapi import app as app_
from mockapi import decoding, errors
from mockapi.clock import FakeClock, SequentialUIDs
from mockapi.registry import rest
from mockapi.registry.options import WriteOptions


def nested(depth: int) -> dict:
    """A mapping ``depth`` levels deep: {"a": {"a": ... {"a": 1}}}."""
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value  # type: ignore[return-value]


@pytest.fixture
def things():
    server = app_.build(clock=FakeClock(), uids=SequentialUIDs())
    crds = server.types.by_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    schema = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    crd = {
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "things", "kind": "Thing"},
            "scope": "Cluster",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }
    server.registry.create(crds, "", crd, WriteOptions())
    return server.registry, server.types.by_kind("example.com", "v1", "Thing")


def depth_of(raw: bytes) -> int:
    return next(limit for limit in range(1, 1000) if not decoding.depth_exceeds(orjson.loads(raw), limit))


def test_a_sequence_of_json_patches_cannot_grow_an_object_past_the_limit(things):
    registry, rt = things
    registry.create(rt, "", {"metadata": {"name": "t"}, "spec": {"a": 1}}, WriteOptions())
    depth = 1  # of spec
    with pytest.raises(errors.StatusError) as caught:
        for _ in range(10):  # each patch is a shallow body that deepens the object by 40 levels
            path = "/spec" + "/a" * depth
            registry.patch(rt, "", "t", rest.JSON_PATCH, [{"op": "replace", "path": path, "value": nested(40)}], WriteOptions())
            depth += 40
    assert depth < 10 * 40
    assert caught.value.code == 422 and caught.value.reason == "Invalid"
    assert f"may not nest deeper than {decoding.MAX_DEPTH} levels" in caught.value.message
    decoding.decode_json(registry.get(rt, "", "t").raw)  # what is stored still decodes


def test_a_json_patch_that_adds_depth_is_refused_and_changes_nothing(things):
    registry, rt = things
    registry.create(rt, "", {"metadata": {"name": "t"}, "spec": nested(60)}, WriteOptions())
    before = registry.get(rt, "", "t").raw
    path = "/spec" + "/a" * 59
    with pytest.raises(errors.StatusError) as caught:
        registry.patch(rt, "", "t", rest.JSON_PATCH, [{"op": "replace", "path": path, "value": nested(60)}], WriteOptions())
    assert caught.value.code == 422
    assert registry.get(rt, "", "t").raw == before


def test_everything_stored_can_be_decoded_again(things):
    """managedFields run a few levels deeper than the object: the stored whole is what is bounded."""
    registry, rt = things
    for depth in (90, 95, 96, 97, 98):
        try:
            written = registry.create(rt, "", {"metadata": {"name": f"t{depth}"}, "spec": nested(depth)}, WriteOptions())
        except errors.StatusError as exc:
            assert exc.code == 422
            continue
        decoding.decode_json(written.raw)  # a GET then a PUT of it decodes


def test_an_ordinary_write_is_unaffected(things):
    registry, rt = things
    written = registry.create(rt, "", {"metadata": {"name": "t"}, "spec": {"x": [1, {"y": 2}]}}, WriteOptions())
    assert orjson.loads(written.raw)["spec"] == {"x": [1, {"y": 2}]}


DEEP_TEXT = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize("key", ["v:" + DEEP_TEXT, 'k:{"a":' + DEEP_TEXT + "}", "v:" + "[" * 500 + "]" * 500], ids=["value 5000", "key 5000", "value 500"])
def test_deep_json_in_a_managed_fields_key_is_dropped_not_a_500(key):
    """fieldsV1 keys hold JSON: it is decoded within the same depth bound, not recursively without one."""
    server = app_.build(clock=FakeClock(), uids=SequentialUIDs())
    configmaps = server.types.by_kind("", "v1", "ConfigMap")
    managed = [{"manager": "m", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {key: {}}}}]
    server.registry.create(configmaps, "default", {"metadata": {"name": "c", "managedFields": managed}, "data": {"a": "b"}}, WriteOptions())
    written = server.registry.patch(configmaps, "default", "c", rest.MERGE_PATCH, {"data": {"x": "y"}}, WriteOptions(field_manager="other"))
    assert key not in written.raw.decode()


def test_a_deep_last_applied_annotation_is_ignored_not_a_500():
    server = app_.build(clock=FakeClock(), uids=SequentialUIDs())
    configmaps = server.types.by_kind("", "v1", "ConfigMap")
    annotations = {"kubectl.kubernetes.io/last-applied-configuration": DEEP_TEXT}
    server.registry.create(configmaps, "default", {"metadata": {"name": "c", "annotations": annotations}, "data": {"a": "b"}}, WriteOptions(field_manager="x"))
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "z"}}
    with pytest.raises(errors.StatusError) as caught:  # kubectl's apply conflicts with x, and the annotation cannot vouch for it
        server.registry.patch(configmaps, "default", "c", rest.APPLY_PATCH, applied, WriteOptions(field_manager="kubectl"))
    assert caught.value.code == 409


def test_embedded_json_keeps_pythons_semantics_within_the_bound():
    assert decoding.load_embedded_json('{"a": [1, 2.5, 123456789012345678901234567890]}') == {"a": [1, 2.5, 123456789012345678901234567890]}
    with pytest.raises(ValueError, match="nesting deeper than 100"):
        decoding.load_embedded_json("[" * 101 + "]" * 101)
    with pytest.raises(ValueError):
        decoding.load_embedded_json(DEEP_TEXT)
