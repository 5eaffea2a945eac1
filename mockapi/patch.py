"""The three PATCH bodies kube-apiserver accepts besides apply, applied to plain dicts.

- :func:`merge_patch` — ``application/merge-patch+json`` (RFC 7386, as evanphx/json-patch v4 does it).
- :func:`json_patch` — ``application/json-patch+json`` (RFC 6902, with evanphx/json-patch v4's
  leniencies, which kube-apiserver inherits: ``replace`` of a missing object key adds it, negative
  array indices count from the end, ``test`` for ``null`` passes on a missing key).
- :func:`strategic_merge_patch` — ``application/strategic-merge-patch+json``, a port of the apply
  half of ``k8s.io/apimachinery/pkg/util/strategicpatch``, reading patch metadata from the kind's
  OpenAPI schema (``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key``).

All three are pure: they never mutate their inputs and share no containers with them. Errors are
raised as kube-apiserver words them (``k8s.io/apiserver/pkg/endpoints/handlers/patch.go``). Where
kube answers bad input with a 500 (unknown SMP directives fall through to a plain error there), this
server answers 400 with the same message.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, Callable

from mockapi import errors

MAX_JSON_PATCH_OPERATIONS = 10000  # handlers.maxJSONPatchOperations
MAX_COPY_BYTES = 3 * 1024 * 1024  # apiserver JSONPatchMaxCopyBytes default
# kube-apiserver answers any failing JSON patch operation with exactly this (NewGenericServerResponse
# drops the evanphx message); the detail is kept as the exception's __cause__ for logs.
PATCH_REJECTED = "the server rejected our request due to an error in our request"
_TOO_DEEP = "exceeded max depth"
_ABSENT = object()


# -- shared helpers ----------------------------------------------------------------------------


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _freeze(value: Any) -> Any:
    """A hashable identity with Go's interface equality: same dynamic type and equal value."""
    if isinstance(value, dict):
        return ("map", tuple(sorted((k, _freeze(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("slice", tuple(_freeze(v) for v in value))
    return (type(value).__name__, value)


def _json_kind(value: Any) -> str:
    """How encoding/json names a value's JSON type in an UnmarshalTypeError."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    return "number"


# -- JSON merge patch ---------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply a JSON merge patch (RFC 7386) and return a new value.

    The request body must be a JSON object, as in kube-apiserver: ``null`` → 400 ``Invalid JSON
    Patch``; an array, string, number or bool → 400 ``error decoding patch: json: cannot unmarshal
    array into Go value of type map[string]interface {}``. Below the top level a non-object patch
    value replaces the target value and ``null`` deletes a key. Like evanphx/json-patch, nulls are
    dropped from a value that does not merge into an existing object (also inside its arrays'
    objects), and a ``null`` already in the target is kept unless the patch names that key.
    """
    _check_merge_body(patch)
    try:
        if not isinstance(target, dict):
            return _pruned(patch)
        result = _copy(target)
        _merge_into(result, patch)
        return result
    except RecursionError:
        raise errors.bad_request(f"error decoding patch: {_TOO_DEEP}") from None


def _check_merge_body(patch: Any) -> None:
    if patch is None:
        raise errors.bad_request("Invalid JSON Patch")
    if not isinstance(patch, dict):
        kind = _json_kind(patch)
        raise errors.bad_request(
            f"error decoding patch: json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
        )


def _merge_into(doc: dict, patch: dict) -> None:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
        elif doc.get(key) is None:
            doc[key] = _pruned(value)
        else:
            doc[key] = _merged(doc[key], value)


def _merged(current: Any, value: Any) -> Any:
    if not isinstance(current, dict):
        return _pruned(value)
    if not isinstance(value, dict):
        return _copy(value)
    _merge_into(current, value)
    return current


def _pruned(value: Any) -> Any:
    """A copy without null object members (evanphx pruneNulls: null array elements stay)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


# -- JSON patch ---------------------------------------------------------------------------------


def json_patch(doc: Any, operations: Any) -> Any:
    """Apply an RFC 6902 JSON patch and return a new document.

    A body that is not a list of operation objects → 400 with the Go decoder's words (``error
    decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp``);
    ``null`` is an empty patch. More than 10000 operations → 413. Any failing operation (missing
    path, failed ``test``, unknown ``op``, bad index, copies adding over 3 MiB) → 422 Invalid with
    kube's generic message; evanphx's own message is the exception's ``__cause__``.
    """
    ops = _decode_operations(operations)
    try:
        document = _Document(_copy(doc))
        for op in ops:
            document.apply(op)
    except ValueError as exc:
        raise errors.unprocessable(PATCH_REJECTED) from exc
    except RecursionError:
        raise errors.bad_request(f"error decoding patch: {_TOO_DEEP}") from None
    return document.root


def _decode_operations(operations: Any) -> list[dict]:
    if operations is None:
        return []
    if not isinstance(operations, list):
        raise _decode_error(f"{_json_kind(operations)} into Go value of type []handlers.jsonPatchOp")
    for op in operations:
        if op is not None and not isinstance(op, dict):
            raise _decode_error(f"{_json_kind(op)} into Go value of type handlers.jsonPatchOp")
        for name, value in (op or {}).items():
            if name in ("op", "path", "from") and value is not None and not isinstance(value, str):
                raise _decode_error(f"{_json_kind(value)} into Go struct field jsonPatchOp.{name} of type string")
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise errors.StatusError(
            413,
            "RequestEntityTooLarge",
            "Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}",
        )
    return [op or {} for op in operations]


def _decode_error(what: str) -> errors.StatusError:
    return errors.bad_request(f"error decoding patch: json: cannot unmarshal {what}")


class _Document:
    """One document being patched, with evanphx/json-patch v4 container semantics."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.copied = 0

    def apply(self, op: dict) -> None:
        kind = op.get("op")
        handler = _OPERATIONS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            raise ValueError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
        handler(self, op)

    def find(self, path: str) -> tuple[Any, str]:
        """The container holding the last path segment and that segment, or (None, "")."""
        parts = path.split("/")
        if len(parts) < 2:
            return None, ""
        node = self.root
        for part in parts[1:-1]:
            if not isinstance(node, (dict, list)):
                return None, ""
            try:
                node = _get(node, _unescape(part))
            except ValueError:
                return None, ""
        if not isinstance(node, (dict, list)):
            return None, ""
        return node, _unescape(parts[-1])

    def locate(self, op: dict, field: str, verb: str) -> tuple[Any, str, str]:
        path = op.get(field)
        if not isinstance(path, str):
            raise ValueError(f"{verb} operation failed to decode {field}: missing value")
        container, key = self.find(path)
        if container is None:
            raise ValueError(f'{verb} operation does not apply: doc is missing {field}: "{path}": missing value')
        return container, key, path


def _unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


_ATOI = re.compile(r"[+-]?[0-9]{1,19}\Z")


def _atoi(key: str) -> int:
    """strconv.Atoi: optional sign, decimal digits, int64 range; never parses huge inputs."""
    if not _ATOI.match(key):
        raise ValueError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    number = int(key)
    if not -(2**63) <= number < 2**63:
        raise ValueError(f'strconv.Atoi: parsing "{key}": value out of range')
    return number


def _index(key: str, size: int) -> int:
    index = _atoi(key)
    if index >= size or index < -size:
        raise ValueError(f"Unable to access invalid index: {index}: invalid index referenced")
    return index + size if index < 0 else index


def _get(container: Any, key: str) -> Any:
    """The value at key; None when an object key is missing (partialDoc.get never fails)."""
    if isinstance(container, dict):
        return container.get(key)
    return container[_index(key, len(container))]


def _set(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    else:
        container[_index(key, len(container))] = value


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif key == "-":
        container.append(value)
    else:
        container.insert(_index(key, len(container) + 1), value)


def _remove(container: Any, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise ValueError(f"Unable to remove nonexistent key: {key}: missing value")
        del container[key]
    else:
        del container[_index(key, len(container))]


def _op_add(doc: _Document, op: dict) -> None:
    container, key, _ = doc.locate(op, "path", "add")
    _add(container, key, _copy(op.get("value")))


def _op_remove(doc: _Document, op: dict) -> None:
    container, key, _ = doc.locate(op, "path", "remove")
    _remove(container, key)


def _op_replace(doc: _Document, op: dict) -> None:
    if op.get("path") == "":
        value = op.get("value")
        if isinstance(value, (dict, list)):  # evanphx wraps a nil error here: other values are a no-op
            doc.root = _copy(value)
        return
    container, key, _ = doc.locate(op, "path", "replace")
    _get(container, key)  # arrays must already have the index; objects take any key
    _set(container, key, _copy(op.get("value")))


def _op_move(doc: _Document, op: dict) -> None:
    source, source_key, _ = doc.locate(op, "from", "move")
    value = _get(source, source_key)
    _remove(source, source_key)
    container, key, _ = doc.locate(op, "path", "move")
    _add(container, key, value)


def _op_copy(doc: _Document, op: dict) -> None:
    source, source_key, _ = doc.locate(op, "from", "copy")
    value = _get(source, source_key)
    container, key, _ = doc.locate(op, "path", "copy")
    doc.copied += len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    if doc.copied > MAX_COPY_BYTES:
        raise ValueError(
            f"Unable to complete the copy, the accumulated size increase of copy is {doc.copied}, "
            f"exceeding the limit {MAX_COPY_BYTES}"
        )
    _add(container, key, _copy(value))


def _op_test(doc: _Document, op: dict) -> None:
    expected = op.get("value", _ABSENT)
    if op.get("path") == "":
        passed = expected is not _ABSENT and _equal(doc.root, expected)
    else:
        container, key, _ = doc.locate(op, "path", "test")
        actual = _get(container, key)
        if actual is None:  # a missing key and a null both test equal to null only
            passed = expected is None
        else:
            passed = expected is not _ABSENT and _equal(actual, expected)
    if not passed:
        raise ValueError(f"testing value {op.get('path')} failed: test failed")


_OPERATIONS: dict[str, Callable[[_Document, dict], None]] = {
    "add": _op_add,
    "remove": _op_remove,
    "replace": _op_replace,
    "move": _op_move,
    "copy": _op_copy,
    "test": _op_test,
}


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: bools are not numbers, 1 == 1.0, objects ignore key order."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


# -- strategic merge patch ----------------------------------------------------------------------

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM = "$deleteFromPrimitiveList"
_SET_ORDER = "$setElementOrder"
_NO_LIST_OF_LISTS = "lists of lists are not supported"
_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_SET_ORDER = "invalid patch format of setElementOrder list"
_MAP = "map[string]interface {}"
_SLICE = "[]interface {}"

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
    original: dict, patch: Any, schema: dict | None, *, resolve_ref: Resolver | None = None
) -> dict:
    """Apply a strategic merge patch, as kube-apiserver does for built-in kinds; returns a new dict.

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
        base = _copy(original) if isinstance(original, dict) else {}
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


# -- Go-style rendering for strategicpatch's messages --------------------------------------------

_GO_TYPES = {dict: _MAP, list: _SLICE, str: "string", bool: "bool", int: "int64", float: "float64"}


def _bad_arg_type(expected: str, actual: Any) -> str:
    return f"expected a {expected}, but received a {_GO_TYPES.get(type(actual), '%!s(<nil>)')}"


def _no_merge_key(item: dict, merge_key: str) -> str:
    return f"map: {_go(item)} does not contain declared merge key: {merge_key}"


def _bad_patch_type(directive: Any, item: dict) -> str:
    return f"unknown patch type: {_go(directive, verb='s')} in map: {_go(item)}"


def _go(value: Any, *, verb: str = "v") -> str:
    """fmt's %v (or %s) of a decoded JSON value."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(value[k], verb=verb)}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go(v, verb=verb) for v in value) + "]"
    if isinstance(value, str):
        return value
    if value is None:
        text, kind = "<nil>", ""
    elif isinstance(value, bool):
        text, kind = ("true" if value else "false"), "bool"
    elif isinstance(value, float):
        text, kind = _go_float(value), "float64"
    else:
        text, kind = str(value), "int64"
    if verb == "s":
        return f"%!s({kind}={text})" if kind else "%!s(<nil>)"
    return text


def _go_float(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64): shortest digits, exponent form outside [1e-4, 1e6)."""
    if value == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # position of the decimal point in the digit string
    prefix = "-" if sign else ""
    if point - 1 < -4 or point - 1 >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        power = point - 1
        return f"{prefix}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return f"{prefix}{text[:point]}.{text[point:]}"
