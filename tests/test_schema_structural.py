"""Pruning, null pruning, defaulting and validation of objects against structural schemas."""

from __future__ import annotations

import copy
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockapi.schema import goformat, structural
from mockapi.schema.structural import apply_schema

STRING = {"type": "string"}
INTEGER = {"type": "integer"}


def resource_schema(spec: dict, **extra: dict) -> dict:
    """A CRD root schema with ``spec`` (and any other top-level properties)."""
    props = {"apiVersion": STRING, "kind": STRING, "metadata": {"type": "object"}, "spec": spec, **extra}
    return {"type": "object", "properties": props}


def obj_with(spec, **extra) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "a", "namespace": "ns"}, "spec": spec, **extra}


def run(spec_schema: dict, spec, **extra):
    obj = obj_with(spec, **extra)
    outcome = apply_schema(resource_schema(spec_schema), obj)
    return outcome, obj


def messages(outcome) -> list[str]:
    return [str(e) for e in outcome.errors]


def obj_schema(**props) -> dict:
    return {"type": "object", "properties": props}


# --- pruning ------------------------------------------------------------------------------------


def test_unknown_fields_are_pruned_and_reported_with_kube_paths():
    spec = obj_schema(claims={"type": "array", "items": obj_schema(name=STRING)}, driver=STRING)
    outcome, obj = run(spec, {"driver": "d", "contstraints": [], "claims": [{"name": "a", "foo": 1}, {"name": "b"}]})
    assert outcome.unknown_fields == ["spec.claims[0].foo", "spec.contstraints"]
    assert obj["spec"] == {"driver": "d", "claims": [{"name": "a"}, {"name": "b"}]}
    assert outcome.errors == []


def test_unknown_top_level_fields_are_pruned_but_api_version_kind_and_metadata_stay():
    schema = {"type": "object", "properties": {"spec": obj_schema(a=STRING)}}
    obj = {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"a": "x"}, "extra": 1}
    outcome = apply_schema(schema, obj)
    assert outcome.unknown_fields == ["extra"]
    assert obj == {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"a": "x"}}


def test_unknown_metadata_keys_are_pruned_and_reported_first_and_nulls_dropped_silently():
    obj = obj_with({"zzz": 1})
    obj["metadata"].update({"bogus": 1, "labels": None, "ownerReferences": [{"name": "o", "color": "red"}]})
    outcome = apply_schema(resource_schema(obj_schema()), obj)
    assert outcome.unknown_fields == ["metadata.bogus", "metadata.ownerReferences[0].color", "spec.zzz"]
    assert obj["metadata"] == {"name": "a", "namespace": "ns", "ownerReferences": [{"name": "o"}]}


def test_preserve_unknown_fields_keeps_everything_below_it():
    spec = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    outcome, obj = run(spec, {"anything": {"deep": [1, {"x": None}]}})
    assert outcome.unknown_fields == []
    assert obj["spec"] == {"anything": {"deep": [1, {"x": None}]}}


def test_preserve_unknown_fields_still_prunes_inside_declared_properties():
    spec = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"known": obj_schema(a=STRING)}}
    outcome, obj = run(spec, {"other": {"z": 1}, "known": {"a": "x", "b": 2}})
    assert outcome.unknown_fields == ["spec.known.b"]
    assert obj["spec"] == {"other": {"z": 1}, "known": {"a": "x"}}


def test_additional_properties_prunes_and_validates_every_map_value():
    spec = {"type": "object", "additionalProperties": obj_schema(n=INTEGER)}
    outcome, obj = run(spec, {"x": {"n": 1, "junk": 2}, "y": {"n": "two"}})
    assert outcome.unknown_fields == ["spec.x.junk"]
    assert messages(outcome) == ['spec.y.n: Invalid value: "string": spec.y.n in body must be of type integer: "string"']


