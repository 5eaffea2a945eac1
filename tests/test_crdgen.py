"""schemas/ is generated from the models, and every CRD in it is one a real cluster accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from mockapi.models import crdgen
from mockapi.models import devmgmt_v1alpha1 as api

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
CRDS = crdgen.generate()
# Short names kubectl already resolves on a cluster (core, apps, batch, networking, storage, ...).
WELL_KNOWN_SHORT_NAMES = {
    "cm", "cs", "csr", "crd", "crds", "deploy", "ds", "ep", "ev", "hpa", "ing", "limits", "netpol",
    "no", "ns", "pc", "pdb", "po", "psp", "pv", "pvc", "quota", "rc", "rs", "sa", "sc", "sts", "svc",
}  # fmt: skip
LOGICAL = ("anyOf", "allOf", "oneOf", "not")


def schema_of(kind: str) -> dict:
    crd = next(c for c in CRDS.values() if c["spec"]["names"]["kind"] == kind)
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def structural_problems(node: dict, path: str = "", *, root: bool = True) -> list[str]:
    """kube-apiserver's structural-schema rules, the ones a generator can get wrong."""
    problems = []
    if "$ref" in node:
        problems.append(f"{path}: $ref")
    typed = "type" in node or node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields")
    if not typed:
        problems.append(f"{path}: no type")
    if root and node.get("type") != "object":
        problems.append("root: type must be object")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{path}: properties and additionalProperties together")
    if node.get("type") == "array" and "items" not in node:
        problems.append(f"{path}: array without items")
    for junctor in LOGICAL:
        problems += _junctor_problems(node, junctor, path)
    problems += _list_map_problems(node, path)
    for name, child in (node.get("properties") or {}).items():
        if root and name == "metadata" and child != {"type": "object"}:
            problems.append("metadata: only type object may be given")
        problems += structural_problems(child, f"{path}.{name}", root=False)
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            problems += structural_problems(node[key], f"{path}.{key}", root=False)
    return problems


def _junctor_problems(node: dict, junctor: str, path: str) -> list[str]:
    if junctor not in node:
        return []
    branches = node[junctor] if isinstance(node[junctor], list) else [node[junctor]]
    if node.get("x-kubernetes-int-or-string") and branches == [{"type": "integer"}, {"type": "string"}]:
        return []
    forbidden = ("type", "description", "default", "nullable", "additionalProperties", "$ref")
    return [f"{path}.{junctor}: {key} inside a logical junctor" for branch in branches for key in forbidden if key in branch]


def _list_map_problems(node: dict, path: str) -> list[str]:
    if node.get("x-kubernetes-list-type") != "map":
        return []
    items = node.get("items") or {}
    keys = node.get("x-kubernetes-list-map-keys") or []
    problems = [] if keys else [f"{path}: list-map without keys"]
    for key in keys:
        if key not in (items.get("required") or []):
            problems.append(f"{path}: list-map key {key} is not required")
        if (items.get("properties") or {}).get(key, {}).get("type") not in ("string", "integer", "boolean"):
            problems.append(f"{path}: list-map key {key} is not a scalar")
    return problems


def resolve(schema: dict, json_path: str) -> dict | None:
    """The schema node a printer column's JSONPath (with [*] and [?(...)] steps) reads, or None."""
    node = schema
    for step in re.findall(r"\.([A-Za-z0-9_]+)|\[([^\]]+)\]", json_path):
        name, index = step
        if index:
            if node.get("type") != "array":
                return None
            node = node["items"]
        else:
            node = (node.get("properties") or {}).get(name)
            if node is None:
                return None
    return node


def test_the_committed_schemas_match_the_models():
    assert crdgen.drift(SCHEMAS) == []


def test_what_start_up_serves_is_what_the_models_generate():
    # mockapi/models/served.json spares start-up the models (pydantic): it must be their output
    assert not crdgen.served_drift(), "mockapi/models/served.json is out of date: run `mockapi crds`"


def test_drift_names_changed_missing_and_stale_files_and_write_repairs_them(tmp_path):
    crdgen.write(tmp_path)
    assert crdgen.drift(tmp_path) == []
    changed, missing = "devmgmtproto.k8s.io_deviceclaims.yaml", "devmgmtproto.k8s.io_devicepools.yaml"
    (tmp_path / changed).write_text((tmp_path / changed).read_text().replace("dclaim", "dc"))
    (tmp_path / missing).unlink()
    (tmp_path / "devmgmtproto.k8s.io_oldthings.yaml").write_text(crdgen.HEADER + "{}\n")
    (tmp_path / "devmgmtproto.k8s.io_handwritten.yaml").write_text("{}\n")
    assert sorted(crdgen.drift(tmp_path)) == sorted([changed, missing, "devmgmtproto.k8s.io_oldthings.yaml"])
    crdgen.write(tmp_path)
    assert crdgen.drift(tmp_path) == []
    assert (tmp_path / "devmgmtproto.k8s.io_handwritten.yaml").exists()


