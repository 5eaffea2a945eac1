"""The field manager's fast paths against the full computation they stand in for, on random
objects: the inlined comparison against the plain recursive one (structured-merge-diff's
``Compare``, as this package first wrote it), ``covers`` against ``union(a, b) is a``, the
metadata shortcut against comparing copies without the stripped fields, and the remembered
decoding of a shared stored list against a fresh one — so that every write's managedFields stay
byte-for-byte what the full computation gives."""

from __future__ import annotations

import copy

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockapi import fieldmanager
from mockapi.fieldmanager import fieldset, managed, typed
from mockapi.fieldmanager.schematype import MAP, OBJECT_META, root_type, shape
from mockapi.fieldmanager.typed import ABSENT, NOTHING, TypedError, equal
from mockapi.registry.loads import ManagedFieldsLoads
from tests.test_fieldmanager import build, paths_strategy

GV = "example.com/v1"
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(SETTINGS, max_examples=40)  # whole write sequences

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "settings": {"type": "object", "x-kubernetes-map-type": "atomic"},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    "items": {"type": "object", "properties": {"port": {"type": "integer"},
                                                               "protocol": {"type": "string", "default": "TCP"},
                                                               "name": {"type": "string"}}},
                },
                "devices": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}, "count": {"type": "integer"},
                                                               "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
                },
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "phase": {"type": "string"},
                "conditions": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["type"],
                    "items": {"type": "object", "properties": {"type": {"type": "string"}, "status": {"type": "string"},
                                                               "message": {"type": "string"}}},
                },
            },
        },
    },
}

# -- random objects: mostly well-typed, sometimes not (a misfit value is one leaf), with the
# -- values JSON tells apart and Python's == does not (true and 1, 1 and 1.0)

names = st.sampled_from(["a", "b", "c"])
scalars = st.one_of(st.none(), st.booleans(), st.sampled_from([0, 1, 1.0, 2]), names)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(names, inner, max_size=3)),
                           max_leaves=8)


def maybe(strategy):
    """Mostly the typed value, now and then anything at all."""
    return st.one_of(strategy, strategy, strategy, json_values)


ports = st.lists(st.fixed_dictionaries({"port": maybe(st.integers(1, 3))}, optional={"protocol": st.sampled_from(["TCP", "UDP"]), "name": names}),
                 max_size=3)
devices = st.lists(st.fixed_dictionaries({"name": names}, optional={"count": maybe(st.integers(0, 2)), "extra": json_values}), max_size=3)
specs = st.fixed_dictionaries({}, optional={
    "replicas": maybe(st.integers(0, 2)),
    "labels": maybe(st.dictionaries(names, names, max_size=3)),
    "settings": json_values,
    "tags": maybe(st.lists(names, max_size=3)),
    "args": maybe(st.lists(names, max_size=3)),
    "ports": maybe(ports),
    "devices": maybe(devices),
    "extra": json_values,
})
conditions = st.lists(st.fixed_dictionaries({"type": names}, optional={"status": st.sampled_from(["True", "False"]), "message": names}), max_size=3)
statuses = st.fixed_dictionaries({}, optional={"phase": maybe(names), "conditions": maybe(conditions)})
metas = st.fixed_dictionaries(
    {"name": st.just("w")},
    optional={
        "labels": st.dictionaries(names, st.one_of(names, st.just(True), st.just(1)), max_size=3),
        "annotations": st.dictionaries(names, names, max_size=2),
        "resourceVersion": st.sampled_from(["1", "2"]),
        "uid": st.just("u-1"),
        "generation": st.sampled_from([1, 2]),
        "finalizers": st.lists(names, max_size=2),
        "ownerReferences": maybe(st.lists(st.fixed_dictionaries({"uid": names, "name": names}), max_size=2)),
        "extra": json_values,  # not ObjectMeta's: deduced
    },
)
objects = st.builds(lambda meta, spec, status: {"apiVersion": GV, "kind": "Widget", "metadata": meta, "spec": spec, "status": status},
                    metas, specs, statuses)


