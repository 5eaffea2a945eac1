"""Merge patch, JSON patch and strategic merge patch, checked against RFCs and upstream test cases."""

from __future__ import annotations

import copy
import time

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mockapi import errors
from mockapi.patch import PATCH_REJECTED, json_patch, merge_patch, strategic_merge_patch


def _raises(call, *args, **kwargs) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as caught:
        call(*args, **kwargs)
    return caught.value


def _nested(depth: int, leaf) -> dict:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


# JSON values: scalars without floats (exact comparisons), containers with small keys.
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "x", "y"]))
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "c", "$patch"]), inner, max_size=3)
    ),
    max_leaves=12,
)
_OBJECTS = st.dictionaries(st.sampled_from(["a", "b", "c"]), _JSON, max_size=3)

# -- JSON merge patch ---------------------------------------------------------------------------

# RFC 7386 appendix A, the rows whose patch is an object.
RFC7386 = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "result"), RFC7386)
def test_merge_patch_follows_the_rfc_7386_examples(target, patch, result):
    assert merge_patch(target, patch) == result


# The RFC's rows with a non-object patch: kube-apiserver rejects a body that is not an object.
@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (["c", "d"], "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ("bar", "error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}"),
        (1, "error decoding patch: json: cannot unmarshal number into Go value of type map[string]interface {}"),
        (True, "error decoding patch: json: cannot unmarshal bool into Go value of type map[string]interface {}"),
        (None, "Invalid JSON Patch"),
    ],
)
def test_merge_patch_rejects_a_body_that_is_not_an_object(patch, message):
    error = _raises(merge_patch, {"a": "foo"}, patch)
    assert (error.code, error.reason, error.message) == (400, "BadRequest", message)


def test_merge_patch_drops_nulls_inside_values_that_merge_with_nothing():
    result = merge_patch({"a": 1, "b": {"c": 1}}, {"a": [{"x": None, "y": 1}, None], "n": {"m": None}, "b": {"c": None}})
    assert result == {"a": [{"y": 1}, None], "n": {}, "b": {}}


def test_merge_patch_replaces_an_object_by_a_list_verbatim():
    assert merge_patch({"a": {"b": 1}}, {"a": [{"x": None}]}) == {"a": [{"x": None}]}


@settings(max_examples=50)
@given(_OBJECTS, _OBJECTS)
def test_merge_patch_never_mutates_or_aliases_its_inputs(target, patch):
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    result = merge_patch(target, patch)
    assert (target, patch) == (target_before, patch_before)
    _scribble(result)
    assert (target, patch) == (target_before, patch_before)


def _scribble(value) -> None:
    """Mutate every container of value in place."""
    if isinstance(value, dict):
        for item in list(value.values()):
            _scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            _scribble(item)
        value.append("scribbled")


@settings(max_examples=100)
@given(_OBJECTS, _OBJECTS)
def test_a_sharing_merge_patch_gives_the_same_value_and_leaves_its_target_alone(target, patch):
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    expected = merge_patch(copy.deepcopy(target), patch, in_place=True)
    result = merge_patch(target, patch, share=True)
    assert result == expected and list(result) == list(expected)  # the same keys, in the same order
    assert (target, patch) == (target_before, patch_before)
    _check_shared_only_where_untouched(result, target, patch)


def _check_shared_only_where_untouched(result, target, patch) -> None:
    """Every container of ``result`` is either one the patch does not reach (the target's own
    object there) or new: never the patch's, never a target container the patch changed."""
    assert result is not target
    for key, value in result.items():
        named = patch.get(key, _ABSENT) if isinstance(patch, dict) else _ABSENT
        if named is _ABSENT:
            assert value is target[key]
        elif isinstance(value, (dict, list)):
            assert value is not named
            if isinstance(value, dict) and isinstance(named, dict) and isinstance(target.get(key), dict):
                _check_shared_only_where_untouched(value, target[key], named)
            else:
                _check_nothing_of(value, target, patch)


_ABSENT = object()


def _check_nothing_of(value, *others) -> None:
    """No container in ``value`` is a container of ``others``."""
    seen = set()

    def ids(v):
        if isinstance(v, (dict, list)):
            seen.add(id(v))
            for item in v.values() if isinstance(v, dict) else v:
                ids(item)

    for other in others:
        ids(other)

    def check(v):
        if isinstance(v, (dict, list)):
            assert id(v) not in seen
            for item in v.values() if isinstance(v, dict) else v:
                check(item)

    check(value)


