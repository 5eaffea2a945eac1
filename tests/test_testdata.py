"""testdata/ is a set of valid manifests, applied in lexical order, that exercises every spec feature."""

from __future__ import annotations

import copy
import importlib.util
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from mockapi.models import crdgen
from mockapi.models import devmgmt_v1alpha1 as api

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
ADMIN_LABEL = "devmgmtproto.k8s.io/admin-access"


@dataclass(frozen=True)
class Doc:
    file: str
    index: int
    obj: dict

    @property
    def kind(self) -> str:
        return self.obj["kind"]

    @property
    def name(self) -> str:
        return self.obj["metadata"]["name"]

    @property
    def namespace(self) -> str:
        return self.obj["metadata"].get("namespace", "")

    def __str__(self) -> str:
        return f"{self.file}:{self.index}:{self.kind}/{self.name}"


def load() -> list[Doc]:
    return [
        Doc(path.name, index, obj)
        for path in sorted(TESTDATA.glob("*.yaml"))
        for index, obj in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8")), start=1)
    ]


DOCS = load()


def of_kind(*kinds: str) -> list[Doc]:
    return [doc for doc in DOCS if doc.kind in kinds]


def specs(kind: str) -> list[dict]:
    return [doc.obj["spec"] for doc in of_kind(kind)]


def details(claim_spec: dict) -> list[dict]:
    """Every DeviceClaimDetail of a claim spec: inline ones and oneOf alternatives."""
    return [d for instance in claim_spec["claims"] for d in (instance.get("oneOf") or [instance])]


def all_claim_specs() -> list[dict]:
    embedded = [dc["claim"] for pod in specs("Pod") for dc in pod.get("deviceClaims", []) if "claim" in dc]
    return specs("DeviceClaim") + specs("DevicePrivilegedClaim") + embedded


# --- a minimal structural-schema walker ---------------------------------------------------------


@dataclass
class Outcome:
    unknown_fields: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def walk(schema: dict, value, path: str = "", outcome: Outcome | None = None) -> Outcome:
    """Validate ``value`` against a structural schema, listing unknown fields apart from errors."""
    outcome = outcome if outcome is not None else Outcome()
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            outcome.errors.append(f"{path}: not an int or a string: {value!r}")
        elif isinstance(value, str) and "pattern" in schema and not re.fullmatch(schema["pattern"], value):
            outcome.errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
        return outcome
    if isinstance(value, dict):
        outcome.errors += [f"{path}.{name}: required" for name in schema.get("required", []) if name not in value]
    kind = schema.get("type")
    if kind == "object":
        _walk_object(schema, value, path, outcome)
    elif kind == "array":
        _walk_array(schema, value, path, outcome)
    elif kind is not None:
        _check_scalar(schema, value, path, outcome)
    for branch_set in ("oneOf", "anyOf"):
        if branch_set in schema:
            passed = sum(not walk(branch, value, path).errors for branch in schema[branch_set])
            if passed == 0 or (branch_set == "oneOf" and passed > 1):
                outcome.errors.append(f"{path}: {passed} of the {branch_set} branches match")
    return outcome


def _walk_object(schema: dict, value, path: str, outcome: Outcome) -> None:
    if not isinstance(value, dict):
        outcome.errors.append(f"{path}: not an object")
        return
    properties = schema.get("properties") or {}
    for name, child in value.items():
        if name in properties:
            walk(properties[name], child, f"{path}.{name}", outcome)
        elif isinstance(schema.get("additionalProperties"), dict):
            walk(schema["additionalProperties"], child, f"{path}.{name}", outcome)
        elif not schema.get("x-kubernetes-preserve-unknown-fields") and path != ".metadata":
            outcome.unknown_fields.append(f"{path}.{name}")


def _walk_array(schema: dict, value, path: str, outcome: Outcome) -> None:
    if not isinstance(value, list):
        outcome.errors.append(f"{path}: not an array")
        return
    for index, item in enumerate(value):
        walk(schema["items"], item, f"{path}[{index}]", outcome)
    keys = schema.get("x-kubernetes-list-map-keys")
    if keys:
        duplicates = [k for k, n in Counter(tuple(i.get(k) for k in keys) for i in value).items() if n > 1]
        outcome.errors += [f"{path}: duplicate entries for {dict(zip(keys, d))}" for d in duplicates]


