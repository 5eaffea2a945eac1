"""registry/loads.py: a stored object loaded for a write is its bytes' parse, whatever they hold;
equal managedFields are parsed once and shared."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi.registry.loads import ManagedFieldsLoads

MANAGED = [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:x": {}}},
            "manager": "kubectl", "operation": "Update", "time": "2026-01-01T00:00:00Z"}]


def _raw(name: str, *, managed=MANAGED, spec=None) -> bytes:
    meta = {"name": name, "labels": {"a": "1"}, "managedFields": managed, "resourceVersion": "7"} if managed is not None else {"name": name}
    return orjson.dumps({"apiVersion": "v1", "kind": "Thing", "metadata": meta, "spec": spec or {"x": 1}})


def test_a_load_is_the_parse_of_the_bytes_key_order_included():
    loads = ManagedFieldsLoads()
    for raw in (_raw("a"), _raw("b"), _raw("a"), _raw("c", managed=None), _raw("d", managed=[])):
        obj = loads.load(raw)
        assert obj == orjson.loads(raw)
        assert orjson.dumps(obj) == raw


def test_equal_managed_fields_are_parsed_once_and_shared():
    loads = ManagedFieldsLoads()
    first, second = loads.load(_raw("a")), loads.load(_raw("b"))
    assert second["metadata"]["managedFields"] is first["metadata"]["managedFields"]
    assert second["metadata"] is not first["metadata"] and second["spec"] is not first["spec"]
    other = [dict(MANAGED[0], time="2026-01-01T00:00:01Z")]
    third = loads.load(_raw("c", managed=other))
    assert third["metadata"]["managedFields"] == other and third["metadata"]["managedFields"] is not first["metadata"]["managedFields"]


def test_a_custom_field_named_managed_fields_is_never_taken_for_metadata_s():
    loads = ManagedFieldsLoads()
    loads.load(_raw("a"))
    for raw in (_raw("b", spec={"managedFields": MANAGED}), _raw("c", managed=None, spec={"managedFields": MANAGED})):
        obj = loads.load(raw)
        assert obj == orjson.loads(raw) and orjson.dumps(obj) == raw
        assert obj["spec"]["managedFields"] is not MANAGED


def test_the_lists_kept_are_bounded():
    loads = ManagedFieldsLoads()
    for i in range(500):
        loads.load(_raw("a", managed=[dict(MANAGED[0], manager=f"m{i}")]))
    assert sum(len(bucket) for bucket in loads._by_prefix.values()) <= 64


def test_a_custom_field_named_managed_fields_before_metadata_is_never_taken_for_it():
    loads = ManagedFieldsLoads()
    loads.load(_raw("a"))
    for meta in ({"name": "b"}, {"name": "b", "managedFields": []}, {"name": "b", "managedFields": MANAGED}):
        raw = orjson.dumps({"apiVersion": "v1", "kind": "Thing", "spec": {"managedFields": MANAGED}, "metadata": meta})
        obj = loads.load(raw)
        assert obj == orjson.loads(raw) and orjson.dumps(obj) == raw


_names = st.sampled_from(["a", "b", "managedFields"])
_values = st.recursive(st.one_of(st.none(), st.integers(0, 2), _names), lambda inner: st.one_of(st.lists(inner, max_size=2),
                       st.dictionaries(_names, inner, max_size=2)), max_leaves=6)
_lists = st.sampled_from([None, [], MANAGED, [dict(MANAGED[0], manager="other")], [{"managedFields": 1}]])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_lists, _values, st.booleans()), min_size=1, max_size=6))
def test_any_sequence_of_loads_is_the_sequence_of_parses(steps):
    loads = ManagedFieldsLoads()
    for managed, spec, spec_first in steps:
        meta = {"name": "x"} if managed is None else {"name": "x", "managedFields": managed}
        obj = {"spec": spec, "metadata": meta} if spec_first else {"metadata": meta, "spec": spec}
        raw = orjson.dumps(obj)
        loaded = loads.load(raw)
        assert loaded == obj and orjson.dumps(loaded) == raw
