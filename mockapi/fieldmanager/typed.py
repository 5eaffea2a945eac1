"""Values walked with their type: the field set of a value, the comparison of two values, the merge
of an applied configuration into a live object and the removal of fields (structured-merge-diff's
``typed`` package: ``tofieldset.go``, ``compare.go``, ``merge.go``, ``remove.go``).

Values are decoded JSON. ``ABSENT`` stands for a missing key, which differs from a ``null`` value.
Walkers never change their inputs; merge and removal share unchanged subtrees with them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson

from mockapi.fieldmanager.fieldset import (
    LEAF,
    MEMBER,
    as_member,
    below,
    has_member,
    make_node,
    path_string,
    sorted_node,
)
from mockapi.fieldmanager.schematype import (
    MAP,
    OBJECT_META,
    SCALAR,
    DEDUCED_TYPE,
    TypeNode,
    shape,
)
from mockapi.schema.goformat import go_json, go_quote
from mockapi.wire import exact

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()
NOTHING = (None, None, None)
_MODIFIED = (None, LEAF, None)

# Paths kube-apiserver never records in managedFields (stripmeta.go), besides apiVersion and kind.
STRIPPED_META = frozenset(
    {
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    }
)
_TYPE_META = ("apiVersion", "kind")


class TypedError(Exception):
    """A value that does not fit its type, worded like structured-merge-diff's ValidationError."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path = ""

    def within(self, prefix: str) -> TypedError:
        self.path = prefix + self.path
        return self

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true != 1 (checked at the top level of a value only)."""
    if a.__class__ is b.__class__:
        return a == b
    numbers = (int, float)
    return a.__class__ in numbers and b.__class__ in numbers and a == b


# -- list items -------------------------------------------------------------------------------


def item_pe(t: TypeNode, item: Any, index: int) -> str:
    """The path element of a list item: ``k:{...}`` in a map-list, ``v:...`` in a set."""
    if t.list_type == "map":
        if item is None:
            raise TypedError(f"element {index}: associative list with keys may not have a null element")
        if item.__class__ is not dict:
            raise TypedError(f"element {index}: associative list with keys may not have non-map elements")
        keys = t.quoted_keys
        if len(keys) == 1:  # the usual list keyed by one field (name, type, containerPort...)
            name, quoted = keys[0]
            value = item[name] if name in item else _key_value(t, item, name, index)
            if value.__class__ is not str:
                return "k:{" + quoted + ":" + _json(value) + "}"
            pe = t.pes.get(value)  # the same names come back write after write: each one's element, built once
            if pe is None:
                if len(t.pes) >= _PES_SIZE:
                    t.pes.clear()
                pe = t.pes[value] = "k:{" + quoted + ":" + _json(value) + "}"
            return pe
        parts = [f"{quoted}:{_json(_key_value(t, item, name, index))}" for name, quoted in keys]
        return "k:{" + ",".join(parts) + "}"
    if item.__class__ is dict:
        raise TypedError(f"element {index}: associative list without keys has an element that's a map type")
    if item.__class__ is list:
        raise TypedError(f"element {index}: not supported: associative list with lists as elements")
    if item is None:
        raise TypedError(f"element {index}: associative list without keys has an element that's an explicit null")
    return "v:" + _json(item)


_PES_SIZE = 1024  # path elements remembered per keyed list type

_PLAIN = re.compile(r'[^"\\<>&\x00-\x1f\u2028\u2029]*').fullmatch


def _json(value: Any) -> str:
    """go_json, with a fast path for the plain strings and integers that keys usually are."""
    cls = value.__class__
    if cls is str and _PLAIN(value):
        return '"' + value + '"'
    if cls is int:
        return str(value)
    return go_json(value)


def _key_value(t: TypeNode, item: dict, name: str, index: int) -> Any:
    if name in item:
        return item[name]
    if name in t.key_defaults:
        return t.key_defaults[name]
    raise TypedError(
        f"element {index}: associative list with keys has an element that omits key field {go_quote(name)} "
        "(and doesn't have default value)"
    )


def index_items(t: TypeNode, items: Iterable, *, strict: bool) -> tuple[list[str], dict[str, Any]]:
    """Items by path element, in order; a repeated key is an error when strict, else ignored."""
    order: list[str] = []
    found: dict[str, Any] = {}
    for index, item in enumerate(items):
        pe = item_pe(t, item, index)
        if pe in found:
            if strict:
                raise TypedError(f"duplicate entries for key {path_string((pe,))}")
            continue
        found[pe] = item
        order.append(pe)
    return order, found


def _prefix(pe: str) -> str:
    return path_string((pe,))


# -- field sets -------------------------------------------------------------------------------


def field_set(t: TypeNode, value: Any, *, strict: bool = False) -> dict | None:
    """``ToFieldSet``: the node of the fields a value sets (leaves, list items, map entries)."""
    t = shape(t, value)
    if t.leaf:
        return LEAF
    if not value:
        return None
    children: dict = {}
    if t.kind is MAP:
        for key, child in value.items():
            child_type, declared = t.field(key)
            try:
                node = field_set(child_type, child, strict=strict)
            except TypedError as exc:
                raise exc.within("." + key) from None
            node = node if declared else as_member(node)
            if node is not None:
                children["f:" + key] = node
        return sorted_node(children) or None
    order, items = index_items(t, value, strict=strict)
    for pe in order:
        try:
            children[pe] = as_member(field_set(t.elem, items[pe], strict=strict))
        except TypedError as exc:
            raise exc.within(_prefix(pe)) from None
    return sorted_node(children) or None


def object_field_set(root: TypeNode, obj: dict, ignore: Iterable[str] = (), *, strict: bool = False) -> dict:
    """The fields an object sets, without those kube never records and the ignored top-level ones."""
    out: dict = {}
    for key, value in obj.items():
        if key in ignore or key in _TYPE_META:
            continue
        try:
            if key == "metadata":
                node = field_set(OBJECT_META, _recorded_meta(value), strict=strict)
            else:
                child_type, declared = root.field(key)
                node = field_set(child_type, value, strict=strict)
                node = node if declared else as_member(node)
        except TypedError as exc:
            raise exc.within("." + key) from None
        if node is not None:
            out["f:" + key] = node
    return sorted_node(out)


def _recorded_meta(meta: Any) -> Any:
    if meta.__class__ is not dict:
        return meta
    return {key: value for key, value in meta.items() if key not in STRIPPED_META}


def _compare_metadata(lv: dict, rv: dict, added: dict, modified: dict, removed: dict) -> None:
    """``compare(OBJECT_META, _recorded_meta(lv), _recorded_meta(rv))`` recorded under
    ``f:metadata``, without the copies: the map walk of :func:`_compare_maps`, skipping the
    stripped fields (often all that differs: resourceVersion, managedFields). Both are dicts."""
    changed = [
        key for key, value in lv.items()
        if key not in STRIPPED_META and ((other := rv.get(key, ABSENT)) is ABSENT or not (
            value is other or (value == other if value.__class__ is other.__class__ else equal(value, other))))
    ]  # fmt: skip
    if not rv.keys() <= lv.keys():
        changed.extend(key for key in rv if key not in lv and key not in STRIPPED_META)
    if not changed:
        return
    out_a: dict = {}
    out_m: dict = {}
    out_r: dict = {}
    fields, elem = OBJECT_META.fields, OBJECT_META.elem
    pe = ""
    try:
        for key in changed:
            pe = "f:" + key
            _record(compare(fields.get(key) or elem, lv.get(key, ABSENT), rv.get(key, ABSENT)), pe, out_a, out_m, out_r)
    except TypedError as exc:
        raise exc.within(_prefix(pe)).within(_prefix("f:metadata")) from None
    if out_a:
        added["f:metadata"] = sorted_node(out_a)
    if out_m:
        modified["f:metadata"] = sorted_node(out_m)
    if out_r:
        removed["f:metadata"] = sorted_node(out_r)


# -- comparison -------------------------------------------------------------------------------


def compare(t: TypeNode, lhs: Any, rhs: Any) -> tuple:
    """``Compare``: (added, modified, removed) nodes for the path of these two values (None: empty)."""
    kind, lc, rc = t.kind, lhs.__class__, rhs.__class__
    if kind is MAP and lc is dict and rc is dict and lhs and rhs and not t.atomic:
        # both present, both non-empty maps of a granular map type (``shape`` keeps it): no
        # membership of their own to record, only what differs below
        added: dict = {}
        modified: dict = {}
        removed: dict = {}
        _compare_maps(t, lhs, rhs, added, modified, removed)
        return (_sorted_or_none(added), _sorted_or_none(modified), _sorted_or_none(removed))
    if kind is SCALAR and lc is not dict and lc is not list and rc is not dict and rc is not list and lhs is not ABSENT and rhs is not ABSENT:
        return NOTHING if equal(lhs, rhs) else _MODIFIED  # two present scalars: a leaf, changed or not
    left = shape(t, lhs) if lhs is not ABSENT else None
    right = shape(t, rhs) if rhs is not ABSENT else None
    if left is not None and right is not None and left is not right:
        return _compare_shapes(left, lhs, right, rhs)
    t = right or left
    if t.leaf or ((lhs is ABSENT or not lhs) and (rhs is ABSENT or not rhs)):
        if lhs is ABSENT:
            return LEAF, None, None
        if rhs is ABSENT:
            return None, None, LEAF
        return NOTHING if equal(lhs, rhs) else (None, LEAF, None)
    added: dict = {}
    modified: dict = {}
    removed: dict = {}
    if t.kind is MAP:
        _compare_maps(t, lhs, rhs, added, modified, removed)
    else:
        _compare_lists(t, lhs, rhs, added, modified, removed)
    # make_node(member, sorted_node(children)) for each, inlined: this runs at every changed level
    if added:
        added = sorted_node(added)
        if lhs is ABSENT:
            added = {MEMBER: LEAF, **added}
    else:
        added = LEAF if lhs is ABSENT else None
    if removed:
        removed = sorted_node(removed)
        if rhs is ABSENT:
            removed = {MEMBER: LEAF, **removed}
    else:
        removed = LEAF if rhs is ABSENT else None
    return added, (sorted_node(modified) if modified else None), removed


def _sorted_or_none(node: dict) -> dict | None:
    """``sorted_node(node) or None``, without the call for the one or no child a change usually has."""
    if not node:
        return None
    return node if len(node) < 2 else sorted_node(node)


def _compare_shapes(left: TypeNode, lhs: Any, right: TypeNode, rhs: Any) -> tuple:
    """A value that changed shape (say, an object of a preserved field that became a number): the
    path is modified, what was under it is removed and what is under it now is added."""
    gone = compare(left, lhs, ABSENT)[2]
    new = compare(right, ABSENT, rhs)[0]
    return _children(new) or None, LEAF, _children(gone) or None


def _children(node: dict | None) -> dict:
    return {key: child for key, child in node.items() if key != "."} if node else {}


def _empty(value: Any) -> bool:
    return value is ABSENT or not value


def _compare_maps(t: TypeNode, lhs: Any, rhs: Any, added: dict, modified: dict, removed: dict) -> None:
    left = lhs if lhs.__class__ is dict else {}
    right = rhs if rhs.__class__ is dict else {}
    fields, elem = t.fields, t.elem or DEDUCED_TYPE  # t.field(key), inlined
    pe = ""
    try:
        for key, lv in left.items():
            rv = right.get(key, ABSENT)
            if rv is ABSENT or not (lv is rv or (lv == rv if lv.__class__ is rv.__class__ else equal(lv, rv))):
                pe = "f:" + key
                _record(compare(fields.get(key) or elem, lv, rv), pe, added, modified, removed)
        if not right.keys() <= left.keys():  # keys only on the right
            for key, rv in right.items():
                if key not in left:
                    pe = "f:" + key
                    _record(compare(fields.get(key) or elem, ABSENT, rv), pe, added, modified, removed)
    except TypedError as exc:
        raise exc.within(_prefix(pe)) from None


def _compare_lists(t: TypeNode, lhs: Any, rhs: Any, added: dict, modified: dict, removed: dict) -> None:
    left_order, left = index_items(t, lhs if lhs.__class__ is list else (), strict=False)
    right_order, right = index_items(t, rhs if rhs.__class__ is list else (), strict=False)
    elem = t.elem
    pe = ""
    try:
        for pe in right_order:
            lv, rv = left.get(pe, ABSENT), right[pe]
            if lv is ABSENT or not (lv is rv or (lv == rv if lv.__class__ is rv.__class__ else equal(lv, rv))):
                _record(compare(elem, lv, rv), pe, added, modified, removed)
        for pe in left_order:
            if pe not in right:
                _record(compare(elem, left[pe], ABSENT), pe, added, modified, removed)
    except TypedError as exc:
        raise exc.within(_prefix(pe)) from None


def _compare_within(t: TypeNode, lhs: Any, rhs: Any, pe: str) -> tuple:
    try:
        return compare(t, lhs, rhs)
    except TypedError as exc:
        raise exc.within(_prefix(pe)) from None


def _record(result: tuple, pe: str, added: dict, modified: dict, removed: dict) -> None:
    a, m, r = result
    if a is not None:
        added[pe] = a
    if m is not None:
        modified[pe] = m
    if r is not None:
        removed[pe] = r


def compare_objects(root: TypeNode, old: dict, new: dict, ignore: Iterable[str] = ()) -> tuple[dict, dict, dict]:
    """The comparison of two objects as the field manager needs it: without the paths kube strips
    from managedFields and without the ignored top-level fields. Returns root sets."""
    added: dict = {}
    modified: dict = {}
    removed: dict = {}
    for key, lv in old.items():  # old's keys, then new's own (which field's error is raised first)
        if key in ignore or key in _TYPE_META:
            continue
        rv = new.get(key, ABSENT)
        if rv is ABSENT or not (lv is rv or equal(lv, rv)):
            _compare_top(root, key, lv, rv, added, modified, removed)
    if not new.keys() <= old.keys():
        for key, rv in new.items():
            if key not in old and key not in ignore and key not in _TYPE_META:
                _compare_top(root, key, ABSENT, rv, added, modified, removed)
    if len(added) < 2 and len(modified) < 2 and len(removed) < 2:  # an update changes a field or two: nothing to sort
        return added, modified, removed
    return sorted_node(added), sorted_node(modified), sorted_node(removed)


def _compare_top(root: TypeNode, key: str, lv: Any, rv: Any, added: dict, modified: dict, removed: dict) -> None:
    """One top-level field of two objects that differ in it (metadata: without the stripped fields)."""
    if key == "metadata":
        if lv.__class__ is dict and rv.__class__ is dict:
            _compare_metadata(lv, rv, added, modified, removed)
            return
        lv, rv = _recorded_meta(lv) if lv is not ABSENT else {}, _recorded_meta(rv) if rv is not ABSENT else {}
        if lv is rv or equal(lv, rv):
            return
        child_type = OBJECT_META
    else:
        child_type = root.field(key)[0]
    _record(_compare_within(child_type, lv, rv, "f:" + key), "f:" + key, added, modified, removed)


def added_object(root: TypeNode, new: dict, ignore: Iterable[str] = (), *, own: dict | None = None) -> dict:
    """``compare_objects(root, {}, new)[0]`` without comparing: every recorded path of a new
    object (the create path, where a comparison against nothing is pure overhead).

    ``own``: :func:`added_fields` of ``new`` (with this root and ``ignore``), when the caller
    has it already — a create whose fields other than metadata are as an earlier create's
    (registry/verdicts.py); then only metadata's set is made."""
    if own is None:
        return _added_top(root, new, ignore, metadata=True)
    out = dict(own)
    meta = new.get("metadata", ABSENT)
    if meta is not ABSENT and "metadata" not in ignore:
        try:
            node = _added_metadata(_recorded_meta(meta))
        except TypedError as exc:
            raise exc.within(_prefix("f:metadata")) from None
        if node is not None:
            out["f:metadata"] = node
    return sorted_node(out)


