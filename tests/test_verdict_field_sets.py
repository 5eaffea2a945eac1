"""A create verdict's field set (registry/verdicts.py ``Verdict.own_fields``): a create that takes a
verdict records the field set the verdict keeps for its fields, and only metadata's is made per
request. Property-tested against the full computation (``typed.added_object`` without ``own``),
and end to end against a server that remembers no verdicts: the same managedFields, byte for byte."""

from __future__ import annotations

import copy

import orjson
from hypothesis import given
from hypothesis import strategies as st

from mockapi import fieldmanager
from mockapi.fieldmanager import typed
from mockapi.fieldmanager.schematype import root_type
from mockapi.registry import serviceaccounts
from mockapi.registry.options import WriteOptions
from tests.test_fieldmanager_fastpaths import GV, SCHEMA, SETTINGS, metas, objects, outcome
from tests.test_write_verdicts import _bodies, _pod, _server

IGNORES = st.sampled_from([(), ("status",), ("spec",), ("metadata",)])


@SETTINGS
@given(objects, metas, IGNORES)
def test_an_objects_set_from_its_own_fields_set_is_the_full_one_whatever_its_metadata(obj, other_meta, ignore):
    """The set kept from one create serves another with the same fields and any metadata."""
    root = root_type(SCHEMA)
    own = outcome(typed.added_fields, root, obj, ignore)
    if isinstance(own, tuple):  # the fields cannot be typed: a verdict keeps None, the full path runs
        return
    for meta in (obj["metadata"], other_meta):
        alike = {**obj, "metadata": meta}
        assert outcome(typed.added_object, root, alike, ignore, own=own) == outcome(typed.added_object, root, alike, ignore)
        full = outcome(fieldmanager.update, SCHEMA, None, alike, manager="m", now="2024-01-01T00:00:00Z", api_version=GV, ignore=ignore)
        fast = outcome(fieldmanager.update, SCHEMA, None, alike, manager="m", now="2024-01-01T00:00:00Z", api_version=GV, ignore=ignore, own_fields=own)
        assert orjson.dumps(fast) == orjson.dumps(full)


def test_the_set_handed_out_is_a_fresh_dict_and_the_kept_one_never_changes():
    root = root_type(SCHEMA)
    obj = {"apiVersion": GV, "kind": "Widget", "metadata": {"name": "w", "labels": {"a": "b"}}, "spec": {"replicas": 1, "tags": ["a"]}}
    own = typed.added_fields(root, obj, ())
    kept = orjson.dumps(own)
    first = typed.added_object(root, obj, (), own=own)
    first["f:spec"] = {}
    first.clear()
    assert orjson.dumps(own) == kept and "f:metadata" not in own
    assert typed.added_object(root, obj, (), own=own) == typed.added_object(root, obj, ())


def test_a_verdict_makes_its_field_set_once_and_keeps_it_per_root_and_ignored_fields(monkeypatch):
    server = _server(remembering=True)
    rt = server.types.by_kind("", "v1", "Pod")
    made = []
    real = typed.added_fields
    monkeypatch.setattr(typed, "added_fields", lambda *args: made.append(args[2]) or real(*args))
    for i in range(5):
        server.registry.create(rt, "default", _pod(f"p{i}"), WriteOptions(field_manager=f"m{i % 2}"))
    assert made == [("status",)]  # the third create is the verdict's first use; the later ones reuse it
    (verdict,) = server.registry.verdicts._table.values()
    root, ignore, fields = verdict.field_set
    assert root is root_type(rt.schema) and ignore == ("status",) and set(fields) == {"f:spec"}


def test_managed_fields_after_a_verdict_are_the_full_paths_whoever_writes_and_whatever_is_sent():
    """Field managers, labels and managedFields sent in the body vary between creates of one spec."""
    remembering, computing = _server(remembering=True), _server(remembering=False)
    sent = [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "time": "2023-01-01T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:containers": {}}}}]
    bodies = []
    for i in range(12):
        pod = _pod(f"m{i}")
        pod["metadata"]["labels"] = {"app": "web", "n": str(i % 3)}
        if i % 4 == 3:
            pod["metadata"]["managedFields"] = copy.deepcopy(sent)
        if i % 5 == 4:
            del pod["metadata"]["labels"]
        bodies.append(("", "Pod", "default", pod))
    bodies += _bodies()

    def run(server):
        serviceaccounts._rng.seed(7)  # the token volume's random name
        out = []
        for index, (group, kind, namespace, body) in enumerate(bodies):
            rt = server.types.by_kind(group, "v1" if not group else "v1alpha1", kind)
            opts = WriteOptions(field_manager=["alice", "bob", ""][index % 3])
            out.append(server.registry.create(rt, namespace, copy.deepcopy(body), opts).raw)
        return out

    assert run(remembering) == run(computing)
    assert remembering.registry.verdicts.hits >= 15