def test_an_object_node_without_properties_loses_every_field():
    outcome, obj = run(obj_schema(opts={"type": "object"}), {"opts": {"a": 1, "b": {"c": 2}}})
    assert outcome.unknown_fields == ["spec.opts.a", "spec.opts.b"]
    assert obj["spec"] == {"opts": {}}


def test_embedded_resource_keeps_type_meta_and_prunes_its_unknown_metadata_fields():
    template = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "properties": {"apiVersion": STRING, "kind": STRING, "metadata": {"type": "object"}, "data": STRING},
    }
    embedded = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "junk": 1}, "data": "d", "x": 1}
    outcome, obj = run(obj_schema(template=template), {"template": embedded})
    assert outcome.unknown_fields == ["spec.template.x", "spec.template.metadata.junk"]
    assert obj["spec"]["template"] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": "d"}


def test_items_of_a_preserving_array_keep_their_own_unknown_keys_as_kube_does():
    spec = obj_schema(
        items={"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": obj_schema(a=obj_schema(b=STRING))}
    )
    outcome, obj = run(spec, {"items": [{"free": 1, "a": {"b": "x", "c": 1}}]})
    assert outcome.unknown_fields == ["spec.items[0].a.c"]
    assert obj["spec"]["items"] == [{"free": 1, "a": {"b": "x"}}]


# --- nulls and defaults -------------------------------------------------------------------------


def test_null_for_a_non_nullable_field_is_dropped_without_an_error():
    outcome, obj = run(obj_schema(a=STRING, b={"type": "string", "nullable": True}), {"a": None, "b": None})
    assert obj["spec"] == {"b": None}
    assert outcome.errors == [] and outcome.unknown_fields == []


def test_null_for_a_non_nullable_field_with_a_default_gets_the_default():
    outcome, obj = run(obj_schema(mode={"type": "string", "default": "auto"}), {"mode": None})
    assert obj["spec"] == {"mode": "auto"}
    assert outcome.errors == []


def test_a_null_array_item_is_kept_and_is_a_type_error():
    outcome, obj = run(obj_schema(tags={"type": "array", "items": STRING}), {"tags": ["a", None]})
    assert obj["spec"]["tags"] == ["a", None]
    assert messages(outcome) == ['spec.tags[1]: Invalid value: "null": spec.tags[1] in body must be of type string: "null"']


def test_a_default_applies_when_the_key_is_absent_and_only_when_its_parent_exists():
    spec = obj_schema(requests=obj_schema(count={"type": "integer", "default": 1}))
    _, with_parent = run(spec, {"requests": {}})
    _, without_parent = run(spec, {})
    assert with_parent["spec"] == {"requests": {"count": 1}}
    assert without_parent["spec"] == {}


def test_defaults_apply_to_each_array_item_and_are_deep_copies():
    default = {"level": "low", "tags": []}
    item = obj_schema(name=STRING, opts={**obj_schema(level=STRING, tags={"type": "array", "items": STRING}), "default": default})
    outcome, obj = run(obj_schema(claims={"type": "array", "items": item}), {"claims": [{"name": "a"}, {"name": "b"}]})
    first, second = (claim["opts"] for claim in obj["spec"]["claims"])
    assert first == second == default
    first["tags"].append("changed")
    assert second["tags"] == [] and default["tags"] == []
    assert outcome.errors == []


def test_defaults_inside_a_defaulted_object_are_applied_too():
    spec = obj_schema(opts={**obj_schema(level={"type": "string", "default": "low"}), "default": {}})
    _, obj = run(spec, {})
    assert obj["spec"] == {"opts": {"level": "low"}}


def test_a_null_default_is_no_default():
    _, obj = run(obj_schema(a={"type": "string", "default": None}), {})
    assert obj["spec"] == {}


def test_defaulted_values_are_validated():
    outcome, _ = run(obj_schema(n={"type": "integer", "default": "one"}), {})
    assert messages(outcome) == ['spec.n: Invalid value: "string": spec.n in body must be of type integer: "string"']


# --- types --------------------------------------------------------------------------------------