def test_rendered_text_is_stable_and_parses_back_to_the_manifest():
    for manifest in CRDS.values():
        text = crdgen.render(manifest)
        assert text.startswith("# Generated by `mockapi crds`; do not edit.\n")
        assert text == crdgen.render(crdgen.generate()[next(n for n, m in CRDS.items() if m is manifest)])
        assert yaml.safe_load(text) == manifest


@pytest.mark.parametrize(
    ("kind", "plural", "scope", "short_name"),
    [
        ("DeviceDriver", "devicedrivers", "Cluster", "ddrv"),
        ("DeviceClass", "deviceclasses", "Cluster", "dcls"),
        ("DevicePool", "devicepools", "Cluster", "dpool"),
        ("DeviceClaim", "deviceclaims", "Namespaced", "dclaim"),
        ("DevicePrivilegedClaim", "deviceprivilegedclaims", "Namespaced", "dpclaim"),
    ],
)
def test_each_kind_has_its_names_scope_and_a_status_subresource(kind, plural, scope, short_name):
    crd = CRDS[f"devmgmtproto.k8s.io_{plural}.yaml"]
    spec = crd["spec"]
    assert crd["metadata"]["name"] == f"{plural}.devmgmtproto.k8s.io"
    assert spec["group"] == "devmgmtproto.k8s.io" and spec["scope"] == scope
    assert spec["names"] == {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": plural,
        "singular": kind.lower(),
        "shortNames": [short_name],
        "categories": ["devmgmt"],
    }
    [version] = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}


def test_short_names_are_unique_and_do_not_shadow_well_known_ones():
    short_names = [name for crd in CRDS.values() for name in crd["spec"]["names"]["shortNames"]]
    assert len(set(short_names)) == len(short_names)
    assert not set(short_names) & WELL_KNOWN_SHORT_NAMES


def test_the_protected_group_carries_the_api_approval_annotation():
    for crd in CRDS.values():
        value = crd["metadata"]["annotations"]["api-approved.kubernetes.io"]
        assert value.startswith(("unapproved", "https://"))


@pytest.mark.parametrize("name", sorted(CRDS))
def test_every_crd_schema_is_structural(name):
    schema = CRDS[name]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert structural_problems(schema) == []


def test_the_structural_check_catches_what_kube_apiserver_rejects():
    bad = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
            "untyped": {"description": "no type"},
            "both": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
            "q": {"anyOf": [{"type": "integer", "description": "x"}, {"type": "string"}]},
            "l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "items": {"type": "object"}},
        },
    }
    assert set(structural_problems(bad)) == {
        ".both: properties and additionalProperties together",
        ".l: list-map key k is not a scalar",
        ".l: list-map key k is not required",
        ".q.anyOf: description inside a logical junctor",
        ".q.anyOf: type inside a logical junctor",
        ".q: no type",
        ".untyped: no type",
        "metadata: only type object may be given",
    }


def test_crds_pass_the_servers_crd_validation():
    crd_checks = pytest.importorskip("mockapi.schema.crd")
    for name, crd in CRDS.items():
        assert crd_checks.validate_crd(crd) == [], name


@pytest.mark.parametrize("name", sorted(CRDS))
def test_printer_columns_read_fields_the_schema_declares(name):
    version = CRDS[name]["spec"]["versions"][0]
    schema = version["schema"]["openAPIV3Schema"]
    columns = version["additionalPrinterColumns"]
    assert [c for c in columns if c["name"] == "Age"] == [
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "description": "Time since the object was created."}
    ]
    for column in columns:
        assert column["type"] in ("integer", "number", "string", "boolean", "date")
        if column["jsonPath"].startswith(".metadata."):
            continue
        node = resolve(schema, column["jsonPath"])
        assert node is not None, column
        expected = {"string": "string", "integer": "integer", "boolean": "boolean"}.get(column["type"])
        if expected and node.get("type") != "array":
            assert node.get("type") == expected, column


