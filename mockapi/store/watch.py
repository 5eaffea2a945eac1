"""Watch events and watchers: each event is serialized once and the same bytes go to every watcher.

A watcher is a bounded, coalescing mailbox: the store *offers* each committed event synchronously
(no awaits, so a slow client can never block a writer); the HTTP handler drains everything pending
with one ``send`` per wake-up. A watcher whose backlog exceeds its bound is marked ``overflowed``
and its handler closes the stream with a 410 Expired ERROR event, as kube-apiserver's cacher does
for watchers that fall behind.
"""

from __future__ import annotations

import asyncio
from typing import Callable, NamedTuple, Optional

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


class Stored(NamedTuple):
    """One stored object version: canonical bytes plus the parsed facts selectors need.

    A tuple of immutable values (bytes, an int, strings, a dict of strings, a tuple of strings)
    that never refers back to anything: the store takes each one out of the cyclic collector's
    lists (:func:`untrack`), so 100,000 stored objects add nothing to a full collection (PERF.md
    T11). ``labels`` and ``fields`` may be shared between objects: never change them."""

    raw: bytes
    rv: int
    namespace: str
    name: str
    labels: dict | None
    fields: tuple | None

    def load(self) -> dict:
        """A fresh, mutable dict of the object."""
        return orjson.loads(self.raw)


class Event:
    """A committed change. ``obj`` is the new state (for DELETED: the last state, at the deletion's
    resourceVersion); ``prev`` the state before (None for ADDED)."""

    __slots__ = ("type", "resource", "obj", "prev", "_lines")

    def __init__(self, event_type: str, resource, obj: Stored, prev: Optional[Stored]):
        self.type = event_type
        self.resource = resource
        self.obj = obj
        self.prev = prev
        self._lines: dict[str, bytes] | None = None
        untrack(self)  # refers to a resource key, Stored values and a dict of bytes: never a cycle

    @property
    def rv(self) -> int:
        return self.obj.rv

    def line(self, event_type: str) -> bytes:
        """The serialized event, built once per type and shared by all watchers."""
        lines = self._lines
        if lines is None:
            lines = self._lines = {}
        line = lines.get(event_type)
        if line is None:
            line = lines[event_type] = event_line(event_type, self.raw_for(event_type))
        return line

    def raw_for(self, event_type: str) -> bytes:
        if event_type == DELETED and self.type == MODIFIED:
            # The object left the watcher's selector: kube sends the previous content at the
            # event's resourceVersion.
            previous = self.prev.load()
            previous["metadata"]["resourceVersion"] = str(self.obj.rv)
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
