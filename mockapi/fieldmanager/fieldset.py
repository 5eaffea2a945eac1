"""Sets of field paths, held in kube's own FieldsV1 shape (``sigs.k8s.io/structured-merge-diff``'s
``fieldpath.Set`` and its ``serialize.go``).

A set is a dict from serialized path elements to child nodes::

    {"f:spec": {"f:replicas": {}, "f:containers": {'k:{"name":"app"}': {".": {}, "f:image": {}}}}}

Path elements are ``f:<field>``, ``k:<key fields as JSON>``, ``v:<value as JSON>`` and ``i:<index>``.
A node stands for its own path, which is a member of the set when the node is empty (a leaf) or
holds the ``"."`` marker; every other key is a child. The root node is never a member itself, so
an empty root is the empty set. Because this is exactly FieldsV1, a stored ``managedFields``
entry is used as it is and a computed set is stored as it is.

Nodes are shared freely between sets, so they are never changed once built: every operation here
returns new dicts where it changes something and hands back its input where it does not. Every
node keeps its keys sorted, as kube-apiserver's JSON of an unstructured object has them (``"."``
first, then ``f:``, ``k:`` and ``v:`` elements).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from mockapi.schema.goformat import go_float, go_quote

MEMBER = "."
LEAF: dict = {}  # the one node of a member without children; never mutate it

Path = tuple[str, ...]


def _is_member(node: dict) -> bool:
    return not node or MEMBER in node


def _has_children(node: dict) -> bool:
    return len(node) > (MEMBER in node)


def make_node(member: bool, children: dict) -> dict | None:
    """A node from its membership and its sorted children; None when it would be empty."""
    if children:
        return {MEMBER: LEAF, **children} if member else children
    return LEAF if member else None


def sorted_node(children: dict) -> dict:
    """Freshly built children, in order."""
    if len(children) < 2:
        return children
    keys = list(children)
    ordered = sorted(keys)
    return children if keys == ordered else {key: children[key] for key in ordered}


def as_member(child: dict | None) -> dict:
    """The node with its own path made a member."""
    if not child:
        return LEAF
    return child if MEMBER in child else {MEMBER: LEAF, **child}


def union(a: dict, b: dict) -> dict:
    """Every path in a or in b."""
    if not b:
        return a
    if not a:
        return b
    out = None
    appended = False
    for key, child in b.items():
        if key == MEMBER:
            continue
        mine = a.get(key)
        both = child if mine is None else _union_node(mine, child)
        if both is not mine:
            out = out if out is not None else _children(a)
            appended = appended or mine is None
            out[key] = both
    if out is None:
        return a
    return sorted_node(out) if appended else out


def covers(a: dict, b: dict) -> bool:
    """Whether ``union(a, b) is a``: every path of b, with its membership, is already in a (and a
    is not empty, unless b is). A walk of b that builds nothing."""
    if not b:
        return True
    if not a:
        return False
    for key, child in b.items():
        if key == MEMBER:
            continue
        mine = a.get(key)
        if mine is None:
            return False
        if mine is child:
            continue
        if (not child or MEMBER in child) and not (not mine or MEMBER in mine):
            return False
        if len(child) > (MEMBER in child) and not (len(mine) > (MEMBER in mine) and covers(mine, child)):
            return False
    return True


def _union_node(a: dict, b: dict) -> dict:
    if a is b:
        return a
    member = _is_member(a) or _is_member(b)
    if not _has_children(b):
        return a if member == _is_member(a) else make_node(True, _children(a))
    if not _has_children(a):
        return b if member == _is_member(b) else make_node(True, _children(b))
    children = union(a, b)
    if children is a and member == _is_member(a):
        return a
    return make_node(member, _children(children))


def difference(a: dict, b: dict) -> dict:
    """The paths of a that are not in b (exact paths: b's members do not take their children along)."""
    if not a or not b:
        return a
    out, changed = {}, False
    for key, child in a.items():
        if key == MEMBER:
            continue
        other = b.get(key)
        kept = child if other is None else _difference_node(child, other)
        changed = changed or kept is not child
        if kept is not None:
            out[key] = kept
    return out if changed else a


def _difference_node(a: dict, b: dict) -> dict | None:
    member = _is_member(a) and not _is_member(b)
    if not _has_children(a):
        return a if member else None
    children = difference(a, b) if _has_children(b) else a
    if children is a and member == _is_member(a):
        return a
    return make_node(member, _children(children))


def intersection(a: dict, b: dict) -> dict:
    """The paths in both a and b."""
    out = {}
    for key, child in a.items():
        other = b.get(key) if key != MEMBER else None
        if other is not None:
            member = _is_member(child) and _is_member(other)
            both = intersection(child, other) if (_has_children(child) and _has_children(other)) else {}
            both = make_node(member, both)
            if both is not None:
                out[key] = both
    return out


def recursive_difference(a: dict, b: dict) -> dict:
    """The paths of a that are neither in b nor below a member of b."""
    if not a or not b:
        return a
    out, changed = {}, False
    for key, child in a.items():
        if key == MEMBER:
            continue
        other = b.get(key)
        if other is None:
            out[key] = child
        elif _is_member(other):
            changed = True
        else:
            kept = _recursive_difference_node(child, other)
            changed = changed or kept is not child
            if kept is not None:
                out[key] = kept
    return out if changed else a


def _recursive_difference_node(a: dict, b: dict) -> dict | None:
    if not _has_children(a):
        return a
    children = recursive_difference(a, b)
    if children is a:
        return a
    return make_node(_is_member(a), _children(children))


def _children(node: dict) -> dict:
    """A fresh dict of a node's children (without its own membership)."""
    return {key: child for key, child in node.items() if key != MEMBER}


def has(s: dict, path: Path) -> bool:
    """Whether a path is a member."""
    node = s
    for pe in path:
        node = node.get(pe) if pe != MEMBER else None
        if node is None:
            return False
    return bool(path) and _is_member(node)


def has_member(s: dict, pe: str) -> bool:
    """Whether the one-element path ``pe`` is a member."""
    node = s.get(pe) if pe != MEMBER else None
    return node is not None and _is_member(node)


def below(s: dict, pe: str) -> dict:
    """The paths under ``pe``, relative to it (``Set.WithPrefix``)."""
    node = s.get(pe) if pe != MEMBER else None
    if not node:
        return {}
    return _children(node) if MEMBER in node else node


def paths(s: dict, prefix: Path = ()) -> Iterator[Path]:
    """Every member path, in ``Set.Iterate`` order: a level's members, then each child in turn."""
    keys = sorted((k for k in s if k != MEMBER), key=_order)
    for key in keys:
        if _is_member(s[key]):
            yield prefix + (key,)
    for key in keys:
        if _has_children(s[key]):
            yield from paths(s[key], prefix + (key,))


_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


def _order(pe: str) -> tuple:
    """PathElement.Less: fields, then keys, then values, then indices."""
    kind = pe[:1]
    return (_RANK.get(kind, 4), int(pe[2:]) if kind == "i" else 0, pe)


def is_sorted(s: dict) -> bool:
    """Whether every node of the set has its keys in order (always true of sets built here)."""
    keys = list(s)
    return keys == sorted(keys) and all(is_sorted(child) for child in s.values() if child)


def path_string(path: Path) -> str:
    """``fieldpath.Path.String()``: ``.spec.containers[name="app"].ports[containerPort=80]``."""
    return "".join(_pe_string(pe) for pe in path)


def _pe_string(pe: str) -> str:
    kind, text = pe[:2], pe[2:]
    if kind == "f:":
        return "." + text
    if kind == "i:":
        return f"[{text}]"
    if kind == "v:":
        return f"[={value_string(json.loads(text))}]"
    fields = json.loads(text)
    return "[" + ",".join(f"{name}={value_string(value)}" for name, value in fields.items()) + "]"


def value_string(value) -> str:
    """structured-merge-diff's ``value.ToString``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list):
        return "[" + ",".join(value_string(item) for item in value) + "]"
    return "".join(f"{key}={value_string(item)}" for key, item in sorted(value.items()))