def added_fields(root: TypeNode, new: dict, ignore: Iterable[str] = ()) -> dict:
    """The part of :func:`added_object` below the top-level fields other than apiVersion, kind
    and metadata (``{"f:spec": ..., ...}``): what a create verdict's fields record, whatever the
    metadata. Read-only: the sets are shared."""
    return _added_top(root, new, ignore, metadata=False)


def _added_top(root: TypeNode, new: dict, ignore: Iterable[str], *, metadata: bool) -> dict:
    out: dict = {}
    for key, value in new.items():
        if key in ignore or key in _TYPE_META:
            continue
        try:
            if key == "metadata":  # compared from {} not from absent: no member marker of its own
                if metadata:
                    node = _added_metadata(_recorded_meta(value))
                    if node is not None:
                        out["f:" + key] = node
            else:
                out["f:" + key] = _added_field(root, key, value)
        except TypedError as exc:
            raise exc.within(_prefix("f:" + key)) from None
    return sorted_node(out)


_ADDED: dict[tuple[int, str, bytes], tuple[TypeNode, dict]] = {}  # (root, field, its JSON) -> (root, its set)
_ADDED_SIZE = 1024


def _added_field(root: TypeNode, key: str, value: Any) -> dict:
    """The set of one top-level field of a new object, remembered by the field's compact JSON:
    objects made from one template (a ReplicaSet's pods) share their spec's set. Sets are never
    changed once built, so sharing one is safe."""
    cls = value.__class__
    if (cls is not dict and cls is not list) or not value:
        return _added(root.field(key)[0], value)
    try:
        memo_key = (id(root), key, orjson.dumps(value))
    except orjson.JSONEncodeError:
        return _added(root.field(key)[0], value)
    hit = _ADDED.get(memo_key)
    if hit is not None and hit[0] is root:
        return hit[1]
    node = _added(root.field(key)[0], value)
    if len(_ADDED) >= _ADDED_SIZE:
        _ADDED.clear()
    _ADDED[(memo_key[0], key, exact(memo_key[2]))] = (root, node)
    return node


