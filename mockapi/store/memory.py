"""The versioned in-memory object store.

Objects are kept per resource (any hashable key, in practice a ``GroupResource``) and
``(namespace, name)`` as canonical compact JSON bytes (:class:`Stored`), serialized once per write
and reused for GET, LIST and watch. One global integer resourceVersion orders every write; every
write appends an :class:`Event` (with the previous state) to a bounded history ring, which serves
watch resumes and consistent paginated lists at an older resourceVersion, and answers "too old"
with 410 Expired once a version has left the window — kube-apiserver's watch cache, in small.

Each object is kept compressed (:class:`~mockapi.store.watch.Packed`, docs/memory.md): an LZ4 block
against a dictionary, the bytes of another object of its resource (or of its label set), so a
4.6 KB pod takes ~140 bytes. A write still hands its plain record to the caller and to the
watchers, and the store keeps it plain while it is among the last PLAIN_WRITES written; then the
store and the history ring keep the packed twin. ``compression=False`` keeps plain records.

All operations are synchronous: inside the event loop each one is atomic, and fan-out to
watchers never awaits, so a slow watcher cannot block a writer.
"""

from __future__ import annotations

import bisect
import sys
from collections import deque
from typing import Callable, Hashable, Iterable, Iterator

import orjson

from mockapi import errors, watchwire
from mockapi.store.packing import PACK_MIN, Packer
from mockapi.store.watch import ADDED, DELETED, MODIFIED, Event, Predicate, Stored, Watcher, recent, untrack
from mockapi.wire import exact

FieldIndexer = Callable[[dict], "tuple[str, ...] | None"]

DEFAULT_HISTORY = 10_000
DEFAULT_WATCHER_BUFFER = 10_000
# Distinct label sets and selectable-field tuples shared between objects (PERF.md T11): pods of one
# ReplicaSet carry one label set, most objects one of a few field tuples. At the bound the table
# starts again, so it never holds more than a few MB after the objects are gone.
_SHARED_LABELS_LIMIT = 16_384
_SHARED_FIELDS_LIMIT = 4096
_SHARED_SCOPES_LIMIT = 16_384
# The records of the last PLAIN_WRITES writes stay plain (Store._settle): the objects written now are
# the ones written, read and watched next, and an object written again while young is never packed.
# ~4.7 MB of 4.6 KB pods; at 100,000 stored, ~47 B a pod.
PLAIN_WRITES = 1024
# Records age out AGE_BATCH at a time (a sixteenth of a smaller plain_writes): packing one after
# another keeps LZ4's state and the dictionary in the CPU's caches (one per write cost a create
# more than its compress).
AGE_BATCH = 64


def _compact(obj: dict) -> bytes:
    return exact(orjson.dumps(obj))


class _Shared:
    """Equal values kept once, up to ``limit`` of them (then it starts again)."""

    __slots__ = ("_values", "_limit")

    def __init__(self, limit: int) -> None:
        self._values: dict = {}
        self._limit = limit

    def get(self, key, make: Callable[[], object]):
        value = self._values.get(key)
        if value is None:
            if len(self._values) >= self._limit:
                self._values.clear()
            value = self._values[key] = make()
        return value

    def share(self, value):
        """The kept value equal to ``value`` (``value`` itself the first time): get() without a
        closure made per call, for values that are their own key."""
        kept = self._values.get(value)
        if kept is None:
            if len(self._values) >= self._limit:
                self._values.clear()
            kept = self._values[value] = value
        return kept


def _interned(labels: dict) -> dict:
    """A copy of interned strings (keys and values repeat across label sets; an interned string
    lives as long as something holds it)."""
    try:
        return {sys.intern(key): sys.intern(value) for key, value in labels.items()}
    except TypeError:  # not a string (a caller that skipped validation): a plain copy
        return dict(labels)


