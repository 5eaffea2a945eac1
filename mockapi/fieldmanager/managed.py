"""``metadata.managedFields`` entries: decoding, a manager's identity, encoding in kube's order and
the cap on Update entries (apimachinery ``util/managedfields/internal``: ``managedfields.go``,
``capmanagers.go``).

A manager is identified by its name, operation, subresource and, for Update entries only, the
apiVersion it wrote with: an applier keeps one entry across versions, an updater has one per
version. Entries decoded from a stored object are trusted to be in kube's canonical form and are
written back untouched when nothing about them changed. A stored list that many loads share
(:func:`share`, registry/loads.py) is decoded once.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from mockapi import decoding
from mockapi.fieldmanager.fieldset import LEAF, sorted_node, union
from mockapi.schema.goformat import go_json

APPLY, UPDATE = "Apply", "Update"
MAX_UPDATE_MANAGERS = 10  # DefaultMaxUpdateManagers
ANCIENT_CHANGES = "ancient-changes"

Key = tuple[str, str, str, str]  # manager, operation, apiVersion ("" for Apply), subresource


class DecodeError(ValueError):
    """managedFields that kube-apiserver would refuse to decode."""


class Entry:
    """One manager's entry. Treated as immutable: ``with_fields`` and ``with_time`` make new ones."""

    __slots__ = ("api_version", "fields", "manager", "operation", "order", "stored", "subresource", "time")

    def __init__(self, manager: str, operation: str, api_version: str, subresource: str, time: str | None,
                 fields: dict, stored: dict | None = None) -> None:  # fmt: skip
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.subresource = subresource
        self.time = time
        self.fields = fields
        self.stored = stored  # the canonical stored entry this came from, written back while unchanged
        self.order: tuple | None = None  # its place among the stored entries (encode), once asked for

    @property
    def key(self) -> Key:
        return key_of(self.manager, self.operation, self.api_version, self.subresource)

    @property
    def applied(self) -> bool:
        return self.operation == APPLY

    def with_fields(self, fields: dict) -> Entry:
        if fields is self.fields:
            return self
        return Entry(self.manager, self.operation, self.api_version, self.subresource, self.time, fields)

    def with_time(self, time: str | None) -> Entry:
        if time == self.time:  # the same entry, still written back as stored
            return self
        return Entry(self.manager, self.operation, self.api_version, self.subresource, time, self.fields)

    def identifier(self) -> str:
        """BuildManagerIdentifier: the entry's JSON without time, fields and (for Apply) apiVersion."""
        parts = {"manager": self.manager, "operation": self.operation}
        parts["apiVersion"] = "" if self.applied else self.api_version
        parts["subresource"] = self.subresource
        return "{" + ",".join(f"{go_json(k)}:{go_json(v)}" for k, v in parts.items() if v) + "}"

    def encode(self) -> dict:
        stored = self.stored
        if stored is not None and stored.get("fieldsV1") is self.fields and stored.get("time") == self.time:
            return stored
        out: dict[str, Any] = {"apiVersion": self.api_version, "fieldsType": "FieldsV1", "fieldsV1": self.fields}
        if self.manager:
            out["manager"] = self.manager
        out["operation"] = self.operation
        if self.subresource:
            out["subresource"] = self.subresource
        if self.time is not None:
            out["time"] = self.time
        return out


def key_of(manager: str, operation: str, api_version: str, subresource: str) -> Key:
    return manager, operation, "" if operation == APPLY else api_version, subresource


Managers = dict[Key, Entry]


def decode(entries: Any, *, trusted: bool) -> Managers:
    """DecodeManagedFields. ``trusted``: entries this server stored, already canonical. A fresh
    dict (its entries are immutable); a shared list's decoding is remembered (:func:`share`)."""
    if entries is None:
        return {}
    if trusted:
        hit = _SHARED.get(id(entries))
        if hit is not None and hit[0] is entries:
            if hit[1] is None:
                _SHARED[id(entries)] = (entries, _decode(entries, trusted=True))
                hit = _SHARED[id(entries)]
            return dict(hit[1])
    return _decode(entries, trusted=trusted)


def _decode(entries: Any, *, trusted: bool) -> Managers:
    managers: Managers = {}
    if not isinstance(entries, list):
        raise DecodeError("managedFields must be a list")
    for index, raw in enumerate(entries):
        entry = _decode_entry(raw, index, trusted=trusted)
        managers[entry.key] = entry
    return managers


_SHARED: dict[int, tuple[list, Managers | None]] = {}  # id -> (a shared stored list, its decoding)
_SHARED_LIMIT = 64  # as many as registry/loads.py keeps: the lists it evicted are not held on here for long


def share(entries: list) -> None:
    """Declare a stored ``managedFields`` list shared by many loads and never changed in place
    (registry/loads.py lends one parse to every load of the same bytes): its decoding is then
    done once and remembered (the list is held, so its id stays its own)."""
    if len(_SHARED) >= _SHARED_LIMIT:
        _SHARED.clear()
    _SHARED[id(entries)] = (entries, None)