_ADDED_META: dict[bytes, dict | None] = {}  # recorded metadata's JSON -> its set


def _added_metadata(meta: Any) -> dict | None:
    """The set of a new object's recorded metadata, remembered by its compact JSON as
    :func:`_added_field` remembers the other fields (pods of one template share labels, annotations
    and owner): ObjectMeta's type never changes."""
    if meta.__class__ is not dict or not meta:
        return _added(OBJECT_META, meta, member=False)
    try:
        memo_key = orjson.dumps(meta)
    except orjson.JSONEncodeError:
        return _added(OBJECT_META, meta, member=False)
    if memo_key in _ADDED_META:
        return _ADDED_META[memo_key]
    node = _added(OBJECT_META, meta, member=False)
    if len(_ADDED_META) >= _ADDED_SIZE:
        _ADDED_META.clear()
    _ADDED_META[exact(memo_key)] = node
    return node


def _added(t: TypeNode, value: Any, *, member: bool = True) -> dict | None:
    """``compare(t, ABSENT, value)[0]`` (``member=False``: ``compare(t, {}, value)[0]``).

    The hot path of every create: a scalar, null or empty child is a leaf whatever its type says
    (``shape`` makes a misfit value atomic), so only non-empty containers recurse; children are
    added in sorted order (``"."`` sorts before every ``f:``, ``k:`` and ``v:``), so the node is
    built once."""
    t = shape(t, value)
    if t.leaf or not value:
        return LEAF if member else None
    children: dict = {MEMBER: LEAF} if member else {}
    if t.kind is MAP:
        if value.__class__ is dict:
            fields, elem = t.fields, t.elem or DEDUCED_TYPE
            for key in sorted(value):
                child = value[key]
                cls = child.__class__
                if (cls is dict or cls is list) and child:
                    children["f:" + key] = _added(fields.get(key) or elem, child)
                else:
                    children["f:" + key] = LEAF
    else:
        order, items = index_items(t, value if value.__class__ is list else (), strict=False)
        elem = t.elem
        for pe in sorted(order):
            child = items[pe]
            cls = child.__class__
            children[pe] = _added(elem, child) if (cls is dict or cls is list) and child else LEAF
    if len(children) == member:  # nothing below
        return LEAF if member else None
    return children