def test_claim_columns_show_the_allocated_condition_node_reason_and_message():
    for kind in ("DeviceClaim", "DevicePrivilegedClaim"):
        crd = next(c for c in CRDS.values() if c["spec"]["names"]["kind"] == kind)
        columns = {c["name"]: c for c in crd["spec"]["versions"][0]["additionalPrinterColumns"]}
        assert list(columns) == ["Allocated", "Node", "Reason", "Age", "Message"]
        assert columns["Allocated"]["jsonPath"] == '.status.conditions[?(@.type=="Allocated")].status'
        assert columns["Reason"]["jsonPath"] == '.status.conditions[?(@.type=="Allocated")].reason'
        assert columns["Node"]["jsonPath"] == ".status.nodeName"
        assert columns["Message"]["priority"] == 1


def test_the_column_path_resolver_rejects_fields_that_do_not_exist():
    schema = schema_of("DevicePool")
    assert resolve(schema, ".spec.nodeName") == schema["properties"]["spec"]["properties"]["nodeName"]
    assert resolve(schema, ".spec.nodename") is None
    assert resolve(schema, ".spec.driver[*]") is None


def test_descriptions_are_the_go_doc_comments_without_markers():
    spec = schema_of("DeviceClaim")["properties"]["spec"]
    assert spec["properties"]["claims"]["description"].startswith("Claims contains the actual claim details")
    assert spec["description"].startswith("DeviceClaimSpec details the requirements")
    text = "".join(crdgen.render(crd) for crd in CRDS.values())
    assert "+required" not in text and "+optional" not in text and "TODO" not in text


def test_required_fields_follow_the_required_markers():
    classes, pools, claims = schema_of("DeviceClass"), schema_of("DevicePool"), schema_of("DeviceClaim")
    assert classes["properties"]["spec"]["required"] == ["driver", "deviceType"]
    assert pools["properties"]["spec"]["required"] == ["driver", "devices"]
    assert claims["properties"]["spec"]["required"] == ["claims"]
    allocation = claims["properties"]["status"]["properties"]["allocations"]["items"]
    assert allocation["required"] == ["devicePoolName", "deviceName"]
    detail = claims["properties"]["spec"]["properties"]["claims"]["items"]
    assert "required" not in detail and "oneOf" in detail["properties"]
    assert schema_of("DeviceDriver")["required"] == ["deviceTypes"]


def test_quantities_are_int_or_string_with_the_quantity_pattern():
    detail = schema_of("DeviceClaim")["properties"]["spec"]["properties"]["claims"]["items"]
    quantity = detail["properties"]["requests"]["additionalProperties"]
    assert quantity == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": api.QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": True,
    }


def test_raw_extensions_preserve_unknown_fields_and_conditions_are_maps_keyed_by_type():
    status = schema_of("DeviceClaim")["properties"]["status"]["properties"]
    raw = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert status["classConfigs"]["items"] == raw and status["claimConfigs"]["items"] == raw
    assert status["deviceStatuses"]["items"]["properties"]["deviceInfo"]["items"] == raw
    for conditions in (status["conditions"], status["deviceStatuses"]["items"]["properties"]["conditions"]):
        assert conditions["x-kubernetes-list-type"] == "map"
        assert conditions["x-kubernetes-list-map-keys"] == ["type"]
        assert conditions["items"]["required"] == ["type", "status", "lastTransitionTime", "reason", "message"]
    assert status["nodeName"] == {"type": "string", "description": status["nodeName"]["description"]}
    assert "mockapi extension" in status["nodeName"]["description"]


def test_device_ip_fields_keep_their_go_wire_names():
    device_status = schema_of("DeviceClaim")["properties"]["status"]["properties"]["deviceStatuses"]["items"]
    assert {"deviceIP", "deviceIPs"} <= set(device_status["properties"])


def test_an_unmarked_union_is_refused_rather_than_guessed():
    class Bad(api.DeviceIP):
        either: int | str

    with pytest.raises(TypeError, match="mark unions"):
        crdgen.openapi_schema(Bad)


_DIGITS = st.integers(min_value=0, max_value=10**6).map(str)
_NUMBER = st.one_of(_DIGITS, st.tuples(_DIGITS, _DIGITS).map(".".join), _DIGITS.map(lambda d: "." + d))
_SUFFIX = st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E", "e3", "E-2", "e+6"])


@given(sign=st.sampled_from(["", "+", "-"]), number=_NUMBER, suffix=_SUFFIX)
def test_the_quantity_pattern_accepts_every_quantity_spelling(sign, number, suffix):
    assert re.fullmatch(api.QUANTITY_PATTERN, sign + number + suffix)


@given(text=st.sampled_from(["", "Gi", "1.2.3", "1 Gi", "1gi", "1GB", "one", "1Gi ", "--1", "1e", "0x10"]))
def test_the_quantity_pattern_rejects_what_is_not_a_quantity(text):
    assert not re.fullmatch(api.QUANTITY_PATTERN, text)