def _check_scalar(schema: dict, value, path: str, outcome: Outcome) -> None:
    python = {"string": str, "integer": int, "boolean": bool, "number": (int, float)}[schema["type"]]
    if not isinstance(value, python) or (schema["type"] in ("integer", "number") and isinstance(value, bool)):
        outcome.errors.append(f"{path}: not a {schema['type']}: {value!r}")
    elif "enum" in schema and value not in schema["enum"]:
        outcome.errors.append(f"{path}: {value!r} not one of {schema['enum']}")
    elif isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        outcome.errors.append(f"{path}: {value!r} does not match {schema['pattern']}")


def crd_schemas() -> dict[tuple[str, str], dict]:
    """(apiVersion, kind) → openAPIV3Schema, from schemas/, the FoozerConfig CRD and the built-in kinds."""
    from mockapi.registry import builtin

    crds = [yaml.safe_load(path.read_text()) for path in sorted((ROOT / "schemas").glob("*.yaml"))]
    crds += [doc.obj for doc in of_kind("CustomResourceDefinition")] + builtin.manifests()
    schemas = {}
    for crd in crds:
        spec = crd["spec"]
        for version in spec["versions"]:
            api_version = f"{spec['group']}/{version['name']}" if spec["group"] else version["name"]
            schemas[(api_version, spec["names"]["kind"])] = version["schema"]["openAPIV3Schema"]
    return schemas


SCHEMAS = crd_schemas()


# --- every document ----------------------------------------------------------------------------


@pytest.mark.parametrize("doc", DOCS, ids=str)
def test_every_document_has_api_version_kind_and_a_dns1123_name(doc):
    assert isinstance(doc.obj, dict)
    assert doc.obj.get("apiVersion") and doc.obj.get("kind")
    assert DNS1123_SUBDOMAIN.fullmatch(doc.name) and len(doc.name) <= 253
    if doc.namespace:
        assert DNS1123_LABEL.fullmatch(doc.namespace)


@pytest.mark.parametrize("doc", DOCS, ids=str)
def test_every_document_validates_against_its_schema_with_no_unknown_fields(doc):
    outcome = walk(SCHEMAS[(doc.obj["apiVersion"], doc.kind)], doc.obj)
    assert outcome.unknown_fields == [] and outcome.errors == []


def test_embedded_pod_claims_are_device_claim_specs():
    schema = crdgen.openapi_schema(api.DeviceClaimSpec)
    embedded = [dc["claim"] for pod in specs("Pod") for dc in pod["deviceClaims"] if "claim" in dc]
    assert embedded
    for claim in embedded:
        outcome = walk(schema, claim)
        assert outcome.unknown_fields == [] and outcome.errors == []
        assert api.DeviceClaimSpec.model_validate(claim).model_dump(by_alias=True, exclude_none=True) == claim


def test_the_servers_schema_machinery_accepts_our_objects_as_they_are():
    structural = pytest.importorskip("mockapi.schema.structural")
    for doc in DOCS:
        outcome = structural.apply_schema(SCHEMAS[(doc.obj["apiVersion"], doc.kind)], copy.deepcopy(doc.obj))  # it defaults in place
        assert (outcome.unknown_fields, outcome.errors) == ([], []), doc


def test_the_foozer_crd_is_one_the_server_accepts():
    crd_checks = pytest.importorskip("mockapi.schema.crd")
    [crd] = of_kind("CustomResourceDefinition")
    assert crd_checks.validate_crd(copy.deepcopy(crd.obj)) == []


def test_the_walker_reports_unknown_fields_and_errors_apart():
    schema = SCHEMAS[(api.API_VERSION, "DeviceClass")]
    typo = {"metadata": {"name": "x"}, "spec": {"driver": "d", "deviceType": "gpu", "contstraints": "x", "adminAccess": "yes"}}
    assert walk(schema, typo).unknown_fields == [".spec.contstraints"]
    assert walk(schema, typo).errors == [".spec.adminAccess: not a boolean: 'yes'"]
    pool = {"metadata": {"name": "p"}, "spec": {"driver": "d", "devices": [{"name": "a", "requests": {"m": "1 Gi"}}]}}
    assert walk(SCHEMAS[(api.API_VERSION, "DevicePool")], pool).errors[0].startswith(".spec.devices[0].requests.m: '1 Gi'")