# -- merge ------------------------------------------------------------------------------------


def merge(t: TypeNode, lhs: Any, rhs: Any) -> Any:
    """``Merge``: the applied value (rhs) merged into the live one (lhs); leaves take rhs."""
    if rhs is ABSENT:
        return lhs
    if lhs is ABSENT:
        return rhs
    left, right = shape(t, lhs), shape(t, rhs)
    if left is not right or right.leaf:
        return rhs
    if not lhs and not rhs:
        return rhs
    if right.kind is MAP:
        return _merge_maps(right, lhs or {}, rhs or {})
    return _merge_lists(right, lhs or [], rhs or [])


def _merge_maps(t: TypeNode, lhs: dict, rhs: dict) -> dict:
    out = {}
    for key, lv in lhs.items():
        rv = rhs.get(key, ABSENT)
        out[key] = lv if rv is ABSENT else _merge_within(t.field(key)[0], lv, rv, "f:" + key)
    for key, rv in rhs.items():
        if key not in lhs:
            out[key] = rv
    return out


def _merge_lists(t: TypeNode, lhs: list, rhs: list) -> list:
    """merge.go's visitListItems: live items keep their places, applied items follow the applied
    order, and items only in the applied list go where the applied list puts them."""
    right_order, right = index_items(t, rhs, strict=True)
    left_order, left = index_items(t, lhs, strict=False)
    shared = [pe for pe in right_order if pe in left]
    out: list = []
    li = ri = si = 0
    while li < len(left_order) or ri < len(right_order):
        wanted = shared[si] if si < len(shared) else None
        if li < len(left_order) and ri < len(right_order):
            pe = left_order[li]
            if pe == right_order[ri]:
                out.append(_merge_within(t.elem, left[pe], right[pe], pe))
                li, ri, si = li + 1, ri + 1, si + 1
                continue
            if pe in right and wanted is not None and wanted != pe:
                li += 1
                continue
        if li < len(left_order) and left_order[li] not in right:
            out.append(left[left_order[li]])
            li += 1
            continue
        if ri < len(right_order):
            pe = right_order[ri]
            out.append(_merge_within(t.elem, left.get(pe, ABSENT), right[pe], pe))
            ri += 1
            si += 1 if pe == wanted else 0
            continue
        li += 1  # a live item already merged: nothing more to take from it
    return out


