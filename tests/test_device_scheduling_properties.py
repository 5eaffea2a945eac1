"""Property-based tests of device scheduling: random orders of creating and deleting Nodes,
DevicePools, shared DeviceClaims and pods (claim templates, embedded claims, ``claimName``; two
priorities, so that pods preempt), run
against the real controllers in one process — the registry, the allocator, the pods' claims
controller, the scheduler, the simulated kubelet and the garbage collector on one event loop, as
``bench/scheduler.py`` runs them.

The controllers settle between steps (the pods, claims and nodes stop changing, with a bound) —
or, in the racing variant, do not: the steps follow each other with pauses of a few milliseconds
at most, and the invariants are checked once settled at the end. What must hold:

- at every moment a watch shows: no device held by two claims (entries with admin access hold
  nothing), and a pod once bound is never bound again nor moved (by uid);
- after every step: no node's bound, unfinished pods request more cpu or pods than it has
  allocatable; each bound pod's claims are allocated on its node (or on network pools only) and
  list it in ``status.podNames``;
- once settled after the last step (with a bound): no claim owned by a deleted pod is left, and a
  claim's ``status.podNames`` lists only live pods that are bound and use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from mockapi import app as app_, errors, quantity
from mockapi.client import DELETED, SYNCED, Kind, LocalClient
from mockapi.settings import Settings

API = "devmgmtproto.k8s.io/v1alpha1"
PODS, NODES = Kind("v1", "Pod"), Kind("v1", "Node")
PRIORITY_CLASSES = Kind("scheduling.k8s.io/v1", "PriorityClass")
POOLS, CLASSES = Kind(API, "DevicePool"), Kind(API, "DeviceClass")
CLAIMS, TEMPLATES = Kind(API, "DeviceClaim"), Kind(API, "DeviceClaimTemplate")
NS = "default"
DRIVER = "gpu.example.com"
# A pod the scheduler turned down is retried after a backoff of 1 s, doubling to 10 s: far longer
# than a step here. The scheduler's own configuration shortens it (kube takes whole seconds only;
# mockapi takes fractions), so that pods do bind between steps.
SCHEDULER_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
podInitialBackoffSeconds: 0.005
podMaxBackoffSeconds: 0.02
"""
QUIET = 0.04  # seconds without a change to pods, claims or nodes that count as settled (> the longest backoff)
SETTLE_BOUND = 2.0
EVENTUALLY = 3.0


# ------------------------------------------------------------------ the objects
def node(i: int, cpu: str, pods: int) -> dict:
    capacity = {"cpu": cpu, "memory": "64Gi", "pods": str(pods)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}"}},
            "status": {"capacity": capacity, "allocatable": capacity}}  # fmt: skip


def pool(i: int, node_index: int | None, devices: int) -> dict:
    spec = {"driver": DRIVER, "devices": [{"name": f"gpu-{d}"} for d in range(devices)]}
    if node_index is not None:
        spec["nodeName"] = f"node-{node_index}"
    return {"apiVersion": API, "kind": "DevicePool", "metadata": {"name": f"pool-{i}"}, "spec": spec}


def device_class(name: str, *, admin: bool = False) -> dict:
    spec = {"driver": DRIVER, "deviceType": "gpu", **({"adminAccess": True} if admin else {})}
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


ONE_GPU = {"claims": [{"deviceClass": "gpu"}]}
CLAIM_SPECS = {
    "one": ONE_GPU,
    "two": {"claims": [{"deviceClass": "gpu", "requests": {"count": "2"}}]},
    "admin": {"claims": [{"deviceClass": "gpu-admin"}]},
}


def shared_claim(k: int) -> dict:
    return {"apiVersion": API, "kind": "DeviceClaim", "metadata": {"name": f"shared-{k}", "namespace": NS}, "spec": ONE_GPU}