def test_the_generated_files_are_what_generate_py_writes():
    spec = importlib.util.spec_from_file_location("testdata_generate", TESTDATA / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    for name, text in generate.render().items():
        assert (TESTDATA / name).read_text(encoding="utf-8") == text, f"run python3 testdata/generate.py ({name})"


# --- applied in lexical order, dependencies come first ------------------------------------------


def test_namespaces_and_kinds_exist_before_the_objects_that_need_them():
    namespaces = {"default"}
    kinds = {(api.API_VERSION, kind) for kind in api.KINDS} | {("apiextensions.k8s.io/v1", "CustomResourceDefinition")}
    kinds |= {("v1", kind) for kind in ("Namespace", "Node", "ConfigMap", "Pod")}
    for doc in DOCS:
        assert (doc.obj["apiVersion"], doc.kind) in kinds, doc
        assert not doc.namespace or doc.namespace in namespaces, doc
        if doc.kind == "Namespace":
            namespaces.add(doc.name)
        if doc.kind == "CustomResourceDefinition":
            spec = doc.obj["spec"]
            kinds |= {(f"{spec['group']}/{v['name']}", spec["names"]["kind"]) for v in spec["versions"]}


def test_namespaced_objects_name_their_namespace():
    for doc in of_kind("DeviceClaim", "DevicePrivilegedClaim", "Pod", "ConfigMap", "FoozerConfig"):
        assert doc.namespace, doc


def test_names_are_unique_per_kind_and_namespace():
    keys = Counter((doc.kind, doc.namespace, doc.name) for doc in DOCS)
    assert [key for key, count in keys.items() if count > 1] == []


# --- references resolve -----------------------------------------------------------------------


def test_classes_and_pools_name_registered_drivers_and_device_types():
    drivers = {doc.name: doc.obj["deviceTypes"] for doc in of_kind("DeviceDriver")}
    assert set(drivers) == {"example.com-foozer", "example.com-barzer", "sriov-nic", "vlan"}
    for spec in specs("DeviceClass"):
        assert spec["deviceType"] in drivers[spec["driver"]], spec
    assert {spec["driver"] for spec in specs("DevicePool")} <= set(drivers)


def test_pools_name_existing_nodes_and_device_names_are_unique_per_pool():
    nodes = {doc.name for doc in of_kind("Node")}
    pools = specs("DevicePool")
    assert {spec["nodeName"] for spec in pools if "nodeName" in spec} == nodes
    for spec in pools:
        names = [device["name"] for device in spec["devices"]]
        assert len(names) == len(set(names))


def test_device_requests_name_resources_their_pool_declares():
    for spec in specs("DevicePool"):
        declared = {resource["name"] for resource in spec.get("resources", [])}
        for device in spec["devices"]:
            assert set(device.get("requests", {})) <= declared, device["name"]


def test_claims_name_existing_classes_and_device_types():
    classes = {doc.name: doc.obj["spec"] for doc in of_kind("DeviceClass")}
    types_offered = {spec["deviceType"] for spec in classes.values()}
    for claim in all_claim_specs():
        for detail in details(claim):
            assert ("deviceClass" in detail) != ("deviceType" in detail), detail
            assert detail.get("deviceClass", next(iter(classes))) in classes
            assert detail.get("deviceType", "gpu") in types_offered


def test_configs_refer_to_objects_that_exist():
    objects = {(doc.obj["apiVersion"], doc.kind, doc.namespace, doc.name) for doc in DOCS}
    for spec in specs("DeviceClass"):
        for ref in spec.get("configs", []):
            assert (ref["apiVersion"], ref["kind"], ref["namespace"], ref["name"]) in objects
    for doc in of_kind("DeviceClaim", "DevicePrivilegedClaim"):
        for detail in details(doc.obj["spec"]):
            for ref in detail.get("configs", []):
                assert (ref["apiVersion"], ref["kind"], doc.namespace, ref["name"]) in objects


def test_match_attributes_name_attributes_that_devices_have():
    attributes = {a["name"] for pool in specs("DevicePool") for a in pool.get("attributes", [])}
    attributes |= {a["name"] for pool in specs("DevicePool") for d in pool["devices"] for a in d.get("attributes", [])}
    for claim in all_claim_specs():
        names = set(claim.get("matchAttributes", [])) | {n for d in details(claim) for n in d.get("matchAttributes", [])}
        assert names <= attributes


def test_pods_refer_to_existing_claims_and_containers_to_their_pod_claims():
    claims = {(doc.namespace, doc.name) for doc in of_kind("DeviceClaim")}
    for doc in of_kind("Pod"):
        entries = {entry["name"]: entry for entry in doc.obj["spec"]["deviceClaims"]}
        for entry in entries.values():
            for key in ("claimName", "claimTemplateName"):
                if key in entry:
                    assert (doc.namespace, entry[key]) in claims
        for container in doc.obj["spec"]["containers"]:
            assert {device["name"] for device in container.get("devices", [])} <= set(entries)


def test_privileged_claims_live_in_namespaces_that_opt_in():
    opted_in = {doc.name for doc in of_kind("Namespace") if doc.obj["metadata"].get("labels", {}).get(ADMIN_LABEL) == "true"}
    privileged = of_kind("DevicePrivilegedClaim")
    assert privileged and all(doc.namespace in opted_in for doc in privileged)


# --- every spec feature is exercised ----------------------------------------------------------


def test_claims_exercise_every_claim_feature():
    classes = {doc.name: doc.obj["spec"] for doc in of_kind("DeviceClass")}
    claims = specs("DeviceClaim") + specs("DevicePrivilegedClaim")
    every = [d for claim in claims for d in details(claim)]
    features = {
        "by class": any("deviceClass" in d for d in every),
        "by device type": any("deviceType" in d for d in every),
        "claim constraints": any("constraints" in d for d in every),
        "requests.count": any("count" in d.get("requests", {}) for d in every),
        "limits.count": any("count" in d.get("limits", {}) for d in every),
        "per-device resource request": any(set(d.get("requests", {})) - {"count"} for d in every),
        "claim-wide matchAttributes": any("matchAttributes" in claim for claim in claims),
        "per-detail matchAttributes": any("matchAttributes" in d for d in every),
        "oneOf": any("oneOf" in instance for claim in claims for instance in claim["claims"]),
        "claim configs": any("configs" in d for d in every),
        "class configs": any(classes[d["deviceClass"]].get("configs") for d in every if "deviceClass" in d),
        "admin access class": any(classes[d["deviceClass"]].get("adminAccess") for d in every if "deviceClass" in d),
        "several details": any(len(claim["claims"]) > 1 for claim in claims),
    }
    assert [name for name, present in features.items() if not present] == []


def test_classes_use_cel_over_attributes_quantities_and_versions():
    constraints = " ".join(spec.get("constraints", "") for spec in specs("DeviceClass"))
    for needle in ("device.vendor == 'example.com'", "device.bandwidth", "quantity('", "semver('", "compareTo("):
        assert needle in constraints
    names = {doc.name for doc in of_kind("DeviceClass")}
    assert {"sriov-nic-1gbps", "sriov-nic-10gbps", "sriov-nic-1gbps-or-faster", "vlan-2000"} <= names


def test_pools_exercise_every_pool_shape_and_attribute_type():
    pools = specs("DevicePool")
    attributes = [a for p in pools for a in p.get("attributes", [])] + [a for p in pools for d in p["devices"] for a in d.get("attributes", [])]
    value_types = {key for a in attributes for key in a if key != "name"}
    assert value_types == {"stringValue", "intValue", "quantityValue", "semVerValue"}
    assert any(p.get("resources") and any("blockSize" in r for r in p["resources"]) and any("requests" in d for d in p["devices"]) for p in pools)
    assert any("nodeName" not in p for p in pools), "a network-attached pool"
    assert any("resources" in d for p in pools for d in p["devices"]), "per-device resources"
    pool_attribute_names = {a["name"] for p in pools for a in p.get("attributes", [])}
    assert {"vendor", "model", "firmwareVersion", "driverVersion", "memory"} <= pool_attribute_names
    models = {a["stringValue"] for a in attributes if a["name"] == "model"}
    assert {"foozer-1000", "foozer-4000"} <= models
    shapes = {doc.obj["metadata"]["labels"]["example.com/node-shape"] for doc in of_kind("Node")}
    assert {f"{m}-{s}" for m in ("foozer-1000", "foozer-4000") for s in ("tiny", "small", "medium", "large")} <= shapes


def test_pods_use_the_three_claim_styles():
    styles = {key for pod in specs("Pod") for entry in pod["deviceClaims"] for key in ("claim", "claimName", "claimTemplateName") if key in entry}
    assert styles == {"claim", "claimName", "claimTemplateName"}


def test_config_map_data_values_are_strings():
    for doc in of_kind("ConfigMap"):
        assert all(isinstance(value, str) for value in doc.obj.get("data", {}).values())
