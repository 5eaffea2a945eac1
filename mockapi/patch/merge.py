"""``application/merge-patch+json``: RFC 7386, as evanphx/json-patch v4 applies it."""

from __future__ import annotations

from typing import Any

from mockapi import errors
from mockapi.patch._shared import _TOO_DEEP, _copy, _json_kind


def merge_patch(target: Any, patch: Any, *, in_place: bool = False, share: bool = False) -> Any:
    """Apply a JSON merge patch (RFC 7386) and return a new value (``in_place``: ``target`` is the
    caller's own copy, merged into without copying it first; ``share``: the result copies only the
    objects along the patch's paths and shares every subtree the patch leaves alone with
    ``target``, which stays as it was — the caller must change neither in place there).

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
        if share:
            return _merged_sharing(target, patch)
        result = target if in_place else _copy(target)
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


def _merged_sharing(doc: dict, patch: dict) -> dict:
    """``_merge_into`` on a shallow copy of ``doc``, recursing into copies: what the patch names is
    new, what it does not is ``doc``'s own (the same objects), in ``doc``'s key order."""
    result = dict(doc)
    for key, value in patch.items():
        current = result.get(key)
        if value is None:
            result.pop(key, None)
        elif current is None or not isinstance(current, dict):
            result[key] = _pruned(value)
        elif isinstance(value, dict):
            result[key] = _merged_sharing(current, value)
        else:
            result[key] = _copy(value)
    return result


def _pruned(value: Any) -> Any:
    """A copy without null object members (evanphx pruneNulls: null array elements stay)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


