"""An update's schema walk against the stored object (``apply(..., stored=...)``,
mockapi/schema/changed.py) gives what the full walk gives: the same object, the same pruned
paths, the same errors, whatever was changed in a stored object admitted by the schema."""

from __future__ import annotations

import copy

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockapi.models import crdgen
from mockapi.registry import builtin
from mockapi.schema import structural
from mockapi.schema.changed import same_json


def _crd_schema(name: str) -> dict:
    return crdgen.generate()[name]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def _builtin_schema(kind: str) -> dict:
    manifest = next(m for m in builtin.manifests() if m["spec"]["names"]["kind"] == kind)
    return manifest["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


STRING, INTEGER = {"type": "string"}, {"type": "integer"}
CONDITION = {"type": "object", "required": ["type", "status"], "properties": {
    "type": STRING, "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
    "observedGeneration": {"type": "integer", "minimum": 0},
    "lastTransitionTime": {"type": "string", "format": "date-time"},
    "reason": {"type": "string", "maxLength": 12, "default": "Unset"}, "message": STRING,
}}
# a CRD of our own: defaults at several depths, list-map-keys, a set, an atomic list, a preserved
# map, an int-or-string, a whole-object check (maxProperties) and nullable fields
WIDGET = {"type": "object", "properties": {
    "apiVersion": STRING, "kind": STRING, "metadata": {"type": "object"},
    "spec": {"type": "object", "properties": {"size": {"type": "integer", "default": 3}}},
    "status": {"type": "object", "properties": {
        "phase": {"type": "string", "default": "Pending", "enum": ["Pending", "Ready"]},
        "conditions": {"type": "array", "items": CONDITION, "x-kubernetes-list-type": "map", "minItems": 2,
                       "x-kubernetes-list-map-keys": ["type"]},
        "ports": {"type": "array", "maxItems": 3, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
                  "items": {"type": "object", "required": ["port"], "properties": {
                      "port": INTEGER, "protocol": {"type": "string", "default": "TCP"}, "name": STRING}}},
        "tags": {"type": "array", "items": STRING, "x-kubernetes-list-type": "set", "maxItems": 4},
        "ratios": {"type": "array", "items": {"type": "number"}, "uniqueItems": True},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "limits": {"type": "object", "maxProperties": 3, "additionalProperties": {"x-kubernetes-int-or-string": True}},
        "note": {"type": "string", "nullable": True},
        "nested": {"type": "object", "default": {}, "properties": {
            "depth": {"type": "integer", "default": 1}, "items": {"type": "array", "items": {
                "type": "object", "properties": {"a": {"type": "boolean", "default": False}, "b": STRING}}}}},
    }},
}}


def _claim() -> dict:
    return {
        "apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClaim",
        "metadata": {"name": "c-1", "namespace": "ns", "resourceVersion": "7"},
        "spec": {"claims": [{"deviceClass": "gpu", "limits": {"count": 1}}]},
        "status": {
            "allocations": [{"devicePoolName": "node-017-gpu-0", "deviceName": "gpu-3",
                             "allocations": [{"name": "memory", "allocation": "8Gi"}]}],
            "nodeName": "node-017",
            "conditions": [{"type": "Allocated", "status": "True", "observedGeneration": 1, "lastTransitionTime": "2026-11-24T00:01:53Z",
                            "reason": "Allocated", "message": "allocated 1 device"}],
        },
    }


def _pod() -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "app", "image": "nginx", "ports": [{"containerPort": 80}]}]},
        "status": {
            "phase": "Running", "podIP": "10.0.0.5", "startTime": "2026-11-24T00:01:53Z",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-24T00:01:53Z"},
                           {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-24T00:01:50Z"}],
            "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0, "image": "nginx", "imageID": "",
                                   "state": {"running": {"startedAt": "2026-11-24T00:01:53Z"}}}],
            "deviceClaimStatuses": [{"name": "gpu", "deviceClaimName": "c-1"}, {"name": "fpga"}],
        },
    }


