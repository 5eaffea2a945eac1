"""The walk: pruning, null pruning and defaulting, validating each value once it is shaped.

As kube-apiserver does it (``schema/pruning/algorithm.go``, ``schema/defaulting/{prunenulls,algorithm}.go``):
prune unknown fields (recording their paths), drop nulls of non-nullable fields, apply defaults.
For speed the object is walked once: each value is pruned and defaulted and then validated
(:mod:`mockapi.schema.validate`) before its parent's own checks run (``required`` after the
parent's defaults), which gives the results of kube's prune-everything, default-everything,
validate-everything order. Where kube-openapi checks a whole object or array before its members
(allOf/anyOf/oneOf/not, enum, min/maxProperties) that value is shaped first and validated afterwards.

The tree is walked only where the schema goes: values below fields that preserve unknown fields
are never visited, so the walk is as deep as the schema, whatever the object holds.
"""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.schema import meta
from mockapi.schema.compiled import _EMPTY, _INT64_MAX, _INT64_MIN, _Node
from mockapi.schema.validate import _invalid, _join, _skippable, _validate, list_bounds

_TYPE_META_KEYS = frozenset({"apiVersion", "kind", "metadata"})

class _Run:
    """What one apply collects."""

    __slots__ = ("unknown", "meta_unknown", "embedded_unknown", "errors", "embedded_errors", "list_errors")

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.meta_unknown: list[str] = []
        self.embedded_unknown: list[str] = []
        self.errors: list[errors.FieldError] = []
        self.embedded_errors: list[errors.FieldError] = []
        self.list_errors: list[errors.FieldError] = []


def copy_json(value: Any) -> Any:
    """A deep copy of a decoded JSON value."""
    kind = type(value)
    if kind is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if kind is list:
        return [copy_json(item) for item in value]
    return value


def _default_value(node: _Node, path: str, run: _Run, errs: list) -> Any:
    """A fresh copy of node's default, with the defaults below it applied, validated."""
    value = copy_json(node.default)
    _visit(node, value, path, run, False, errs)
    return value


def _visit(node: _Node, value: Any, path: str, run: _Run, keep: bool, errs: list) -> None:
    """Everything apiextensions does to one value, in one walk: prune unknown fields and
    non-nullable nulls below it, default, validate. ``keep`` is kube's skipPrune (unknown keys of
    this value survive because a preserve-unknown-fields array holds it)."""
    kind = type(value)
    if kind is dict:
        if node.direct_object:
            _walk_object(node, value, path, run, keep or node.preserve, errs)
            return
        # checks on the whole object come first in kube-openapi: shape it, then validate it
        _walk_object(node, value, path, run, keep or node.preserve, [])
    elif kind is list:
        if node.bare_list:
            _walk_list(node, value, path, run, keep or node.preserve, errs)
            return
        _walk_list(node, value, path, run, keep or node.preserve, [])
    elif _skippable(node, value):
        return
    _validate(node, value, path, errs)


def _walk_object(node: _Node, obj: dict, path: str, run: _Run, keep: bool, errs: list, *, root: bool = False,
                 skip: tuple[str, ...] = ()) -> None:
    """``skip``: keys whose values are known to be pruned, defaulted and valid already (the root only)."""
    props, additional = node.props, node.additional
    embedded = node.embedded or root
    unknown = nulls = None
    for key, value in obj.items():
        if skip and key in skip:
            continue
        if embedded and key in _TYPE_META_KEYS:
            _visit_type_meta(node, key, value, path, run, errs, root=root)
            continue
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
        kind = type(value)
        if kind is dict or kind is list:
            if child.inert:
                if kind not in child.quick:
                    _validate(child, value, f"{path}.{key}" if path else f"{key}", errs)
            elif kind is dict and child.direct_object:
                _walk_object(child, value, f"{path}.{key}" if path else f"{key}", run, child.preserve, errs)
            else:
                _visit(child, value, f"{path}.{key}" if path else f"{key}", run, False, errs)
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


