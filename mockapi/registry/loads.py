"""Loading a stored object for a write without parsing its managedFields again.

An update or a patch starts from the stored object, parsed afresh (``Stored.load``). About half of
a Pod's stored bytes, and most of its parse, is ``metadata.managedFields``: field sets are nests
of small objects (``{"f:name":{}, ...}``), a dict each. Yet the managedFields of the objects a
client writes are mostly the same bytes — one template, one manager, entries stamped in the same
second — and a write only reads them (the field manager treats field sets as immutable and hands
back the entries it keeps as they are).

So :class:`ManagedFieldsLoads` parses each distinct managedFields once and lends that parse to
every later load whose stored bytes carry the same: the object around it is parsed from its bytes
with ``"managedFields":[]`` in their place (the key keeps its place among metadata's keys), and the
list is set into the fresh metadata. The list and its entries are shared: **never change them in
place** (replace ``metadata.managedFields`` instead, as every write path does). A few dozen
distinct lists are kept, the most recent first.
"""

from __future__ import annotations

import orjson

from mockapi.fieldmanager import managed as managed_entries
from mockapi.wire import exact

_KEY = b'"managedFields":'
_PREFIX = 64  # bytes of the value that pick a bucket of candidates
_PER_PREFIX = 16
_LIMIT = 64  # lists kept in all (a Pod's parse is ~20 KB of dicts)


class ManagedFieldsLoads:
    def __init__(self) -> None:
        self._by_prefix: dict[bytes, list[tuple[bytes, list]]] = {}
        self._count = 0

    def load(self, raw: bytes) -> dict:
        """``orjson.loads(raw)``, its ``metadata.managedFields`` shared with earlier loads of the
        same bytes (read-only)."""
        start = raw.find(_KEY)
        if start < 0:
            return orjson.loads(raw)
        at = start + len(_KEY)
        for encoded, parsed in self._by_prefix.get(raw[at:at + _PREFIX], ()):
            if raw.startswith(encoded, at):
                return self._around(raw, at, encoded, parsed)
        obj = orjson.loads(raw)
        self._remember(raw, at, obj)
        return obj

    def _around(self, raw: bytes, at: int, encoded: bytes, parsed: list) -> dict:
        # The key elsewhere too (a custom field of that name): no guessing. ``at`` follows its first
        # occurrence, and the list's own bytes hold none (``_remember``): only the rest is searched.
        if raw.find(_KEY, at + len(encoded)) >= 0:
            return orjson.loads(raw)
        obj = orjson.loads(raw[:at] + b"[]" + raw[at + len(encoded):])
        meta = obj.get("metadata")
        if type(meta) is not dict or meta.get("managedFields") != []:
            return orjson.loads(raw)
        meta["managedFields"] = parsed
        return obj

    def _remember(self, raw: bytes, at: int, obj: dict) -> None:
        meta = obj.get("metadata")
        managed = meta.get("managedFields") if type(meta) is dict else None
        if type(managed) is not list or not managed:
            return
        try:
            encoded = orjson.dumps(managed)
        except orjson.JSONEncodeError:
            return
        if not raw.startswith(encoded, at) or _KEY in encoded:  # not metadata's, or not as orjson writes it
            return
        if self._count >= _LIMIT:
            self._by_prefix.clear()
            self._count = 0
        bucket = self._by_prefix.setdefault(encoded[:_PREFIX], [])
        bucket.insert(0, (exact(encoded), managed))
        managed_entries.share(managed)
        self._count += 1
        if len(bucket) > _PER_PREFIX:
            bucket.pop()
            self._count -= 1