def _widget() -> dict:
    return {
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"size": 5},
        "status": {
            "phase": "Ready",
            "conditions": [{"type": "A", "status": "True", "observedGeneration": 2, "lastTransitionTime": "2026-11-24T00:01:53Z"},
                           {"type": "B", "status": "False", "reason": "Waiting", "message": "b"}],
            "ports": [{"port": 80}, {"port": 80, "protocol": "UDP", "name": "dns"}],
            "tags": ["x", "y"], "ratios": [1.0, 0.5, -0.0], "extra": {"any": [1, {"thing": True}]},
            "limits": {"cpu": 2, "memory": "1Gi"}, "note": None,
            "nested": {"items": [{"b": "x"}, {"a": True}]},
        },
    }


CASES = {
    "DeviceClaim": (_crd_schema("devmgmtproto.k8s.io_deviceclaims.yaml"), _claim),
    "Pod": (_builtin_schema("Pod"), _pod),
    "Widget": (WIDGET, _widget),
}

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from([1.0, 0.5, -0.0, 2**63, 1e300]),
    st.sampled_from(["", "True", "False", "Ready", "A", "B", "TCP", "8Gi", "x", "2026-11-24T00:01:53Z", "not a time", "gpu-3"]),
)


def _names(schema: dict, found: set[str]) -> set[str]:
    if isinstance(schema, dict):
        for key, sub in (schema.get("properties") or {}).items():
            found.add(key)
            _names(sub, found)
        for key in ("items", "additionalProperties"):
            _names(schema.get(key), found)
    return found


def _containers(value, path=()):
    """Every dict and list in ``value`` with its path."""
    if type(value) in (dict, list):
        yield path, value
        items = value.items() if type(value) is dict else enumerate(value)
        for key, item in items:
            yield from _containers(item, (*path, key))


def _mutate(data, obj: dict, names: list[str]) -> None:
    """A few random changes below ``status`` (or ``spec``), in place: values set (to new ones, or
    to the same one as another JSON type), keys removed or added, list items moved, added, removed."""
    values = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(names), inner, max_size=3),
                          max_leaves=5)
    for _ in range(data.draw(st.integers(1, 4))):
        top = data.draw(st.sampled_from(["status", "status", "status", "spec"]))
        if type(obj.get(top)) is not dict:
            obj[top] = {}
        places = list(_containers(obj[top]))
        places += [place for place in places if type(place[1]) is list] * 3  # lists: where pairing is subtle
        _, place = data.draw(st.sampled_from(places))
        keys = list(place) if type(place) is dict else list(range(len(place)))
        op = data.draw(st.sampled_from(["set", "retype", "remove", "add", "move", "copy"]))
        if op == "set" and keys:
            place[data.draw(st.sampled_from(keys))] = data.draw(values)
        elif op == "retype" and keys:
            key = data.draw(st.sampled_from(keys))
            old = place[key]
            place[key] = {True: 1, False: 0, 1: True, 0: 0.0, 2: 2.0}.get(old, old) if type(old) in (bool, int) else (
                float(old) if type(old) is float else old)
        elif op == "remove" and keys:
            del place[data.draw(st.sampled_from(keys))]
        elif op == "add":
            if type(place) is dict:
                place[data.draw(st.sampled_from(names + ["unknownField"]))] = data.draw(values)
            else:
                place.insert(data.draw(st.integers(0, len(place))), data.draw(values))
        elif op == "move" and type(place) is list and len(place) > 1:
            place.reverse()
            item = place[data.draw(st.integers(0, len(place) - 1))]
            if type(item) is dict and item and data.draw(st.booleans()):  # and changed, where it went
                item[data.draw(st.sampled_from(sorted(item)))] = data.draw(_SCALARS)
        elif op == "copy" and type(place) is list and place:
            for _ in range(data.draw(st.integers(1, 3))):
                place.append(copy.deepcopy(place[data.draw(st.integers(0, len(place) - 1))]))