def pod(j: int, cpu: str, sources: tuple[str, ...], priority: int = 0) -> dict:
    entries = []
    for n, source in enumerate(sources):
        entry = {"name": f"d{n}"}
        if source == "template":
            entry["claimTemplateName"] = "one-gpu"
        elif source.startswith("shared-"):
            entry["claimName"] = source
        else:
            entry["claim"] = CLAIM_SPECS[source]
        entries.append(entry)
    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}, "devices": [{"name": e["name"]} for e in entries]}
    spec = {"containers": [container], "terminationGracePeriodSeconds": 0, **({"deviceClaims": entries} if entries else {})}
    if priority:  # the Priority admission plugin resolves it (a pod may not give it itself)
        spec["priorityClassName"] = f"priority-{priority}"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{j}", "namespace": NS}, "spec": spec}


# ------------------------------------------------------------------ the steps
NODE_IDS, POOL_IDS, SHARED_IDS, POD_IDS = st.integers(0, 2), st.integers(0, 2), st.integers(0, 1), st.integers(0, 4)
SOURCES = st.sampled_from(["template", "one", "two", "admin", "shared-0", "shared-1"])
ADD_NODE = st.tuples(st.just("node"), NODE_IDS, st.sampled_from(["1", "2", "4"]), st.integers(1, 4))
ADD_POOL = st.tuples(st.just("pool"), POOL_IDS, st.one_of(st.none(), NODE_IDS), st.integers(1, 3))
ADD_SHARED = st.tuples(st.just("shared"), SHARED_IDS)
ADD_POD = st.tuples(st.just("pod"), POD_IDS, st.sampled_from(["100m", "500m", "1"]), st.lists(SOURCES, max_size=2, unique=True).map(tuple), st.sampled_from([0, 0, 100]))
CLUSTER_CHANGES = (ADD_NODE, st.tuples(st.just("delete-node"), NODE_IDS), ADD_POOL, st.tuples(st.just("delete-pool"), POOL_IDS), ADD_SHARED)
DELETE_SHARED = st.tuples(st.just("delete-shared"), SHARED_IDS)
CHANGES = st.one_of(*CLUSTER_CHANGES, DELETE_SHARED)
POD_STEPS = st.one_of(ADD_POD, ADD_POD, st.tuples(st.just("delete-pod"), POD_IDS))
START = st.tuples(ADD_NODE, st.lists(st.one_of(ADD_NODE, ADD_POOL, ADD_SHARED), max_size=4)).map(lambda s: [s[0], *s[1]])  # somewhere pods can go
# then rounds of a change to the cluster (or none) and a pod created or deleted
ROUNDS = st.lists(st.tuples(st.one_of(st.none(), CHANGES), POD_STEPS), min_size=1, max_size=8).map(lambda rounds: [s for r in rounds for s in r if s])

# the same, with no settling: pauses of a few milliseconds (or none) let the controllers part-way
PAUSE = st.tuples(st.just("pause"), st.sampled_from([0.001, 0.005, 0.02]))
RACING_ROUNDS = st.lists(st.tuples(st.one_of(st.none(), CHANGES), POD_STEPS, st.one_of(st.none(), PAUSE)), min_size=5, max_size=30).map(
    lambda rounds: [s for r in rounds for s in r if s])


def create_of(step: tuple) -> tuple[Kind, dict] | None:
    match step:
        case ("node", i, cpu, pods):
            return NODES, node(i, cpu, pods)
        case ("pool", i, node_index, devices):
            return POOLS, pool(i, node_index, devices)
        case ("shared", k):
            return CLAIMS, shared_claim(k)
        case ("pod", j, cpu, sources, *priority):
            return PODS, pod(j, cpu, sources, *priority)
    return None


def delete_of(step: tuple) -> tuple[Kind, str, str]:
    kind, name = {"delete-node": (NODES, "node"), "delete-pool": (POOLS, "pool"), "delete-shared": (CLAIMS, "shared"), "delete-pod": (PODS, "pod")}[step[0]]
    return kind, NS if kind in (CLAIMS, PODS) else "", f"{name}-{step[1]}"