def test_a_sharing_merge_patch_copies_only_along_the_patched_paths():
    target = {"metadata": {"name": "p", "labels": {"a": "1"}, "annotations": {"x": "y"}}, "spec": {"containers": [{"name": "c"}]}}
    result = merge_patch(target, {"metadata": {"labels": {"a": "2"}}}, share=True)
    assert result == {"metadata": {"name": "p", "labels": {"a": "2"}, "annotations": {"x": "y"}}, "spec": {"containers": [{"name": "c"}]}}
    assert result["spec"] is target["spec"] and result["metadata"]["annotations"] is target["metadata"]["annotations"]
    assert result["metadata"] is not target["metadata"] and target["metadata"]["labels"] == {"a": "1"}


@settings(max_examples=50)
@given(_OBJECTS, _OBJECTS)
def test_merge_patch_is_idempotent_when_lists_hold_no_objects(target, patch):
    def flat_lists(value) -> bool:
        if isinstance(value, dict):
            return all(flat_lists(v) for v in value.values())
        if isinstance(value, list):
            return not any(isinstance(v, (dict, list)) for v in value)
        return True

    once = merge_patch(target, patch)
    if flat_lists(patch):
        assert merge_patch(once, patch) == once


def test_merge_patch_survives_hostile_nesting():
    assert _raises(merge_patch, {}, _nested(5000, 1)).code == 400


# -- JSON patch ---------------------------------------------------------------------------------

DOC = {"a": {"b": [1, 2, 3], "c": None}, "k/~": "v"}

JSON_PATCHES = [
    ([{"op": "add", "path": "/x", "value": {"y": 1}}], {**DOC, "x": {"y": 1}}),
    ([{"op": "add", "path": "/a/b/0", "value": 0}], {**DOC, "a": {"b": [0, 1, 2, 3], "c": None}}),
    ([{"op": "add", "path": "/a/b/3", "value": 4}], {**DOC, "a": {"b": [1, 2, 3, 4], "c": None}}),
    ([{"op": "add", "path": "/a/b/-", "value": 4}], {**DOC, "a": {"b": [1, 2, 3, 4], "c": None}}),
    ([{"op": "add", "path": "/a/b/-1", "value": 4}], {**DOC, "a": {"b": [1, 2, 3, 4], "c": None}}),
    ([{"op": "add", "path": "/a/b/01", "value": 9}], {**DOC, "a": {"b": [1, 9, 2, 3], "c": None}}),
    ([{"op": "add", "path": "/n"}], {**DOC, "n": None}),
    ([{"op": "remove", "path": "/a/b/1"}], {**DOC, "a": {"b": [1, 3], "c": None}}),
    ([{"op": "remove", "path": "/a/b/-1"}], {**DOC, "a": {"b": [1, 2], "c": None}}),
    ([{"op": "remove", "path": "/k~1~0"}], {"a": DOC["a"]}),
    ([{"op": "replace", "path": "/a/c", "value": 5}], {**DOC, "a": {"b": [1, 2, 3], "c": 5}}),
    ([{"op": "replace", "path": "/new", "value": 5}], {**DOC, "new": 5}),  # evanphx v4: any object key
    ([{"op": "replace", "path": "", "value": {"z": 1}}], {"z": 1}),
    ([{"op": "replace", "path": "", "value": 3}], DOC),  # evanphx v4 lets this through as a no-op
    ([{"op": "move", "from": "/a/b", "path": "/b"}], {"a": {"c": None}, "k/~": "v", "b": [1, 2, 3]}),
    ([{"op": "copy", "from": "/a/b/0", "path": "/a/b/-"}], {**DOC, "a": {"b": [1, 2, 3, 1], "c": None}}),
    ([{"op": "test", "path": "/a/b", "value": [1, 2, 3]}], DOC),
    ([{"op": "test", "path": "/a/c", "value": None}], DOC),
    ([{"op": "test", "path": "/missing", "value": None}], DOC),  # evanphx: a missing key tests as null
    ([{"op": "test", "path": "/a/b/0", "value": 1.0}], DOC),
    ([{"op": "test", "path": "", "value": DOC}], DOC),
    (None, DOC),
    ([], DOC),
]


@pytest.mark.parametrize(("operations", "result"), JSON_PATCHES)
def test_json_patch_applies_operations_like_kube_apiserver(operations, result):
    before = copy.deepcopy(DOC)
    assert json_patch(DOC, operations) == result
    assert DOC == before


