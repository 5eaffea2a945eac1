"""A ``/status`` write of a kind with the base status strategy builds the object it writes sharing
the stored load's fields other than metadata and status (``strategy.status_only_sharing``) when
``Registry._shares_untouched`` holds, rather than copying the stored object whole. Every answer
must be the copying path's, byte for byte, and the stored load must be as it was after the write."""

from __future__ import annotations

import copy

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi.registry import rest
from mockapi.registry import strategy as strategies
from mockapi.registry.options import WriteOptions
from tests.test_update_sharing import _outcome, _server, _watch_shared_loads

DEVICES = ("devmgmtproto.k8s.io", "v1alpha1")
_POOL = {"metadata": {"name": "p", "labels": {"rack": "r1"}},
         "spec": {"driver": "example.com-gpu", "nodeName": "n1", "resources": [{"name": "memory", "capacity": "8Gi"}],
                  "devices": [{"name": "gpu-0", "attributes": [{"name": "m", "stringValue": "a"}], "requests": {"memory": "1Gi"}},
                              {"name": "gpu-1"}]}}
_CLAIM = {"metadata": {"name": "p"}, "spec": {"claims": [{"deviceClass": "gpu", "limits": {"count": 1}}]}}
KINDS = {"pool": ("DevicePool", "", _POOL), "claim": ("DeviceClaim", "default", _CLAIM)}

statuses = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={"availableDevices": st.one_of(st.integers(-1, 3), st.just("x")), "nodeName": st.sampled_from(["n1", "n2"]),
                                        "conditions": st.lists(st.fixed_dictionaries({"type": st.sampled_from(["A", "B"]), "status": st.sampled_from(["True", "False"])}), max_size=2),
                                        "unknownField": st.just(1)}),
)
writes = st.tuples(
    st.sampled_from(["patch", "put", "put-stale"]),
    statuses,
    st.sampled_from([None, {"labels": {"rack": "r2"}}, {"labels": {"via": "status"}, "annotations": {"a": "b"}}]),
    st.sampled_from([None, {"driver": "changed"}]),  # a spec sent to /status is ignored
    st.sampled_from(["Strict", "Warn", "Ignore"]),
)


def _write(server, rt, namespace, kind_body, write):
    how, status, meta, spec, validation = copy.deepcopy(write)  # each server its own values
    opts = WriteOptions(field_validation=validation, field_manager="writer")
    if how == "patch":
        document = {"status": status}
        if meta is not None:
            document["metadata"] = copy.deepcopy(meta)
        if spec is not None:
            document["spec"] = spec
        return server.registry.patch(rt, namespace, "p", rest.MERGE_PATCH, document, opts, subresource="status")
    current = orjson.loads(server.registry.get(rt, namespace, "p").raw)
    if how == "put-stale":
        current["metadata"]["resourceVersion"] = "1"
    if status is None:
        current.pop("status", None)
    else:
        current["status"] = status
    if meta is not None:
        current["metadata"].update(copy.deepcopy(meta))
    if spec is not None:
        current["spec"] = {**current["spec"], **spec}
    return server.registry.update(rt, namespace, "p", current, opts, subresource="status")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(KINDS)), st.lists(writes, min_size=1, max_size=6))
def test_status_writes_sharing_the_stored_load_answer_as_the_copying_path_does(kind, steps):
    name, namespace, body = KINDS[kind]
    sharing, reference = _server(sharing=True), _server(sharing=False)
    checked: list = []
    _watch_shared_loads(sharing, checked)
    rt = sharing.types.by_kind(*DEVICES, name)
    created = [_outcome(lambda s=s: s.registry.create(rt, namespace, copy.deepcopy(body), WriteOptions())) for s in (sharing, reference)]
    assert created[0] == created[1] and created[0][0] == "ok"
    for write in steps:
        answers = [_outcome(lambda s=s: _write(s, rt, namespace, body, write)) for s in (sharing, reference)]
        assert answers[0] == answers[1], write
        stored = [s.registry.get(rt, namespace, "p").raw for s in (sharing, reference)]
        assert stored[0] == stored[1]
    assert all(checked), "the status write changed the stored load in place"


def test_a_pools_status_write_shares_its_spec_with_the_stored_load():
    server = _server(sharing=True)
    rt = server.types.by_kind(*DEVICES, "DevicePool")
    server.registry.create(rt, "", copy.deepcopy(_POOL), WriteOptions())
    seen = {}
    real = strategies.status_only_sharing

    def spying(new, old):
        result = real(new, old)
        seen["shared spec"] = result["spec"] is old["spec"]
        return result

    strategies.status_only_sharing = spying
    try:
        server.registry.patch(rt, "", "p", rest.MERGE_PATCH, {"status": {"availableDevices": 2}}, WriteOptions(), subresource="status")
    finally:
        strategies.status_only_sharing = real
    assert seen == {"shared spec": True}


def test_the_shared_status_object_is_the_copied_one_as_json_in_its_key_order():
    managed = [{"manager": "m", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
    for old in (
        {"metadata": {"name": "p", "managedFields": managed, "labels": {"a": "b"}}, "spec": {"x": [1]}, "status": {"s": 1}, "extra": 3},
        {"apiVersion": "v", "spec": {"x": [1]}, "metadata": {"name": "p"}},
        {"metadata": "odd", "spec": {}},
    ):
        for new in ({"status": {"s": 2}, "spec": {"x": [2]}}, {"spec": {}}, {"status": None}):
            copied = strategies._status_only(copy.deepcopy(new), copy.deepcopy(old))
            shared = strategies.status_only_sharing(new, old)
            assert orjson.dumps(shared) == orjson.dumps(copied)
            if isinstance(old["metadata"], dict):
                assert shared["spec"] is old["spec"] and shared["metadata"] is not old["metadata"]
                assert shared["metadata"].get("managedFields") is old["metadata"].get("managedFields")