@st.composite
def pairs(draw):
    """An object and another: unrelated, or the first with some of its parts replaced (the usual
    write: most subtrees equal, often the very same objects)."""
    old = draw(objects)
    if draw(st.booleans()):
        return old, draw(objects)
    other = draw(objects)
    new = dict(old)
    for key in draw(st.sets(st.sampled_from(["metadata", "spec", "status"]))):
        part = dict(old[key])
        fields = sorted(set(other[key]) | set(part))
        for field in draw(st.sets(st.sampled_from(fields))) if fields else ():
            if field in other[key]:
                part[field] = other[key][field]
            else:
                part.pop(field, None)
        new[key] = part
    return old, new


# -- the full computation: the comparison as first written (plain recursion, a call per child)


def _item_pe(t, item, index):
    if t.list_type == "map":
        if item is None:
            raise TypedError(f"element {index}: associative list with keys may not have a null element")
        if item.__class__ is not dict:
            raise TypedError(f"element {index}: associative list with keys may not have non-map elements")
        parts = [f"{quoted}:{typed._json(typed._key_value(t, item, name, index))}" for name, quoted in t.quoted_keys]
        return "k:{" + ",".join(parts) + "}"
    return typed.item_pe(t, item, index)


def _index_items(t, items):
    order, found = [], {}
    for index, item in enumerate(items):
        pe = _item_pe(t, item, index)
        if pe not in found:
            found[pe] = item
            order.append(pe)
    return order, found


def reference_compare(t, lhs, rhs):
    left = shape(t, lhs) if lhs is not ABSENT else None
    right = shape(t, rhs) if rhs is not ABSENT else None
    if left is not None and right is not None and left is not right:
        gone = reference_compare(left, lhs, ABSENT)[2]
        new = reference_compare(right, ABSENT, rhs)[0]
        return typed._children(new) or None, fieldset.LEAF, typed._children(gone) or None
    t = right or left
    empty = lambda value: value is ABSENT or not value  # noqa: E731
    if t.leaf or (empty(lhs) and empty(rhs)):
        if lhs is ABSENT:
            return fieldset.LEAF, None, None
        if rhs is ABSENT:
            return None, None, fieldset.LEAF
        return NOTHING if equal(lhs, rhs) else (None, fieldset.LEAF, None)
    added, modified, removed = {}, {}, {}
    if t.kind is MAP:
        left_map = lhs if lhs.__class__ is dict else {}
        right_map = rhs if rhs.__class__ is dict else {}
        for key, lv in left_map.items():
            rv = right_map.get(key, ABSENT)
            if rv is ABSENT or not (lv is rv or equal(lv, rv)):
                _record(_within(t.field(key)[0], lv, rv, "f:" + key), "f:" + key, added, modified, removed)
        for key, rv in right_map.items():
            if key not in left_map:
                _record(_within(t.field(key)[0], ABSENT, rv, "f:" + key), "f:" + key, added, modified, removed)
    else:
        left_order, left_items = _index_items(t, lhs if lhs.__class__ is list else ())
        right_order, right_items = _index_items(t, rhs if rhs.__class__ is list else ())
        for pe in right_order:
            lv, rv = left_items.get(pe, ABSENT), right_items[pe]
            if lv is ABSENT or not (lv is rv or equal(lv, rv)):
                _record(_within(t.elem, lv, rv, pe), pe, added, modified, removed)
        for pe in left_order:
            if pe not in right_items:
                _record(_within(t.elem, left_items[pe], ABSENT, pe), pe, added, modified, removed)
    return (fieldset.make_node(lhs is ABSENT, fieldset.sorted_node(added)), fieldset.sorted_node(modified) or None,
            fieldset.make_node(rhs is ABSENT, fieldset.sorted_node(removed)))


def _within(t, lhs, rhs, pe):
    try:
        return reference_compare(t, lhs, rhs)
    except TypedError as exc:
        raise exc.within(fieldset.path_string((pe,))) from None


def _record(result, pe, added, modified, removed):
    for node, out in zip(result, (added, modified, removed)):
        if node is not None:
            out[pe] = node


