"""The walk of an update's changed values against the stored values they replace.

A controller's status PUT changes a condition or two and sends the rest of ``status`` back as it
read it. When the stored object was admitted by this very schema (the registry's
``_admitted_now``), every value in it was pruned, defaulted and validated by the walk of
:mod:`mockapi.schema.prune`, which then found nothing to prune, default or report: walked again
at the same place in the schema, it would still find nothing, whatever its path. That walk is a
function of the schema node, the value and kube's skipPrune flag alone (a list's items share one
node and one flag), so a new value that is, as JSON, the same as a stored value under the same
node needs no walk either. This walk follows the changed value and the stored one side by side and
skips what is the same:

* equal means equal JSON with Python's types kept (``true`` is not ``1``, ``1.0`` is not ``1``,
  key order counts): the same object, or equal (``==``) with the same compact encoding; scalars
  of the same type and value; a float on its own is walked unless it is the very same object
  (``-0.0 == 0.0``), one inside a container is compared by the encoding;
* a dict is walked key by key: only its keys whose values differ from the stored ones are walked,
  and its own steps — nulls dropped, defaults of missing fields applied (a field removed from
  the stored value is defaulted again), ``required`` checked — run as in the full walk;
* a list's items pair with the stored item at the same index, or, in a list with
  ``x-kubernetes-list-map-keys``, with the stored item of the same keys (a reordered map list);
  the list's own checks (min/maxItems, uniqueItems) run on the whole list as in the full walk;
* where kube-openapi checks a whole value before its members (allOf/anyOf/oneOf/not, enum,
  min/maxProperties), the value is validated as a whole after the walk, as the full walk does.

The checks over the whole object (list types, embedded resources) are not part of the walk and
run as before. ``x-kubernetes-validations`` (CEL) are ignored by this schema module, transition
rules (``oldSelf``) included, so there is no rule whose outcome a skip could change. Errors,
pruned paths and the object made are those of the full walk (tests/test_schema_changed.py).
"""

from __future__ import annotations

from typing import Any

import orjson

from mockapi.schema.compiled import _EMPTY, _INT64_MAX, _INT64_MIN, _Node
from mockapi.schema.prune import _TYPE_META_KEYS, _default_value, _Run, _visit, _visit_type_meta, _walk_object, finish_object
from mockapi.schema.validate import _invalid, _validate, canonical, list_bounds

_MISSING = object()
_EXACT_SCALARS = (str, bool, int)  # equal and of the same type: the same JSON


def same_json(new: Any, old: Any) -> bool:
    """Whether two decoded JSON values are the same JSON, Python's types kept (see the module)."""
    if new is old:
        return True
    kind = type(new)
    if kind is not type(old):
        return False
    if kind is dict or kind is list:
        return new == old and _same_encoding(new, old)
    return kind in _EXACT_SCALARS and new == old


def _same_encoding(new: dict | list, old: dict | list) -> bool:
    """Whether two equal (``==``) containers encode alike: no ``true`` where ``1`` was, no ``1.0``
    where ``1`` was, keys in the same order. False for what orjson cannot encode."""
    try:
        return orjson.dumps(new) == orjson.dumps(old)
    except orjson.JSONEncodeError:
        return False


def walk_changed_object(node: _Node, obj: dict, old: dict, path: str, run: _Run, keep: bool, errs: list, *,
                        root: bool = False, skip: tuple[str, ...] = ()) -> None:
    """``prune._walk_object`` of ``obj``, skipping its values that are the same as ``old``'s."""
    props, additional = node.props, node.additional
    embedded = node.embedded or root
    unknown = nulls = None
    for key, value in obj.items():
        if skip and key in skip:
            continue
        if embedded and key in _TYPE_META_KEYS:
            _visit_type_meta(node, key, value, path, run, errs, root=root)
            continue
        before = old.get(key, _MISSING)
        kind = type(value)
        if kind is type(before) and (value is before or (value == before and (
                kind in _EXACT_SCALARS or ((kind is dict or kind is list) and _same_encoding(value, before))))):
            continue  # same_json, inline
        child = props.get(key)
        if child is None:
            child = additional
            if child is None:
                if not keep:
                    unknown = unknown or []
                    unknown.append(key)
                continue
            if node.additional_forbidden:
                errs.append(_invalid(path, key, f"{path}.{key} in body is a forbidden property"))
        if kind is dict or kind is list:
            at = f"{path}.{key}" if path else f"{key}"
            if child.inert:
                if kind not in child.quick:
                    _validate(child, value, at, errs)
            elif type(before) is not kind:
                if kind is dict and child.direct_object:
                    _walk_object(child, value, at, run, child.preserve, errs)
                else:
                    _visit(child, value, at, run, False, errs)
            elif kind is dict and child.direct_object:
                walk_changed_object(child, value, before, at, run, child.preserve, errs)
            else:
                _visit_changed(child, value, before, at, run, False, errs)
        elif value is None and not child.nullable:
            if child.has_default:
                obj[key] = _default_value(child, f"{path}.{key}" if path else f"{key}", run, errs)
            else:
                nulls = nulls or []
                nulls.append(key)
        elif kind not in child.quick or (kind is int and not _INT64_MIN <= value <= _INT64_MAX):
            _validate(child, value, f"{path}.{key}" if path else f"{key}", errs)
    if unknown or nulls or node.defaulted or node.required:
        finish_object(node, obj, path, run, unknown, nulls, errs)


