"""The pydantic models accept every object the CRDs accept, and give it back unchanged."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mockapi.models import crdgen
from mockapi.models import devmgmt_v1alpha1 as api

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def our_objects() -> list:
    objects = []
    for path in sorted((ROOT / "testdata").glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text()), start=1):
            if doc and doc.get("apiVersion") == api.API_VERSION:
                objects.append(pytest.param(doc, id=f"{path.name}:{index}:{doc['metadata']['name']}"))
    return objects


def round_trip(model: type, obj: dict) -> dict:
    return model.model_validate(obj).model_dump(by_alias=True, exclude_none=True)


@pytest.mark.parametrize("obj", our_objects())
def test_every_testdata_object_of_our_kinds_validates_and_round_trips(obj):
    assert round_trip(api.KINDS[obj["kind"]], obj) == obj


def test_testdata_has_objects_of_every_kind():
    kinds = {param.values[0]["kind"] for param in our_objects()}
    assert kinds == set(api.KINDS)


def test_a_typo_in_a_field_name_is_rejected():
    obj = {"metadata": {"name": "c"}, "spec": {"driver": "d", "deviceType": "gpu", "contstraints": "true"}}
    with pytest.raises(ValidationError, match="contstraints"):
        api.DeviceClass.model_validate(obj)


@pytest.mark.parametrize(
    ("model", "spec", "missing"),
    [
        (api.DeviceClass, {"deviceType": "gpu"}, "driver"),
        (api.DevicePool, {"driver": "d"}, "devices"),
        (api.DeviceClaim, {"matchAttributes": ["numa"]}, "claims"),
    ],
)
def test_required_fields_are_required(model, spec, missing):
    with pytest.raises(ValidationError, match=missing):
        model.model_validate({"metadata": {"name": "x"}, "spec": spec})


def test_typed_construction_uses_python_names_and_dumps_wire_names():
    claim = api.DeviceClaim(
        api_version=api.API_VERSION,
        kind="DeviceClaim",
        metadata=api.ObjectMeta(name="c", namespace="default"),
        spec=api.DeviceClaimSpec(
            match_attributes=["numa"],
            claims=[api.DeviceClaimInstance(one_of=[api.DeviceClaimDetail(device_class="a", requests={"count": 2})])],
        ),
    )
    assert claim.model_dump(by_alias=True, exclude_none=True) == {
        "apiVersion": "devmgmtproto.k8s.io/v1alpha1",
        "kind": "DeviceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"matchAttributes": ["numa"], "claims": [{"oneOf": [{"deviceClass": "a", "requests": {"count": 2}}]}]},
    }


def test_a_status_with_our_extensions_round_trips():
    status = {
        "allocations": [
            {"devicePoolName": "p", "deviceName": "d", "adminAccess": True, "allocations": [{"name": "memory", "allocation": "20Gi"}]}
        ],
        "classConfigs": [{"apiVersion": "v1", "kind": "ConfigMap", "data": {"vlanID": "2000"}, "metadata": {"name": "x"}}],
        "deviceStatuses": [
            {
                "devicePoolName": "p",
                "deviceName": "d",
                "deviceIP": "10.0.0.1",
                "deviceIPs": [{"ip": "10.0.0.1"}],
                "deviceInfo": [{"anything": {"goes": [1, None]}}],
            }
        ],
        "conditions": [
            {
                "type": "Allocated",
                "status": "True",
                "reason": "Allocated",
                "message": "",
                "lastTransitionTime": "2024-05-01T00:00:00Z",
                "observedGeneration": 1,
            }
        ],
        "nodeName": "mixed-00",
        "podNames": ["p"],
    }
    obj = {"metadata": {"name": "c", "namespace": "monitoring"}, "spec": {"claims": [{"deviceType": "gpu"}]}, "status": status}
    assert round_trip(api.DevicePrivilegedClaim, obj) == obj
    parsed = api.DeviceClaim.model_validate(obj)
    assert parsed.status.device_statuses[0].device_ips[0].ip == "10.0.0.1"
    assert parsed.status.allocations[0].admin_access is True


def test_metadata_keeps_fields_it_does_not_type():
    meta = {"name": "p", "managedFields": [{"manager": "kubectl"}], "uid": "u", "generation": 3, "labels": {"a": "b"}}
    obj = {"metadata": meta, "deviceTypes": ["gpu"]}
    assert round_trip(api.DeviceDriver, obj) == obj
    assert api.DeviceDriver.model_validate(obj).metadata.generation == 3


def test_quantities_keep_their_wire_form():
    pool = api.DevicePool.model_validate(
        {"metadata": {"name": "p"}, "spec": {"driver": "d", "resources": [{"name": "slices", "capacity": 7, "blockSize": "1"}], "devices": []}}
    )
    assert pool.spec.resources[0].capacity == 7 and pool.spec.resources[0].block_size == "1"


# --- any object the CRD schema accepts ---------------------------------------------------------

_QUANTITIES = st.one_of(
    st.integers(min_value=0, max_value=10**9),
    st.builds(lambda n, s: f"{n}{s}", st.integers(min_value=0, max_value=4096), st.sampled_from(["", "Ki", "Mi", "Gi", "m", "k", "G", "e3"])),
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda children: st.lists(children, max_size=2) | st.dictionaries(st.text(min_size=1, max_size=4), children, max_size=2),
    max_leaves=4,
)


def objects_of(node: dict) -> st.SearchStrategy:
    """Objects a structural schema accepts (quantities and patterns included)."""
    if node.get("x-kubernetes-int-or-string"):
        return _QUANTITIES
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return st.dictionaries(st.text(min_size=1, max_size=4), _JSON, max_size=2)
    kind = node["type"]
    if kind == "array":
        items = objects_of(node["items"])
        keys = node.get("x-kubernetes-list-map-keys")
        unique_by = (lambda item: tuple(item[k] for k in keys)) if keys else None
        return st.lists(items, max_size=2, unique_by=unique_by)
    if kind == "object":
        return _objects(node)
    return _scalars(node)


def _objects(node: dict) -> st.SearchStrategy:
    if "additionalProperties" in node:
        return st.dictionaries(st.text(min_size=1, max_size=6), objects_of(node["additionalProperties"]), max_size=2)
    properties = node.get("properties")
    if properties is None:  # metadata
        return st.fixed_dictionaries({"name": st.just("x")})
    required = node.get("required", [])
    return st.fixed_dictionaries(
        {k: objects_of(v) for k, v in properties.items() if k in required},
        optional={k: objects_of(v) for k, v in properties.items() if k not in required},
    )


def _scalars(node: dict) -> st.SearchStrategy:
    kind = node["type"]
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(min_value=node.get("minimum", -(2**40)), max_value=2**40)
    if "enum" in node:
        return st.sampled_from(node["enum"])
    if node.get("format") == "date-time":
        return st.just("2024-05-01T12:00:00Z")
    if "pattern" in node:
        return st.from_regex(node["pattern"], fullmatch=True).filter(lambda s: len(s) <= node.get("maxLength", 64))
    return st.text(max_size=6)


@pytest.mark.parametrize("kind", sorted(api.KINDS))
def test_the_model_accepts_and_round_trips_whatever_its_crd_schema_accepts(kind):
    model = api.KINDS[kind]
    schema = crdgen.openapi_schema(model)
    schema["properties"]["metadata"] = {"type": "object"}
    schema["required"] = sorted(set(schema.get("required", [])) | {"metadata"})  # stored objects always have it

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(obj=objects_of(schema))
    def check(obj):
        assert round_trip(model, obj) == obj

    check()