# ------------------------------------------------------------------ what is watched
@dataclass
class Watched:
    """What the watches saw, and every violation of an invariant that holds at all times."""

    bound_to: dict[str, str] = field(default_factory=dict)  # pod uid → the node it was first seen bound to
    held: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # claim uid → devices it holds
    violations: list[str] = field(default_factory=list)

    def pod(self, event_type: str, obj: dict) -> None:
        uid, node_name = obj["metadata"]["uid"], obj["spec"].get("nodeName")
        if event_type == DELETED or not node_name:
            if uid in self.bound_to and not node_name and event_type != DELETED:
                self.violations.append(f"pod {obj['metadata']['name']} lost its node {self.bound_to[uid]}")
            return
        first = self.bound_to.setdefault(uid, node_name)
        if first != node_name:
            self.violations.append(f"pod {obj['metadata']['name']} moved from {first} to {node_name}")

    def claim(self, event_type: str, obj: dict) -> None:
        uid = obj["metadata"]["uid"]
        if event_type == DELETED:
            self.held.pop(uid, None)
            return
        self.held[uid] = [(a["devicePoolName"], a["deviceName"]) for a in held_allocations(obj)]
        twice = [device for device, n in Counter(d for devices in self.held.values() for d in devices).items() if n > 1]
        if twice:
            self.violations.append(f"devices held by two claims after {obj['metadata']['name']} rv {obj['metadata']['resourceVersion']}: {twice}")


def held_allocations(claim: dict) -> list[dict]:
    return [a for a in (claim.get("status") or {}).get("allocations") or [] if not a.get("adminAccess")]


async def watch(client: LocalClient, kind: Kind, handle) -> None:
    async for event in client.watch(kind):
        if event.type != SYNCED and event.object is not None:
            handle(event.type, event.object)


# ------------------------------------------------------------------ one run
class Cluster:
    def __init__(self, scheduler_config: Path) -> None:
        settings_ = Settings(allocator=True, scheduler=True, kubelet=True, garbage_collector=True, scheduler_config=scheduler_config, log_level="warning")
        self.server = app_.build(settings_)
        self.client = LocalClient(self.server.registry)
        self.watched = Watched()
        self.tasks: list[asyncio.Task] = []

    async def start(self) -> None:
        await self.client.create(CLASSES, device_class("gpu"))
        await self.client.create(CLASSES, device_class("gpu-admin", admin=True))
        template = {"apiVersion": API, "kind": "DeviceClaimTemplate", "metadata": {"name": "one-gpu", "namespace": NS}, "spec": {"spec": ONE_GPU}}
        await self.client.create(TEMPLATES, template)
        await self.client.create(PRIORITY_CLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "priority-100"}, "value": 100})
        self.tasks = [asyncio.create_task(watch(self.client, PODS, self.watched.pod)), asyncio.create_task(watch(self.client, CLAIMS, self.watched.claim))]
        await self.server.start_background()

    async def stop(self) -> None:
        await self.server.stop_background()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def apply(self, step: tuple) -> None:
        if step[0] == "pause":
            await asyncio.sleep(step[1])
            return
        try:
            if (create := create_of(step)) is not None:
                await self.client.create(*create)
            else:
                await self.client.delete(*delete_of(step))
        except errors.StatusError as exc:
            if exc.code not in (404, 409):  # deleting what is not there, creating what still is
                raise

    async def objects(self) -> tuple[dict, dict, dict]:
        found = []
        for kind in (NODES, PODS, CLAIMS):
            items, _ = await self.client.list(kind)
            found.append({o["metadata"]["name"]: o for o in items})
        return tuple(found)

    async def settle(self) -> None:
        """Until pods, claims and nodes have not changed for QUIET seconds (at most SETTLE_BOUND)."""
        deadline, last, since = time.monotonic() + SETTLE_BOUND, None, time.monotonic()
        while time.monotonic() < deadline:
            state = [(n, o["metadata"]["resourceVersion"]) for objects in await self.objects() for n, o in sorted(objects.items())]
            if state != last:
                last, since = state, time.monotonic()
            elif time.monotonic() - since >= QUIET:
                return
            await asyncio.sleep(0.005)


# ------------------------------------------------------------------ the invariants
def claims_of(pod_: dict, claims: dict) -> dict[str, dict | None]:
    """entry → the pod's claim for it (None: not made, or gone)."""
    made = {s["name"]: s["deviceClaimName"] for s in (pod_.get("status") or {}).get("deviceClaimStatuses") or []}
    found = {}
    for entry in pod_["spec"].get("deviceClaims") or []:
        name = entry.get("claimName") or made.get(entry["name"])
        found[entry["name"]] = claims.get(name) if name else None
    return found