FAILING_OPERATIONS = [
    {"op": "remove", "path": "/missing"},
    {"op": "remove", "path": "/a/b/3"},
    {"op": "add", "path": "/missing/x", "value": 1},
    {"op": "add", "path": "/a/c/x", "value": 1},  # through a null
    {"op": "add", "path": "/a/b/4", "value": 1},
    {"op": "add", "path": "/a/b/x", "value": 1},
    {"op": "add", "path": "", "value": {}},
    {"op": "replace", "path": "/a/b/3", "value": 1},
    {"op": "test", "path": "/a/b/0", "value": 2},
    {"op": "test", "path": "/a/b/0", "value": True},
    {"op": "test", "path": "/a/b/0"},
    {"op": "test", "path": "/missing", "value": 1},
    {"op": "move", "from": "/missing", "path": "/x"},
    {"op": "move", "from": "/a", "path": "/a/inside"},
    {"op": "copy", "from": "/missing/deeper", "path": "/x"},
    {"op": "frobnicate", "path": "/a"},
    {"path": "/a"},
    {"op": "add", "value": 1},
    {"op": "add", "path": "/a/b/99999999999999999999999999999", "value": 1},
    {"op": "add", "path": "/a/b/" + "9" * 5000, "value": 1},
]


@pytest.mark.parametrize("operation", FAILING_OPERATIONS)
def test_json_patch_failures_are_422_with_kube_generic_message(operation):
    error = _raises(json_patch, DOC, [operation])
    assert (error.code, error.reason, error.message, error.details) == (422, "Invalid", PATCH_REJECTED, {})
    assert isinstance(error.__cause__, ValueError)  # evanphx's reason, for the log


def test_json_patch_failed_test_keeps_evanphx_reason_as_cause():
    error = _raises(json_patch, DOC, [{"op": "test", "path": "/a/b/0", "value": 2}])
    assert str(error.__cause__) == "testing value /a/b/0 failed: test failed"


def test_json_patch_is_atomic_and_leaves_the_document_alone_on_failure():
    doc = {"a": 1}
    _raises(json_patch, doc, [{"op": "add", "path": "/b", "value": 2}, {"op": "remove", "path": "/zz"}])
    assert doc == {"a": 1}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"op": "add"}, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"),
        ("x", "error decoding patch: json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp"),
        (["add"], "error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp"),
        ([[]], "error decoding patch: json: cannot unmarshal array into Go value of type handlers.jsonPatchOp"),
        (
            [{"op": 1, "path": "/a"}],
            "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string",
        ),
        (
            [{"op": "add", "path": {"x": 1}}],
            "error decoding patch: json: cannot unmarshal object into Go struct field jsonPatchOp.path of type string",
        ),
    ],
)
def test_json_patch_body_that_is_not_a_list_of_operations_is_400(body, message):
    error = _raises(json_patch, DOC, body)
    assert (error.code, error.reason, error.message) == (400, "BadRequest", message)


def test_json_patch_with_more_than_10000_operations_is_413():
    operations = [{"op": "test", "path": "/a/c", "value": None}] * 10001
    error = _raises(json_patch, DOC, operations)
    assert (error.code, error.reason) == (413, "RequestEntityTooLarge")
    assert error.message == "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    assert json_patch(DOC, operations[:10000]) == DOC


def test_json_patch_stops_copies_that_grow_the_document_past_3_mib():
    doubling = [{"op": "copy", "from": "/d", "path": f"/d{i}"} for i in range(20)]
    start = time.perf_counter()
    error = _raises(json_patch, {"d": "x" * (1 << 20)}, doubling)
    assert error.code == 422
    assert "exceeding the limit 3145728" in str(error.__cause__)
    assert time.perf_counter() - start < 2


def test_json_patch_huge_index_is_rejected_without_allocating():
    start = time.perf_counter()
    error = _raises(json_patch, {"a": []}, [{"op": "add", "path": "/a/9223372036854775806", "value": 1}])
    assert error.code == 422
    assert time.perf_counter() - start < 0.5


def test_json_patch_values_are_copied_not_shared():
    value = {"inner": [1]}
    result = json_patch({}, [{"op": "add", "path": "/v", "value": value}])
    result["v"]["inner"].append(2)
    assert value == {"inner": [1]}


def test_json_patch_survives_hostile_nesting():
    deep = _nested(5000, 1)
    assert _raises(json_patch, {}, [{"op": "test", "path": "/a", "value": deep}]).code in (400, 422)
    assert _raises(json_patch, deep, [{"op": "remove", "path": "/zz"}]).code == 400