def finish_object(node: _Node, obj: dict, path: str, run: _Run, unknown: list | None, nulls: list | None, errs: list) -> None:
    """An object's own steps once its fields are walked: unknown fields pruned, nulls dropped,
    missing fields defaulted, required fields checked."""
    if unknown:
        for key in unknown:
            del obj[key]
            run.unknown.append(f"{path}.{key}" if path else f"{key}")
    if nulls:
        for key in nulls:
            del obj[key]
    for key, child in node.defaulted:
        if key not in obj:
            obj[key] = _default_value(child, f"{path}.{key}" if path else key, run, errs)
    for key in node.required:
        if key not in obj:
            errs.append(errors.FieldError("required", f"{path}.{key}" if path else key))


def _visit_type_meta(node: _Node, key: str, value: Any, path: str, run: _Run, errs: list, *, root: bool) -> None:
    """apiVersion, kind and metadata of a resource are never pruned by the schema; metadata loses
    what ObjectMeta does not know. At the root, metadata is meta.py's to validate."""
    if key == "metadata":
        if type(value) is dict:
            sink = run.meta_unknown if root else run.embedded_unknown
            _prune_metadata(value, f"{path}.metadata" if path else "metadata", sink)
        if root:
            return
    child = node.props.get(key)
    if child is not None and not _skippable(child, value):
        _validate(child, value, f"{path}.{key}" if path else key, errs)


def _walk_list(node: _Node, items: list, path: str, run: _Run, keep: bool, errs: list) -> None:
    child = node.items
    if child is None and not keep:
        child = _EMPTY  # kube's prune(v, nil): objects in here lose every field
    if child is not None:
        _walk_items(child, items, path, run, keep, errs)
    list_bounds(node, items, path, errs)


def _walk_items(child: _Node, items: list, path: str, run: _Run, keep: bool, errs: list) -> None:
    quick, replace_nulls = child.quick, child.has_default and not child.nullable
    for i, item in enumerate(items):
        kind = type(item)
        if kind is dict or kind is list:
            if child.inert:
                if kind not in quick:
                    _validate(child, item, f"{path}[{i}]", errs)
            elif kind is dict and child.direct_object:
                _walk_object(child, item, f"{path}[{i}]", run, keep or child.preserve, errs)
            else:
                _visit(child, item, f"{path}[{i}]", run, keep, errs)
        elif item is None and replace_nulls:
            items[i] = _default_value(child, f"{path}[{i}]", run, errs)
        elif kind not in quick or (kind is int and not _INT64_MIN <= item <= _INT64_MAX):
            _validate(child, item, f"{path}[{i}]", errs)


def _prune_metadata(metadata: dict, path: str, unknown: list[str]) -> None:
    """What the round trip through metav1.ObjectMeta drops: unknown keys (reported) and nulls."""
    known = meta.OBJECT_META_FIELDS
    if not (metadata.keys() <= known and None not in metadata.values()):  # at C speed: mostly nothing to drop
        for key in [key for key, value in metadata.items() if value is None or key not in known]:
            if key not in known:
                unknown.append(f"{path}.{key}")
            del metadata[key]
    _prune_entries(metadata.get("ownerReferences"), meta.OWNER_REFERENCE_FIELDS, f"{path}.ownerReferences", unknown)
    _prune_entries(metadata.get("managedFields"), meta.MANAGED_FIELDS_ENTRY_FIELDS, f"{path}.managedFields", unknown)


def _prune_entries(entries: Any, known: frozenset, path: str, unknown: list[str]) -> None:
    if type(entries) is not list:
        return
    for i, entry in enumerate(entries):
        if type(entry) is dict and not entry.keys() <= known:
            for key in [key for key in entry if key not in known]:
                del entry[key]
                unknown.append(f"{path}[{i}].{key}")


# ---------------------------------------------------------------------------------------------
# Validation (kube-openapi) of one value already shaped. A parent skips a child outright when the


def _prune_only(node: _Node, value: Any, path: str, run: _Run, keep: bool) -> None:
    keep = keep or node.preserve
    if type(value) is dict:
        for key in list(value):
            if node.embedded and key in _TYPE_META_KEYS:
                continue
            child = node.props.get(key) or node.additional
            if child is None:
                if not keep:
                    del value[key]
                    run.unknown.append(_join(path, key))
            elif not child.inert and type(value[key]) in (dict, list):
                _prune_only(child, value[key], _join(path, key), run, False)
    elif type(value) is list:
        child = node.items
        if child is None and keep:
            return
        for i, item in enumerate(value):
            _prune_only(child or _EMPTY, item, f"{path}[{i}]", run, keep)