def test_type_errors_are_worded_as_kube_words_them():
    outcome, _ = run(obj_schema(replicas=INTEGER), {"replicas": "string"})
    assert messages(outcome) == ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"']
    assert outcome.errors[0].reason == "FieldValueTypeInvalid"


@pytest.mark.parametrize(
    ("kind", "good", "bad", "bad_name"),
    [
        ("integer", [0, -5, 3.0], [True, 1.5, "1", None], ["boolean", "number", "string", "null"]),
        ("number", [1, 1.5], [True, "1"], ["boolean", "string"]),
        ("boolean", [True, False], [1, "true"], ["integer", "string"]),
        ("string", ["", "x"], [1, {}], ["integer", "object"]),
        ("object", [{}], [[], "x"], ["array", "string"]),
        ("array", [[]], [{}, 1.5], ["object", "number"]),
    ],
)
def test_each_type_accepts_its_values_and_names_the_wrong_ones(kind, good, bad, bad_name):
    schema = obj_schema(v={"type": "array", "items": {"type": kind}})
    outcome, _ = run(schema, {"v": good})
    assert outcome.errors == []
    outcome, _ = run(schema, {"v": bad})
    expected = [
        f'spec.v[{i}]: Invalid value: "{name}": spec.v[{i}] in body must be of type {kind}: "{name}"'
        for i, name in enumerate(bad_name)
    ]
    assert messages(outcome) == expected


def test_integers_beyond_int64_are_numbers_as_go_decodes_them():
    outcome, _ = run(obj_schema(n=INTEGER), {"n": 2**63})
    assert messages(outcome) == ['spec.n: Invalid value: "number": spec.n in body must be of type integer: "number"']


def test_int_or_string_accepts_both_and_reports_kubes_three_errors_otherwise():
    schema = obj_schema(port={"x-kubernetes-int-or-string": True, "anyOf": [INTEGER, STRING]})
    for good in (8080, "http"):
        assert run(schema, {"port": good})[0].errors == []
    outcome, _ = run(schema, {"port": True})
    assert messages(outcome) == [
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
        'Invalid value: "": "spec.port" must validate at least one schema (anyOf)',
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer: "boolean"',
    ]


def test_nullable_fields_accept_null_but_enums_never_do():
    schema = obj_schema(a={"type": "string", "nullable": True}, b={"type": "string", "nullable": True, "enum": ["x"]})
    outcome, _ = run(schema, {"a": None, "b": None})
    assert messages(outcome) == ['spec.b: Unsupported value: "null": supported values: "x"']


# --- keywords -----------------------------------------------------------------------------------


def test_required_fields_are_reported_each_with_kube_wording():
    outcome, _ = run({**obj_schema(driver=STRING, pool=STRING), "required": ["driver", "pool"]}, {})
    assert messages(outcome) == ["spec.driver: Required value", "spec.pool: Required value"]
    assert outcome.errors[0].reason == "FieldValueRequired"


def test_enum_lists_the_supported_values_as_kube_does():
    outcome, _ = run(obj_schema(mode={"type": "string", "enum": ["a", "b"]}), {"mode": "x"})
    assert messages(outcome) == ['spec.mode: Unsupported value: "x": supported values: "a", "b"']
    outcome, _ = run(obj_schema(n={"enum": [1, 2.5, True, {"k": 1}]}), {"n": 3})
    assert messages(outcome) == ['spec.n: Unsupported value: 3: supported values: "1", "2.5", "true", "{\\"k\\":1}"']


def test_enum_compares_numbers_after_converting_to_the_enum_values_type():
    schema = obj_schema(n={"type": "number", "enum": [1, 2]})
    assert run(schema, {"n": 1.0})[0].errors == []
    assert run(schema, {"n": True})[0].errors != []