class _Bucket:
    """The objects of one (resource, namespace), with their names kept sorted for listing."""

    __slots__ = ("objects", "_sorted", "stamp")

    def __init__(self) -> None:
        self.objects: dict[str, Stored] = {}
        self._sorted: list[str] | None = []
        self.stamp = 0  # the resourceVersion of this bucket's last change (Store.stamp)

    def put(self, name: str, stored: Stored) -> None:
        if name not in self.objects:
            self._sorted = None  # re-sorted lazily by the next list: bulk loads sort once
        self.objects[name] = stored

    def remove(self, name: str) -> None:
        del self.objects[name]
        if self._sorted is not None:
            index = bisect.bisect_left(self._sorted, name)
            del self._sorted[index]

    def names(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.objects)
        return self._sorted


class Store:
    def __init__(self, *, history_size: int = DEFAULT_HISTORY, watcher_buffer: int = DEFAULT_WATCHER_BUFFER, compression: bool = True,
                 plain_writes: int = PLAIN_WRITES) -> None:
        self._rv = 0
        self._buckets: dict[Hashable, dict[str, _Bucket]] = {}
        self._history: deque[Event] = deque(maxlen=history_size)
        # Every event with rv > _window_start is still in the history ring.
        self._window_start = 0
        self._watchers: dict[Hashable, set[Watcher]] = {}
        self.watcher_buffer = watcher_buffer
        self._label_sets = _Shared(_SHARED_LABELS_LIMIT)
        self._fields = _Shared(_SHARED_FIELDS_LIMIT)
        # (namespace, labels) tuples shared by the objects that have the same two (Stored.scope)
        self._scopes = _Shared(_SHARED_SCOPES_LIMIT)
        # What readers derive from stored objects and keep here, each with the stamp it was derived
        # at (the Priority admission's default class): keyed by the reader, never read by the store.
        self.derived: dict = {}
        # Keep objects compressed (Packed, store/packing.py); only the writer's path (the event
        # loop) packs.
        self.compression = compression
        # The last plain_writes records written stay plain until they age out (_settle): insertion
        # order is age; (resource, namespace, name) -> (its bucket or None, the record, its event).
        self.plain_writes = plain_writes
        self._age_batch = min(AGE_BATCH, plain_writes // 16)
        self._young: dict[tuple, tuple[_Bucket | None, Stored, Event]] = {}
        self._packer = Packer() if compression else None

    # ------------------------------------------------------------------ reads
    @property
    def resource_version(self) -> int:
        return self._rv

    @property
    def oldest_resource_version(self) -> int:
        """The oldest resourceVersion a watch or list can still start from."""
        return self._window_start

    def get(self, resource: Hashable, namespace: str, name: str) -> Stored | None:
        buckets = self._buckets.get(resource)  # no throwaway {} default: every write reads here
        bucket = buckets.get(namespace) if buckets is not None else None
        return bucket.objects.get(name) if bucket is not None else None

    def stamp(self, resource: Hashable, namespace: str = "") -> int:
        """A number that changes whenever an object of (resource, namespace) is created, updated or
        deleted (the resourceVersion of the last such write; 0 while there is none): what a reader
        derived from them is current while it does not change."""
        buckets = self._buckets.get(resource)
        bucket = buckets.get(namespace) if buckets is not None else None
        return bucket.stamp if bucket is not None else 0

    def count(self, resource: Hashable) -> int:
        return sum(len(b.objects) for b in self._buckets.get(resource, {}).values())

    def resources(self) -> list[Hashable]:
        return list(self._buckets)

    def namespaces(self, resource: Hashable) -> list[str]:
        return sorted(ns for ns, bucket in self._buckets.get(resource, {}).items() if bucket.objects)

    def iterate(self, resource: Hashable, namespace: str | None = None, *, after: tuple[str, str] | None = None) -> Iterator[Stored]:
        """Current objects in (namespace, name) order, optionally only those after a key."""
        buckets = self._buckets.get(resource)
        if not buckets:
            return
        namespaces = [namespace] if namespace is not None else sorted(buckets)
        for ns in namespaces:
            bucket = buckets.get(ns)
            if bucket is None or (after is not None and ns < after[0]):
                continue
            names = bucket.names()
            start = bisect.bisect_right(names, after[1]) if after is not None and ns == after[0] else 0
            objects = bucket.objects
            for index in range(start, len(names)):
                yield objects[names[index]]

    def snapshot(self, resource: Hashable, namespace: str | None, rv: int, *, after: tuple[str, str] | None = None) -> list[Stored]:
        """The objects as they were at resourceVersion ``rv`` (for consistent pagination).

        Reconstructed from the current state by undoing, newest first, the events after ``rv``.
        Raises 410 Expired when ``rv`` has left the history window.
        """
        if rv >= self._rv:
            return list(self.iterate(resource, namespace, after=after))
        if rv < self._window_start:
            raise errors.too_old_resource_version(rv, self._window_start)
        state = {(s.namespace, s.name): s for s in self.iterate(resource, namespace, after=after)}
        for event in reversed(self._history):
            if event.rv <= rv:
                break
            obj = event.obj
            if event.resource != resource or (namespace is not None and obj.namespace != namespace):
                continue
            key = (obj.namespace, obj.name)
            if after is not None and key <= after:
                continue
            if event.type == ADDED:
                state.pop(key, None)
            else:
                state[key] = event.prev
        return [state[key] for key in sorted(state)]

    # ----------------------------------------------------------------- writes
    def create(self, resource: Hashable, obj: dict, *, fields: FieldIndexer | None = None, shared: bool = False) -> Stored:
        """``shared``: the writer hands ``obj`` over: nobody holds it but the store from now on, and
        every value in it is one JSON gives back as it is (str, int, float, bool, None, list, dict;
        no NaN). In-process watchers then read ``obj`` itself rather than a parse of the event
        (:func:`mockapi.watchwire.share`). The same for :meth:`update`."""
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        bucket = self._bucket(resource, namespace)  # one lookup for the check and the put
        if name in bucket.objects:
            raise errors.already_exists(_gr(resource), name)
        stored = self._commit(resource, obj, fields)
        bucket.put(name, stored)
        bucket.stamp = self._rv
        self._settle(Event(ADDED, resource, stored, None, self._rv), bucket, namespace, name, obj if shared else None)
        return stored

    def update(self, resource: Hashable, obj: dict, *, fields: FieldIndexer | None = None, shared: bool = False) -> Stored:
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        prev = self.get(resource, namespace, name)
        if prev is None:
            raise errors.not_found(_gr(resource), name)
        stored = self._commit(resource, obj, fields)
        bucket = self._buckets[resource][namespace]
        bucket.objects[name] = stored  # there already: the sorted names stand
        bucket.stamp = self._rv
        recent.forget(prev)
        self._settle(Event(MODIFIED, resource, stored, prev, self._rv), bucket, namespace, name, obj if shared else None)
        return stored

    def delete(self, resource: Hashable, namespace: str, name: str, *, final: dict | None = None, shared: bool = False) -> Stored:
        """Remove an object. ``final`` is its last state (defaults to the stored one); it is
        recorded at a new resourceVersion, which the DELETED event carries. ``shared``: as for
        :meth:`create`, said of ``final`` (the stored state, loaded here, is always shared)."""
        prev = self.get(resource, namespace, name)
        if prev is None:
            raise errors.not_found(_gr(resource), name)
        obj = final if final is not None else prev.load()
        stored = self._commit(resource, obj, None, labels=prev.labels, field_values=prev.fields)
        bucket = self._buckets[resource][namespace]
        bucket.remove(name)
        bucket.stamp = self._rv
        recent.forget(prev)
        self._settle(Event(DELETED, resource, stored, prev, self._rv), None, namespace, name, obj if shared or final is None else None)
        return stored

    def restore(self, resource: Hashable, raw: bytes, rv: int, namespace: str, name: str, *, labels: dict | None, fields: tuple | None) -> None:
        """Put back an object exactly as it was stored (its bytes, resourceVersion, labels and
        selectable-field values) on a restart: no event, no new resourceVersion (see :meth:`resume`)."""
        namespace = sys.intern(namespace)
        if fields is not None:
            fields = self._fields.get(fields, lambda: fields)
        stored = Stored.compact(raw, rv, name, self._scope(namespace, self._labels(labels)), fields)
        untrack(stored)
        bucket = self._bucket(resource, namespace)
        bucket.put(name, self._packer.pack(resource, stored, rv) if self._packer is not None else stored)
        bucket.stamp = rv  # (unique per object version: restores come before any reader)

    def resume(self, rv: int) -> None:
        """Continue the resourceVersion sequence after ``rv`` (the last one handed out before a
        restart). The history of what came before is gone: a watch or a list from an older
        resourceVersion gets 410 Expired, and the client relists."""
        self._rv = max(self._rv, rv)
        self._window_start = self._rv

    def drop_resource(self, resource: Hashable) -> list[Stored]:
        """Delete every object of a resource (its CRD went away), with DELETED events."""
        victims = list(self.iterate(resource))
        deleted = [self.delete(resource, s.namespace, s.name) for s in victims]
        self._buckets.pop(resource, None)
        self._young = {key: entry for key, entry in self._young.items() if key[0] != resource}
        if self._packer is not None:
            self._packer.forget(resource)
        return deleted

    def _commit(self, resource, obj: dict, fields: FieldIndexer | None, *, labels=None, field_values=None) -> Stored:
        self._rv += 1
        meta = obj["metadata"]
        meta["resourceVersion"] = str(self._rv)
        if fields is not None:
            field_values = fields(obj)
            if field_values is not None:
                field_values = self._fields.share(field_values)
        if labels is None:
            labels = self._labels(meta.get("labels"))
        scope = self._scope(sys.intern(meta.get("namespace", "")), labels)
        stored = Stored.compact(_compact(obj), self._rv, meta["name"], scope, field_values)
        untrack(stored)  # immutable values only: the cyclic collector never needs to walk it
        return stored

    def _settle(self, event: Event, bucket: _Bucket | None, namespace: str, name: str, source: dict | None = None) -> None:
        """Emit ``event`` with its plain record (watchers' lines are built from the plain bytes),
        which the store keeps plain while it is among the last ``plain_writes`` written: an object
        written again soon (a controller's status writes, a patch after a create) is neither
        packed nor unpacked in between. Past the bound by a batch, the oldest are packed (:meth:`_age`).
        ``bucket`` is None for a deletion (its final state is kept by the history only). ``source``:
        the committed object, when the writer handed it over (:meth:`create`'s ``shared``)."""
        self._emit(event)
        if source is not None:
            line = event.built(event.type)  # there if a watcher took the event as it is
            if line is not None:
                watchwire.share(line, event.type, source)
        stored = event.obj
        if self._packer is None or len(stored[0]) < PACK_MIN:
            return
        young = self._young
        key = (event.resource, namespace, name)
        young.pop(key, None)  # an earlier version, replaced while young: the history keeps it plain
        young[key] = (bucket, stored, event)
        if len(young) > self.plain_writes + self._age_batch:
            self._age()

    def _age(self) -> None:
        """Pack the oldest young record: its bucket (if it still holds it) and the history (its event)
        refer to the packed twin from now on, and the event forgets the lines built from the plain
        bytes (a watch resume builds them again)."""
        young = self._young
        while len(young) > self.plain_writes:
            key = next(iter(young))
            bucket, stored, event = young.pop(key)
            kept = self._packer.pack(key[0], stored, event.rv)
            if kept is stored:
                continue
            if bucket is not None and bucket.objects.get(key[2]) is stored:
                bucket.objects[key[2]] = kept
            if event.obj is stored:
                event.obj = kept
                event._lines = None

    def _labels(self, labels: dict | None) -> dict | None:
        """The labels kept beside an object: one dict per distinct label set (None for none)."""
        if not labels:
            return None
        try:
            key = (*labels, *labels.values())
            kept = self._label_sets._values.get(key)  # get()'s hit without a closure made per write
            return kept if kept is not None else self._label_sets.get(key, lambda: _interned(labels))
        except TypeError:  # an unhashable value (a caller that skipped validation): not shared
            return dict(labels)

    def _scope(self, namespace: str, labels: dict | None) -> tuple:
        """The one (namespace, labels) tuple of the objects that have these two; the labels are
        already the shared ones, so their identity says which. (The selectable-field values are
        not in it: a running pod's podIP, an Event's involvedObject.uid make most of them unique.)"""
        # an entry holds its labels, so their id cannot be reused while it is in the table
        key = (namespace, id(labels))
        scope = self._scopes._values.get(key)  # get()'s hit without a closure made per write
        return scope if scope is not None else self._scopes.get(key, lambda: (namespace, labels))

    def _bucket(self, resource: Hashable, namespace: str) -> _Bucket:
        buckets = self._buckets.setdefault(resource, {})
        bucket = buckets.get(namespace)
        if bucket is None:
            bucket = buckets[namespace] = _Bucket()
        return bucket

    def _emit(self, event: Event) -> None:
        history = self._history
        if len(history) == history.maxlen:
            self._window_start = history[0].rv
        history.append(event)
        for watcher in self._watchers.get(event.resource, ()):
            watcher.offer(event)

    # ------------------------------------------------------------------ watch
    def events_since(self, resource: Hashable, rv: int) -> Iterable[Event]:
        """Events of ``resource`` with resourceVersion > rv, oldest first; 410 if rv is too old."""
        if rv < self._window_start:
            raise errors.too_old_resource_version(rv, self._window_start)
        if rv >= self._rv:
            return []
        history = self._history
        # The ring is ordered by rv; find the first event after rv by bisection on a view.
        lo, hi = 0, len(history)
        while lo < hi:
            mid = (lo + hi) // 2
            if history[mid].rv <= rv:
                lo = mid + 1
            else:
                hi = mid
        return [history[i] for i in range(lo, len(history)) if history[i].resource == resource]

    def watch(
        self,
        resource: Hashable,
        *,
        namespace: str | None = None,
        predicate: Predicate | None = None,
        since: int | None = None,
        initial: bool = False,
        encode=None,
    ) -> Watcher:
        """Register a watcher.

        ``initial``: queue synthetic ADDED events for the current matching objects first (watch from
        resourceVersion "" / "0", or sendInitialEvents). ``since``: replay the history after that
        resourceVersion (410 Expired if it is too old). Then every new event, filtered.
        """
        replay = self.events_since(resource, since) if since is not None else ()
        watcher = Watcher(resource, namespace=namespace, predicate=predicate, limit=self.watcher_buffer, encode=encode)
        # What the watcher asked for up front is never counted against its backlog bound.
        if initial:
            for stored in self.iterate(resource, namespace):
                if watcher.matches(stored):
                    watcher.push(ADDED, None, stored, bounded=False)
        for event in replay:
            watcher.offer(event, bounded=False)
        self._watchers.setdefault(resource, set()).add(watcher)
        return watcher

    def stop(self, watcher: Watcher) -> None:
        watcher.closed = True
        watchers = self._watchers.get(watcher.resource)
        if watchers is not None:
            watchers.discard(watcher)
            if not watchers:
                del self._watchers[watcher.resource]

    def watcher_count(self) -> int:
        return sum(len(w) for w in self._watchers.values())

    def close_watchers(self, resource: Hashable) -> None:
        """Wake and close every watcher of a resource (its kind stopped being served)."""
        for watcher in list(self._watchers.get(resource, ())):
            watcher.closed = True
            watcher.wakeup.set()
        self._watchers.pop(resource, None)

    def close_all_watchers(self) -> int:
        """Close every watch now (a fault for users' tests); their streams end cleanly. Returns how many."""
        count = self.watcher_count()
        for resource in list(self._watchers):
            self.close_watchers(resource)
        return count

    def compact(self) -> int:
        """Forget the history, as etcd's compaction does (a fault for users' tests): a watch resume or
        a list at an older resourceVersion gets 410 Expired from now on. Returns the oldest
        resourceVersion still served (the current one)."""
        self._history.clear()
        self._window_start = self._rv
        return self._rv


def _gr(resource) -> errors.GroupResource:
    return resource if isinstance(resource, errors.GroupResource) else errors.GroupResource("", str(resource))
