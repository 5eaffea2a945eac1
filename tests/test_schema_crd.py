"""CustomResourceDefinition validation: what kube-apiserver rejects, worded and located as it does."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi.schema.crd import validate_crd

SCHEMA_ROOT = "spec.validation.openAPIV3Schema"  # where kube reports a schema shared by every version


def widget_schema() -> dict:
    return {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}}},
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer", "minimum": 1, "default": 1},
                    "color": {"type": "string", "enum": ["red", "blue"]},
                    "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            },
            "status": {
                "type": "object",
                "properties": {
                    "conditions": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["type"],
                        "items": {
                            "type": "object",
                            "required": ["type", "status"],
                            "properties": {"type": {"type": "string"}, "status": {"type": "string"}},
                        },
                    }
                },
            },
        },
    }


def widget_crd(**spec_changes) -> dict:
    spec = {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": widget_schema()},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"}},
                "additionalPrinterColumns": [{"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
                "selectableFields": [{"jsonPath": ".spec.color"}],
            }
        ],
    }
    spec.update(spec_changes)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"}, "spec": spec}


def with_schema(schema: dict) -> dict:
    crd = widget_crd()
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema
    del crd["spec"]["versions"][0]["selectableFields"]  # they name fields of the widget schema
    return crd


def spec_schema(**props) -> dict:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def messages(crd) -> list[str]:
    return [str(e) for e in validate_crd(crd)]


def test_a_well_formed_crd_is_valid():
    assert messages(widget_crd()) == []


def test_singular_and_list_kind_default_from_kind():
    crd = widget_crd(names={"plural": "widgets", "kind": "Widget"})
    assert messages(crd) == []


def test_the_name_must_be_plural_dot_group():
    crd = widget_crd()
    crd["metadata"]["name"] = "foos.example.com"
    assert messages(crd) == ['metadata.name: Invalid value: "foos.example.com": must be spec.names.plural+"."+spec.group']


def test_group_must_be_a_dns_subdomain_with_a_dot():
    crd = widget_crd(group="example")
    crd["metadata"]["name"] = "widgets.example"
    assert messages(crd) == ['spec.group: Invalid value: "example": should be a domain with at least one dot']
    assert "spec.group: Required value" in messages(widget_crd(group=""))


def test_scope_is_required_and_must_be_cluster_or_namespaced():
    assert "spec.scope: Required value" in messages(widget_crd(scope=""))
    assert messages(widget_crd(scope="Global")) == ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']


def test_names_are_dns_1035_labels_and_kinds_may_have_mixed_case():
    crd = widget_crd(names={"plural": "Widgets", "kind": "Wid_get", "listKind": "Wid_get", "shortNames": ["w-"], "categories": ["1a"]})
    crd["metadata"]["name"] = "Widgets.example.com"
    found = messages(crd)
    dns1035 = (
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    )
    assert f'spec.names.plural: Invalid value: "Widgets": {dns1035}' in found
    assert f'spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should otherwise match: {dns1035}' in found
    assert f'spec.names.shortNames[0]: Invalid value: "w-": {dns1035}' in found
    assert f'spec.names.categories[0]: Invalid value: "1a": {dns1035}' in found
    assert 'spec.names.listKind: Invalid value: "Wid_get": kind and listKind may not be the same' in found


def test_kind_is_required():
    found = messages(widget_crd(names={"plural": "widgets"}))
    assert "spec.names.kind: Required value" in found and "spec.names.listKind: Required value" in found


def test_versions_need_unique_names_and_exactly_one_storage_version():
    second = copy.deepcopy(widget_crd()["spec"]["versions"][0])
    crd = widget_crd()
    crd["spec"]["versions"].append(second)
    found = messages(crd)
    assert any(m.startswith("spec.versions: Invalid value: ") and m.endswith("must contain unique version names") for m in found)
    assert any(m.endswith("must have exactly one version marked as storage version") for m in found)
    crd["spec"]["versions"][1].update(name="v2", storage=False)
    assert messages(crd) == []


def test_version_names_are_dns_1035_labels():
    crd = widget_crd()
    crd["spec"]["versions"][0]["name"] = "V1"
    assert messages(crd)[0].startswith('spec.versions[0].name: Invalid value: "V1": a DNS-1035 label')


def test_every_version_needs_a_schema():
    crd = widget_crd()
    del crd["spec"]["versions"][0]["schema"]
    crd["spec"]["versions"][0]["selectableFields"] = []
    assert messages(crd) == ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]


def test_a_schema_shared_by_all_versions_is_reported_at_the_top_level_as_kube_does():
    schema = spec_schema(untyped={})
    crd = widget_crd()
    crd["spec"]["versions"] = [
        {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}},
        {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": copy.deepcopy(schema)}},
    ]
    expected = "properties[spec].properties[untyped].type: Required value: must not be empty for specified object fields"
    assert messages(crd) == [f"{SCHEMA_ROOT}.{expected}"]
    crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["extra"] = {"type": "string"}
    assert messages(crd) == [f"spec.versions[{i}].schema.openAPIV3Schema.{expected}" for i in (0, 1)]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "array", "items": {"type": "string"}}, [f'{SCHEMA_ROOT}.type: Invalid value: "array": must be object at the root']),
        (
            {"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}},
            [f"{SCHEMA_ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"],
        ),
        (
            spec_schema(m={"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
            [f"{SCHEMA_ROOT}.properties[spec].properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"],
        ),
        (spec_schema(r={"$ref": "#/definitions/x", "type": "object"}), [f"{SCHEMA_ROOT}.properties[spec].properties[r].$ref: Forbidden: $ref is not supported"]),
        (spec_schema(a={"type": "array"}), [f"{SCHEMA_ROOT}.properties[spec].properties[a].items: Required value: must be specified"]),
        (
            spec_schema(u={"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
            [f"{SCHEMA_ROOT}.properties[spec].properties[u].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"],
        ),
        (
            spec_schema(t={"type": "nothing"}),
            [f'{SCHEMA_ROOT}.properties[spec].properties[t].type: Unsupported value: "nothing": supported values: "array", "boolean", "integer", "number", "object", "string"'],
        ),
        (
            spec_schema(p={"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
            [f"{SCHEMA_ROOT}.properties[spec].properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"],
        ),
        (
            spec_schema(n={"type": "string", "anyOf": [{"type": "string", "maxLength": 2}]}),
            [f"{SCHEMA_ROOT}.properties[spec].properties[n].anyOf[0].type: Forbidden: must be empty to be structural"],
        ),
        (
            {"type": "object", "nullable": True},
            [f"{SCHEMA_ROOT}.nullable: Forbidden: nullable cannot be true at the root"],
        ),
        (
            {"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}},
            [f"{SCHEMA_ROOT}.properties[metadata].default: Forbidden: must not be set in top-level metadata"],
        ),
        (
            spec_schema(p={"type": "string", "pattern": "([a-z"}),
            [f'{SCHEMA_ROOT}.properties[spec].properties[p].pattern: Invalid value: "([a-z": must be a valid regular expression, but isn\'t: error parsing regexp: missing ]: [a-z'],
        ),
    ],
)
def test_schemas_must_be_structural_and_use_only_what_crds_allow(schema, expected):
    assert messages(with_schema(schema)) == expected


def test_int_or_string_refuses_preserve_and_embedded_but_not_a_type_or_properties():
    """kube's ValidateStructural (validateExtensions) refuses only these two companions; a `type` or
    `properties` beside x-kubernetes-int-or-string is accepted (the value is still int or string)."""
    both = spec_schema(p={"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True})
    assert messages(with_schema(both)) == [
        f"{SCHEMA_ROOT}.properties[spec].properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
    ]
    embedded = spec_schema(p={"type": "object", "x-kubernetes-int-or-string": True, "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True})
    assert f"{SCHEMA_ROOT}.properties[spec].properties[p].x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true" in messages(with_schema(embedded))
    typed = spec_schema(p={"type": "string", "x-kubernetes-int-or-string": True}, q={"x-kubernetes-int-or-string": True, "properties": {"a": {"type": "string"}}})
    assert messages(with_schema(typed)) == []


def test_list_map_keys_need_list_type_map_and_required_or_defaulted_scalar_item_properties():
    items = {"type": "object", "properties": {"name": {"type": "string"}, "sub": {"type": "object"}}}
    schema = spec_schema(
        bad_type={"type": "array", "x-kubernetes-list-type": "set", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "string"}},
        keys={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "sub", "nope"], "items": items},
    )
    base = f"{SCHEMA_ROOT}.properties[spec].properties"
    assert messages(with_schema(schema)) == [
        f'{base}[bad_type].x-kubernetes-list-type: Invalid value: "set": must be map if x-kubernetes-list-map-keys is non-empty',
        f'{base}[keys].items.properties[sub].type: Invalid value: "object": must be a scalar type if parent array\'s x-kubernetes-list-type is map',
        f'{base}[keys].x-kubernetes-list-map-keys: Invalid value: ["name","sub","nope"]: entries must all be names of item properties',
        f"{base}[keys].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
        f"{base}[keys].items.properties[sub].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
    ]


def test_defaults_must_be_pruned_and_valid_against_their_schema():
    schema = spec_schema(
        n={"type": "integer", "default": "one"},
        o={"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}},
    )
    base = f"{SCHEMA_ROOT}.properties[spec].properties"
    assert messages(with_schema(schema)) == [
        f'{base}[n].default: Invalid value: "string":  in body must be of type integer: "string"',
        f'{base}[o].default: Invalid value: {{"a":"x","b":1}}: must not have unknown fields',
    ]


def test_subresources_are_status_and_scale_with_paths_under_spec_and_status():
    crd = widget_crd()
    crd["spec"]["versions"][0]["subresources"] = {"status": {}, "logs": {}, "scale": {"specReplicasPath": "spec.size", "statusReplicasPath": ".spec.size"}}
    assert messages(crd) == [
        'spec.subresources: Unsupported value: "logs": supported values: "scale", "status"',
        'spec.subresources.scale.specReplicasPath: Invalid value: "spec.size": must be a simple json path starting with .',
        'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.size": should be a json path under .status',
    ]


def test_printer_columns_need_a_name_a_known_type_and_a_json_path():
    crd = widget_crd()
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [{"type": "text", "format": "hex"}]
    assert messages(crd) == [
        "spec.additionalPrinterColumns[0].name: Required value",
        'spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
        'spec.additionalPrinterColumns[0].format: Invalid value: "hex": must be one of byte,date,date-time,double,float,int32,int64,password',
        "spec.additionalPrinterColumns[0].JSONPath: Required value",
    ]


def test_selectable_fields_point_to_scalar_fields_outside_metadata():
    crd = widget_crd()
    crd["spec"]["versions"][0]["selectableFields"] = [
        {"jsonPath": ".spec.color"},
        {"jsonPath": ".spec.nope"},
        {"jsonPath": ".spec.labels"},
        {"jsonPath": ".metadata.name"},
        {"jsonPath": ".spec.labels['app']"},
        {"jsonPath": ".spec.color"},
        {},
    ]
    base = "spec.selectableFields"
    assert messages(crd) == [
        f'{base}[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
        f'{base}[2].jsonPath: Invalid value: ".spec.labels": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        f'{base}[3].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata',
        f'{base}[5].jsonPath: Duplicate value: ".spec.color"',
        f"{base}[6].jsonPath: Required value",
    ]


def test_at_most_eight_selectable_fields():
    schema = spec_schema(**{f"f{i}": {"type": "string"} for i in range(9)})
    crd = with_schema(schema)
    crd["spec"]["versions"][0]["selectableFields"] = [{"jsonPath": f".spec.f{i}"} for i in range(9)]
    crd["spec"]["versions"][0].pop("additionalPrinterColumns")
    assert messages(crd) == ["spec.selectableFields: Too many: 9: must have at most 8 items"]


def test_protected_groups_need_the_api_approval_annotation():
    crd = widget_crd(group="devmgmtproto.k8s.io")
    crd["metadata"]["name"] = "widgets.devmgmtproto.k8s.io"
    assert messages(crd) == [
        'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111'
    ]
    for value in ("unapproved, experimental-only", "https://github.com/kubernetes/enhancements/pull/1111"):
        crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": value}
        assert messages(crd) == []
    crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": "sure"}
    assert messages(crd)[0].startswith('metadata.annotations[api-approved.kubernetes.io]: Invalid value: "sure": protected groups must have approval annotation')


def test_preserve_unknown_fields_may_not_be_true():
    assert messages(widget_crd(preserveUnknownFields=True)) == [
        "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema",
        "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    ]


@pytest.mark.parametrize(
    "garbage",
    [5, "crd", {}, {"spec": 5}, {"spec": {"versions": "x"}}, {"spec": {"versions": [5, None, {"schema": "x"}]}},
     {"spec": {"names": "x", "versions": [{"schema": {"openAPIV3Schema": {"properties": 5, "items": [1], "anyOf": 3}}}]}},
     {"metadata": [], "spec": {"group": 5, "scope": [], "versions": [{"subresources": [], "additionalPrinterColumns": {}}]}}],
)  # fmt: skip
def test_garbage_gives_errors_never_an_exception(garbage):
    found = validate_crd(garbage)
    assert isinstance(found, list) and found


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["type", "properties", "items", "default", "spec", "versions", "names", "schema", "openAPIV3Schema", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "anyOf", "metadata"]) | st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(path=st.lists(st.sampled_from(["spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "names", "subresources", "metadata"]), max_size=6), value=json_values)
def test_any_value_anywhere_in_a_crd_gives_a_list_of_errors(path, value):
    crd = widget_crd()
    node = crd
    for step in path:
        try:
            child = node[step]
        except (KeyError, IndexError, TypeError):
            break
        if not isinstance(child, (dict, list)):
            break
        node = child
    if isinstance(node, dict):
        node[str(path[-1]) if path else "spec"] = value
    elif node:
        node[0] = value
    assert isinstance(validate_crd(crd), list)
