"""ObjectMeta rules and kube's name validators, message for message."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi.schema import meta

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def messages(meta_dict, **kwargs) -> list[str]:
    return [str(e) for e in meta.validate_object_meta(meta_dict, **kwargs)]


def test_object_meta_fields_are_every_metav1_object_meta_json_name():
    assert meta.OBJECT_META_FIELDS == {
        "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
        "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
        "managedFields",
    }  # fmt: skip


def test_dns1123_subdomain_messages_are_kubes():
    assert meta.dns1123_subdomain_errors("example.com") == []
    assert meta.dns1123_subdomain_errors("Bad_Name") == [SUBDOMAIN_MSG]
    assert meta.dns1123_subdomain_errors("a" * 254) == ["must be no more than 253 characters"]
    assert meta.dns1123_subdomain_errors("é") == [SUBDOMAIN_MSG]


def test_dns1123_label_messages_are_kubes():
    assert meta.dns1123_label_errors("my-name") == []
    assert meta.dns1123_label_errors("a.b") == ["must not contain dots"]
    assert meta.dns1123_label_errors("-a") == [LABEL_MSG]
    assert meta.dns1123_label_errors("a" * 64) == ["must be no more than 63 characters"]


def test_path_segment_names_may_not_be_dots_or_contain_slash_or_percent():
    assert meta.path_segment_name_errors("ok.name") == []
    assert meta.path_segment_name_errors(".") == ["may not be '.'"]
    assert meta.path_segment_name_errors("..") == ["may not be '..'"]
    assert meta.path_segment_name_errors("a/b%c") == ["may not contain '/'", "may not contain '%'"]
    assert meta.path_segment_name_errors(".", prefix=True) == []


def test_qualified_names_check_prefix_and_name_parts():
    assert meta.qualified_name_errors("example.com/My_Name-1") == []
    assert meta.qualified_name_errors("bad key") == [NAME_PART_MSG]
    assert meta.qualified_name_errors("/x") == ["prefix part must be non-empty"]
    assert meta.qualified_name_errors("Ex.com/x") == ["prefix part " + SUBDOMAIN_MSG]
    assert meta.qualified_name_errors("a/b/c")[0].startswith("a valid label key must consist of")


def test_a_valid_object_meta_has_no_errors():
    good = {"name": "a", "namespace": "ns", "labels": {"app": "x", "example.com/tier": ""}, "finalizers": ["example.com/f"]}
    assert messages(good, namespaced=True) == []


def test_name_is_required_unless_generate_name_is_set():
    assert messages({"namespace": "ns"}, namespaced=True) == ["metadata.name: Required value: name or generateName is required"]
    assert messages({"namespace": "ns", "generateName": "web-"}, namespaced=True) == []
    assert messages(None, namespaced=False) == ["metadata.name: Required value: name or generateName is required"]


def test_bad_names_follow_the_kinds_rule():
    assert messages({"name": "Bad_Name"}, namespaced=False) == [f'metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_MSG}']
    assert messages({"name": "a.b"}, namespaced=False, name_rule="label") == ['metadata.name: Invalid value: "a.b": must not contain dots']
    assert messages({"name": "Any Thing"}, namespaced=False, name_rule="path-segment") == []
    assert messages({"name": "a/b"}, namespaced=False, name_rule="path-segment") == ["metadata.name: Invalid value: \"a/b\": may not contain '/'"]


def test_generate_name_is_checked_as_a_prefix_that_may_end_with_a_dash():
    assert messages({"generateName": "web-"}, namespaced=False) == []
    assert messages({"generateName": "Web-"}, namespaced=False) == [f'metadata.generateName: Invalid value: "Web-": {SUBDOMAIN_MSG}']


def test_namespace_is_required_for_namespaced_kinds_and_forbidden_otherwise():
    assert messages({"name": "a"}, namespaced=True) == ["metadata.namespace: Required value"]
    assert messages({"name": "a", "namespace": "ns"}, namespaced=False) == ["metadata.namespace: Forbidden: not allowed on this type"]
    assert messages({"name": "a", "namespace": "Bad"}, namespaced=True) == [f'metadata.namespace: Invalid value: "Bad": {LABEL_MSG}']


def test_label_keys_and_values_are_checked():
    errors = messages({"name": "a", "labels": {"bad key": "ok", "k": "v" * 64, "v": "-x", "n": 5}}, namespaced=False)
    assert errors == [
        f'metadata.labels: Invalid value: "bad key": {NAME_PART_MSG}',
        f'metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 characters',
        "metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        'metadata.labels.n: Invalid value: "integer": metadata.labels.n in body must be of type string: "integer"',
    ]


def test_annotation_keys_ignore_case_and_the_total_size_is_capped():
    assert messages({"name": "a", "annotations": {"Example.COM/Key": "any value at all"}}, namespaced=False) == []
    big = {"a": "x" * (256 * 1024)}
    assert messages({"name": "a", "annotations": big}, namespaced=False) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


def test_finalizers_are_qualified_names_without_duplicates():
    errors = messages({"name": "a", "finalizers": ["ok/f", "bad key", "ok/f", "orphan", "foregroundDeletion"]}, namespaced=False)
    assert errors == [
        f'metadata.finalizers: Invalid value: "bad key": {NAME_PART_MSG}',
        'metadata.finalizers[2]: Duplicate value: "ok/f"',
        'metadata.finalizers: Invalid value: ["ok/f","bad key","ok/f","orphan","foregroundDeletion"]: '
        "finalizer orphan and foregroundDeletion cannot be both set",
    ]


def test_owner_references_need_api_version_kind_name_and_uid():
    errors = messages({"name": "a", "ownerReferences": [{"apiVersion": "apps/", "kind": "", "name": "o"}]}, namespaced=False)
    assert errors == [
        'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ]


def test_only_one_owner_reference_may_be_the_controller_and_events_may_not_own():
    refs = [
        {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1", "controller": True},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "2", "controller": True},
    ]
    errors = meta.validate_object_meta({"name": "a", "ownerReferences": refs}, namespaced=False)
    assert [e.detail for e in errors] == [
        "/v1, Kind=Event is disallowed from being an owner",
        'Only one reference can have Controller set to true. Found "true" in references for Event/e and ReplicaSet/r',
    ]


def test_generation_may_not_be_negative():
    assert messages({"name": "a", "generation": -1}, namespaced=False) == [
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_metadata_of_the_wrong_shape_is_reported_not_raised():
    assert messages("x", namespaced=False) == ['metadata: Invalid value: "string": metadata in body must be of type object: "string"']
    errors = messages({"name": 5, "labels": [], "finalizers": {}, "ownerReferences": [3]}, namespaced=False)
    assert errors == [
        'metadata.name: Invalid value: "integer": metadata.name in body must be of type string: "integer"',
        'metadata.labels: Invalid value: "array": metadata.labels in body must be of type object: "array"',
        'metadata.ownerReferences[0]: Invalid value: "integer": metadata.ownerReferences[0] in body must be of type object: "integer"',
        'metadata.finalizers: Invalid value: "object": metadata.finalizers in body must be of type array: "object"',
    ]


@pytest.mark.parametrize("rule", ["subdomain", "label", "path-segment"])
@settings(max_examples=60, deadline=None)
@given(value=st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=70),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                          max_leaves=12))  # fmt: skip
def test_any_metadata_value_gives_errors_never_an_exception(rule, value):
    for candidate in (value, {"name": value, "labels": value, "annotations": value, "finalizers": value, "ownerReferences": value}):
        assert isinstance(meta.validate_object_meta(candidate, namespaced=True, name_rule=rule), list)