@settings(max_examples=50)
@given(_OBJECTS, st.lists(st.fixed_dictionaries({"op": st.sampled_from(["add", "remove", "replace", "copy", "move", "test"]), "path": st.sampled_from(["/a", "/b", "/a/0", "/a/-", ""]), "from": st.sampled_from(["/a", "/b/0"]), "value": _JSON}), max_size=3))
def test_json_patch_never_mutates_its_inputs(doc, operations):
    doc_before, operations_before = copy.deepcopy(doc), copy.deepcopy(operations)
    try:
        _scribble(json_patch(doc, operations))
    except errors.StatusError as exc:
        assert exc.code in (400, 422)
    assert (doc, operations) == (doc_before, operations_before)


# -- strategic merge patch: upstream strategicpatch test cases ---------------------------------

# The MergeItem struct of k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go as an OpenAPI schema.
MERGE_ITEM: dict = {"type": "object", "properties": {}}
MERGE_ITEM["properties"].update(
    {
        "name": {"type": "string"},
        "value": {"type": "string"},
        "other": {"type": "string"},
        "mergingList": {
            "type": "array",
            "items": MERGE_ITEM,
            "x-kubernetes-patch-strategy": "merge",
            "x-kubernetes-patch-merge-key": "name",
        },
        "nonMergingList": {"type": "array", "items": MERGE_ITEM},
        "mergingIntList": {"type": "array", "items": {"type": "integer"}, "x-kubernetes-patch-strategy": "merge"},
        "nonMergingIntList": {"type": "array", "items": {"type": "integer"}},
        "simpleMap": {"type": "object", "additionalProperties": {"type": "string"}},
        "retainKeysMap": {"type": "object", "x-kubernetes-patch-strategy": "retainKeys", "properties": {}},
        "retainKeysMergingList": {
            "type": "array",
            "items": MERGE_ITEM,
            "x-kubernetes-patch-strategy": "merge,retainKeys",
            "x-kubernetes-patch-merge-key": "name",
        },
    }
)

