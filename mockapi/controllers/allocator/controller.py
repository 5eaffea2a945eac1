"""The allocator controller: informers → a queue of claim keys → one worker that reconciles.

Watch handlers only update the cache and move keys: a claim that needs work (new, spec changed,
deallocated, or being deleted with our finalizer) is added to the active queue; pool, class and
node changes, freed capacity and created config objects wake the parked claims waiting for them.
The worker re-reads each claim before acting (level-triggered), runs one cycle
(:func:`~.cycle.run_cycle`) and writes the outcome through ``/status`` with a resourceVersion
precondition — a 409 means requeue. Allocated claims get the finalizer ``devmgmtproto.k8s.io/
allocation``; deleting one removes the finalizer once no pod uses it, and its devices are free
when it is gone.

While a cycle runs, the informers' events wait in :attr:`Allocator.held` and are applied when it
ends: a cycle may plan in a worker thread (:mod:`.cycle`), which must see the cache stand still.
``explain`` holds the cache the same way (:meth:`Allocator.holding`), one holder at a time, and
plans in the same thread, so neither ever runs on the event loop for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from mockapi import clock as clocks, errors
from mockapi.client import ADDED, DELETED, ECHO, MODIFIED, SYNCED, Client, Kind
from mockapi.controllers import gate as gates
from mockapi.controllers.allocator import kinds, score
from mockapi.controllers.allocator.availability import PoolStatusWriter
from mockapi.controllers.allocator import status as status_
from mockapi.controllers.allocator.budget import Limits
from mockapi.controllers.allocator.cache import Cache, ClaimRecord
from mockapi.controllers.allocator.cycle import Plan, Planner, run_cycle
from mockapi.controllers.allocator.kinds import ClaimKey
from mockapi.controllers.allocator.queue import WorkQueue
from mockapi.controllers import informer

log = logging.getLogger("mockapi.allocator")


def priority(claim: dict) -> tuple:
    """Queue order: creation time, then namespace, name and kind."""
    meta = claim["metadata"]
    return (meta.get("creationTimestamp", ""), meta.get("namespace", ""), meta["name"], claim.get("kind", ""))


def _priority_of(key: ClaimKey, record: ClaimRecord | None) -> tuple:
    return (record.created if record else "", key.namespace, key.name, key.kind)


def _allocations(claim: dict | None) -> bool:
    return bool(((claim or {}).get("status") or {}).get("allocations"))


def pod_owned(claim: dict) -> bool:
    """A claim made for a pod (controller ownerReference of kind Pod): the scheduler allocates it,
    with the pod's node (SCHEDULER.md "Who allocates which claim")."""
    return any(
        ref.get("controller") and ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1"
        for ref in claim["metadata"].get("ownerReferences") or ()
    )


def needs_action(old: ClaimRecord | None, new: dict) -> bool:
    """Whether a claim event calls for the worker (our own status writes do not)."""
    meta = new["metadata"]
    if meta.get("deletionTimestamp"):
        return kinds.FINALIZER in (meta.get("finalizers") or [])
    if _allocations(new) or pod_owned(new):
        return False
    if old is None or old.allocated:
        return True  # new, or deallocated: allocate (again)
    return old.generation != meta.get("generation", 0)


