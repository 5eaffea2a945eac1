"""The scheduler's DeviceClaims plugin, backed by the allocator (SCHEDULER.md "Who allocates which claim").

A claim owned by a pod (controller ownerReference of kind Pod) is allocated in that pod's
scheduling cycle, jointly with the node choice: PreFilter reads the pod's claims and runs the
allocator's first steps once per claim (ValidateSpec, ResolveClasses, FilterDevices); Filter runs
the allocator's search on each node for all the pod's pending claims together (each claim's
devices held tentatively while the next is searched, network pools combining with any node);
Reserve holds the chosen devices in the allocator's one ledger; PreBind writes each claim's status
as the allocator writes it (allocations, configs, ``nodeName``, the Allocated condition, its
finalizer) with ``status.podNames`` listing the pod. A claim named by ``claimName`` must be
allocated already (by the allocator): it pins the pod to its ``status.nodeName`` and gets the pod
added to ``podNames`` in PreBind.

One process, one ledger: the plugin and the allocator share :class:`~.cache.Cache`. The scheduler
holds the allocator's cache (:meth:`Allocator.holding`) through the scheduling cycle of a pod with
claims, and PreBind holds it while it updates the cache, so the allocator never plans in its worker
thread on a cache the scheduler is changing. Devices a pod reserved are held under a key of their
own until PreBind's status write lands in the cache, so no informer event in between can free
them, and the allocator never hands them to another claim.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging

import orjson
from dataclasses import dataclass, field

from mockapi import clock as clocks, errors
from mockapi.client import Client
from mockapi.controllers.allocator import classes, configs, kinds, request, status as status_
from mockapi.controllers.allocator.budget import Budget, Exhausted, Preempted
from mockapi.controllers.allocator.cycle import _nodes, _too_few
from mockapi.controllers.allocator.search import NodeSearch, Solution
from mockapi.controllers.keys import ClaimKey
from mockapi.controllers.podclaims import claim_names, claim_sources, controller_pod_uid
from mockapi.controllers.scheduler import events
from mockapi.controllers.scheduler.plugins.device_claims import DeviceClaimsPlugin
from mockapi.controllers.scheduler.status import SUCCESS, error, unresolvable, unschedulable  # noqa: F401
from mockapi.wire import exact

log = logging.getLogger("mockapi.scheduler.devices")
CANNOT_ALLOCATE = "cannot allocate all claims"  # kube's DRA Filter reason
CANNOT_ALLOCATE_STATUS = unschedulable(CANNOT_ALLOCATE)
WRITE_ATTEMPTS = 5
MEMO_LIMIT = 100_000


@dataclass
class Pending:
    key: ClaimKey
    claim: dict
    rows: list
    match: tuple
    spec: bytes  # the claim's spec, canonical: claims made from one template share their searches
    local: bool  # whether any of its devices could be node-local (else: network pools only, any node)
    memo: dict | None = None  # node → (its pools' serials, the search's solution), for this spec (set by the first search)


@dataclass
class PodClaims:
    """What PreFilter found for one pod, kept in the cycle state."""

    pending: list[Pending] = field(default_factory=list)  # pod-owned, to allocate with the node
    allocated: list[dict] = field(default_factory=list)  # allocated already: reserve for the pod
    solutions: dict[str, dict[ClaimKey, Solution]] = field(default_factory=dict)  # node → claim → devices
    single: dict[str, Solution] = field(default_factory=dict)  # node → devices of the one claim (the remembered path)
    network: tuple = ()  # the network pools' serials when PreFilter ran (they hold still through Filter)
    node_pools: dict | None = None  # the inventory's node → pools, for the one-claim path (Filter)

    def found_on(self, node: str) -> dict[ClaimKey, Solution]:
        """The devices Filter found for each pending claim on ``node`` (the last Filter there)."""
        one = self.single.get(node)
        return {self.pending[0].key: one} if one is not None else self.solutions.get(node, {})

    def found_by_search(self, node: str, chosen: dict[ClaimKey, Solution]) -> None:
        self.single.pop(node, None)
        self.solutions[node] = chosen


def _serials(ledger, pools) -> tuple:
    """The ledger's serials of ``pools`` (one pool, the common case, without a generator)."""
    if len(pools) == 1:
        return (ledger.serial(pools[0].name),)
    return tuple(ledger.serial(p.name) for p in pools)