def _outcome(outcome) -> tuple:
    return outcome.unknown_fields, [(e.type, e.field, str(e)) for e in outcome.errors]


def _admitted(schema: dict, obj: dict) -> dict | None:
    outcome = structural.Validator(schema).apply(obj)
    return None if outcome.errors else obj


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(CASES)), st.data())
def test_the_walk_against_the_stored_object_matches_the_full_walk(case, data):
    schema, make = CASES[case]
    names = sorted(_names(schema, set()))[:60] + ["type", "status", "port"]
    stored = make()
    if data.draw(st.booleans()):  # stored objects of other shapes, when the schema admits them
        varied = copy.deepcopy(stored)
        _mutate(data, varied, names)
        stored = _admitted(schema, varied) or stored
    stored = _admitted(schema, stored)
    assert stored is not None
    sent = copy.deepcopy(stored)
    _mutate(data, sent, names)
    full, walked = copy.deepcopy(sent), copy.deepcopy(sent)
    expected = structural.Validator(schema).apply(full)
    validator = structural.Validator(schema)
    unchanged = tuple(k for k, v in walked.items() if k in ("spec", "status") and k in stored and same_json(v, stored[k]))
    got = validator.apply(walked, unchanged=unchanged, remember=True, stored=stored)
    assert _outcome(got) == _outcome(expected)
    assert orjson.dumps(walked) == orjson.dumps(full)
    # and again, when the remembered values of a first apply may serve
    again = copy.deepcopy(sent)
    assert _outcome(validator.apply(again, unchanged=unchanged, remember=True, stored=stored)) == _outcome(expected)
    assert orjson.dumps(again) == orjson.dumps(full)


def test_same_json_keeps_json_types_and_key_order():
    assert same_json({"a": [1, "x"]}, {"a": [1, "x"]})
    assert not same_json({"a": True}, {"a": 1})
    assert not same_json([1.0], [1])
    assert not same_json(1.0, float("1"))  # floats are walked (-0.0 == 0.0), but for the very same object
    assert not same_json(True, 1)
    assert not same_json({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert same_json(None, None)
    assert not same_json([2**64], [2**64])  # beyond what orjson encodes: walked


def test_a_condition_changed_in_place_walks_only_that_condition():
    """What the skip is for: a status PUT that changes one condition's message walks neither the
    rest of status nor the unchanged fields of the condition (no format check of its time)."""
    schema, make = CASES["Widget"]
    stored = _admitted(schema, make())
    sent = copy.deepcopy(stored)
    sent["status"]["conditions"][0]["message"] = "new"
    sent["status"]["conditions"][0]["lastTransitionTime"] = "not a time"
    sent["status"]["conditions"].reverse()  # moved: paired by its key, not its index
    expected = structural.Validator(schema).apply(copy.deepcopy(sent))
    got = structural.Validator(schema).apply(sent, stored=stored)
    assert [str(e) for e in got.errors] == [str(e) for e in expected.errors] == [
        'status.conditions[1].lastTransitionTime: Invalid value: "not a time": '
        'status.conditions[1].lastTransitionTime in body must be of type date-time: "not a time"']


def test_a_field_removed_from_a_stored_subtree_is_defaulted_again():
    schema, make = CASES["Widget"]
    stored = _admitted(schema, make())
    assert stored["status"]["conditions"][0]["reason"] == "Unset" and stored["status"]["ports"][0]["protocol"] == "TCP"
    sent = copy.deepcopy(stored)
    del sent["status"]["conditions"][0]["reason"]
    del sent["status"]["ports"][0]["protocol"]
    del sent["status"]["nested"]["depth"]
    assert not structural.Validator(schema).apply(sent, stored=stored).errors
    assert sent == stored
