"""An update's top-level fields left as stored (``apply(..., unchanged=...)``) skip the list-type
and embedded-resource checks too, as they skip the walk: each check of a top-level value is a
function of the value and the schema alone, and the stored value passed them. Property-tested
against the full walk on DevicePools (list maps in ``spec``, a status the allocator rewrites) and
the cases of tests/test_schema_changed.py."""

from __future__ import annotations

import copy

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockapi.schema import structural, validate
from mockapi.schema.changed import same_json
from tests.test_schema_changed import CASES, _admitted, _crd_schema, _mutate, _names, _outcome

POOL_SCHEMA = _crd_schema("devmgmtproto.k8s.io_devicepools.yaml")


def _pool() -> dict:
    devices = [{"name": f"gpu-{d}", "attributes": [{"name": "profile", "stringValue": "3g.20gb"}, {"name": "memory", "quantityValue": "19968Mi"}],
                "requests": {"memory": "19968Mi", "slices": "3"}} for d in range(3)]
    return {
        "apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DevicePool", "metadata": {"name": "node-1-gpu", "resourceVersion": "9"},
        "spec": {"driver": "example.com-gpu", "nodeName": "node-1", "attributes": [{"name": "vendor", "stringValue": "example.com"}],
                 "resources": [{"name": "memory", "capacity": "120Gi", "blockSize": "1Gi"}, {"name": "slices", "capacity": "21"}],
                 "devices": devices},
        "status": {"availableDevices": 3},
    }


ALL_CASES = {**CASES, "DevicePool": (POOL_SCHEMA, _pool)}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(ALL_CASES)), st.data())
def test_fields_left_as_stored_skip_the_whole_object_checks_with_the_full_walks_outcome(case, data):
    schema, make = ALL_CASES[case]
    names = sorted(_names(schema, set()))[:60] + ["type", "status", "port", "name"]
    stored = _admitted(schema, make())
    assert stored is not None
    sent = copy.deepcopy(stored)
    _mutate(data, sent, names)
    full, walked = copy.deepcopy(sent), copy.deepcopy(sent)
    expected = structural.Validator(schema).apply(full)
    unchanged = tuple(k for k, v in walked.items() if k in ("spec", "status") and k in stored and same_json(v, stored[k]))
    with_stored = data.draw(st.booleans())
    got = structural.Validator(schema).apply(walked, unchanged=unchanged, stored=stored if with_stored else None)
    assert _outcome(got) == _outcome(expected)
    assert orjson.dumps(walked) == orjson.dumps(full)


def test_a_pools_status_write_does_not_check_its_stored_spec_lists_again(monkeypatch):
    stored = _admitted(POOL_SCHEMA, _pool())
    seen = []
    real = validate._list_type_errors
    monkeypatch.setattr(validate, "_list_type_errors", lambda node, value, path, errs: seen.append(path) or real(node, value, path, errs))
    sent = copy.deepcopy(stored)
    sent["status"]["availableDevices"] = 2
    assert _outcome(structural.Validator(POOL_SCHEMA).apply(sent, unchanged=("spec",), stored=stored)) == ([], [])
    assert not any(path.startswith("spec") for path in seen)


def test_a_changed_spec_with_a_duplicate_device_is_still_refused():
    stored = _admitted(POOL_SCHEMA, _pool())
    sent = copy.deepcopy(stored)
    sent["spec"]["devices"].append(copy.deepcopy(sent["spec"]["devices"][0]))
    full = structural.Validator(POOL_SCHEMA).apply(copy.deepcopy(sent))
    got = structural.Validator(POOL_SCHEMA).apply(sent, unchanged=("status",), stored=stored)
    assert _outcome(got) == _outcome(full)
    assert any(e.type == "duplicate" and e.field == "spec.devices[3]" for e in got.errors)