# original + patch → result, from customStrategicMergePatchTestCaseData and the raw test cases
# (three-way cases use upstream's current as original and threeWay as patch).
UPSTREAM_CASES = yaml.safe_load(
    r"""
- description: unique scalars when merging lists
  original: {mergingIntList: [1, 2]}
  patch: {mergingIntList: [2, 3]}
  result: {mergingIntList: [1, 2, 3]}
- description: delete map from nested map
  original: {simpleMap: {key1: "1", key2: "1"}}
  patch: {simpleMap: {$patch: delete}}
  result: {simpleMap: {}}
- description: delete all items from merging list
  original: {mergingList: [{name: "1"}, {name: "2"}]}
  patch: {mergingList: [{$patch: replace}]}
  result: {mergingList: []}
- description: merge empty merging lists
  original: {mergingList: []}
  patch: {mergingList: []}
  result: {mergingList: []}
- description: delete all keys from map
  original: {name: "1", value: "1"}
  patch: {$patch: replace}
  result: {}
- description: add key and delete all keys from map
  original: {name: "1", value: "1"}
  patch: {other: a, $patch: replace}
  result: {other: a}
- description: delete all duplicate entries in a merging list
  original: {mergingList: [{name: "1"}, {name: "1"}, {name: "2", value: a}, {name: "3"}, {name: "3"}]}
  patch: {mergingList: [{name: "1", $patch: delete}, {name: "3", $patch: delete}]}
  result: {mergingList: [{name: "2", value: a}]}
- description: retainKeys map can add a field when no retainKeys directive present
  original: {retainKeysMap: {name: foo}}
  patch: {retainKeysMap: {value: bar}}
  result: {retainKeysMap: {name: foo, value: bar}}
- description: retainKeys map can delete a field when no retainKeys directive present
  original: {retainKeysMap: {name: foo, value: a}}
  patch: {retainKeysMap: {value: null}}
  result: {retainKeysMap: {name: foo}}
- description: retainKeys map merge an empty map
  original: {retainKeysMap: {name: foo, value: a}}
  patch: {retainKeysMap: {}}
  result: {retainKeysMap: {name: foo, value: a}}
- description: retainKeys list can change a field when no retainKeys directive present
  original: {retainKeysMergingList: [{name: bar}, {name: foo, value: a}]}
  patch: {retainKeysMergingList: [{name: foo, value: b}]}
  result: {retainKeysMergingList: [{name: bar}, {name: foo, value: b}]}
- description: preserve the order from the patch in a merging list
  original: {mergingList: [{name: "1"}, {name: "2", value: b}, {name: "3"}]}
  patch: {mergingList: [{name: "3", value: c}, {name: "1", value: a}, {name: "2", other: x}]}
  result: {mergingList: [{name: "3", value: c}, {name: "1", value: a}, {name: "2", value: b, other: x}]}
- description: preserve the order from the patch in a merging list 2
  original: {mergingList: [{name: "1"}, {name: "2", value: b}, {name: "3"}]}
  patch: {mergingList: [{name: "3", value: c}, {name: "1", value: a}]}
  result: {mergingList: [{name: "2", value: b}, {name: "3", value: c}, {name: "1", value: a}]}
- description: preserve the order from the patch in a merging int list
  original: {mergingIntList: [1, 2, 3]}
  patch: {mergingIntList: [3, 1, 2]}
  result: {mergingIntList: [3, 1, 2]}
- description: preserve the order from the patch in a merging int list 2
  original: {mergingIntList: [1, 2, 3]}
  patch: {mergingIntList: [3, 1]}
  result: {mergingIntList: [2, 3, 1]}
- description: $setElementOrder contains item that is not present in the list to be merged
  original: {mergingList: [{name: "1"}, {name: "3"}]}
  patch:
    $setElementOrder/mergingList: [{name: "3"}, {name: "2"}, {name: "1"}]
    mergingList: [{name: "3", value: "3"}, {name: "1", value: "1"}]
  result: {mergingList: [{name: "3", value: "3"}, {name: "1", value: "1"}]}
- description: $setElementOrder contains item that is not present in the int list to be merged
  original: {mergingIntList: [1, 3]}
  patch: {$setElementOrder/mergingIntList: [3, 2, 1]}
  result: {mergingIntList: [3, 1]}
- description: delete items in lists of scalars
  original: {mergingIntList: [1, 2, 3, 4]}
  patch: {$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}
  result: {mergingIntList: [1, 2, 4]}
- description: delete all duplicate items in lists of scalars
  original: {mergingIntList: [1, 2, 3, 3, 4]}
  patch: {$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}
  result: {mergingIntList: [1, 2, 4]}
- description: add and delete items in lists of scalars
  original: {mergingIntList: [1, 2, 3, 4]}
  patch: {$setElementOrder/mergingIntList: [1, 2, 4], $deleteFromPrimitiveList/mergingIntList: [3], mergingIntList: [4]}
  result: {mergingIntList: [1, 2, 4]}
- description: merge lists of maps
  original: {mergingList: [{name: "1", other: a}, {name: "2", value: "2", other: b}]}
  patch:
    $setElementOrder/mergingList: [{name: "4"}, {name: "1"}, {name: "2"}, {name: "3"}]
    mergingList: [{name: "4", value: "4"}, {name: "3", value: "3"}]
  result:
    mergingList:
    - {name: "4", value: "4"}
    - {name: "1", other: a}
    - {name: "2", value: "2", other: b}
    - {name: "3", value: "3"}
- description: merge lists of maps with conflict
  original: {mergingList: [{name: "1", other: a}, {name: "2", value: "3", other: b}]}
  patch:
    $setElementOrder/mergingList: [{name: "1"}, {name: "2"}, {name: "3"}]
    mergingList: [{name: "2", value: "2"}, {name: "3", value: "3"}]
  result: {mergingList: [{name: "1", other: a}, {name: "2", value: "2", other: b}, {name: "3", value: "3"}]}
- description: add field to map in merging list with conflict
  original: {mergingList: [{name: "1", other: a}, {name: "3", value: "2", other: b}]}
  patch:
    $setElementOrder/mergingList: [{name: "1"}, {name: "2"}]
    mergingList: [{name: "1", value: "1"}, {name: "2", value: "2"}]
  result:
    mergingList:
    - {name: "1", value: "1", other: a}
    - {name: "2", value: "2"}
    - {name: "3", value: "2", other: b}
- description: add an item that already exists in current object in merging list
  original: {mergingList: [{name: "1", value: a, other: x}, {name: "2"}, {name: "3"}]}
  patch: {$setElementOrder/mergingList: [{name: "1"}, {name: "2"}, {name: "3"}], mergingList: [{name: "3"}]}
  result: {mergingList: [{name: "1", value: a, other: x}, {name: "2"}, {name: "3"}]}
- description: defined null values should propagate removing original fields
  original: {name: original-name, value: original-value, other: current-other}
  patch: {name: modified-name, value: null}
  result: {name: modified-name, other: current-other}
- description: replace list of scalars
  original: {nonMergingIntList: [1, 2]}
  patch: {nonMergingIntList: [2, 3]}
  result: {nonMergingIntList: [2, 3]}
- description: retainKeys directive drops the keys it does not list
  original: {retainKeysMap: {name: foo, value: a, other: b}}
  patch: {retainKeysMap: {$retainKeys: [name, value], value: c}}
  result: {retainKeysMap: {name: foo, value: c}}
- description: retainKeys directive in a merging list item
  original: {retainKeysMergingList: [{name: foo, value: a, other: b}]}
  patch: {retainKeysMergingList: [{name: foo, $retainKeys: [name, other], other: c}]}
  result: {retainKeysMergingList: [{name: foo, other: c}]}
"""
)