def _visit_changed(node: _Node, value: Any, old: Any, path: str, run: _Run, keep: bool, errs: list) -> None:
    """``prune._visit`` of a dict or list ``value`` whose stored counterpart ``old`` is of its type."""
    if type(value) is dict:
        if node.direct_object:
            walk_changed_object(node, value, old, path, run, keep or node.preserve, errs)
            return
        walk_changed_object(node, value, old, path, run, keep or node.preserve, [])
    else:
        if node.bare_list:
            _walk_changed_list(node, value, old, path, run, keep or node.preserve, errs)
            return
        _walk_changed_list(node, value, old, path, run, keep or node.preserve, [])
    _validate(node, value, path, errs)


def _walk_changed_list(node: _Node, items: list, old: list, path: str, run: _Run, keep: bool, errs: list) -> None:
    """``prune._walk_list``, items that are the same as their stored counterparts skipped."""
    child = node.items
    if child is None and not keep:
        child = _EMPTY
    if child is not None:
        _walk_changed_items(child, items, old, node.list_map_keys, path, run, keep, errs)
    list_bounds(node, items, path, errs)


def _walk_changed_items(child: _Node, items: list, old: list, keys: tuple[str, ...], path: str, run: _Run, keep: bool,
                        errs: list) -> None:
    quick, replace_nulls = child.quick, child.has_default and not child.nullable
    stored, keyed = len(old), None
    for i, item in enumerate(items):
        kind = type(item)
        before = old[i] if i < stored else _MISSING
        if kind is type(before) and (item is before or (item == before and (
                kind in _EXACT_SCALARS or ((kind is dict or kind is list) and _same_encoding(item, before))))):
            continue  # same_json, inline
        if keys and kind is dict and (type(before) is not dict or _moved(item, before, keys)):
            # a map list whose items moved: the stored item of the same keys, wherever it was
            if keyed is None:
                keyed = _by_keys(keys, old)
            paired = keyed.get(_key_of(item, keys), _MISSING)
            if paired is not _MISSING:
                if same_json(item, paired):
                    continue
                before = paired
        if kind is dict or kind is list:
            if child.inert:
                if kind not in quick:
                    _validate(child, item, f"{path}[{i}]", errs)
            elif type(before) is not kind:
                if kind is dict and child.direct_object:
                    _walk_object(child, item, f"{path}[{i}]", run, keep or child.preserve, errs)
                else:
                    _visit(child, item, f"{path}[{i}]", run, keep, errs)
            elif kind is dict and child.direct_object:
                walk_changed_object(child, item, before, f"{path}[{i}]", run, keep or child.preserve, errs)
            else:
                _visit_changed(child, item, before, f"{path}[{i}]", run, keep, errs)
        elif item is None and replace_nulls:
            items[i] = _default_value(child, f"{path}[{i}]", run, errs)
        elif kind not in quick or (kind is int and not _INT64_MIN <= item <= _INT64_MAX):
            _validate(child, item, f"{path}[{i}]", errs)


def _moved(item: dict, before: dict, keys: tuple[str, ...]) -> bool:
    """Whether a map list's item has other keys than the stored item at its index."""
    for key in keys:
        if item.get(key, _MISSING) != before.get(key, _MISSING):
            return True
    return False


def _by_keys(keys: tuple[str, ...], old: list) -> dict:
    """The stored items of a map list by their keys (the first of each: any stored item under the
    same node will do, the pairing only finds a candidate to compare with)."""
    keyed: dict = {}
    for item in old:
        if type(item) is dict:
            keyed.setdefault(_key_of(item, keys), item)
    return keyed


def _key_of(item: dict, keys: tuple[str, ...]) -> tuple:
    return tuple(canonical(item[key]) if key in item else _MISSING for key in keys)
