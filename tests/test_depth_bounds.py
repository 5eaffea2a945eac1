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
