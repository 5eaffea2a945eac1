"""``application/strategic-merge-patch+json``: the apply half of k8s.io/apimachinery strategicpatch,
reading patch metadata from the kind's OpenAPI schema."""

from __future__ import annotations

from typing import Any, Callable

from mockapi import errors
from mockapi.patch._shared import (
    _ABSENT,
    _MAP,
    _SLICE,
    _TOO_DEEP,
    _bad_arg_type,
    _bad_patch_type,
    _copy,
    _freeze,
    _go,
    _json_kind,
    _no_merge_key,
)
from mockapi.patch.jsonpatch import PATCH_REJECTED

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM = "$deleteFromPrimitiveList"
_SET_ORDER = "$setElementOrder"
_NO_LIST_OF_LISTS = "lists of lists are not supported"
_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_SET_ORDER = "invalid patch format of setElementOrder list"

# ObjectMeta's patch tags, used for the top-level metadata whatever the schema says about it.
_OBJECT_META = {
    "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"},
    "ownerReferences": {
        "type": "array",
        "items": {"type": "object"},
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-patch-merge-key": "uid",
    },
}

Resolver = Callable[[str], "dict | None"]


def strategic_merge_patch(
    original: dict, patch: Any, schema: dict | None, *, resolve_ref: Resolver | None = None, in_place: bool = False
) -> dict:
    """Apply a strategic merge patch, as kube-apiserver does for built-in kinds; returns a new dict
    (``in_place``: ``original`` is the caller's own copy, merged into without copying it first).

    ``schema`` is the kind's OpenAPI v3 schema; ``resolve_ref`` (optional) turns a ``$ref`` string
    into its schema, so the published ``/openapi/v3`` documents work as they are. Where the schema
    says nothing, lists are replaced and maps merged, as in a JSON merge patch. A body that is not an
    object → 400 (``null`` is an empty patch); malformed directives → 400 with strategicpatch's
    message; a list of lists → 422 Invalid with kube's generic message.
    """
    if patch is None:
        patch = {}
    if not isinstance(patch, dict):
        raise errors.bad_request(f"json: cannot unmarshal {_json_kind(patch)} into Go value of type {_MAP}")
    try:
        base = (original if in_place else _copy(original)) if isinstance(original, dict) else {}
        return _merge_map(base, _copy(patch), _Schema(schema, resolve_ref, root=True))
    except ValueError as exc:
        if str(exc) == _NO_LIST_OF_LISTS:
            raise errors.unprocessable(PATCH_REJECTED) from exc
        raise errors.bad_request(str(exc)) from None
    except RecursionError:
        raise errors.bad_request(_TOO_DEEP) from None


class _Schema:
    """Patch metadata of one schema node (PatchMetaFromOpenAPI's view of it)."""

    __slots__ = ("node", "resolve", "root", "fallback")

    def __init__(self, node: Any, resolve: Resolver | None, *, root: bool = False, fallback: dict | None = None):
        self.node = _resolve(node, resolve)
        self.resolve = resolve
        self.root = root
        self.fallback = fallback

    def field(self, key: str) -> _Schema:
        child = _child_schema(self.node, key)
        if self.fallback and key in self.fallback and not _resolve(child, self.resolve, "x-kubernetes-patch-strategy"):
            child = self.fallback[key]
        fallback = _OBJECT_META if self.root and key == "metadata" else None
        return _Schema(child, self.resolve, fallback=fallback)

    def items(self) -> _Schema:
        return _Schema(self.node.get("items") if self.node else None, self.resolve)

    def strategy(self) -> str:
        """The patch strategy without retainKeys (which only the diff side acts on)."""
        raw = self.node.get("x-kubernetes-patch-strategy") if self.node else None
        strategies = raw.split(",") if isinstance(raw, str) and raw else []
        if len(strategies) == 1:
            return "" if strategies[0] == "retainKeys" else strategies[0]
        if len(strategies) == 2 and "retainKeys" in strategies:
            return strategies[1] if strategies[0] == "retainKeys" else strategies[0]
        if strategies:
            raise ValueError(f"unexpected patch strategy: {_go(strategies)}")
        return ""

    @property
    def merge_key(self) -> str:
        key = self.node.get("x-kubernetes-patch-merge-key") if self.node else None
        return key if isinstance(key, str) else ""