def test_minimum_and_maximum_are_worded_as_kube_words_them():
    schema = obj_schema(
        a={"type": "integer", "minimum": 1},
        b={"type": "integer", "maximum": 10, "exclusiveMaximum": True},
        c={"type": "number", "minimum": 1.5, "exclusiveMinimum": True},
        d={"type": "number", "maximum": 1000000},
    )
    outcome, _ = run(schema, {"a": 0, "b": 10, "c": 1.5, "d": 2000000.5})
    assert messages(outcome) == [
        "spec.a: Invalid value: 0: spec.a in body should be greater than or equal to 1",
        "spec.b: Invalid value: 10: spec.b in body should be less than 10",
        "spec.c: Invalid value: 1.5: spec.c in body should be greater than 1.5",
        "spec.d: Invalid value: 2000000.5: spec.d in body should be less than or equal to 1e+06",
    ]


def test_integer_values_are_compared_with_truncated_bounds_as_kube_openapi_does():
    outcome, _ = run(obj_schema(a={"type": "integer", "maximum": 2.5}), {"a": 3})
    assert messages(outcome) == ["spec.a: Invalid value: 3: spec.a in body should be less than or equal to 2"]


def test_multiple_of_for_integers_and_floats():
    schema = obj_schema(i={"type": "integer", "multipleOf": 2}, f={"type": "number", "multipleOf": 0.5})
    assert run(schema, {"i": 4, "f": 1.5})[0].errors == []
    outcome, _ = run(schema, {"i": 5, "f": 1.25})
    assert messages(outcome) == [
        "spec.i: Invalid value: 5: spec.i in body should be a multiple of 2",
        "spec.f: Invalid value: 1.25: spec.f in body should be a multiple of 0.5",
    ]


def test_string_lengths_count_characters_and_stop_at_the_first_failure():
    schema = obj_schema(s={"type": "string", "maxLength": 2, "minLength": 2, "pattern": "^[a-z]+$"})
    outcome, _ = run(schema, {"s": "éé"})  # two characters (four bytes): only the pattern fails
    [error] = outcome.errors
    assert (error.field, error.value, error.detail) == ("spec.s", "éé", "spec.s in body should match '^[a-z]+$'")
    outcome, _ = run(schema, {"s": "ééé"})
    assert messages(outcome) == ["spec.s: Too long: may not be more than 2 bytes"]
    assert outcome.errors[0].reason == "FieldValueTooLong"
    outcome, _ = run(schema, {"s": "a"})
    assert messages(outcome) == ['spec.s: Invalid value: "a": spec.s in body should be at least 2 chars long']


def test_max_length_of_one_says_byte():
    outcome, _ = run(obj_schema(s={"type": "string", "maxLength": 1}), {"s": "ab"})
    assert messages(outcome) == ["spec.s: Too long: may not be more than 1 byte"]


def test_pattern_is_searched_not_fully_matched_and_dollar_means_the_very_end():
    schema = obj_schema(digit={"type": "string", "pattern": "[0-9]"}, word={"type": "string", "pattern": "^[a-z]+$"})
    assert run(schema, {"digit": "a1b", "word": "abc"})[0].errors == []
    outcome, _ = run(schema, {"digit": "abc", "word": "abc\n"})
    assert messages(outcome) == [
        'spec.digit: Invalid value: "abc": spec.digit in body should match \'[0-9]\'',
        'spec.word: Invalid value: "abc\\n": spec.word in body should match \'^[a-z]+$\'',
    ]


def test_formats_a_crd_may_use_are_checked():
    schema = obj_schema(
        when={"type": "string", "format": "date-time"},
        day={"type": "string", "format": "date"},
        blob={"type": "string", "format": "byte"},
        id={"type": "string", "format": "uuid"},
        ip={"type": "string", "format": "ipv4"},
    )
    good = {"when": "2024-01-02T03:04:05Z", "day": "2024-02-29", "blob": "aGVsbG8=", "id": "0d3f2a9e-1111-2222-3333-444455556666", "ip": "10.0.0.1"}
    assert run(schema, good)[0].errors == []
    outcome, _ = run(schema, {"when": "yesterday", "day": "2023-02-29", "blob": "!!", "id": "x", "ip": "::1"})
    assert messages(outcome) == [
        'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
        'spec.day: Invalid value: "2023-02-29": spec.day in body must be of type date: "2023-02-29"',
        'spec.blob: Invalid value: "!!": spec.blob in body must be of type byte: "!!"',
        'spec.id: Invalid value: "x": spec.id in body must be of type uuid: "x"',
        'spec.ip: Invalid value: "::1": spec.ip in body must be of type ipv4: "::1"',
    ]


