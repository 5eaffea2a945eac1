"""Conversion between the versions of a multi-version CRD, as kube-apiserver does with strategy None.

A CustomResourceDefinition with more than one version stores its objects in the storage version
and converts them on the way out to the version the request named; with ``conversion: None``
(the only strategy this server implements) converting rewrites ``apiVersion`` and nothing else.
A write through any version is converted to the storage version before it is stored.

Only kinds whose :attr:`ResourceType.storage_version` is set pay anything: single-version kinds
serve their stored bytes untouched. Objects of multi-version kinds are stored with ``apiVersion``
first, so serving one in the version it is stored in costs one ``bytes.startswith``.

Built-in kinds whose versions differ in shape, not only in ``apiVersion`` (autoscaling/v1 and v2's
HorizontalPodAutoscaler), name their converter in ``CONVERTERS``: ``convert(obj, api_version)``
returns a new object in that version, ``apiVersion`` first.
"""

from __future__ import annotations

import functools
from typing import Callable

import orjson

from mockapi.gvk import ResourceType
from mockapi.store import Stored
from mockapi.watchwire import event_line


Converter = Callable[[dict, str], dict]


def _hpa(obj: dict, api_version: str) -> dict:
    from mockapi.registry import autoscaling  # the kind's module, imported on its first use as its strategy is

    return autoscaling.convert(obj, api_version)


CONVERTERS: dict[tuple[str, str], Converter] = {
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa,
}


def converts(rt: ResourceType) -> bool:
    return bool(rt.storage_version)


def _converter(rt: ResourceType) -> Converter | None:
    return CONVERTERS.get((rt.group, rt.kind)) if rt.builtin else None


def storage_api_version(rt: ResourceType) -> str:
    return f"{rt.group}/{rt.storage_version}" if rt.group else rt.storage_version


def to_storage(rt: ResourceType, obj: dict) -> dict:
    """The object as it is stored: in the storage version, ``apiVersion`` first."""
    if not converts(rt):
        return obj
    return _with_api_version(obj, storage_api_version(rt), _converter(rt))


def to_request(rt: ResourceType, obj: dict) -> dict:
    """A stored object (any version) in the version of ``rt``, for a write to start from."""
    if not converts(rt) or obj.get("apiVersion") == rt.api_version:
        return obj
    return _with_api_version(obj, rt.api_version, _converter(rt))


def served(rt: ResourceType, raw: bytes) -> bytes:
    """Stored bytes as a client of ``rt`` reads them."""
    if not converts(rt):
        return raw
    return _raw_in(raw, rt.api_version, _head(rt.api_version), _converter(rt))


def served_stored(rt: ResourceType, stored: Stored) -> Stored:
    if not converts(rt):
        return stored
    raw = stored.raw  # once: a packed record may decompress on each read
    served_raw = _raw_in(raw, rt.api_version, _head(rt.api_version), _converter(rt))
    return stored if served_raw is raw and type(stored) is Stored else stored._replace(raw=served_raw)


def served_items(rt: ResourceType, items: list[Stored]) -> list[Stored]:
    if not converts(rt):
        return items
    head = _head(rt.api_version)
    if all(type(stored) is Stored and stored.raw.startswith(head) for stored in items):
        return items  # all stored plain in the version asked for
    # Packed records (the store's) may decompress on each read of .raw: read each once, and hand
    # plain records on (the caller reads their bytes again)
    api_version, convert = rt.api_version, _converter(rt)
    return [stored._replace(raw=_raw_in(stored.raw, api_version, head, convert)) for stored in items]


def watch_encoder(rt: ResourceType, encode: Callable[[str, bytes], bytes] | None):
    """The watcher's event encoder for ``rt``: events carry the version the watch asked for.
    Single-version kinds keep ``encode`` (None: the shared, pre-serialized event lines)."""
    if not converts(rt):
        return encode
    inner = encode or event_line
    api_version, head, convert = rt.api_version, _head(rt.api_version), _converter(rt)

    def converting(event_type: str, raw: bytes) -> bytes:
        return inner(event_type, _raw_in(raw, api_version, head, convert))

    return converting


_PREFIX = b'{"apiVersion":"'


@functools.lru_cache(maxsize=256)
def _head(api_version: str) -> bytes:
    return b'{"apiVersion":' + orjson.dumps(api_version)


def _raw_in(raw: bytes, api_version: str, head: bytes, convert: Converter | None = None) -> bytes:
    """``raw`` with ``apiVersion`` set to ``api_version``. Stored objects of multi-version kinds
    begin with their apiVersion, so converting one swaps that prefix; others are re-encoded
    (and kinds with a converter are converted)."""
    if raw.startswith(head):  # head ends with the string's closing quote: an exact match
        return raw
    if convert is not None:
        return orjson.dumps(convert(orjson.loads(raw), api_version))
    if raw.startswith(_PREFIX):
        end = raw.find(b'"', len(_PREFIX))
        if end > 0 and b"\\" not in raw[len(_PREFIX) : end]:
            return head + raw[end + 1 :]
    obj = orjson.loads(raw)
    if obj.get("apiVersion") == api_version:
        return raw
    return orjson.dumps(_with_api_version(obj, api_version))


def _with_api_version(obj: dict, api_version: str, convert: Converter | None = None) -> dict:
    if convert is not None:
        return convert(obj, api_version)
    converted = {"apiVersion": api_version}
    converted.update((k, v) for k, v in obj.items() if k != "apiVersion")
    return converted