def reference_compare_objects(root, old, new, ignore=()):
    added, modified, removed = {}, {}, {}
    for key in list(old) + [key for key in new if key not in old]:
        if key in ignore or key in ("apiVersion", "kind"):
            continue
        lv, rv = old.get(key, ABSENT), new.get(key, ABSENT)
        if key == "metadata":
            lv = typed._recorded_meta(lv) if lv is not ABSENT else {}
            rv = typed._recorded_meta(rv) if rv is not ABSENT else {}
            child_type = OBJECT_META
        else:
            child_type = root.field(key)[0]
        if lv is not ABSENT and rv is not ABSENT and (lv is rv or equal(lv, rv)):
            continue
        _record(_within(child_type, lv, rv, "f:" + key), "f:" + key, added, modified, removed)
    return fieldset.sorted_node(added), fieldset.sorted_node(modified), fieldset.sorted_node(removed)


def outcome(fn, *args):
    """A result or the error it raised, comparable: TypedError by its text (message and path)."""
    try:
        return "ok", fn(*args)
    except TypedError as exc:
        return "error", str(exc)


def ordered(node):
    """A set with its key order made visible (FieldsV1 order is part of the stored bytes)."""
    return [(key, ordered(child)) for key, child in node.items()] if isinstance(node, dict) else node


# -- the comparison ---------------------------------------------------------------------------


@SETTINGS
@given(pairs(), st.sampled_from([(), ("status",), ("spec",)]))
def test_the_comparison_of_two_objects_is_the_full_recursive_one_key_order_included(pair, ignore):
    old, new = pair
    root = root_type(SCHEMA)
    fast = outcome(typed.compare_objects, root, old, new, ignore)
    full = outcome(reference_compare_objects, root, old, new, ignore)
    assert fast == full
    if fast[0] == "ok":
        assert [ordered(node) for node in fast[1]] == [ordered(node) for node in full[1]]


@SETTINGS
@given(json_values, json_values, st.sampled_from(["spec", "status"]))
def test_any_two_values_compare_as_the_full_recursion_does_whatever_their_shape(lhs, rhs, field):
    t = root_type(SCHEMA).field(field)[0]
    for left, right in ((lhs, rhs), (ABSENT, rhs), (lhs, ABSENT)):
        fast, full = outcome(typed.compare, t, left, right), outcome(reference_compare, t, left, right)
        assert fast == full
        if fast[0] == "ok":
            assert [ordered(node) for node in fast[1]] == [ordered(node) for node in full[1]]


@SETTINGS
@given(metas, metas, st.booleans())
def test_metadata_is_compared_as_its_copies_without_stripped_fields_are(a, b, shared):
    if shared:  # the usual write: most of metadata the same, a field or two changed
        b = dict(a, **{key: value for key, value in b.items() if key in ("labels", "resourceVersion", "generation")})
    fast = outcome(_compared_metadata, a, b)
    full = outcome(lambda: list(_within(OBJECT_META, typed._recorded_meta(a), typed._recorded_meta(b), "f:metadata")))
    assert fast == full
    if fast[0] == "ok":
        assert [ordered(node) for node in fast[1]] == [ordered(node) for node in full[1]]
    stripped_only = ({}, {}, {})
    typed._compare_metadata(a, dict(a, resourceVersion="9", managedFields=[]), *stripped_only)
    assert stripped_only == ({}, {}, {})


def _compared_metadata(a, b):
    out = ({}, {}, {})
    typed._compare_metadata(a, b, *out)
    return [node.get("f:metadata") for node in out]


# -- field sets -------------------------------------------------------------------------------

@given(paths_strategy, paths_strategy)
def test_covers_is_exactly_a_union_that_changes_nothing(a, b):
    sa, sb = build(a), build(b)
    for x, y in ((sa, sb), (sa, fieldset.intersection(sa, sb)), (fieldset.union(sa, sb), sb), (sa, sa), ({}, sb), (sa, {})):
        assert fieldset.covers(x, y) == (fieldset.union(x, y) is x)
    assert fieldset.covers(fieldset.union(sa, sb), sb) == (bool(fieldset.union(sa, sb)) or not sb)


# -- whole updates ----------------------------------------------------------------------------