def _resolve(node: Any, resolve: Resolver | None, extension: str | None = None) -> Any:
    """Inline a node's ``$ref`` and single-schema ``allOf``; with extension, return that key's value."""
    if not isinstance(node, dict):
        return None
    base: dict = {}
    ref = node.get("$ref")
    if isinstance(ref, str) and resolve is not None:
        base = _resolve(resolve(ref), resolve) or {}
    for part in node.get("allOf") or ():
        base = {**base, **(_resolve(part, resolve) or {})}
    if base:
        node = {**base, **{k: v for k, v in node.items() if k not in ("$ref", "allOf")}}
    return node.get(extension) if extension else node


def _child_schema(node: dict | None, key: str) -> Any:
    if not node:
        return None
    properties = node.get("properties")
    if isinstance(properties, dict) and key in properties:
        return properties[key]
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _merge_map(original: dict, patch: dict, schema: _Schema) -> dict:
    """strategicpatch.mergeMap: directives first, then the ordered lists, then every key."""
    if _DIRECTIVE in patch:
        return _map_directive(patch)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, schema)
    for key, value in list(patch.items()):
        _merge_key(original, key, value, schema)
    return original


def _map_directive(patch: dict) -> dict:
    directive = patch[_DIRECTIVE]
    if directive == "replace" and isinstance(directive, str):
        return _replacement(patch)
    if directive == "delete" and isinstance(directive, str):
        return {}
    raise ValueError(_bad_patch_type(directive, patch))


def _apply_retain_keys(original: dict, patch: dict) -> None:
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise ValueError(_BAD_RETAIN_KEYS)
    allowed = {key for key in retain if isinstance(key, str)}
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_FROM, _SET_ORDER)):
            continue
        if key not in allowed:
            raise ValueError(_BAD_RETAIN_KEYS)
    for key in [k for k in original if k not in allowed]:
        del original[key]


def _merge_key(original: dict, key: str, value: Any, schema: _Schema) -> None:
    """One key of mergeMap's loop; ``$deleteFromPrimitiveList/<key>`` lists act on <key>."""
    deleting = key.startswith(_DELETE_FROM)
    if deleting:
        key = _extract_key(key, _DELETE_FROM)
    if value is None:
        original.pop(key, None)
        return
    current = original.get(key, _ABSENT)
    if current is _ABSENT or type(current) is not type(value):
        if not deleting:
            _take(original, key, value)
        return
    if isinstance(current, dict):
        field = schema.field(key)
        if field.strategy() == "replace":
            original[key] = _replacement(value)
        else:
            original[key] = _merge_map(current, value, field)
    elif isinstance(current, list):
        field = schema.field(key)
        original[key] = _merge_list_field(current, value, field, deleting=deleting)
    else:
        original[key] = value


def _take(original: dict, key: str, value: Any) -> None:
    """Set a value that merges with nothing, as the typed decode after mergeMap would store it."""
    cleaned, keep = _new_value(value)
    if keep:
        original[key] = cleaned
    else:
        original.pop(key, None)


def _new_value(value: Any) -> tuple[Any, bool]:
    """discardNullValuesFromPatch + removeDirectives, also dropping leftover directive keys."""
    if isinstance(value, dict):
        if value.get(_DIRECTIVE) is not None:
            return None, False
        out = {}
        for key, item in value.items():
            if item is None or key.startswith((_DIRECTIVE, _RETAIN_KEYS, _SET_ORDER, _DELETE_FROM)):
                continue
            item, keep = _new_value(item)
            if keep:
                out[key] = item
        return out, True
    if isinstance(value, list):
        return [item for item, keep in map(_new_value, value) if keep], True
    return value, True


def _replacement(patch: dict) -> dict:
    return _new_value({k: v for k, v in patch.items() if k != _DIRECTIVE})[0]


