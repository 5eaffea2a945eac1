"""What the write path remembers gives exactly what the full computation gives: the schema walk's
defaults (key order included), and managedFields after a manager writes within its own fields."""

from __future__ import annotations

import copy

import orjson
import pytest

from mockapi import fieldmanager
from mockapi.schema import structural

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "size": {"type": "integer"},
    "mode": {"type": "string", "default": "fast"},
    "limits": {"type": "object", "default": {"cpu": "1"}, "properties": {"cpu": {"type": "string"}}},
    "ports": {"type": "array", "items": {"type": "object", "properties": {
        "port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}, "name": {"type": "string"}}}},
    "note": {"type": "string"},
}}}}


@pytest.mark.parametrize("spec", [
    {"size": 3, "ports": [{"port": 80}, {"name": "b", "port": 81, "protocol": "UDP"}]},
    {"ports": [], "size": 1, "mode": "slow"},
    {"size": 2, "note": None, "ports": [{"port": 1}]},  # a null dropped: not additions alone
])
def test_a_remembered_value_comes_out_as_the_walk_made_it_key_order_included(spec):
    remembering = structural.Validator(SCHEMA)
    for _ in range(3):
        obj, fresh = {"spec": copy.deepcopy(spec)}, {"spec": copy.deepcopy(spec)}
        assert remembering.apply(obj, remember=True) == structural.Validator(SCHEMA).apply(fresh)
        assert orjson.dumps(obj) == orjson.dumps(fresh)
    assert len(remembering._clean) == 1


def _write(old, new, manager, subresource=""):
    managed = fieldmanager.update(None, old, new, manager=manager, now=NOW[0], api_version="v1", subresource=subresource)
    out = copy.deepcopy(new)
    out["metadata"]["managedFields"] = managed
    return out


NOW = ["2026-01-01T00:00:00Z"]


def test_a_manager_writing_again_within_its_own_fields_only_moves_its_time(monkeypatch):
    created = _write(None, {"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"size": 1}}, "creator")
    NOW[0] = "2026-01-01T00:00:05Z"
    status = copy.deepcopy(created)
    status["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    once = _write(created, status, "controller", "status")
    NOW[0] = "2026-01-01T00:00:09Z"
    again = copy.deepcopy(once)
    again["status"]["phase"] = "Succeeded"
    remembered = fieldmanager.update(None, once, again, manager="controller", now=NOW[0], api_version="v1", subresource="status")
    monkeypatch.setattr(fieldmanager, "_within_own_fields", lambda *args: False)
    computed = fieldmanager.update(None, once, copy.deepcopy(again), manager="controller", now=NOW[0], api_version="v1", subresource="status")
    assert remembered == computed
    creator, controller = remembered
    assert creator == once["metadata"]["managedFields"][0]
    assert controller["time"] == NOW[0] and controller["fieldsV1"] == once["metadata"]["managedFields"][1]["fieldsV1"]