def live(pod_: dict) -> bool:
    return (pod_.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def millicpu(text: str) -> int:
    return int(quantity.parse(text).value * 1000)


def check_after_step(nodes: dict, pods: dict, claims: dict) -> list[str]:
    problems = []
    for name, node_ in nodes.items():
        on_node = [p for p in pods.values() if p["spec"].get("nodeName") == name and live(p)]
        allocatable = node_["status"]["allocatable"]
        cpu = sum(millicpu(p["spec"]["containers"][0]["resources"]["requests"]["cpu"]) for p in on_node)
        if cpu > millicpu(allocatable["cpu"]) or len(on_node) > int(allocatable["pods"]):
            problems.append(f"{name} over its allocatable {allocatable}: {len(on_node)} pods, {cpu}m cpu")
    for name, pod_ in pods.items():
        node_name = pod_["spec"].get("nodeName")
        if not node_name or not live(pod_):
            continue
        for entry, claim in claims_of(pod_, claims).items():
            status = (claim or {}).get("status") or {}
            if claim is None or not status.get("allocations"):
                problems.append(f"{name} bound to {node_name} but its claim {entry} is not allocated: {claim and claim['metadata']['name']}")
            elif status.get("nodeName") not in (None, "", node_name):
                problems.append(f"{name} bound to {node_name} but its claim {claim['metadata']['name']} is on {status['nodeName']}")
            elif name not in (status.get("podNames") or []):
                problems.append(f"{name} bound but not in podNames of {claim['metadata']['name']}: {status.get('podNames')}")
    return problems


def check_settled(pods: dict, claims: dict, *, exact_pod_names: bool = True) -> list[str]:
    problems = []
    uids = {p["metadata"]["uid"] for p in pods.values()}
    for name, claim in claims.items():
        owners = [r["uid"] for r in claim["metadata"].get("ownerReferences") or [] if r.get("kind") == "Pod"]
        if owners and owners[0] not in uids:
            problems.append(f"claim {name} outlived its pod")
        for user in (claim.get("status") or {}).get("podNames") or [] if exact_pod_names else []:
            pod_ = pods.get(user)
            uses = pod_ is not None and any(c is claim for c in claims_of(pod_, claims).values())
            if not (uses and pod_["spec"].get("nodeName") and live(pod_)):
                problems.append(f"claim {name} lists {user}, which is gone, finished, unbound or not using it")
    return problems


async def run(steps: list[tuple], scheduler_config: Path, *, settling: bool = True, eventually: float = EVENTUALLY) -> int:
    """Take the steps, checking the invariants (after each step when ``settling``, else only at
    the end, the steps racing the controllers); how many pods were ever bound."""
    cluster = Cluster(scheduler_config)
    await cluster.start()
    try:
        for number, step in enumerate(steps):
            await cluster.apply(step)
            if settling:
                await cluster.settle()
                problems = cluster.watched.violations + check_after_step(*(await cluster.objects()))
                assert not problems, f"after step {number} {step}: {problems}"
            else:
                await asyncio.sleep(0)
        await cluster.settle()
        problems = cluster.watched.violations + check_after_step(*(await cluster.objects()))
        assert not problems, f"after the last step: {problems}"
        deadline = time.monotonic() + eventually
        while problems := check_settled(*(await cluster.objects())[1:]):
            assert time.monotonic() < deadline, f"settled: {problems}"
            await asyncio.sleep(0.01)
        assert not cluster.watched.violations, cluster.watched.violations
        return len(cluster.watched.bound_to)
    finally:
        await cluster.stop()


@pytest.fixture(scope="module")
def scheduler_config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("scheduler") / "config.yaml"
    path.write_text(SCHEDULER_CONFIG)
    return path


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(START, ROUNDS)
def test_random_create_and_delete_orders_keep_the_scheduling_invariants(scheduler_config, start, steps):
    bound = asyncio.run(run(start + steps, scheduler_config))
    event(f"pods bound: {min(bound, 3)}{'+' if bound >= 3 else ''}")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(START, RACING_ROUNDS)
def test_random_orders_racing_the_controllers_keep_the_scheduling_invariants(scheduler_config, start, steps):
    bound = asyncio.run(run(start + steps, scheduler_config, settling=False))
    event(f"pods bound: {min(bound, 5)}{'+' if bound >= 5 else ''}")


@pytest.mark.parametrize(
    ("steps", "bound"),
    [
        # a freed device goes to the waiting pod; the first pod's claim goes with it
        ([("node", 0, "4", 4), ("pool", 0, 0, 1), ("pod", 0, "100m", ("template",)), ("pod", 1, "100m", ("one",)), ("delete-pod", 0)], 2),
        # a shared claim pins its pods to its node, and keeps its device when they go
        ([("node", 0, "4", 4), ("node", 1, "4", 4), ("pool", 0, 1, 2), ("shared", 0), ("pod", 0, "1", ("shared-0", "template")),
          ("pod", 1, "1", ("shared-0",)), ("delete-pod", 0), ("delete-pod", 1), ("pod", 2, "1", ("template", "template"))], 2),
        # a node that goes takes its pods; re-created, the waiting pod goes there, and it is not over-committed
        ([("node", 0, "1", 2), ("pod", 0, "1", ()), ("pod", 1, "500m", ()), ("delete-node", 0), ("node", 0, "1", 2), ("pod", 2, "1", ())], 2),
        # a high-priority pod preempts a low-priority one: cpu and the victim's device are freed for it
        ([("node", 0, "1", 4), ("pool", 0, 0, 1), ("pod", 0, "1", ("one",)), ("pod", 3, "500m", ("template",), 100)], 2),
        # network-attached pools combine with any node; admin access holds nothing
        ([("pool", 0, None, 1), ("node", 0, "2", 4), ("pod", 0, "100m", ("one", "admin")), ("pod", 1, "100m", ("admin",)), ("delete-pool", 0)], 2),
        # a node that goes and comes back smaller (found racing: back before the pod GC looked, its pods
        # were kept and overcommitted it; the kubelet now admits them again and rejects what no longer
        # fits, OutOfpods — tests/controllers/test_kubelet.py forces that order); settled, they are collected
        ([("node", 1, "1", 2), ("pod", 0, "100m", (), 0), ("pod", 0, "100m", (), 0), ("pod", 0, "100m", (), 0), ("pod", 0, "100m", (), 0),
          ("delete-pod", 0), ("pod", 0, "100m", (), 0), ("delete-pod", 1), ("pod", 0, "100m", (), 0), ("pod", 1, "100m", (), 0),
          ("delete-node", 1), ("delete-pod", 2), ("node", 1, "1", 1), ("pod", 0, "100m", (), 0)], 4),
    ],
)
def test_known_orders_keep_the_scheduling_invariants(scheduler_config, steps, bound):
    assert asyncio.run(run(steps, scheduler_config)) == bound


def test_a_deleted_claims_device_is_not_shown_held_by_another_claim(scheduler_config):
    """shared-1 holds the only device; shared-0 waits; shared-1 is deleted. shared-0 must not be
    allocated the device while shared-1, its finalizer not yet removed, still shows it in
    ``status.allocations``: as in kube, a device is free only once no claim shows it (the
    allocator's cache holds a deleted claim's devices until it is gone). Found by random orders
    racing the controllers."""
    asyncio.run(run([("pool", 0, None, 1), ("shared", 1), ("shared", 0), ("delete-shared", 1)], scheduler_config, settling=False))


def test_deleting_a_shared_claim_waits_for_its_pods(scheduler_config):
    """SCHEDULER.md: a claim still used by a pod is not deallocated; deleting it waits (its finalizer
    stays) until no pod uses it: pod-1 must not get the device while pod-0 still runs with it."""
    asyncio.run(run([("node", 0, "4", 4), ("pool", 0, 0, 1), ("shared", 0), ("pod", 0, "1", ("shared-0",)), ("delete-shared", 0), ("pod", 1, "1", ("template",))], scheduler_config))


def deleting_the_pods_it_adds(update_status):
    """``LocalClient.update_status`` that first deletes the pods a DeviceClaim write adds to
    ``status.podNames``: a user deleting a pod while the scheduler's PreBind writes its claims."""

    async def update(self, kind: Kind, obj: dict) -> dict:
        if kind == CLAIMS:
            meta = obj["metadata"]
            before = await self.get(kind, meta["namespace"], meta["name"])
            for name in set((obj.get("status") or {}).get("podNames") or []) - set((before.get("status") or {}).get("podNames") or []):
                with contextlib.suppress(errors.StatusError):
                    await self.delete(PODS, meta["namespace"], name)
        return await update_status(self, kind, obj)

    return update


def test_a_pod_deleted_while_its_claims_are_written_is_not_left_in_podnames(scheduler_config, monkeypatch):
    """The pods' claims controller releases a deleted pod from the claims its cache shows it in;
    PreBind's write lands after that, the Binding then fails, and Unreserve only releases the
    ledger (kube's DynamicResources Unreserve also removes the pod from ``reservedFor``, and kube's
    resourceclaim controller drops ``reservedFor`` entries whose pod is gone): the claims controller
    checks the pods a claim's podNames names that it does not know, and takes the gone ones back.
    Found by random orders without settling."""
    monkeypatch.setattr(LocalClient, "update_status", deleting_the_pods_it_adds(LocalClient.update_status))
    asyncio.run(run([("node", 0, "4", 4), ("pool", 0, 0, 1), ("shared", 0), ("pod", 0, "100m", ("shared-0",))], scheduler_config, eventually=0.5))


def test_a_pod_made_again_under_its_name_does_not_keep_the_old_one_in_podnames(scheduler_config):
    """pod-3 uses shared-0 and is deleted; a pod-3 that uses no claim is made as soon as the name is
    free, then deleted too. podNames are names (kube's reservedFor holds uids): when the first
    pod-3 goes, the claims controller takes "pod-3" back because the pod of that name now does not
    use shared-0."""

    async def scenario() -> None:
        cluster = Cluster(scheduler_config)
        await cluster.start()
        try:
            for step in [("node", 0, "4", 4), ("pool", 0, 0, 1), ("shared", 0), ("pod", 3, "100m", ("shared-0",))]:
                await cluster.apply(step)
                await cluster.settle()
            await cluster.apply(("delete-pod", 3))
            while True:  # made again as soon as the name is free
                try:
                    await cluster.client.create(PODS, pod(3, "100m", ()))
                    break
                except errors.StatusError:
                    await asyncio.sleep(0)
            await cluster.settle()
            await cluster.apply(("delete-pod", 3))
            await cluster.settle()
            deadline = time.monotonic() + 0.5
            while problems := check_settled(*(await cluster.objects())[1:]):
                assert time.monotonic() < deadline, problems
                await asyncio.sleep(0.01)
        finally:
            await cluster.stop()

    asyncio.run(scenario())


def test_a_pod_the_kubelet_rejects_leaves_the_claims_it_used(scheduler_config):
    """A node's allocatable shrinks under its running pods: the kubelet rejects the newer one
    (OutOfpods, Failed) and the claims controller takes it out of its claim's podNames, as for any
    finished pod; the invariants hold."""

    async def main():
        cluster = Cluster(scheduler_config)
        await cluster.start()
        try:
            for step in [("node", 0, "4", 2), ("pool", 0, 0, 2), ("pod", 0, "100m", ("template",)), ("pod", 1, "100m", ("template",))]:
                await cluster.apply(step)
                await cluster.settle()
            await cluster.client.patch(NODES, "", "node-0", {"status": {"allocatable": {"pods": "1"}}}, subresource="status")
            deadline = time.monotonic() + EVENTUALLY
            while (await cluster.client.get(PODS, NS, "pod-1"))["status"].get("phase") != "Failed":
                assert time.monotonic() < deadline, "pod-1 was never rejected"
                await asyncio.sleep(0.01)
            await cluster.settle()
            nodes, pods, claims = await cluster.objects()
            assert (pods["pod-0"]["status"]["phase"], pods["pod-1"]["status"]["reason"]) == ("Running", "OutOfpods")
            assert check_after_step(nodes, pods, claims) == [] and check_settled(pods, claims) == []
            assert sorted(n for c in claims.values() for n in c["status"].get("podNames") or []) == ["pod-0"]
        finally:
            await cluster.stop()

    asyncio.run(main())
