"""Opt-in persistence, wired at the composition root (``--data-dir DIR``, ``MOCKAPI_DATA_DIR``).

Three pieces around the journal (:mod:`mockapi.store.journal`):

- :func:`open_store` — the data directory's journal and a store that records every write in it.
- :func:`restore` — at start-up, the stored objects go back into the store as they were (their
  bytes, their resourceVersions; nothing is validated again: it was valid when written): the CRDs
  first, served at once, then everything else. The resourceVersion sequence continues from the
  last one handed out, and the watch history starts there: a watch or list from an older
  resourceVersion gets 410 Expired, and clients relist, as after an etcd compaction.
- :func:`acknowledging` — the ASGI app, with every response to a write (any method but GET, HEAD
  and OPTIONS) held until the journal has every write made so far on disk. Without a data
  directory none of this is built: the in-memory server does no extra work.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import orjson

from mockapi import __version__, errors
from mockapi.gvk import ResourceType
from mockapi.http import responses
from mockapi.registry import crds
from mockapi.registry.rest import Registry
from mockapi.store import Store
from mockapi.store.journal import Journal, JournaledStore, JournalError  # noqa: F401 (re-exported)

log = logging.getLogger("mockapi")

_READS = frozenset({"GET", "HEAD", "OPTIONS"})
# After a crash the sequence continues this much further on. Reads and watch events show a write
# before it is on disk (as the store commits it); one the crash lost had a resourceVersion that a
# client may hold. Skipping ahead makes that version older than the restart: the client's watch or
# list from it gets 410 and it relists, instead of taking a later write with the same number for
# the one it saw. (Far more than the writes one fsync can lag behind; a clean stop needs no gap.)
CRASH_GAP = 1_000_000


def open_store(data_dir: Path, **options) -> tuple[Store, Journal]:
    """A store journaled to ``data_dir`` (JournalError if the directory cannot be used: in use by
    another process, not ours, damaged)."""
    journal = Journal(data_dir)
    return JournaledStore(journal, **options), journal


def restore(registry: Registry, journal: Journal) -> int:
    """Put the stored objects back; returns how many. CRDs first (their kinds served), then the rest."""
    rv = journal.resource_version if journal.clean else journal.resource_version + CRASH_GAP
    journal.resume(rv)
    registry.store.resume(rv)
    count = _restore_crds(registry, journal)
    storage = _storage_types(registry)
    recorded = journal.indexes()
    keys: dict[tuple[str, str], tuple[errors.GroupResource, ResourceType | None, bool]] = {}
    stale: dict[tuple[str, str], list] = {}
    for row in journal.rows(besides=(crds.CRDS.group, crds.CRDS.resource)):
        key = (row.group, row.resource)
        found = keys.get(key)
        if found is None:
            resource = errors.GroupResource(*key)
            rt = storage.get(resource)  # None: no longer served (its CRD is gone); kept unseen, as etcd would
            found = keys[key] = (resource, rt, rt is None or recorded.get(key) == _paths(rt))
        resource, rt, fresh = found
        if fresh:
            fields = tuple(map(sys.intern, orjson.loads(row.fields))) if row.fields else None
        else:  # the kind's selectable fields changed since these values were taken: take them again
            index = registry.indexer(rt)
            fields = index(orjson.loads(row.raw)) if index is not None else None
            stale.setdefault(key, []).append((row, orjson.dumps(fields) if fields else None))
        registry.store.restore(resource, row.raw, row.rv, row.namespace, row.name, labels=orjson.loads(row.labels) if row.labels else None, fields=fields)
        count += 1
    for resource, rt in storage.items():
        key = (resource.group, resource.resource)
        if key in stale or recorded.get(key) != _paths(rt):
            journal.reindex(*key, _paths(rt), stale.get(key, []))
    return count


def _restore_crds(registry: Registry, journal: Journal) -> int:
    crd_type = registry.types.by_kind(crds.GROUP, "v1", crds.KIND)
    strategy, index = registry.strategy(crd_type), registry.indexer(crd_type)
    count = 0
    for row in journal.rows(only=(crds.CRDS.group, crds.CRDS.resource)):
        obj = orjson.loads(row.raw)
        meta = obj["metadata"]
        registry.store.restore(crds.CRDS, row.raw, row.rv, "", meta["name"], labels=meta.get("labels"), fields=index(obj) if index else None)
        strategy.serve(registry.cluster, obj)
        count += 1
    return count


def _paths(rt: ResourceType) -> str:
    """What a kind's stored selectable-field values depend on: its paths (and this mockapi's version)."""
    return orjson.dumps([__version__, *rt.selectable_fields]).decode()


def _storage_types(registry: Registry) -> dict[errors.GroupResource, ResourceType]:
    """One served type per resource: the storage version's when there are several."""
    found: dict[errors.GroupResource, ResourceType] = {}
    for rt in registry.types.all():
        if rt.group_resource not in found or rt.version == rt.storage_version:
            found[rt.group_resource] = rt
    return found


def acknowledging(app, store: Store, journal: Journal):
    """``app``, with the response to every write sent only once the journal has it on disk."""

    async def durable_app(scope, receive, send):
        if scope["type"] != "http" or scope["method"] in _READS:
            await app(scope, receive, send)
            return
        failed = []

        async def send_when_durable(message):
            if failed:
                return
            if message["type"] == "http.response.start":
                try:
                    await journal.durable(store.resource_version)
                except errors.StatusError as exc:
                    failed.append(exc)
                    await responses.send_error(send, exc)
                    return
            await send(message)

        await app(scope, receive, send_when_durable)

    return durable_app