def test_formats_kube_strips_such_as_int32_are_not_checked():
    outcome, _ = run(obj_schema(n={"type": "integer", "format": "int32"}), {"n": 2**40})
    assert outcome.errors == []


def test_a_non_string_for_a_formatted_string_names_the_format_as_kube_openapi_does():
    outcome, _ = run(obj_schema(when={"type": "string", "format": "date-time"}), {"when": 5})
    assert messages(outcome) == ['spec.when: Invalid value: "int64": spec.when in body must be of type date-time: "int64"']


def test_array_sizes_and_unique_items():
    schema = obj_schema(
        few={"type": "array", "items": STRING, "minItems": 2},
        many={"type": "array", "items": STRING, "maxItems": 1},
        uniq={"type": "array", "items": {}, "uniqueItems": True},
    )
    assert run(schema, {"uniq": [1, 1.0, True, "1"]})[0].errors == []  # Go tells these apart
    outcome, _ = run(schema, {"few": ["a"], "many": ["a", "b"], "uniq": [{"a": 1}, {"a": 1}]})
    assert messages(outcome) == [
        "spec.few: Invalid value: 1: spec.few in body should have at least 2 items",
        "spec.many: Too many: 2: must have at most 1 item",
        'spec.uniq: Invalid value: "": spec.uniq in body shouldn\'t contain duplicates',
    ]


def test_object_sizes_stop_the_object_checks_as_kube_openapi_does():
    schema = obj_schema(
        small={"type": "object", "minProperties": 2, "properties": {"a": INTEGER}, "required": ["b"]},
        big={"type": "object", "maxProperties": 1, "additionalProperties": INTEGER},
    )
    outcome, _ = run(schema, {"small": {"a": "not checked"}, "big": {"x": 1, "y": 2}})
    assert messages(outcome) == [
        "spec.small: Invalid value: 1: spec.small in body should have at least 2 properties",
        "spec.big: Too many: 2: must have at most 1 item",
    ]


def test_list_type_set_reports_each_duplicate_once_at_its_second_occurrence():
    schema = obj_schema(tags={"type": "array", "x-kubernetes-list-type": "set", "items": STRING})
    outcome, _ = run(schema, {"tags": ["a", "b", "a", "a", "b"]})
    assert messages(outcome) == ['spec.tags[2]: Duplicate value: "a"', 'spec.tags[4]: Duplicate value: "b"']
    assert outcome.errors[0].reason == "FieldValueDuplicate"