def _extract_key(key: str, prefix: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise ValueError(_BAD_PRIMITIVE_LIST if prefix == _DELETE_FROM else _BAD_SET_ORDER)
    return rest


def _merge_list_field(original: list, patch: list, field: _Schema, *, deleting: bool) -> list:
    """mergeSliceHandler: merge by strategy, or take the patch list."""
    if field.strategy() == "merge":
        return _merge_list(original, patch, field.items(), field.merge_key, deleting=deleting)
    return _new_value(patch)[0]


def _merge_list(original: list, patch: list, items: _Schema, merge_key: str, *, deleting: bool) -> list:
    """strategicpatch.mergeSlice."""
    if not original and not patch:
        return original
    is_map = _element_type(original, patch) is dict
    if not is_map:
        if deleting:
            gone = {_freeze(v) for v in patch}
            return [v for v in original if _freeze(v) not in gone]
        merged = _deduplicated(original + patch)
        in_patch, server_only = _partition(merged, patch, "")
        return _normalize_order(in_patch, server_only, patch, original, "", is_map=False)
    if not merge_key:
        raise ValueError("cannot merge lists without merge key for type struct")
    original, patch = _apply_list_directives(original, patch, merge_key)
    merged = _merge_items(original, patch, merge_key, items)
    in_patch, server_only = _partition(merged, patch, merge_key)
    return _normalize_order(in_patch, server_only, patch, original, merge_key, is_map=True)


def _apply_list_directives(original: list, patch: list, merge_key: str) -> tuple[list, list]:
    """mergeSliceWithSpecialElements: ``$patch: delete`` items and ``$patch: replace``."""
    kept: list = []
    replace = False
    for item in patch:
        if _DIRECTIVE not in item:
            kept.append(item)
            continue
        directive = item[_DIRECTIVE]
        if directive == "delete" and isinstance(directive, str):
            if merge_key not in item:
                raise ValueError(_no_merge_key(item, merge_key))
            gone = _freeze(item[merge_key])
            original = [o for o in original if merge_key not in o or _freeze(o[merge_key]) != gone]
        elif directive == "replace" and isinstance(directive, str):
            replace = True
        elif directive == "merge" and isinstance(directive, str):
            raise ValueError("merging lists cannot yet be specified in the patch")
        else:
            raise ValueError(_bad_patch_type(directive, item))
    if replace:
        return [_new_value(item)[0] for item in kept], []
    return original, kept


def _merge_items(original: list, patch: list, merge_key: str, items: _Schema) -> list:
    """mergeSliceWithoutSpecialElements: merge items sharing a key, append the others."""
    merged = list(original)
    where: dict = {}
    for position, item in enumerate(merged):
        if merge_key in item:
            where.setdefault(_freeze(item[merge_key]), position)
    for item in patch:
        if merge_key not in item:
            raise ValueError(_no_merge_key(item, merge_key))
        identity = _freeze(item[merge_key])
        position = where.get(identity)
        if position is None:
            where[identity] = len(merged)
            merged.append(_new_value(item)[0])
        else:
            merged[position] = _merge_map(merged[position], item, items)
    return merged


def _merge_ordered_lists(original: dict, patch: dict, schema: _Schema) -> None:
    """mergePatchIntoOriginal: merge each list named by ``$setElementOrder/<key>`` and fix its order."""
    for directive in [k for k in patch if k.startswith(_SET_ORDER)]:
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise ValueError(_bad_arg_type(_SLICE, order))
        key = _extract_key(directive, _SET_ORDER)
        current = _list_or_absent(original, key)
        change = _list_or_absent(patch, key)
        field = schema.field(key)
        _check_order(change if change is not _ABSENT else [], order, field.merge_key)
        if current is _ABSENT and change is _ABSENT:
            continue
        if change is _ABSENT:
            merged = current
        elif current is _ABSENT:
            merged = _new_value(change)[0]
        else:
            merged = _merge_list_field(current, change, field, deleting=False)
        current = current if current is not _ABSENT else []
        is_map = _element_type(current, change if change is not _ABSENT else []) is dict
        in_order, server_only = _partition(merged, order, field.merge_key)
        original[key] = _normalize_order(in_order, server_only, order, current, field.merge_key, is_map=is_map)
        patch.pop(key, None)


def _list_or_absent(container: dict, key: str) -> Any:
    value = container.get(key, _ABSENT)
    if value is not _ABSENT and not isinstance(value, list):
        raise ValueError(_bad_arg_type(_SLICE, value))
    return value


def _check_order(patch: list, order: list, merge_key: str) -> None:
    """validatePatchWithSetOrderList: patch items must appear in ``$setElementOrder`` in order."""
    if not order or not patch:
        return
    items = _split_deletions(patch)[0] if merge_key else patch
    i = j = 0
    while i < len(items) and j < len(order):
        if isinstance(items[i], dict) and _DIRECTIVE in items[i]:
            i += 1
            continue
        if _merge_key_equal(items[i], order[j], merge_key):
            i += 1
        j += 1
    if i < len(items) and j >= len(order):
        raise ValueError(
            f"the order in patch list:\n{_go(patch)}\n doesn't match {_SET_ORDER} list:\n{_go(order)}"
        )


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _freeze(left) == _freeze(right)
    for item in (left, right):
        if not isinstance(item, dict):
            raise ValueError(_bad_arg_type(_MAP, item))
        if merge_key not in item:
            raise ValueError(_no_merge_key(item, merge_key))
    return _freeze(left[merge_key]) == _freeze(right[merge_key])


def _element_type(*lists: list) -> type:
    """sliceElementType: every element of every list has one type, and it is not a list."""
    found: type | None = None
    for items in lists:
        for item in items:
            if found is None:
                found = type(item)
                if found is list:
                    raise ValueError(_NO_LIST_OF_LISTS)
            elif type(item) is not found:
                raise ValueError(f"list element types are not identical: {_go(list(lists))}")
    if found is None:
        raise ValueError("no elements in any of the given slices")
    return found


def _deduplicated(items: list) -> list:
    seen: set = set()
    out = []
    for item in items:
        identity = _freeze(item)
        if identity not in seen:
            seen.add(identity)
            out.append(item)
    return out


def _identity(item: Any, merge_key: str) -> Any:
    if not merge_key:
        return _freeze(item)
    return _freeze(item.get(merge_key) if isinstance(item, dict) else None)


def _positions(order: list, merge_key: str) -> dict:
    positions: dict = {}
    for position, item in enumerate(order):
        positions.setdefault(_identity(item, merge_key), position)
    return positions


def _partition(merged: list, by: list, merge_key: str) -> tuple[list, list]:
    """Split merged into the items present in ``by`` (by merge key) and the server-only ones."""
    if merge_key and merged:
        for item in merged:
            if not isinstance(item, dict):
                raise ValueError(_bad_arg_type(_MAP, item))
            if merge_key not in item:
                raise ValueError(_no_merge_key(item, merge_key))
        for position, item in enumerate(by):
            if not isinstance(item, dict):
                raise ValueError(f"value for key {position} is not a map.")
    present = {_identity(item, merge_key) for item in by if not merge_key or merge_key in item}
    in_by = [item for item in merged if _identity(item, merge_key) in present]
    others = [item for item in merged if _identity(item, merge_key) not in present]
    return in_by, others


def _split_deletions(items: list) -> tuple[list, list]:
    """extractToDeleteItems: (kept, ``$patch: delete`` items)."""
    kept, deleted = [], []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError(_bad_arg_type(_MAP, item))
        (deleted if item.get(_DIRECTIVE) == "delete" else kept).append(item)
    return kept, deleted


def _sorted_by(items: list, order: list, merge_key: str, *, is_map: bool) -> list:
    """normalizeSliceOrder: sort items by their position in order; deletions go last."""
    deleted: list = []
    if is_map:
        for item in items + order:
            if not isinstance(item, dict):
                raise ValueError(_bad_arg_type(_MAP, item))
            if merge_key not in item:
                raise ValueError(_no_merge_key(item, merge_key))
        items, deleted = _split_deletions(items)
    positions = _positions(order, merge_key)
    items = sorted(items, key=lambda item: positions.get(_identity(item, merge_key), len(order)))
    return items + deleted


def _normalize_order(
    in_patch: list, server_only: list, patch_order: list, server_order: list, merge_key: str, *, is_map: bool
) -> list:
    """normalizeElementOrder + mergeSortedSlice: interleave patch items into the server's order.

    Items new to the server go before the server-only items that follow them, so without
    ``$setElementOrder`` a new list item lands first (kube's behaviour, not RFC-style appending).
    """
    right = _sorted_by(in_patch, patch_order, merge_key, is_map=is_map)
    left = _sorted_by(server_only, server_order, merge_key, is_map=is_map)
    positions = _positions(server_order, merge_key)
    out: list = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
        elif i >= len(left):
            out.append(right[j])
            j += 1
        else:
            li = positions.get(_identity(left[i], merge_key), -1)
            ri = positions.get(_identity(right[j], merge_key), -1)
            if 0 <= li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