@pytest.mark.parametrize("case", UPSTREAM_CASES, ids=[c["description"] for c in UPSTREAM_CASES])
def test_strategic_merge_patch_matches_upstream_cases(case):
    assert strategic_merge_patch(case["original"], case["patch"], MERGE_ITEM) == case["result"]


UPSTREAM_ERRORS = yaml.safe_load(
    r"""
- description: should check if order in $setElementOrder and patch list match
  original: {mergingList: [{name: "1"}, {name: "3"}, {name: "2"}]}
  patch:
    $setElementOrder/mergingList: [{name: "1"}, {name: "2"}, {name: "3"}]
    mergingList: [{name: "3", value: "3"}, {name: "1", value: "1"}]
  error: "the order in patch list:\n[map[name:3 value:3] map[name:1 value:1]]\n doesn't match $setElementOrder list:\n[map[name:1] map[name:2] map[name:3]]"
- description: should check if order in $setElementOrder and patch int list match
  original: {mergingIntList: [1, 3, 2]}
  patch: {$setElementOrder/mergingIntList: [1, 2, 3], mergingIntList: [3, 1]}
  error: "the order in patch list:\n[3 1]\n doesn't match $setElementOrder list:\n[1 2 3]"
- description: missing merge key should error out
  original: {mergingList: [{name: "1", value: a}]}
  patch: {mergingList: [{value: b}]}
  error: "map: map[value:b] does not contain declared merge key: name"
- description: unknown patch type on a map
  original: {simpleMap: {a: b}}
  patch: {simpleMap: {$patch: frobnicate, a: c}}
  error: "unknown patch type: frobnicate in map: map[$patch:frobnicate a:c]"
- description: unknown patch type on a list item
  original: {mergingList: [{name: "1"}]}
  patch: {mergingList: [{name: "1", $patch: 7}]}
  error: "unknown patch type: %!s(int64=7) in map: map[$patch:7 name:1]"
- description: merge directive in a list
  original: {mergingList: [{name: "1"}]}
  patch: {mergingList: [{$patch: merge}]}
  error: "merging lists cannot yet be specified in the patch"
- description: delete directive without merge key
  original: {mergingList: [{name: "1"}]}
  patch: {mergingList: [{$patch: delete}]}
  error: "map: map[$patch:delete] does not contain declared merge key: name"
- description: malformed deletion list directive
  original: {mergingIntList: [1]}
  patch: {$deleteFromPrimitiveListmergingIntList: [1]}
  error: invalid patch format of primitive list
- description: malformed order directive
  original: {mergingIntList: [1]}
  patch: {$setElementOrder: [1]}
  error: invalid patch format of setElementOrder list
- description: order directive that is not a list
  original: {mergingIntList: [1]}
  patch: {$setElementOrder/mergingIntList: 1}
  error: "expected a []interface {}, but received a int64"
- description: retainKeys that is not a list
  original: {retainKeysMap: {name: a}}
  patch: {retainKeysMap: {$retainKeys: name}}
  error: invalid patch format of retainKeys
- description: patch key missing from retainKeys
  original: {retainKeysMap: {name: a}}
  patch: {retainKeysMap: {$retainKeys: [name], value: b}}
  error: invalid patch format of retainKeys
- description: mixed element types
  original: {mergingIntList: [1]}
  patch: {mergingIntList: [a]}
  error: "list element types are not identical: [[1] [a]]"
"""
)


