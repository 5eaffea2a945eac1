"""Watch events and watchers: each event is serialized once and the same bytes go to every watcher.

A watcher is a bounded, coalescing mailbox: the store *offers* each committed event synchronously
(no awaits, so a slow client can never block a writer); the HTTP handler drains everything pending
with one ``send`` per wake-up. A watcher whose backlog exceeds its bound is marked ``overflowed``
and its handler closes the stream with a 410 Expired ERROR event, as kube-apiserver's cacher does
for watchers that fall behind.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Callable, Optional

import lz4.block
import orjson

from mockapi.watchwire import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED, event_line  # noqa: F401 (re-exported)


def _untracker() -> Callable[[object], None]:
    """``PyObject_GC_UnTrack``: takes an object out of the cyclic collector's lists.

    Only for objects that can never be part of a reference cycle: the collector then never walks
    them (a full collection walks every tracked object). The collector untracks an exact tuple of
    untracked members by itself, but never a tuple *subclass* such as :class:`Stored`, nor a
    ``__slots__`` instance such as :class:`Event`. Where the C API cannot be reached (not CPython),
    objects simply stay tracked."""
    try:
        import ctypes

        untrack = ctypes.pythonapi.PyObject_GC_UnTrack
    except (ImportError, AttributeError):  # pragma: no cover - not CPython
        return lambda obj: None
    untrack.argtypes = (ctypes.py_object,)
    untrack.restype = None
    return untrack


untrack = _untracker()


try:  # what namedtuple's fields are made of: a C descriptor, faster than a property
    from _collections import _tuplegetter as _field
except ImportError:  # pragma: no cover - not CPython
    from operator import itemgetter

    def _field(index: int, doc: str):
        return property(itemgetter(index), doc=doc)


_RV_KEY = b'"resourceVersion":"'


def _rv_in(raw: bytes) -> int | None:
    """The value of the first ``"resourceVersion":"N"`` in ``raw`` (metadata's in every object the
    store serializes: :meth:`Stored.compact` checks it), or None."""
    start = raw.find(_RV_KEY)
    if start < 0:
        return None
    start += len(_RV_KEY)
    end = raw.find(b'"', start, start + 24)
    digits = raw[start:end] if end > 0 else b""
    return int(digits) if digits.isdigit() else None


class Stored(tuple):
    """One stored object version: canonical bytes plus the parsed facts selectors need.

    ``raw``, ``rv``, ``namespace``, ``name``, ``labels``, ``fields`` (and :meth:`load`), as a
    tuple of immutable values that never refers back to anything: the store takes each one out of
    the cyclic collector's lists (:func:`untrack`), so 100,000 stored objects add nothing to a full
    collection (PERF.md T11). ``labels`` and ``fields`` may be shared between objects: never change them.

    Compact, since it is what the store keeps per object (docs/memory.md): ``(raw, name, scope,
    fields)``, where ``scope`` is ``(namespace, labels)``, one tuple shared by every object of the
    namespace with that label set (the store's table: pods of one template share one), and the
    resourceVersion is not kept beside the bytes but read from them (metadata.resourceVersion, which
    the store wrote). Only where the bytes do not say it first (another ``"resourceVersion"`` key
    before metadata's, or none, as some tests build objects) is it kept: ``(raw, name, scope,
    fields, rv)``. 80 bytes per object instead of a 6-field tuple and an int (128)."""

    __slots__ = ()

    def __new__(cls, raw: bytes, rv: int, namespace: str, name: str, labels: dict | None, fields: tuple | None):
        return cls.compact(raw, rv, name, (namespace, labels), fields)

    @classmethod
    def compact(cls, raw: bytes, rv: int, name: str, scope: tuple, fields: tuple | None) -> "Stored":
        """``scope``: (namespace, labels), shared between objects where the caller can."""
        if _rv_in(raw) == rv:
            return tuple.__new__(cls, (raw, name, scope, fields))
        return tuple.__new__(cls, (raw, name, scope, fields, rv))

    raw = _field(0, "The canonical compact JSON bytes.")
    name = _field(1, "metadata.name")
    scope = _field(2, "(namespace, labels), shared between objects")
    fields = _field(3, "The selectable-field values, in the kind's order (or None).")

    @property
    def rv(self) -> int:
        return self[4] if len(self) == 5 else _rv_in(self[0])

    @property
    def namespace(self) -> str:
        return self[2][0]

    @property
    def labels(self) -> dict | None:
        return self[2][1]

    def __getnewargs__(self) -> tuple:
        """What ``copy`` and ``pickle`` make it again from (its constructor's arguments)."""
        return (self.raw, self.rv, self.namespace, self.name, self.labels, self.fields)

    def _replace(self, *, raw: bytes) -> "Stored":
        """The same object version with other bytes (served in another apiVersion)."""
        return tuple.__new__(type(self), (raw, self[1], self[2], self[3], self.rv))

    def load(self) -> dict:
        """A fresh, mutable dict of the object."""
        return orjson.loads(self.raw)

    def __repr__(self) -> str:
        return f"Stored(raw={self.raw!r}, rv={self.rv!r}, namespace={self.namespace!r}, name={self.name!r}, labels={self.labels!r}, fields={self.fields!r})"


_decompress = lz4.block.decompress  # stateless (thread-safe): a reader thread may call it too


class _Recent:
    """The plain bytes of the packed records read last, up to ``limit`` bytes of them: a client
    reads the same objects again (a LIST of a namespace, a GET after a write), and a record read
    again is a dict lookup instead of a decompress (~0.5 µs for a 4.6 KB pod, ~1.5 µs in a LIST
    of 1,000: glibc gives the megabytes of a list's decompressed items back and faults them in
    again). Oldest out first. Keyed by the record's id; the entry holds the record, so the id is
    not reused while it is there. Lookups take no lock (one dict read under the GIL); a miss
    takes one, since a reader thread may read records too."""

    __slots__ = ("entries", "size", "limit", "lock")

    def __init__(self, limit: int) -> None:
        self.entries: dict[int, tuple["Packed", bytes]] = {}
        self.size = 0
        self.limit = limit
        self.lock = threading.Lock()

    def add(self, record: "Packed", raw: bytes) -> None:
        entries = self.entries
        with self.lock:
            if id(record) in entries:
                return
            entries[id(record)] = (record, raw)
            self.size += len(raw)
            while self.size > self.limit and entries:
                _, gone = entries.pop(next(iter(entries)))
                self.size -= len(gone)

    def forget(self, record: Stored) -> None:
        """Drop ``record``'s bytes: the store no longer holds it (replaced or deleted). Only the
        current objects' bytes are worth keeping; a replaced one is read again only by a watch
        resume or a list at an older resourceVersion."""
        if id(record) in self.entries:
            with self.lock:
                entry = self.entries.get(id(record))
                if entry is not None and entry[0] is record:
                    del self.entries[id(record)]
                    self.size -= len(entry[1])

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.size = 0


RECENT_BYTES = 8 << 20  # ~1,800 pods of 4.6 KB
recent = _Recent(RECENT_BYTES)


class Packed(Stored):
    """A :class:`Stored` kept compressed: what the store holds per object (docs/memory.md).

    ``(blob, name, scope, fields, rv, dictionary)``: ``blob`` is the canonical bytes as an LZ4
    block compressed against ``dictionary`` (the bytes of another stored object of the resource,
    shared by the records packed against it; each record refers to its own, so the store can
    change dictionaries without touching older records). ``raw`` decompresses (~0.5 µs for a
    4.6 KB pod) unless the record was read lately (:class:`_Recent`): read it once per request.
    ``rv`` is kept as an int, since the blob cannot be searched. Everything else is :class:`Stored`'s: the same interface, equal to the plain
    record of the same object version; ``copy``/``pickle`` and ``_replace`` give plain ones."""

    __slots__ = ()

    def __new__(cls, raw: bytes, rv: int, namespace: str, name: str, labels: dict | None, fields: tuple | None):
        # copy and pickle come here (__getnewargs__): they get the plain record
        return Stored.compact(raw, rv, name, (namespace, labels), fields)

    @classmethod
    def pack(cls, blob: bytes, dictionary: bytes, stored: Stored) -> "Packed":
        """``stored``'s twin, its bytes being ``blob`` (compressed against ``dictionary``)."""
        return tuple.__new__(cls, (blob, stored[1], stored[2], stored[3], stored.rv, dictionary))

    blob = _field(0, "The LZ4 block of the canonical bytes (with their size in front).")
    rv = _field(4, "metadata.resourceVersion")
    dictionary = _field(5, "The bytes ``blob`` was compressed against.")

    @property
    def raw(self) -> bytes:
        """The canonical compact JSON bytes: decompressed, or the bytes of a recent read (:class:`_Recent`)."""
        hit = recent.entries.get(id(self))
        if hit is not None and hit[0] is self:
            return hit[1]
        # (source, uncompressed_size: the blob's own, return_bytearray, dict) positionally: parsing
        # the keyword costs ~0.15 µs, a third of a pod's decompress
        raw = _decompress(self[0], -1, False, self[5])
        recent.add(self, raw)
        return raw

    def load(self) -> dict:
        return orjson.loads(self.raw)

    def _replace(self, *, raw: bytes) -> Stored:
        return tuple.__new__(Stored, (raw, self[1], self[2], self[3], self[4]))

    def plain(self) -> Stored:
        """The same object version as a plain record."""
        return Stored.compact(self.raw, self[4], self[1], self[2], self[3])

    def __eq__(self, other):
        if isinstance(other, Stored):
            return self.plain() == (other.plain() if isinstance(other, Packed) else other)
        return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self.plain())


class Event:
    """A committed change. ``obj`` is the new state (for DELETED: the last state, at the deletion's
    resourceVersion); ``prev`` the state before (None for ADDED). Watchers get it with the plain
    record; in the history ring ``obj`` is then the store's packed twin (Store._settle)."""

    __slots__ = ("type", "resource", "obj", "prev", "rv", "_lines")

    def __init__(self, event_type: str, resource, obj: Stored, prev: Optional[Stored], rv: int | None = None):
        self.type = event_type
        self.resource = resource
        self.obj = obj
        self.prev = prev
        # kept here (the history is bounded): Stored reads it from its bytes
        self.rv: int = obj.rv if rv is None else rv
        self._lines: dict[str, bytes] | None = None
        untrack(self)  # refers to a resource key, Stored values and a dict of bytes: never a cycle

    def line(self, event_type: str) -> bytes:
        """The serialized event, built once per type and shared by all watchers."""
        lines = self._lines
        if lines is None:
            lines = self._lines = {}
        line = lines.get(event_type)
        if line is None:
            line = lines[event_type] = event_line(event_type, self.raw_for(event_type))
        return line

    def built(self, event_type: str) -> bytes | None:
        """The line of ``event_type`` if :meth:`line` built it (a watcher was sent it), else None."""
        return self._lines.get(event_type) if self._lines is not None else None

    def raw_for(self, event_type: str) -> bytes:
        if event_type == DELETED and self.type == MODIFIED:
            # The object left the watcher's selector: kube sends the previous content at the
            # event's resourceVersion.
            previous = self.prev.load()
            previous["metadata"]["resourceVersion"] = str(self.rv)
            return orjson.dumps(previous)
        return self.obj.raw


Predicate = Callable[[Stored], bool]


class Watcher:
    """A registered watch: namespace + predicate filter and a bounded mailbox of event lines."""

    __slots__ = ("resource", "namespace", "predicate", "pending", "wakeup", "limit", "overflowed", "closed", "encode")

    def __init__(
        self,
        resource,
        *,
        namespace: str | None,
        predicate: Predicate | None,
        limit: int,
        encode: Callable[[str, bytes], bytes] | None = None,
    ):
        self.resource = resource
        self.namespace = namespace
        self.predicate = predicate
        self.pending: list[bytes] = []
        self.wakeup = asyncio.Event()
        self.limit = limit
        self.overflowed = False
        self.closed = False
        # Renders one event (type, object bytes) as a line; None means the shared JSON line (the hot path).
        self.encode = encode

    def matches(self, stored: Stored | None) -> bool:
        if stored is None:
            return False
        if self.namespace is not None and stored.namespace != self.namespace:
            return False
        return self.predicate is None or self.predicate(stored)

    def offer(self, event: Event, *, bounded: bool = True) -> None:
        """Called by the store for every committed event of this watcher's resource."""
        if self.closed or self.overflowed:
            return
        now, before = self.matches(event.obj), self.matches(event.prev)
        if event.type == DELETED:
            event_type = DELETED if before or now else None
        elif now:
            event_type = MODIFIED if before else ADDED
        else:
            event_type = DELETED if before else None
        if event_type is not None:
            self.push(event_type, event, event.obj, bounded=bounded)

    def push(self, event_type: str, event: Event | None, stored: Stored, *, bounded: bool = True) -> None:
        if bounded and len(self.pending) >= self.limit:
            self.overflowed = True
            self.pending.clear()
            self.wakeup.set()
            return
        if self.encode is not None:
            raw = event.raw_for(event_type) if event is not None else stored.raw
            self.pending.append(self.encode(event_type, raw))
        elif event is not None:
            self.pending.append(event.line(event_type))
        else:
            self.pending.append(event_line(event_type, stored.raw))
        self.wakeup.set()

    def take(self) -> bytes:
        """Everything pending, as one chunk."""
        pending = self.pending
        if not pending:
            return b""
        self.pending = []
        self.wakeup.clear()
        return pending[0] if len(pending) == 1 else b"".join(pending)