class Allocator:
    def __init__(self, client: Client, *, policy: str = score.DEFAULT_POLICY, limits: Limits = Limits(), gate: gates.AllocationGate | None = None, clock: clocks.Clock | None = None) -> None:
        self.client = client
        self.clock = clock or clocks.SystemClock()  # condition and Event timestamps, backoff timing
        self.gate = gate  # when set, each attempt at a pending claim asks it first (mockapi.controllers.gate)
        self.cache = Cache()
        self.planner = Planner(self.cache, policy=policy, limits=limits, monotonic=self.clock.monotonic)
        self.queue = WorkQueue(clock=self.clock.monotonic)
        self.synced = asyncio.Event()
        self._pending_sync = {kinds.POOLS, kinds.CLASSES, kinds.NODES, kinds.CLAIMS, kinds.PRIVILEGED_CLAIMS}
        self._watches: dict[Kind, asyncio.Task] = {}
        self._tasks: list[asyncio.Task] = []
        self.held: list | None = None  # informer events held back while a cycle (or explain) runs
        self._holder = asyncio.Lock()  # one holder of the cache at a time: a cycle, or explain
        # told (resource, action, object) of every device event the cache took: the scheduler's
        # DeviceClaims plugin keeps its claims from them and requeues the pods they may help
        self.listeners: list = []

    # ------------------------------------------------------------------ running
    async def run(self) -> None:
        """Inform, wait for every informer's initial list, then reconcile until cancelled."""
        handlers = {
            kinds.POOLS: self._on_pool, kinds.CLASSES: self._on_class, kinds.NODES: self._on_node,
            kinds.CLAIMS: self._on_claim, kinds.PRIVILEGED_CLAIMS: self._on_claim,
        }
        self._tasks = [asyncio.create_task(self._inform(kind, handle)) for kind, handle in handlers.items()]
        if self.gate is not None:
            self.gate.bind(self._released)
        try:
            await self.synced.wait()
            self._tasks.append(asyncio.create_task(PoolStatusWriter(self.cache, self.client, busy=self.queue.busy, monotonic=self.clock.monotonic).run()))  # status.availableDevices
            log.info("allocator synced: %d pools, %d classes, %d claims", len(self.cache.pools), len(self.cache.classes), len(self.cache.claims))
            await self._work()
        finally:
            for task in self._tasks + list(self._watches.values()):
                task.cancel()
            await asyncio.gather(*self._tasks, *self._watches.values(), return_exceptions=True)

    async def _inform(self, kind: Kind, handle) -> None:
        def take(event_type: str, obj: dict) -> None:
            if self.held is not None:  # a cycle holds the cache still: applied when it is done
                self.held.append((handle, event_type, obj))
            else:
                handle(event_type, obj)

        await informer.inform(self.client, kind, take, self._mark_synced, log, echoes=kind == kinds.POOLS)  # PoolStatusWriter's echoes

    def _mark_synced(self, kind: Kind) -> None:
        self._pending_sync.discard(kind)
        if not self._pending_sync:
            self.synced.set()

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                await self.reconcile(key)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one claim's trouble never stops the worker
                log.exception("reconciling %s failed; backing off", key)
                self.queue.backoff(key, _priority_of(key, self.cache.claims.get(key)))
            finally:
                self.queue.done(key)
            await asyncio.sleep(0)  # let the server (and the informers) run between claims

    # ---------------------------------------------------------------- handlers
    def _on_pool(self, event_type: str, obj: dict) -> None:
        if event_type == ECHO:  # the status writer's own write (PoolStatusWriter): obj is (pool, count)
            self.cache.apply_own_status(*obj)
            return
        if self.cache.apply_pool(event_type, obj):
            self.queue.wake(kinds.POOLS_CHANGED)
            self._tell("DevicePool", event_type, obj)

    def _on_node(self, event_type: str, obj: dict) -> None:
        if self.cache.apply_node(event_type, obj):
            self.queue.wake(kinds.POOLS_CHANGED)

    def _on_class(self, event_type: str, obj: dict) -> None:
        if self.cache.apply_class(event_type, obj):
            self.queue.wake(kinds.CLASSES_CHANGED)
            self._tell("DeviceClass", event_type, obj)

    def _tell(self, resource: str, event_type: str, obj: dict, action: str = "") -> None:
        action = action or {ADDED: "Add", MODIFIED: "Update", DELETED: "Delete"}.get(event_type, "Update")
        for listener in self.listeners:
            listener(resource, action, obj)

    def _on_claim(self, event_type: str, obj: dict) -> None:
        key = ClaimKey.of(obj)
        change = self.cache.apply_claim(event_type, obj)
        if change.stale:
            return
        if event_type == DELETED:
            self.queue.forget(key)
            if self.gate is not None:
                self.gate.forget(key)
        elif needs_action(change.old, obj):
            self.queue.add(key, priority(obj))
        if change.freed:
            self.queue.wake(kinds.CAPACITY_FREED)
        if self.listeners and obj.get("kind", kinds.CLAIMS.kind) == kinds.CLAIMS.kind:
            self._tell("DeviceClaim", event_type, obj)
            if change.freed and event_type != DELETED:
                self._tell("DeviceClaim", event_type, obj, action="Deallocate")

    # --------------------------------------------------------------- reconcile
    async def reconcile(self, key: ClaimKey) -> None:
        claim = await self._read(key)
        if claim is None:
            return
        if claim["metadata"].get("deletionTimestamp"):
            await self._finalize(key, claim)
        elif _allocations(claim):
            self.queue.forget(key)  # the allocation stands, whatever the spec says now (rule 15)
        elif self._admitted(key):
            started = self.clock.monotonic()
            plan = await self._cycle(claim)
            if self.gate is not None:
                reason = plan.failure.reason if plan.failure else kinds.ALLOCATED
                self.gate.finished(key, reason=reason, seconds=self.clock.monotonic() - started)
            if plan.failure is None:
                await self._allocate(key, claim, plan)
            else:
                await self._fail(key, claim, plan.failure)

    async def _cycle(self, claim: dict) -> Plan:
        async with self.holding():
            return await run_cycle(self.planner, self.client, claim)

    @contextlib.asynccontextmanager
    async def holding(self):
        """The cache held still for one holder (a cycle, or explain, which edits the ledger):
        informer events wait in :attr:`held` and are applied when it is done."""
        async with self._holder:
            self.held = []
            try:
                yield
            finally:
                held, self.held = self.held, None
                for handle, event_type, obj in held:
                    handle(event_type, obj)

    def _admitted(self, key: ClaimKey) -> bool:
        """Whether the gate lets this attempt go ahead (if not, it requeues the claim later)."""
        return self.gate is None or self.gate.admit(key)

    def _released(self, key: ClaimKey) -> None:
        record = self.cache.claims.get(key)
        if record is not None:
            self.queue.add(key, _priority_of(key, record))

    async def _read(self, key: ClaimKey) -> dict | None:
        try:
            claim = await self.client.get(key.api_kind, key.namespace, key.name)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
            self.queue.forget(key)
            return None
        if self.cache.apply_claim(MODIFIED, claim).freed:  # seen here before the informer saw it
            self.queue.wake(kinds.CAPACITY_FREED)
        return claim

    async def _allocate(self, key: ClaimKey, claim: dict, plan: Plan) -> None:
        generation = claim["metadata"].get("generation", 0)
        written = await self._write(key, claim, lambda fresh: status_.allocated(fresh, plan.solution, plan.configs, generation=generation, now=self._now()), finalizer=True)
        if written is not None:
            self.queue.forget(key)
            await self._record(written, kinds.ALLOCATED, status_.allocated_message(plan.solution), warning=False)

    async def _fail(self, key: ClaimKey, claim: dict, failure: kinds.Failure) -> None:
        generation = claim["metadata"].get("generation", 0)
        before = status_.condition_of(claim)
        new = status_.failed(claim, failure, generation=generation, now=self._now())
        written = claim if new == (claim.get("status") or {}) else await self._write(key, claim, lambda fresh: new)
        if written is None:
            return
        if before is None or (before.get("status"), before.get("reason")) != ("False", failure.reason):
            await self._record(written, failure.reason, failure.message, warning=True)
        if failure.transient:
            self.queue.backoff(key, priority(claim))
        else:
            self.queue.park(key, priority(claim), failure.waits)
            self._watch_configs(failure.waits)

    async def _write(self, key: ClaimKey, claim: dict, status_of, *, finalizer: bool = False) -> dict | None:
        """Write the status (after adding our finalizer, if asked) with resourceVersion
        preconditions. None when the claim changed (requeued) or vanished (forgotten)."""
        try:
            if finalizer and kinds.FINALIZER not in (claim["metadata"].get("finalizers") or []):
                claim = await self._set_finalizers(key, claim, (claim["metadata"].get("finalizers") or []) + [kinds.FINALIZER])
            written = await self.client.update_status(key.api_kind, {**claim, "status": status_of(claim)})
        except errors.StatusError as exc:
            if exc.code == 409:
                self.queue.add(key, priority(claim))
                return None
            if exc.code == 404:
                self.queue.forget(key)
                return None
            raise
        self.cache.apply_claim(MODIFIED, written)  # assume: the ledger holds the devices from now on
        return written

    async def _set_finalizers(self, key: ClaimKey, claim: dict, finalizers: list[str]) -> dict:
        patch = {"metadata": {"finalizers": finalizers, "resourceVersion": claim["metadata"]["resourceVersion"]}}
        return await self.client.patch(key.api_kind, key.namespace, key.name, patch)

    async def _finalize(self, key: ClaimKey, claim: dict) -> None:
        """A deleted claim: once no pod uses it (``status.podNames``, which it waits for), remove our
        finalizer so the deletion completes; its devices are free when it is gone (the cache holds
        them until then, so no watcher ever sees a device in two claims)."""
        finalizers = claim["metadata"].get("finalizers") or []
        self.queue.forget(key)
        if kinds.FINALIZER not in finalizers:
            return
        if (claim.get("status") or {}).get("podNames"):
            return  # still used by pods (SCHEDULER.md): the claim's next change, without them, brings it back
        try:
            await self._set_finalizers(key, claim, [f for f in finalizers if f != kinds.FINALIZER])
        except errors.StatusError as exc:
            if exc.code == 409:
                self.queue.add(key, priority(claim))
            elif exc.code != 404:
                raise

    async def _record(self, claim: dict, reason: str, message: str, *, warning: bool) -> None:
        name = f"{claim['metadata']['name']}.{time.time_ns():x}"  # a unique name, not a timestamp
        event = status_.event(claim, reason=reason, message=message, warning=warning, now=self._now(), name=name)
        try:
            await self.client.create_event(event)
        except errors.StatusError as exc:  # Events are best effort, as in client-go's recorder
            log.debug("could not record event on %s: %s", name, exc)

    def _now(self) -> str:
        return clocks.rfc3339(self.clock.now())

    # ----------------------------------------------------- config object watches
    def _watch_configs(self, waits: frozenset) -> None:
        for wait in waits:
            if isinstance(wait, tuple) and wait[0] == "config":
                self._ensure_watch(Kind(wait[1], wait[2]))
            elif wait == kinds.CRD_ADDED:
                self._ensure_watch(kinds.CRDS)

    def _ensure_watch(self, kind: Kind) -> None:
        task = self._watches.get(kind)
        if task is None or task.done():
            self._watches[kind] = asyncio.create_task(self._watch_created(kind))

    async def _watch_created(self, kind: Kind) -> None:
        """Wake the claims waiting for an object of ``kind`` (or, for CRDs, any new kind)."""
        try:
            async for event in self.client.watch(kind):
                if event.type == SYNCED or event.type not in (ADDED, MODIFIED):
                    continue
                if kind == kinds.CRDS:
                    self.queue.wake(kinds.CRD_ADDED)
                else:
                    meta = event.object["metadata"]
                    self.queue.wake(("config", kind.api_version, kind.kind, meta.get("namespace", ""), meta["name"]))
        except errors.StatusError as exc:
            log.debug("cannot watch %s (%s); waiting for CRDs instead", kind, exc)
            if kind != kinds.CRDS:
                self._ensure_watch(kinds.CRDS)