def test_list_type_map_reports_duplicate_keys_in_gos_rendering():
    item = {**obj_schema(name=STRING, port=INTEGER), "required": ["name"]}
    one_key = obj_schema(c={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": item})
    outcome, _ = run(one_key, {"c": [{"name": "x"}, {"name": "x", "port": 1}]})
    assert messages(outcome) == ['spec.c[1]: Duplicate value: map[string]interface {}{"name":"x"}']
    two_keys = obj_schema(c={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"], "items": item})
    outcome, _ = run(two_keys, {"c": [{"name": "x", "port": 1}, {"name": "x", "port": 2}, {"port": 1, "name": "x"}]})
    assert messages(outcome) == ['spec.c[2]: Duplicate value: map[string]interface {}{"name":"x", "port":1}']


def test_list_type_map_items_must_be_objects():
    schema = obj_schema(c={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {}})
    outcome, _ = run(schema, {"c": [{"name": "a"}, 5]})
    assert messages(outcome) == ["spec.c[1]: Invalid value: 5: must be an object for an array of list-type map"]


def test_all_of_any_of_one_of_and_not_are_worded_as_kube_openapi_words_them():
    schema = obj_schema(
        a={"type": "integer", "allOf": [{"minimum": 5}, {"maximum": 1}]},
        o={"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]},
        n={"type": "string", "not": {"enum": ["forbidden"]}},
    )
    outcome, _ = run(schema, {"a": 3, "o": 5, "n": "forbidden"})
    assert messages(outcome) == [
        "spec.a: Invalid value: 3: spec.a in body should be greater than or equal to 5",
        "spec.a: Invalid value: 3: spec.a in body should be less than or equal to 1",
        'Invalid value: "": "spec.a" must validate all the schemas (allOf). None validated',
        'Invalid value: "": "spec.o" must validate one and only one schema (oneOf). Found 2 valid alternatives',
        'Invalid value: "": "spec.n" must not validate the schema (not)',
    ]


def test_additional_properties_false_names_each_forbidden_property():
    outcome, _ = run(obj_schema(m={"type": "object", "additionalProperties": False}), {"m": {"x": 1}})
    assert messages(outcome) == ['spec.m: Invalid value: "x": spec.m.x in body is a forbidden property']


def test_every_error_is_reported_not_only_the_first():
    schema = {**obj_schema(a=INTEGER, b=STRING, c={"type": "array", "items": INTEGER}), "required": ["d"]}
    outcome, _ = run(schema, {"a": "x", "b": 1, "c": ["y", "z"]})
    assert len(outcome.errors) == 5


def test_metadata_is_checked_only_for_its_name_constraints():
    schema = resource_schema(obj_schema())
    schema["properties"]["metadata"] = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}}
    obj = obj_with({})
    obj["metadata"].update({"name": "toolong", "labels": {"bad key": 1}})
    outcome = apply_schema(schema, obj)
    assert messages(outcome) == ["metadata.name: Too long: may not be more than 3 bytes"]
    assert obj["metadata"]["labels"] == {"bad key": 1}


def test_cel_rules_are_ignored():
    schema = obj_schema(a={"type": "integer", "x-kubernetes-validations": [{"rule": "self > 100"}]})
    assert run(schema, {"a": 1})[0].errors == []


def test_embedded_resources_need_api_version_and_a_valid_kind():
    template = {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}
    outcome, _ = run(obj_schema(t=template), {"t": {"kind": "Bad_Kind", "metadata": {"name": "a/b"}}})
    assert messages(outcome) == [
        "spec.t.apiVersion: Required value",
        'spec.t.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character (e.g. \'my-name\',  or \'abc-123\', regex used for validation is \'[a-z]([-a-z0-9]*[a-z0-9])?\')',
        "spec.t.metadata.name: Invalid value: \"a/b\": may not contain '/'",
    ]


# --- Go's renderings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1.5, "1.5"), (2.0, "2"), (1e6, "1e+06"), (123456.0, "123456"), (0.0001, "0.0001"), (0.00001, "1e-05"), (-0.5, "-0.5")],
)
def test_floats_print_as_gos_percent_v(value, shown):
    assert goformat.go_float(value) == shown


def test_json_values_print_as_gos_json_marshal_and_percent_sharp_v():
    assert goformat.go_json({"b": [1, 2.0, None], "a": "<x>"}) == '{"a":"\\u003cx\\u003e","b":[1,2,null]}'
    assert goformat.go_json(1e-7) == "1e-7"
    assert goformat.go_sharp({"name": "x", "n": None}) == 'map[string]interface {}{"n":interface {}(nil), "name":"x"}'
    assert goformat.go_quote('a"b\nc\x01') == '"a\\"b\\nc\\x01"'


# --- robustness and speed -----------------------------------------------------------------------


def test_compile_is_cached_by_schema_identity():
    schema = resource_schema(obj_schema())
    assert structural.compile(schema) is structural.compile(schema)
    assert structural.compile(copy.deepcopy(schema)) is not structural.compile(schema)


def test_a_value_that_is_not_an_object_is_an_error_not_a_crash():
    outcome = apply_schema(resource_schema(obj_schema()), ["not", "an", "object"])
    assert messages(outcome) == ['Invalid value: "array":  in body must be of type object: "array"']


def test_deep_nesting_below_a_preserving_field_is_never_walked():
    deep: dict = {}
    node = deep
    for _ in range(5000):
        node["x"] = {}
        node = node["x"]
    outcome, obj = run({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, deep)
    assert outcome.errors == [] and obj["spec"] is deep


def test_deep_schemas_and_objects_do_not_crash():
    schema: dict = {"type": "object"}
    value: dict = {}
    node_schema, node_value = schema, value
    for _ in range(300):
        node_schema["properties"] = {"x": {"type": "object"}}
        node_schema = node_schema["properties"]["x"]
        node_value["x"] = {}
        node_value = node_value["x"]
    outcome, _ = run(schema, value)
    assert isinstance(outcome.errors, list)


def test_a_typical_two_kilobyte_object_takes_well_under_a_millisecond():
    item = obj_schema(name={"type": "string", "maxLength": 63, "pattern": "^[a-z0-9-]+$"},
                      count={"type": "integer", "minimum": 1, "default": 1}, tags={"type": "array", "items": STRING})  # fmt: skip
    schema = resource_schema(obj_schema(claims={"type": "array", "x-kubernetes-list-type": "map",
                                                "x-kubernetes-list-map-keys": ["name"], "items": item}))  # fmt: skip
    spec = {"claims": [{"name": f"claim-{i}", "tags": ["a", "b", "c"], "count": 2} for i in range(20)]}
    validator = structural.compile(schema)
    objects = [copy.deepcopy(obj_with(spec)) for _ in range(200)]
    started = time.perf_counter()
    for obj in objects:
        validator.apply(obj)
    assert (time.perf_counter() - started) / len(objects) < 0.001


def test_huge_arrays_are_checked_in_linear_time():
    schema = obj_schema(tags={"type": "array", "x-kubernetes-list-type": "set", "items": STRING, "uniqueItems": True})
    started = time.perf_counter()
    outcome, _ = run(schema, {"tags": [str(i) for i in range(200_000)]})
    assert outcome.errors == []
    assert time.perf_counter() - started < 2


# --- invariants ---------------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
keys = st.sampled_from(["a", "b", "name", "port", "x", "spec", "metadata", "kind", "apiVersion"]) | st.text(max_size=4)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=25,
)

ITEM = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "maxLength": 5, "pattern": "^[a-z]*$"},
        "port": {"x-kubernetes-int-or-string": True, "anyOf": [INTEGER, STRING]},
        "n": {"type": "integer", "default": 1, "minimum": 0},
    },
}
EVERYTHING = {  # one of each keyword, default and list type
    "type": "object",
    "required": ["a"],
    "properties": {
        "a": {"type": "string", "enum": ["x", "y"]},
        "b": {"type": "number", "multipleOf": 0.5, "maximum": 100, "nullable": True},
        "list": {
            "type": "array",
            "maxItems": 3,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": ITEM,
        },
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string", "default": "d"}},
        "map": {
            "type": "object",
            "additionalProperties": {"default": {}, **obj_schema(x={"type": "string", "format": "date-time"})},
        },
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"n": INTEGER}},
        "opts": {"default": {"level": "low"}, **obj_schema(level=STRING, x={"type": "boolean", "default": True})},
    },
}
ODDITIES = obj_schema(  # embedded resources, preserving arrays, junctors, forbidden properties
    t={"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
    arr={"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": obj_schema(name=STRING)},
    j={
        "type": "string",
        "allOf": [{"minLength": 1}],
        "anyOf": [{"maxLength": 2}, {"maxLength": 4}],
        "oneOf": [{"pattern": "a"}, {"pattern": "b"}],
        "not": {"enum": ["zz"]},
    },
    strict={"type": "object", "additionalProperties": False},
    fmt={"type": "string", "format": "byte"},
)
SMALL_MAP = {
    "type": "object",
    "maxProperties": 2,
    "additionalProperties": {"type": "array", "items": {"type": "integer", "nullable": True}},
}
SCHEMAS = [
    resource_schema(EVERYTHING, status={"type": "object", "minProperties": 1, "properties": {"phase": STRING}}),
    resource_schema(ODDITIES),
    {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    {"type": "object", "properties": {"spec": SMALL_MAP}},
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_index=st.integers(0, len(SCHEMAS) - 1), spec=json_values, extra=json_values, metadata=json_values)
def test_apply_never_raises_and_a_second_apply_changes_nothing(schema_index, spec, extra, metadata):
    schema = SCHEMAS[schema_index]
    obj = {"apiVersion": "x/v1", "kind": "K", "metadata": metadata, "spec": spec, "status": extra, "other": extra}
    first = apply_schema(schema, obj)
    snapshot = copy.deepcopy(obj)
    second = apply_schema(schema, obj)
    assert second.unknown_fields == []
    assert [str(e) for e in second.errors] == [str(e) for e in first.errors]
    assert obj == snapshot


hostile_values = st.recursive(
    st.one_of(json_scalars, st.floats()),  # NaN and infinities too, as YAML can produce them
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=100, deadline=None)
@given(value=hostile_values)
def test_hostile_values_anywhere_never_raise(value):
    for schema in SCHEMAS:
        outcome = apply_schema(schema, {"spec": copy.deepcopy(value), "metadata": copy.deepcopy(value)})
        assert isinstance(outcome, structural.Outcome)


def test_a_hostile_pattern_and_value_match_in_linear_time():
    import time

    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    started = time.perf_counter()
    outcome = apply_schema(schema, {"s": "a" * 5000 + "b"})
    assert time.perf_counter() - started < 0.5
    assert [e.field for e in outcome.errors] == ["s"]


def test_remembered_values_come_out_as_the_walk_made_them():
    """``remember``: a value walked clean before is not walked again but gets the same defaults;
    values with unknown fields or problems are never remembered, so they are reported every time."""
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer", "maximum": 5}, "mode": {"type": "string", "default": "fast"}}}}}
    validator = structural.Validator(schema)
    for _ in range(3):
        obj = {"spec": {"size": 3}}
        assert validator.apply(obj, remember=True) == structural.Outcome([], [])
        assert obj == {"spec": {"size": 3, "mode": "fast"}}
    assert len(validator._clean) == 1
    obj = {"spec": {"size": 3}}
    obj["spec"]["mode"] = "fast"  # a value that is already what the walk makes: remembered as is
    validator.apply(obj, remember=True)
    for _ in range(2):
        wrong = {"spec": {"size": 9}}
        assert [e.field for e in validator.apply(wrong, remember=True).errors] == ["spec.size"]
        extra = {"spec": {"size": 1, "bogus": True}}
        assert validator.apply(extra, remember=True).unknown_fields == ["spec.bogus"] and extra["spec"] == {"size": 1, "mode": "fast"}
    assert len(validator._clean) == 2


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_index=st.integers(0, len(SCHEMAS) - 1), spec=json_values, status=json_values)
def test_remembering_never_changes_an_outcome(schema_index, spec, status):
    """Whatever the values, a remembering validator answers (and shapes the object) exactly as a
    fresh walk does, the first time and every time after."""
    schema = SCHEMAS[schema_index]
    remembering = structural.Validator(schema)
    for _ in range(3):
        obj = {"apiVersion": "x/v1", "kind": "K", "spec": copy.deepcopy(spec), "status": copy.deepcopy(status)}
        fresh = copy.deepcopy(obj)
        assert remembering.apply(obj, remember=True) == structural.Validator(schema).apply(fresh)
        assert obj == fresh