@pytest.mark.parametrize("case", UPSTREAM_ERRORS, ids=[c["description"] for c in UPSTREAM_ERRORS])
def test_strategic_merge_patch_rejects_bad_directives_with_strategicpatch_wording(case):
    error = _raises(strategic_merge_patch, case["original"], case["patch"], MERGE_ITEM)
    assert (error.code, error.reason, error.message) == (400, "BadRequest", case["error"])


def test_strategic_merge_patch_list_of_lists_is_422_with_kube_generic_message():
    error = _raises(strategic_merge_patch, {"mergingIntList": [[1]]}, {"mergingIntList": [[2]]}, MERGE_ITEM)
    assert (error.code, error.reason, error.message) == (422, "Invalid", PATCH_REJECTED)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ("x", "json: cannot unmarshal string into Go value of type map[string]interface {}"),
    ],
)
def test_strategic_merge_patch_body_must_be_an_object(body, message):
    assert _raises(strategic_merge_patch, {}, body, MERGE_ITEM).message == message


def test_strategic_merge_patch_null_body_changes_nothing():
    assert strategic_merge_patch({"a": 1}, None, MERGE_ITEM) == {"a": 1}


# -- strategic merge patch: built-in kinds ---------------------------------------------------------


def _merge_list(key: str, items: dict | None = None, strategy: str = "merge") -> dict:
    return {
        "type": "array",
        "items": items or {"type": "object"},
        "x-kubernetes-patch-strategy": strategy,
        "x-kubernetes-patch-merge-key": key,
    }


CONTAINER = {
    "type": "object",
    "properties": {
        "ports": _merge_list("containerPort"),
        "volumeMounts": _merge_list("mountPath"),
        "env": _merge_list("name"),
        "args": {"type": "array", "items": {"type": "string"}},
    },
}
POD_SPEC = {
    "type": "object",
    "properties": {
        "containers": _merge_list("name", CONTAINER),
        "volumes": _merge_list("name", strategy="merge,retainKeys"),
        "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
        "tolerations": {"type": "array", "items": {"type": "object"}},
    },
}
POD = {"type": "object", "properties": {"metadata": {"type": "object"}, "spec": POD_SPEC}}


def _pod(**spec) -> dict:
    return {"metadata": {"name": "p", "labels": {"app": "web"}}, "spec": spec}


def test_containers_merge_by_name_and_new_ones_go_first_like_kubectl_docs_show():
    live = _pod(containers=[{"name": "patch-demo-ctr", "image": "nginx"}])
    patched = strategic_merge_patch(live, {"spec": {"containers": [{"name": "patch-demo-ctr-2", "image": "redis"}]}}, POD)
    assert patched["spec"]["containers"] == [
        {"name": "patch-demo-ctr-2", "image": "redis"},
        {"name": "patch-demo-ctr", "image": "nginx"},
    ]


def test_container_fields_and_ports_merge_by_their_keys():
    live = _pod(containers=[{"name": "c", "image": "a", "ports": [{"containerPort": 80, "name": "http"}]}])
    patch = {"spec": {"containers": [{"name": "c", "image": "b", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}
    assert strategic_merge_patch(live, patch, POD)["spec"]["containers"] == [
        {"name": "c", "image": "b", "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}]}
    ]


def test_patch_delete_directive_removes_a_container():
    live = _pod(containers=[{"name": "a"}, {"name": "b"}])
    patch = {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}
    assert strategic_merge_patch(live, patch, POD)["spec"]["containers"] == [{"name": "b"}]


def test_patch_replace_directive_replaces_the_whole_list():
    live = _pod(containers=[{"name": "a", "image": "x"}, {"name": "b"}])
    patch = {"spec": {"containers": [{"$patch": "replace"}, {"name": "c", "image": "y"}]}}
    assert strategic_merge_patch(live, patch, POD)["spec"]["containers"] == [{"name": "c", "image": "y"}]


def test_set_element_order_fixes_the_final_order_and_never_reaches_the_result():
    live = _pod(containers=[{"name": "a"}, {"name": "b"}])
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "b"}, {"name": "c"}, {"name": "a"}],
            "containers": [{"name": "c", "image": "z"}],
        }
    }
    patched = strategic_merge_patch(live, patch, POD)
    assert patched["spec"] == {"containers": [{"name": "b"}, {"name": "c", "image": "z"}, {"name": "a"}]}