def _merge_within(t: TypeNode, lhs: Any, rhs: Any, pe: str) -> Any:
    try:
        return merge(t, lhs, rhs)
    except TypedError as exc:
        raise exc.within(_prefix(pe)) from None


# -- removal ----------------------------------------------------------------------------------


def remove_items(t: TypeNode, value: Any, paths: dict) -> Any:
    """``RemoveItems``: the value without the given paths. As in kube, a map or list this empties
    becomes null (kube-apiserver's null pruning then drops it where the schema does not allow
    null); a list item emptied that way is dropped rather than left as a null item."""
    t = shape(t, value)
    if t.kind is SCALAR:
        return value
    if t.leaf or not value:
        return None
    if t.kind is MAP:
        out = {}
        for key, child in value.items():
            pe = "f:" + key
            if has_member(paths, pe):
                continue
            inner = below(paths, pe)
            out[key] = remove_items(t.field(key)[0], child, inner) if inner else child
        return out or None
    items = []
    for index, item in enumerate(value):
        pe = item_pe(t, item, index)
        if has_member(paths, pe):
            continue
        inner = below(paths, pe)
        if inner:
            item = remove_items(t.elem, item, inner)
            if item is None:
                continue
        items.append(item)
    return items or None


def remove_object_items(root: TypeNode, obj: dict, paths: dict) -> dict:
    """An object without the given paths."""
    if not paths:
        return obj
    return remove_items(root, obj, paths) or {}