def _decode_entry(raw: Any, index: int, *, trusted: bool) -> Entry:
    if not isinstance(raw, dict):
        raise DecodeError(f"managed fields entry {index} must be an object")
    if raw.get("operation") not in (APPLY, UPDATE):
        raise DecodeError("operation must be `Apply` or `Update`")
    if not isinstance(raw.get("apiVersion"), str) or not raw["apiVersion"]:
        raise DecodeError("apiVersion must not be empty")
    fields_type = raw.get("fieldsType")
    if not fields_type:
        raise DecodeError(f"missing fieldsType in managed fields entry {index}")
    if fields_type != "FieldsV1":
        raise DecodeError(f'invalid fieldsType "{fields_type}" in managed fields entry {index}')
    fields = raw.get("fieldsV1")
    fields = {} if fields is None else fields if trusted else _canonical_fields(fields)
    time = raw.get("time")
    time = time if trusted or time is None else _canonical_time(time)
    manager, subresource = raw.get("manager") or "", raw.get("subresource") or ""
    if not isinstance(manager, str) or not isinstance(subresource, str):
        raise DecodeError(f"managed fields entry {index} has a non-string manager or subresource")
    stored = raw if trusted else None
    return Entry(manager, raw["operation"], raw["apiVersion"], subresource, time, fields, stored)


def _canonical_fields(node: Any) -> dict:
    """FieldsToSet then SetToFields: unknown path element kinds dropped, JSON made canonical."""
    if not isinstance(node, dict):
        raise DecodeError("error decoding set: expected an object")
    out = {}
    for key, child in node.items():
        if key == ".":
            out[key] = LEAF
            continue
        if len(key) < 2 or key[1] != ":":
            raise DecodeError(f"error decoding set: missing colon: {key}")
        kind, text = key[0], key[2:]
        if kind not in "fkvi":
            continue  # a path element kind from the future: dropped, as kube does
        out[kind + ":" + _canonical_element(kind, text)] = _canonical_fields(child)
    return sorted_node(out)


def _canonical_element(kind: str, text: str) -> str:
    if kind == "f":
        return text
    try:
        if kind == "i":
            return str(int(text))
        value = decoding.load_embedded_json(text)
    except ValueError as exc:
        raise DecodeError(f"error decoding set: {exc}") from None
    if kind == "k" and not isinstance(value, dict):
        raise DecodeError("error decoding set: a key must be a JSON object")
    return go_json(value)


def _canonical_time(text: Any) -> str:
    try:
        parsed = datetime.fromisoformat(str(text))
    except ValueError:
        raise DecodeError(f"invalid time {text!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=4096)
def seconds(time: str | None) -> int:
    """metav1.Time.Unix() of an entry's time; 0 when there is none (or it does not parse)."""
    if not time:
        return 0
    try:
        return int(datetime.fromisoformat(time).timestamp())
    except ValueError:
        return 0


def encode(managers: Managers) -> list[dict]:
    """The entries as stored, sorted as sortEncodedManagedFields sorts them."""
    if len(managers) < 2:  # most objects: one writer, nothing to sort
        return [entry.encode() for entry in managers.values()]
    return [entry.encode() for entry in sorted(managers.values(), key=_order)]


def _order(entry: Entry) -> tuple:
    """sortEncodedManagedFields' order: operation, time (to the second), manager, apiVersion,
    subresource; remembered on the entry (a stored list's entries are decoded once and shared)."""
    order = entry.order
    if order is None:
        order = entry.order = (entry.operation, seconds(entry.time), entry.manager, entry.api_version, entry.subresource)
    return order


def cap_update_managers(managers: Managers) -> Managers:
    """Merge the oldest Update entries into ``ancient-changes`` (one per apiVersion) while there are
    more than MAX_UPDATE_MANAGERS of them."""
    if len(managers) <= MAX_UPDATE_MANAGERS:  # fewer entries in all than the cap: nothing to merge
        return managers
    updaters = [entry for entry in managers.values() if not entry.applied]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return managers
    updaters.sort(key=lambda e: (seconds(e.time), e.identifier()))
    managers = dict(managers)
    first_of_version: dict[str, Key] = {}
    length = len(updaters)
    for entry in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        bucket = key_of(ANCIENT_CHANGES, UPDATE, entry.api_version, "")
        if entry.api_version not in first_of_version:
            first_of_version[entry.api_version] = entry.key
            continue
        if entry.key == bucket:
            continue  # the bucket itself is never merged into itself
        if bucket not in managers:
            first = managers.pop(first_of_version[entry.api_version])
            managers[bucket] = Entry(ANCIENT_CHANGES, UPDATE, entry.api_version, "", first.time, first.fields)
        merged = union(entry.fields, managers[bucket].fields)
        managers[bucket] = Entry(ANCIENT_CHANGES, UPDATE, entry.api_version, "", entry.time, merged)
        del managers[entry.key]
        length -= 1
    return managers