def written(old, new, manager, now, subresource=""):
    ignore = ("spec",) if subresource else ("status",)
    fields = fieldmanager.update(SCHEMA, old, new, manager=manager, now=now, api_version=GV, subresource=subresource, ignore=ignore)
    out = copy.deepcopy(new)
    if fields:
        out["metadata"]["managedFields"] = fields
    else:
        out["metadata"].pop("managedFields", None)
    return out


def stored_and_loaded(obj, loads):
    """The object as the store keeps it and as a write loads it: the second load of the same bytes
    shares its managedFields list (declared shared, its decoding remembered)."""
    raw = orjson.dumps(obj)
    loads.load(raw)
    return loads.load(raw)


@FEWER
@given(st.lists(st.tuples(pairs(), st.sampled_from(["alice", "bob"]), st.sampled_from(["", "status"]), st.integers(0, 2)),
                min_size=1, max_size=4))
def test_updates_from_shared_loads_write_the_same_managed_fields_as_from_fresh_parses(steps):
    loads = ManagedFieldsLoads()
    obj = None
    for step, ((first, second), manager, subresource, tick) in enumerate(steps):
        now = f"2024-01-01T00:00:0{step + tick}Z"  # a manager writing again in the same second, or later
        if obj is None:
            obj = written(None, first, manager, now)
            continue
        new = dict(second, metadata=dict(second["metadata"], managedFields=obj["metadata"].get("managedFields")))
        shared = stored_and_loaded(obj, loads)
        fresh = orjson.loads(orjson.dumps(obj))
        try:
            via_shared = fieldmanager.update(SCHEMA, shared, new, manager=manager, now=now, api_version=GV, subresource=subresource,
                                             ignore=("spec",) if subresource else ("status",))
        except TypedError:
            continue
        via_fresh = fieldmanager.update(SCHEMA, fresh, orjson.loads(orjson.dumps(new)), manager=manager, now=now, api_version=GV,
                                        subresource=subresource, ignore=("spec",) if subresource else ("status",))
        assert orjson.dumps(via_shared) == orjson.dumps(via_fresh)
        obj = written(shared, new, manager, now, subresource)


def test_a_shared_lists_decoding_is_remembered_and_handed_out_as_a_fresh_dict():
    entries = [{"apiVersion": GV, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}, "manager": "alice",
                "operation": "Update", "time": "2024-01-01T00:00:00Z"}]
    managed.share(entries)
    first = managed.decode(entries, trusted=True)
    first.clear()  # a caller's own dict
    second = managed.decode(entries, trusted=True)
    assert list(second) == [("alice", "Update", GV, "")]
    assert second[("alice", "Update", GV, "")].stored is entries[0]
    assert managed.encode(second) == entries
    assert managed.decode(list(entries), trusted=True).keys() == second.keys()  # an unshared list: decoded afresh


def test_an_entry_restamped_in_its_own_second_is_written_back_as_stored():
    entries = [{"apiVersion": GV, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}, "manager": "alice",
                "operation": "Update", "time": "2024-01-01T00:00:00Z"}]
    entry = managed.decode(entries, trusted=True)[("alice", "Update", GV, "")]
    assert entry.with_time("2024-01-01T00:00:00Z") is entry
    assert entry.with_time("2024-01-01T00:00:00Z").encode() is entries[0]
    assert entry.with_time("2024-01-01T00:00:01Z").encode() == dict(entries[0], time="2024-01-01T00:00:01Z")


@SETTINGS
@given(objects, st.sampled_from(["", "status"]))
def test_a_creates_entry_is_the_full_comparison_against_an_empty_object(obj, subresource):
    ignore = ("spec",) if subresource else ("status",)
    try:
        added = reference_compare_objects(root_type(SCHEMA), {}, obj, ignore)[0]
    except TypedError:
        return
    got = fieldmanager.update(SCHEMA, None, obj, manager="alice", now="2024-01-01T00:00:00Z", api_version=GV, subresource=subresource, ignore=ignore)
    entry = {"apiVersion": GV, "fieldsType": "FieldsV1", "fieldsV1": added, "manager": "alice", "operation": "Update",
             **({"subresource": subresource} if subresource else {}), "time": "2024-01-01T00:00:00Z"}
    assert orjson.dumps(got) == orjson.dumps([entry] if added else [])