def test_lists_without_a_strategy_are_replaced_and_maps_merge_with_null_deleting():
    live = _pod(tolerations=[{"key": "a"}], nodeSelector={"zone": "a", "disk": "ssd"}, containers=[{"name": "c", "args": ["1", "2"]}])
    patch = {
        "spec": {
            "tolerations": [{"key": "b"}],
            "nodeSelector": {"disk": None, "gpu": "yes"},
            "containers": [{"name": "c", "args": ["3"]}],
        }
    }
    spec = strategic_merge_patch(live, patch, POD)["spec"]
    assert spec["tolerations"] == [{"key": "b"}]
    assert spec["nodeSelector"] == {"zone": "a", "gpu": "yes"}
    assert spec["containers"] == [{"name": "c", "args": ["3"]}]


def test_retain_keys_on_a_volume_drops_the_old_source():
    live = _pod(volumes=[{"name": "v", "emptyDir": {}}])
    patch = {"spec": {"volumes": [{"name": "v", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}}]}}
    assert strategic_merge_patch(live, patch, POD)["spec"]["volumes"] == [{"name": "v", "configMap": {"name": "cm"}}]


def test_finalizers_are_a_union_even_when_the_schema_says_nothing_about_metadata():
    live = {"metadata": {"name": "p", "finalizers": ["a", "b"]}}
    patched = strategic_merge_patch(live, {"metadata": {"finalizers": ["b", "c"]}}, {"type": "object"})
    assert patched["metadata"]["finalizers"] == ["a", "b", "c"]


def test_delete_from_primitive_list_removes_finalizers_as_kubectl_sends_it():
    live = {"metadata": {"finalizers": ["a", "b", "c"]}}
    patch = {"metadata": {"$setElementOrder/finalizers": ["a", "c"], "$deleteFromPrimitiveList/finalizers": ["b"]}}
    assert strategic_merge_patch(live, patch, None) == {"metadata": {"finalizers": ["a", "c"]}}


def test_owner_references_merge_by_uid():
    live = {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}]}}
    patch = {"metadata": {"ownerReferences": [{"uid": "2", "controller": True}, {"uid": "1", "$patch": "delete"}]}}
    assert strategic_merge_patch(live, patch, POD)["metadata"]["ownerReferences"] == [
        {"uid": "2", "name": "b", "controller": True}
    ]


def test_new_values_lose_their_nulls_and_directives():
    live = _pod()
    patch = {"spec": {"nodeSelector": {"a": "1", "b": None}, "extra": {"$patch": "delete"}, "more": [{"x": None, "y": 1}]}}
    assert strategic_merge_patch(live, patch, POD)["spec"] == {"nodeSelector": {"a": "1"}, "more": [{"y": 1}]}


def test_schema_references_are_resolved_through_the_given_resolver():
    components = {"#/components/schemas/PodSpec": POD_SPEC}
    schema = {"type": "object", "properties": {"spec": {"allOf": [{"$ref": "#/components/schemas/PodSpec"}]}}}
    live = _pod(containers=[{"name": "a"}])
    patch = {"spec": {"containers": [{"name": "b"}]}}
    patched = strategic_merge_patch(live, patch, schema, resolve_ref=components.get)
    assert [c["name"] for c in patched["spec"]["containers"]] == ["b", "a"]
    assert strategic_merge_patch(live, patch, schema)["spec"]["containers"] == [{"name": "b"}]  # unresolved: replace


def test_strategic_merge_patch_survives_hostile_nesting():
    assert _raises(strategic_merge_patch, _nested(5000, 1), _nested(5000, 2), None).code == 400


_NO_NULL_LISTS = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from(["x", "y"])), max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=50)
@given(st.dictionaries(st.sampled_from(["a", "b"]), _NO_NULL_LISTS, max_size=3), st.dictionaries(st.sampled_from(["a", "b"]), _NO_NULL_LISTS, max_size=3))
def test_strategic_merge_patch_without_schema_or_directives_is_a_merge_patch(original, patch):
    assert strategic_merge_patch(original, patch, None) == merge_patch(original, patch)


@settings(max_examples=60)
@given(_OBJECTS, _OBJECTS)
def test_strategic_merge_patch_never_mutates_its_inputs(original, patch):
    original_before, patch_before = copy.deepcopy(original), copy.deepcopy(patch)
    try:
        _scribble(strategic_merge_patch(original, patch, MERGE_ITEM))
    except errors.StatusError as exc:
        assert exc.code == 400
    assert (original, patch) == (original_before, patch_before)
