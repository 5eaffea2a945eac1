"""``application/json-patch+json``: RFC 6902 with evanphx/json-patch v4's leniencies (kube-apiserver's)."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from mockapi import errors
from mockapi.patch._shared import _ABSENT, _TOO_DEEP, _copy, _json_kind

MAX_JSON_PATCH_OPERATIONS = 10000  # handlers.maxJSONPatchOperations
MAX_COPY_BYTES = 3 * 1024 * 1024  # apiserver JSONPatchMaxCopyBytes default
# kube-apiserver answers any failing JSON patch operation with exactly this (NewGenericServerResponse
# drops the evanphx message); the detail is kept as the exception's __cause__ for logs.
PATCH_REJECTED = "the server rejected our request due to an error in our request"



def json_patch(doc: Any, operations: Any, *, in_place: bool = False) -> Any:
    """Apply an RFC 6902 JSON patch and return a new document (``in_place``: ``doc`` is the caller's
    own copy, changed without copying it first; a failing patch may leave it half changed).

    A body that is not a list of operation objects → 400 with the Go decoder's words (``error
    decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp``);
    ``null`` is an empty patch. More than 10000 operations → 413. Any failing operation (missing
    path, failed ``test``, unknown ``op``, bad index, copies adding over 3 MiB) → 422 Invalid with
    kube's generic message; evanphx's own message is the exception's ``__cause__``.
    """
    ops = _decode_operations(operations)
    try:
        document = _Document(doc if in_place else _copy(doc))
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
    # Arrays must already have the index; objects take any key. RFC 6902 says the target must
    # exist (evanphx v5 answers "doc is missing key"), but kube-apiserver stays on v4.12, where
    # that change was reverted for compatibility (evanphx/json-patch#111, kubernetes#91622).
    _get(container, key)
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


