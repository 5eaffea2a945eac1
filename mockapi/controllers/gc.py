"""Garbage collection by ``ownerReferences``, as kube-controller-manager's garbage collector does it.

Informers over every kind that can own or be owned — the core kinds served beside ours (Namespace,
Node, Pod, ConfigMap, Secret, and the kubelets' node Leases, owned by their Nodes) and each kind a CustomResourceDefinition serves (informers start and
stop as CRDs come and go) — keep a :class:`Graph`: each object by uid with its ownerReferences, and
for each owner uid the uids of its dependents. Events are not watched: nothing owns through them,
and there are many.

The graph only says what to look at; the worker re-reads before acting (level-triggered). Keys:

- ``("delete", uid)`` — kube's ``attemptToDeleteItem``. An object being deleted is left alone,
  unless it carries the ``foregroundDeletion`` finalizer: then it waits for its dependents with
  ``blockOwnerDeletion: true`` and loses the finalizer once they are gone. Otherwise each owner is
  looked up live by name *and uid* (the dependent's namespace): an owner that exists is *solid*,
  one being deleted in the foreground is *waiting*, anything else is *gone*. With a solid owner,
  references to gone and waiting owners are removed (a merge patch of ``ownerReferences`` with the
  resourceVersion read, retried on 409); with none, the object is deleted — ``Foreground`` when a
  waiting owner asked for it and the object has dependents of its own, else by its own finalizers
  (``orphan`` → ``Orphan``, ``foregroundDeletion`` → ``Foreground``), else ``Background``.
- ``("orphan", uid)`` — an owner being deleted with the ``orphan`` finalizer: its reference is
  removed from each dependent, then the finalizer from the owner.

The server turns ``DELETE ?propagationPolicy=Foreground|Orphan`` into a deletionTimestamp and that
finalizer; this controller does the rest, against mockapi or any API server (the ``Client``).
"""

from __future__ import annotations

import asyncio
import logging

from mockapi import clock as clocks, errors
from mockapi.client import DELETED, Client, Kind, patch_unanswered
from mockapi.controllers.keyqueue import KeyQueue
from mockapi.controllers.ownergraph import FOREGROUND, ORPHAN, Graph, Vertex, WorkKey
from mockapi.controllers import informer

log = logging.getLogger("mockapi.gc")

BACKGROUND_POLICY, FOREGROUND_POLICY, ORPHAN_POLICY = "Background", "Foreground", "Orphan"
CRDS = Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
CORE_KINDS = (
    Kind("v1", "Namespace"), Kind("v1", "Node"), Kind("v1", "Pod"), Kind("v1", "ConfigMap"), Kind("v1", "Secret"),
    Kind("coordination.k8s.io/v1", "Lease"),
)  # fmt: skip
CONFLICT_RETRIES = 5


def served_kind(crd: dict) -> Kind | None:
    """The kind a CRD serves, at its storage version (or its first served one)."""
    spec = crd.get("spec") or {}
    versions = [v for v in spec.get("versions") or () if v.get("served")]
    if not versions or not (spec.get("names") or {}).get("kind"):
        return None
    version = next((v for v in versions if v.get("storage")), versions[0])
    return Kind(f"{spec['group']}/{version['name']}", spec["names"]["kind"])