def reserved_key(key: ClaimKey) -> ClaimKey:
    """The ledger key a pod's reservation holds devices under until the claim's status says so."""
    return ClaimKey(key.namespace, key.name, "reserved:" + key.kind)


class AllocatorDevices(DeviceClaimsPlugin):
    # Claims created or changed help only the pods that use them: those are activated one by one
    # (:meth:`_on_allocator_event`), not every parked pod on every claim event.
    EVENTS = events.DEVICE_EVENTS

    def __init__(self, allocator, client: Client, *, clock: clocks.Clock | None = None) -> None:
        super().__init__()
        self.allocator = allocator
        self.client = client
        self.clock = clock or allocator.clock
        self.claims: dict[tuple[str, str], dict] = {}  # every DeviceClaim, as the allocator's informer saw it
        self.reservations: dict[str, list[ClaimKey]] = {}  # pod uid → reserved ledger keys
        self.notify = None  # the scheduler's on_event, once wired
        self.activate = None  # the scheduler queue's activate(keys), once wired
        self.parked = None  # the scheduler queue's parked(), once wired
        # What a search found is found again while nothing it read changed: the rows of a claim
        # spec (per inventory), and per (spec, node) the solution or None while the serials of the
        # node's pools (and the network pools) stay the same. Pool and class events clear both.
        self._rows: dict[tuple, tuple] = {}
        self._searches: dict[tuple, dict[str | None, tuple[tuple, Solution | None]]] = {}
        self._names_of: tuple[dict, dict[str, tuple[str, ...]]] | None = None  # (inventory.node_pools, node → pool names)
        self._remembered = 0  # searches remembered since the memo was last cleared
        allocator.listeners.append(self._on_allocator_event)

    # ------------------------------------------------------------ events in
    def _on_allocator_event(self, resource: str, action: str, obj: dict) -> None:
        if resource in (events.DEVICE_POOL, events.DEVICE_CLASS):
            self._rows.clear()
            self._searches.clear()
        if resource == events.DEVICE_CLAIM:
            meta = obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if action == events.DELETE:
                self.claims.pop(key, None)
            else:
                self.claims[key] = obj
            if action in (events.ADD, events.UPDATE):
                if self.activate is not None:
                    self.activate(self._users(obj))
                return
        if self.notify is not None:
            self.notify(events.ClusterEvent(resource, action))

    def _users(self, claim: dict) -> list[str]:
        """The queue keys of the pods a claim event may help: its owner pod, or (a shared claim)
        the parked pods naming it."""
        meta = claim["metadata"]
        namespace = meta.get("namespace", "")
        owners = [ref["name"] for ref in meta.get("ownerReferences") or () if ref.get("controller") and ref.get("kind") == "Pod"]
        if owners:
            return [f"{namespace}/{name}" for name in owners]
        if self.parked is None:
            return []
        return [
            f"{namespace}/{pod['metadata']['name']}"
            for pod in self.parked()
            if pod["metadata"].get("namespace", "") == namespace and meta["name"] in claim_names(pod).values()
        ]

    # ----------------------------------------------------------- preEnqueue
    def pre_enqueue(self, pod):
        """Not queued while a claim the pod needs has not been created yet (kube's DynamicResources
        PreEnqueue): the pod waits without attempts, Events or status writes until it exists."""
        sources = claim_sources(pod)
        if not sources:
            return SUCCESS
        names = claim_names(pod)
        namespace = pod["metadata"].get("namespace", "")
        for entry, source, value in sources:
            name = names.get(entry)
            if name is None:
                origin = f' from DeviceClaimTemplate "{value}"' if source == "claimTemplateName" else ""
                return unresolvable(f'waiting for the device claim of entry "{entry}"{origin} to be created')
            if (namespace, name) not in self.claims:
                return unresolvable(f'device claim "{name}" not found')
        return SUCCESS

    # ------------------------------------------------------------ preFilter
    def pre_filter(self, state, pod, snapshot):
        sources = claim_sources(pod)
        if not sources:
            state.skip_filter.add(self.NAME)
            return SUCCESS
        meta = pod["metadata"]
        namespace, uid = meta.get("namespace", ""), meta.get("uid", "")
        names = claim_names(pod)
        found = PodClaims()
        pinned: str | None = None
        for entry, source, value in sources:
            name = names.get(entry)
            if name is None:
                origin = f' from DeviceClaimTemplate "{value}"' if source == "claimTemplateName" else ""
                return unresolvable(f'waiting for the device claim of entry "{entry}"{origin} to be created')
            claim = self.claims.get((namespace, name))
            if claim is None:
                return unresolvable(f'device claim "{name}" not found')
            if claim["metadata"].get("deletionTimestamp"):
                return unresolvable(f'device claim "{name}" is being deleted')
            owner = controller_pod_uid(claim)
            if source != "claimName" and owner != uid:
                return unresolvable(f'device claim "{name}" was not created for this pod')
            status = claim.get("status") or {}
            if status.get("allocations"):
                node = status.get("nodeName")
                if node and pinned and node != pinned:
                    return unresolvable(f'device claims "{name}" and others are allocated on different nodes')
                pinned = node or pinned
                found.allocated.append(claim)
            elif owner and owner == uid:
                prepared = self._prepare(claim)
                if isinstance(prepared, kinds.Failure):
                    return unresolvable(f'device claim "{name}": {prepared.message}')
                found.pending.append(prepared)
            else:
                return unresolvable(f'device claim "{name}" is not allocated yet')
        cache = self.allocator.cache
        found.network = tuple(cache.ledger.serial(p.name) for p in cache.inventory().network)
        if len(found.pending) == 1 and found.pending[0].local:
            found.node_pools = cache.inventory().node_pools
        state[self.NAME] = found
        if pinned:
            state[("node_names", self.NAME)] = {pinned}
        if not found.pending:
            state.skip_filter.add(self.NAME)
        return SUCCESS

    def _prepare(self, claim: dict) -> Pending | kinds.Failure:
        """ValidateSpec → ResolveClasses → FilterDevices, once per claim and cycle."""
        cache = self.allocator.cache
        spec = orjson.dumps(claim.get("spec"), option=orjson.OPT_SORT_KEYS)
        memo = (spec, cache.inventory_version)
        found = self._rows.get(memo)
        if found is None:
            found = self._rows[(exact(spec), memo[1])] = self._rows_of(claim)
            if len(self._rows) > MEMO_LIMIT:
                self._rows.clear()
        if isinstance(found, kinds.Failure):
            return found
        rows, match = found
        return Pending(ClaimKey.of(claim), claim, rows, match, spec, _nodes(rows, cache.inventory()) != [None])

    def _rows_of(self, claim: dict) -> tuple | kinds.Failure:
        cache = self.allocator.cache
        validated = request.validate(claim)
        if isinstance(validated, kinds.Failure):
            return validated
        entries = classes.resolve(validated, cache.classes)
        if isinstance(entries, kinds.Failure):
            return entries
        try:
            rows = self.allocator.planner.filter.run(entries, cache.inventory(), validated.match, self._budget())
        except (Exhausted, Preempted) as exc:
            return kinds.failure(kinds.ALLOCATION_TIMEOUT, f"filtering the devices took too long: {exc}")
        if isinstance(rows, kinds.Failure):
            return rows
        return rows, validated.match

    def _budget(self) -> Budget:
        return Budget(self.allocator.planner.limits, clock=self.clock.monotonic, may_wait=False)

    # --------------------------------------------------------------- filter
    def filter(self, state, pod, node_info):
        found: PodClaims = state[self.NAME]
        snapshot = getattr(self.handle, "snapshot", None)
        if snapshot is None or snapshot.get(node_info.name) is node_info:  # the node itself, not a trial copy
            if found.node_pools is not None:  # one node-local claim: what _search remembered, without the calls
                pending, name = found.pending[0], node_info.name
                pools = found.node_pools.get(name, ())
                serial = self.allocator.cache.ledger.serial
                local = (serial(pools[0].name),) if len(pools) == 1 else tuple(serial(p.name) for p in pools)
                hit = pending.memo.get(name) if pending.memo is not None else None
                if hit is not None and hit[0] == local:
                    if hit[1] is None:
                        return CANNOT_ALLOCATE_STATUS
                    found.single[name] = hit[1]
                    return SUCCESS
            return self._filter(found, node_info)
        freed = self._freed_by_preemption(node_info)
        if not freed:
            return self._filter(found, node_info)
        # DefaultPreemption asks with victims taken off the node: their claims' devices count as free
        with contextlib.ExitStack() as stack:
            for key in freed:
                stack.enter_context(self.allocator.cache.ledger.without(key))
            return self._filter(found, node_info, memo=False)

    def node_filter(self, state, pod):
        """:meth:`filter` on this cycle's own nodes, the common case made once per cycle: one
        node-local claim, its search remembered per node with the serials of the node's pools —
        a node whose pools nobody touched since is answered from the memo, without a search."""
        found: PodClaims = state[self.NAME]
        if found.node_pools is None:
            return None
        pending, single = found.pending[0], found.single
        names = self._pool_names(found.node_pools)
        serial = self.allocator.cache.ledger.serials.get
        search = functools.partial(self._filter, found)

        def filter_node(node_info):
            name = node_info.name
            memo = pending.memo  # set by the cycle's first search
            hit = memo.get(name) if memo is not None else None
            if hit is not None:
                pools = names.get(name, ())
                local = (serial(pools[0], 0),) if len(pools) == 1 else tuple(serial(p, 0) for p in pools)  # _serials
                if hit[0] == local:
                    if hit[1] is None:
                        return CANNOT_ALLOCATE_STATUS
                    single[name] = hit[1]
                    return SUCCESS
            return search(node_info)

        return filter_node

    def _pool_names(self, node_pools: dict) -> dict[str, tuple[str, ...]]:
        """node → the names of its pools, for one inventory (made again when the inventory is)."""
        kept = self._names_of
        if kept is None or kept[0] is not node_pools:
            kept = self._names_of = (node_pools, {node: tuple(p.name for p in pools) for node, pools in node_pools.items()})
        return kept[1]

    def _freed_by_preemption(self, node_info) -> list[ClaimKey]:
        """The claims used only by pods the node really has but this (trial) NodeInfo does not."""
        snapshot = getattr(self.handle, "snapshot", None)
        real = snapshot.get(node_info.name) if snapshot is not None else None
        if real is None or real is node_info or len(real.pods) <= len(node_info.pods):
            return []
        gone = [p for key, p in real.pods.items() if key not in node_info.pods]
        names = {p["metadata"]["name"] for p in gone}
        freed = []
        for victim in gone:
            namespace = victim["metadata"].get("namespace", "")
            for claim_name in claim_names(victim).values():
                claim = self.claims.get((namespace, claim_name))
                users = ((claim or {}).get("status") or {}).get("podNames") or []
                if claim is not None and users and set(users) <= names:
                    freed.append(ClaimKey.of(claim))
        return freed

    def _filter(self, found: "PodClaims", node_info, *, memo: bool = True):
        cache = self.allocator.cache
        ledger, inventory = cache.ledger, cache.inventory()
        if memo and len(found.pending) == 1:  # the common case: one claim, no tentative holds
            pending = found.pending[0]
            solution = self._search(pending, node_info.name if pending.local else None, inventory, ledger, found.network)
            if solution is None:
                return CANNOT_ALLOCATE_STATUS
            found.found_by_search(node_info.name, {pending.key: solution})
            return SUCCESS
        chosen: dict[ClaimKey, Solution] = {}
        tentative: list[ClaimKey] = []
        last = len(found.pending) - 1
        try:
            for index, pending in enumerate(found.pending):
                node = node_info.name if pending.local else None
                solution = self._search(pending, node, inventory, ledger, found.network if memo and not tentative else None)
                if solution is None:
                    return CANNOT_ALLOCATE_STATUS
                chosen[pending.key] = solution
                if index < last:  # the pod's next claims must not take these devices too
                    held = ClaimKey(pending.key.namespace, pending.key.name, "tentative:" + pending.key.kind)
                    ledger.set_claim(held, {"allocations": status_.entries(solution)})
                    tentative.append(held)
        finally:
            for held in tentative:
                ledger.release(held)
        found.found_by_search(node_info.name, chosen)
        return SUCCESS

    def _search(self, pending: Pending, node: str | None, inventory, ledger, network: tuple | None) -> Solution | None:
        """The allocator's search for one claim on one node; remembered per (spec, node) while the
        holds on the pools it could use stay as they were (not while a pod's earlier claims are
        held tentatively: those change the holds for this search only)."""
        memo = local = None
        if network is not None:  # remembered: the node's pools' serials, and the network pools' (from PreFilter)
            memo = pending.memo
            if memo is None:  # per (spec, inventory, network pools' serials), then per node: found once a cycle
                memo = pending.memo = self._searches.setdefault((pending.spec, inventory.version, network), {})
            local = _serials(ledger, inventory.node_pools.get(node, ())) if node else ()
            hit = memo.get(node)
            if hit is not None and hit[0] == local:
                return hit[1]
        if _too_few(node, pending.rows, ledger):
            solution = None
        else:
            try:
                solution = NodeSearch(node, pending.rows, ledger, pending.match, self._budget()).run()
            except (Exhausted, Preempted):
                return None  # not remembered: a later attempt may have more time
        if memo is not None:
            self._remembered += 1
            if self._remembered > MEMO_LIMIT:
                self._searches.clear()
                self._remembered = 0
            memo[node] = (local, solution)
        return solution

    # ------------------------------------------------------ reserve/unreserve
    def reserve(self, state, pod, node_name):
        found: PodClaims | None = state.get(self.NAME)
        if found is None:
            return SUCCESS
        ledger = self.allocator.cache.ledger
        keys = []
        for key, solution in found.found_on(node_name).items():
            held = reserved_key(key)
            ledger.set_claim(held, {"allocations": status_.entries(solution)})
            keys.append(held)
        self.reservations[pod["metadata"].get("uid", "")] = keys
        return SUCCESS

    def unreserve(self, state, pod, node_name) -> None:
        keys = self.reservations.pop(pod["metadata"].get("uid", ""), [])
        if not keys:
            return
        if self.allocator.held is not None:  # someone holds the cache still: release when they are done
            self.allocator.held.append((lambda _type, _obj: self._release(keys), "", None))
        else:
            self._release(keys)

    def _release(self, keys: list[ClaimKey]) -> None:
        freed = False
        for held in keys:
            freed = self.allocator.cache.ledger.release(held) or freed
        if freed:
            self.allocator.queue.wake(kinds.CAPACITY_FREED)

    # -------------------------------------------------------------- preBind
    async def pre_bind(self, state, pod, node_name):
        found: PodClaims | None = state.get(self.NAME)
        if found is None:
            return SUCCESS
        name = pod["metadata"]["name"]
        try:
            for pending in found.pending:
                solution = found.found_on(node_name).get(pending.key)
                if solution is None:
                    return error(f'no devices were reserved for device claim "{pending.key.name}" on node {node_name}')
                picked = await configs.dereference(self.client, solution, pending.key.namespace)
                if isinstance(picked, kinds.Failure):
                    return unschedulable(f'device claim "{pending.key.name}": {picked.message}')
                written = await self._write(pending.key, name, lambda claim: status_.allocated(
                    claim, solution, picked, generation=claim["metadata"].get("generation", 0), now=self._now()), finalizer=True)
                del written  # no Event: kube's scheduler records none for the claims it allocates (the pod's says it)
            for claim in found.allocated:
                await self._write(ClaimKey.of(claim), name, lambda claim: dict(claim.get("status") or {}))
        except errors.StatusError as exc:
            return error(f"writing the device claims' status failed: {exc.message}")
        finally:
            keys = self.reservations.pop(pod["metadata"].get("uid", ""), [])
            async with self.allocator.holding():
                for held in keys:
                    self.allocator.cache.ledger.release(held)  # the claims' statuses hold them now (or nothing does)
        return SUCCESS

    async def _write(self, key: ClaimKey, pod_name: str, status_of, *, finalizer: bool = False) -> dict:
        """Write a claim's status with ``pod_name`` in ``podNames`` (resourceVersion preconditions,
        re-read and retried on conflict), and let the allocator's cache see it at once."""
        for attempt in range(WRITE_ATTEMPTS):
            claim = await self.client.get(key.api_kind, key.namespace, key.name)
            finalizers = claim["metadata"].get("finalizers") or []
            try:
                if finalizer and kinds.FINALIZER not in finalizers:
                    claim = await self.allocator._set_finalizers(key, claim, finalizers + [kinds.FINALIZER])
                status = status_of(claim)
                users = list(status.get("podNames") or [])
                if pod_name not in users:
                    status["podNames"] = users + [pod_name]
                written = await self.client.update_status(key.api_kind, {**claim, "status": status})
            except errors.StatusError as exc:
                if exc.code == 409 and attempt + 1 < WRITE_ATTEMPTS:
                    await asyncio.sleep(0)
                    continue
                raise
            async with self.allocator.holding():
                self.allocator.cache.apply_claim("MODIFIED", written)
            self.claims[(key.namespace, key.name)] = written
            return written
        raise AssertionError("unreachable")

    def _now(self) -> str:
        return clocks.rfc3339(self.clock.now())