# -- whole updates: every shortcut against the full computation ------------------------------


def full_update(old, new, **kwargs):
    """``fieldmanager.update`` as first written: the plain recursive comparison, and every write
    disowning what changed from every entry before giving it to the writer (no "within its own
    fields" shortcut, which only restamps the writer's entry)."""
    saved = fieldmanager.compare_objects, fieldmanager._within_own_fields
    fieldmanager.compare_objects, fieldmanager._within_own_fields = reference_compare_objects, lambda *args: False
    try:
        return fieldmanager.update(SCHEMA, old, new, **kwargs)
    finally:
        fieldmanager.compare_objects, fieldmanager._within_own_fields = saved


def small_change(obj, change, name, value):
    """The stored object with one field written again: a label set, a condition's message, the
    replicas or the phase (a controller's status, a label flip)."""
    new = dict(obj)
    part = "metadata" if change == "label" else "spec" if change == "replicas" else "status"
    new[part] = dict(obj.get(part) if isinstance(obj.get(part), dict) else {})
    if change == "label":
        labels = new[part].get("labels")
        new[part]["labels"] = dict(labels if isinstance(labels, dict) else {}, **{name: value})
    elif change == "replicas":
        new[part]["replicas"] = len(value)
    elif change == "phase":
        new[part]["phase"] = value
    else:
        conditions = new[part].get("conditions")
        conditions = list(conditions) if isinstance(conditions, list) else []
        for index, item in enumerate(conditions):
            if isinstance(item, dict) and item.get("type") == name:
                conditions[index] = dict(item, message=value)
                break
        else:
            conditions.append({"type": name, "status": "True", "message": value})
        new[part]["conditions"] = conditions
    return new


TYPED = {"apiVersion": GV, "kind": "Widget", "metadata": {"name": "w", "labels": {"a": "a", "b": "b"}}, "spec": {"replicas": 1},
         "status": {"phase": "a", "conditions": [{"type": "a", "status": "True", "message": "a"}, {"type": "b", "status": "False"}]}}
change = st.tuples(st.sampled_from(["label", "condition", "replicas", "phase"]), names, names)
changes = st.one_of(st.none(), change, change, change)


@FEWER
@given(st.lists(st.tuples(pairs(), st.sampled_from(["alice", "bob", None]), st.sampled_from(["", "status", None]), st.integers(0, 1), changes),
                min_size=2, max_size=8))
def test_a_sequence_of_writes_stores_the_managed_fields_of_the_full_computation(steps):
    """Random writes by a few managers to one object, on the main resource and /status: a fresh
    object, or the stored one with one field written again (a label flip, a condition's message:
    often a manager writing within its own fields). Every write's managedFields are byte for byte
    the full computation's, entry times included."""
    obj, last = None, ("alice", "")
    for step, ((first, second), manager, subresource, tick, change) in enumerate(steps):
        if change and change[0] != "label":  # status is written on /status, spec on the main resource
            subresource = "status" if change[0] in ("condition", "phase") else ""
        manager, subresource = last = (manager or last[0], last[1] if subresource is None else subresource)  # None: as the last write
        now = f"2024-01-01T00:00:{step + tick:02d}Z"
        kwargs = dict(manager=manager, now=now, api_version=GV, subresource=subresource, ignore=("spec",) if subresource else ("status",))
        if obj is None:  # a well-typed object to write small changes to, or any object at all
            obj = written(None, TYPED if change else first, manager, now)
            continue
        new = small_change(obj, *change) if change else dict(second, metadata=dict(second["metadata"], managedFields=obj["metadata"].get("managedFields")))
        fast = outcome(lambda: fieldmanager.update(SCHEMA, obj, new, **kwargs))
        full = outcome(lambda: full_update(obj, new, **kwargs))
        assert orjson.dumps(fast) == orjson.dumps(full)
        if fast[0] == "ok":
            obj = copy.deepcopy(new)
            if fast[1]:
                obj["metadata"]["managedFields"] = fast[1]
            else:
                obj["metadata"].pop("managedFields", None)