class GarbageCollector:
    def __init__(self, client: Client, *, clock: clocks.Clock | None = None, kinds: tuple[Kind, ...] = CORE_KINDS) -> None:
        self.client = client
        self.clock = clock or clocks.SystemClock()
        self.graph = Graph()
        self.queue = KeyQueue(monotonic=self.clock.monotonic)
        self.synced = asyncio.Event()  # every informer has delivered its initial list
        self._core_kinds = kinds
        self._pending_sync: set[Kind] = set()
        self._informers: dict[Kind, asyncio.Task] = {}
        self._crd_kinds: dict[str, Kind] = {}  # CRD name → the kind it serves

    # ------------------------------------------------------------------ running
    async def run(self) -> None:
        """Inform, wait for every informer's initial list, then collect until cancelled."""
        for kind in self._core_kinds:
            self._start(kind)
        self._start(CRDS)
        try:
            await self.synced.wait()
            for key in self.graph.initial_work():
                self._enqueue(key)
            log.info("garbage collector synced: %d objects, %d owners", len(self.graph.vertices), len(self.graph.dependents))
            await self._work()
        finally:
            tasks = list(self._informers.values())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def idle(self) -> bool:
        """Synced, and nothing queued, waiting or being worked on (tests wait for this)."""
        return self.synced.is_set() and self.queue.idle()

    def _start(self, kind: Kind) -> None:
        if kind not in self._informers:
            self._pending_sync.add(kind)
            self._informers[kind] = asyncio.create_task(self._inform(kind))

    def _stop(self, kind: Kind) -> None:
        task = self._informers.pop(kind, None)
        if task is not None:
            task.cancel()
        self._mark_synced(kind)

    async def _inform(self, kind: Kind) -> None:
        await informer.inform(self.client, kind, lambda event_type, obj: self._observe(kind, event_type, obj), self._mark_synced, log)

    def _mark_synced(self, kind: Kind) -> None:
        self._pending_sync.discard(kind)
        if not self._pending_sync:
            self.synced.set()

    def _observe(self, kind: Kind, event_type: str, obj: dict) -> None:
        if kind == CRDS:
            self._on_crd(event_type, obj)
            return
        work = self.graph.remove(kind, obj) if event_type == DELETED else self.graph.upsert(kind, obj)
        for key in work:
            self._enqueue(key)

    def _on_crd(self, event_type: str, crd: dict) -> None:
        name = crd["metadata"]["name"]
        kind = None if event_type == DELETED else served_kind(crd)
        old = self._crd_kinds.get(name)
        if old == kind:
            return
        if old is not None:
            del self._crd_kinds[name]
            if old not in self._core_kinds:
                self._stop(old)
                for key in self.graph.drop_kind(old):
                    self._enqueue(key)
        if kind is not None:
            self._crd_kinds[name] = kind
            self._start(kind)

    def _enqueue(self, key: WorkKey) -> None:
        if self.synced.is_set():  # before, initial_work covers everything
            self.queue.add(key)

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                if key[0] == "orphan":
                    await self._orphan(key[1])
                else:
                    await self._attempt_delete(key[1])
                self.queue.forget(key)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - one object's trouble never stops the worker
                # an owner of a kind not served (yet): kube's GC retries a REST mapping error quietly (V(5))
                unserved = isinstance(exc, errors.StatusError) and exc.code == 404 and not (exc.details or {}).get("name")
                (log.debug if unserved else log.warning)("garbage collecting %s failed (%s); backing off", key, exc)
                self.queue.retry(key)
            finally:
                self.queue.done(key)
            await asyncio.sleep(0)

    # ---------------------------------------------------------------- deciding
    async def _attempt_delete(self, uid: str) -> None:
        vertex = self.graph.vertices.get(uid)
        latest = await self._latest(vertex, uid) if vertex is not None else None
        if latest is None:
            return
        meta = latest["metadata"]
        finalizers = meta.get("finalizers") or []
        if meta.get("deletionTimestamp"):
            if FOREGROUND in finalizers:
                await self._deleting_dependents(vertex, uid)
            return
        refs = [ref for ref in meta.get("ownerReferences") or () if ref.get("uid")]
        if not refs:
            return
        solid, gone, waiting = await self._classify(refs, vertex.namespace)
        if solid:
            if gone or waiting:
                drop = {ref["uid"] for ref in gone + waiting}
                await self._rewrite(vertex, uid, lambda m: _without_owners(m, drop))
        elif waiting and self.graph.dependents.get(uid):
            await self._delete(vertex, FOREGROUND_POLICY)
        else:
            policy = ORPHAN_POLICY if ORPHAN in finalizers else FOREGROUND_POLICY if FOREGROUND in finalizers else BACKGROUND_POLICY
            await self._delete(vertex, policy)

    async def _classify(self, refs: list[dict], namespace: str) -> tuple[list, list, list]:
        solid, gone, waiting = [], [], []
        for ref in refs:
            owner = await self._owner(ref, namespace)
            if owner is None:
                gone.append(ref)
            elif owner["metadata"].get("deletionTimestamp") and FOREGROUND in (owner["metadata"].get("finalizers") or ()):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, gone, waiting

    async def _owner(self, ref: dict, namespace: str) -> dict | None:
        """The owner a reference names, if it exists with that uid (looked up in the dependent's
        namespace; a cluster-scoped owner ignores it). An owner kind that is not served raises."""
        try:
            owner = await self.client.get(Kind(ref.get("apiVersion", ""), ref.get("kind", "")), namespace, ref.get("name", ""))
        except errors.StatusError as exc:
            if exc.code == 404 and (exc.details or {}).get("name"):
                return None
            raise
        return owner if owner["metadata"].get("uid") == ref["uid"] else None

    async def _deleting_dependents(self, vertex: Vertex, uid: str) -> None:
        """An owner deleted in the foreground: done when no blocking dependent is left."""
        blocking = self.graph.blocking(uid)
        if not blocking:
            await self._rewrite(vertex, uid, lambda m: _without_finalizer(m, FOREGROUND))
            return
        for dependent in blocking:
            if not self.graph.vertices[dependent].deleting:
                self._enqueue(("delete", dependent))

    async def _orphan(self, uid: str) -> None:
        vertex = self.graph.vertices.get(uid)
        latest = await self._latest(vertex, uid) if vertex is not None else None
        if latest is None or not latest["metadata"].get("deletionTimestamp") or ORPHAN not in (latest["metadata"].get("finalizers") or ()):
            return
        for dependent in sorted(self.graph.dependents.get(uid, ())):
            found = self.graph.vertices.get(dependent)
            if found is not None:
                await self._rewrite(found, dependent, lambda m: _without_owners(m, {uid}))
        await self._rewrite(vertex, uid, lambda m: _without_finalizer(m, ORPHAN))

    # ----------------------------------------------------------------- writing
    async def _latest(self, vertex: Vertex, uid: str) -> dict | None:
        try:
            obj = await self.client.get(vertex.kind, vertex.namespace, vertex.name)
        except errors.StatusError as exc:
            if exc.code == 404:
                return None
            raise
        return obj if obj["metadata"].get("uid") == uid else None

    async def _rewrite(self, vertex: Vertex, uid: str, edit) -> None:
        """Read, edit the metadata (``edit`` returns the changed fields, or None for no change) and
        write it as a merge patch carrying the resourceVersion read; again on 409."""
        for _ in range(CONFLICT_RETRIES):
            obj = await self._latest(vertex, uid)
            changed = edit(obj["metadata"]) if obj is not None else None
            if changed is None:
                return
            patch = {"metadata": {**changed, "resourceVersion": obj["metadata"]["resourceVersion"]}}
            try:
                await patch_unanswered(self.client, vertex.kind, vertex.namespace, vertex.name, patch)
                return
            except errors.StatusError as exc:
                if exc.code == 404:
                    return
                if exc.code != 409:
                    raise
        raise RuntimeError(f"{vertex.kind} {vertex.namespace}/{vertex.name} kept changing")

    async def _delete(self, vertex: Vertex, policy: str) -> None:
        log.debug("deleting %s %s/%s (%s)", vertex.kind, vertex.namespace, vertex.name, policy)
        try:
            await self.client.delete(vertex.kind, vertex.namespace, vertex.name, propagation_policy=policy)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise


def _without_owners(meta: dict, owners: set[str]) -> dict | None:
    refs = meta.get("ownerReferences") or []
    kept = [ref for ref in refs if ref.get("uid") not in owners]
    return None if len(kept) == len(refs) else {"ownerReferences": kept or None}


def _without_finalizer(meta: dict, finalizer: str) -> dict | None:
    finalizers = meta.get("finalizers") or []
    if finalizer not in finalizers:
        return None
    return {"finalizers": [f for f in finalizers if f != finalizer] or None}
