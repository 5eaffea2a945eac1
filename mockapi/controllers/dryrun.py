"""Where would this pod go, and why? One pod's scheduling cycle on a copy of the cluster, writing
nothing (``mockapi schedule -f pod.yaml``; SCHEDULER.md "The ``schedule`` CLI").

:func:`schedule` reads the cluster once through any :class:`~mockapi.client.Client` (Nodes, the
pods bound to them, DevicePools, DeviceClasses, DeviceClaims, DevicePrivilegedClaims and
DeviceClaimTemplates; config objects when a claim's configs are dereferenced), always through
:class:`ReadOnly`, which refuses every write. It then builds what ``mockapi serve`` builds — a
fresh :class:`~.allocator.Allocator` whose cache holds those objects, the DeviceClaims plugin over
it, and the pod's profile's :class:`~.scheduler.framework.Framework` — and runs the scheduling
cycle (PreFilter … NormalizeScore, the extenders, PostFilter) on every node
(``percentageOfNodesToScore: 100``, so the report is complete). Nothing is assumed, reserved,
bound or written.

The pod's ``claim`` and ``claimTemplateName`` entries get the claims the claims controller would
make (:mod:`mockapi.controllers.podclaims`), in memory, owned by the pod, so the DeviceClaims
plugin allocates them with the node; ``claimName`` entries use the named claim as it is.

``as_served=True`` (offline, on manifests) makes the copy look as ``mockapi serve --load`` would
make it before the pod arrives: Nodes without ``status.allocatable`` get the simulated kubelet's
defaults (:class:`~.kubelet.KubeletOptions`), and the allocator first allocates the pending claims
it is responsible for (not pod-owned), in its queue's order, in memory.

The report (:func:`schedule`'s dict) is the scheduler's attempt record (:mod:`.scheduler.attempts`:
per node each filter's verdict, the score table, extender calls) with the outcome, plus per
claim of the pod: where it comes from, the devices it would get on the chosen node, and the
allocator's explanation of the claim on its own (:func:`.allocator.explain`: per option the
ignored pools and why, per node the device set found and its score, or why none).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from mockapi import clock as clocks, errors
from mockapi.client import ADDED, MODIFIED, Client, Kind
from mockapi.controllers import kubelet, podclaims
from mockapi.controllers.allocator import kinds, score, status as claim_status
from mockapi.controllers.allocator.budget import Limits
from mockapi.controllers.allocator.controller import Allocator, pod_owned, priority
from mockapi.controllers.allocator.cycle import run_cycle
from mockapi.controllers.allocator.explain import explain as explain_claim
from mockapi.controllers.allocator.scheduling import AllocatorDevices, PodClaims
from mockapi.controllers.keys import ClaimKey
from mockapi.controllers.scheduler import attempts, config as config_, pods as pods_
from mockapi.controllers.scheduler.framework import FitError, Framework
from mockapi.controllers.scheduler.nodeinfo import Snapshot, is_terminal
from mockapi.controllers.scheduler.plugin import CycleState
from mockapi.controllers.scheduler.plugins.device_claims import NAME as DEVICE_CLAIMS

NODES, PODS = Kind("v1", "Node"), Kind("v1", "Pod")
TEMPLATES = podclaims.TEMPLATES
READS = (NODES, PODS, kinds.POOLS, kinds.CLASSES, kinds.CLAIMS, kinds.PRIVILEGED_CLAIMS, TEMPLATES)
DRY_RUN_UID = "00000000-0000-0000-0000-000000000000"  # a pod without a uid (a manifest) gets this one
MADE_SUFFIX = "dryrun"  # in place of the random suffix of generateName
SCHEDULABLE = "Schedulable"  # the outcome of a dry run that found a node


class InputError(ValueError):
    """The pod cannot be dry-run as given (no profile for its scheduler, a missing template …)."""


class ReadOnly:
    """A :class:`~mockapi.client.Client` that reads through ``client`` and refuses every write."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def get(self, kind: Kind, namespace: str, name: str) -> dict:
        return await self.client.get(kind, namespace, name)

    async def list(self, kind: Kind, namespace: str = "") -> tuple[list[dict], str]:
        return await self.client.list(kind, namespace)

    def watch(self, kind: Kind, namespace: str = "", *, echoes: bool = False):
        raise RuntimeError("a dry run does not watch")

    async def _refuse(self, *args, **kwargs):
        raise errors.StatusError(405, "MethodNotAllowed", "a dry run writes nothing")

    create = update = update_status = patch = delete = create_event = bind = _refuse


@dataclass
class Cluster:
    """What a dry run reads, by kind (a kind the server does not serve is empty)."""

    objects: dict[Kind, list[dict]] = field(default_factory=dict)

    def __getitem__(self, kind: Kind) -> list[dict]:
        return self.objects.get(kind, [])


async def read_cluster(client: Client) -> Cluster:
    cluster = Cluster()
    for kind in READS:
        try:
            cluster.objects[kind], _ = await client.list(kind)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
    return cluster


@dataclass
class PodClaim:
    """One ``spec.deviceClaims`` entry of the pod and the claim it uses."""

    entry: str
    source: str  # claim, claimName or claimTemplateName
    value: object
    claim: dict | None  # None: a claimName naming no claim
    made: bool  # made in memory, as the claims controller would
    namespace: str = ""

    def describe(self) -> dict:
        found = {"entry": self.entry, "source": self.source}
        if self.source == "claimTemplateName":
            found["template"] = self.value
        found["claim"] = str(ClaimKey.of(self.claim)) if self.claim is not None else f"{self.namespace}/{self.value}"
        found["found"] = self.claim is not None
        found["madeInMemory"] = self.made
        return found


async def schedule(client: Client, pod: dict, *, config: config_.Configuration | None = None, policy: str = score.DEFAULT_POLICY,
                   limits: Limits = Limits(), as_served: bool = False, clock: clocks.Clock | None = None) -> dict:  # fmt: skip
    """The dry run's report (see the module docstring). Raises :class:`InputError` for a pod that
    cannot be considered; a pod that fits nowhere is a report with ``node: ""``."""
    clock = clock or clocks.SystemClock()
    read = ReadOnly(client)
    cluster = await read_cluster(read)
    pod = prepared(pod)
    profile = _profile(config or config_.default(), pod)
    replacing = leave_out_twin(cluster, pod)
    nodes = [with_kubelet_defaults(n) for n in cluster[NODES]] if as_served else cluster[NODES]
    allocator = Allocator(read, policy=policy, limits=limits, clock=clock)
    devices = AllocatorDevices(allocator, read, clock=clock)
    _fill(allocator, devices, cluster, nodes)
    first = await allocate_pending(allocator, devices, read, cluster, now=clocks.rfc3339(clock.now())) if as_served else []
    claims = pod_claims(pod, devices.claims, cluster[TEMPLATES])
    for item in claims:
        if item.made:
            _take_claim(allocator, devices, item.claim)
    framework = Framework(dataclasses.replace(profile, percentage_of_nodes_to_score=100), device_plugin=devices)
    try:
        state = CycleState()
        result = await framework.schedule_pod(state, pod, _snapshot(nodes, cluster[PODS], pod))
    finally:
        await framework.aclose()
    report = _outcome(state.attempt, pod, result, clocks.rfc3339(clock.now()))
    report["claims"] = [_claim_report(allocator, state, item, report["node"]) for item in claims]
    if replacing is not None:
        report["replacing"] = replacing
    if as_served:
        report["allocatedFirst"] = first
    return report


# ------------------------------------------------------------------ the pod
def prepared(pod: dict) -> dict:
    """The pod as the scheduler would see it fresh: a namespace, a uid, no status."""
    if not isinstance(pod, dict) or pod.get("kind") != "Pod" or pod.get("apiVersion") != "v1":
        raise InputError(f"not a Pod (apiVersion v1, kind Pod): {_kind_of(pod)}")
    pod = copy.deepcopy(pod)
    meta = pod.setdefault("metadata", {})
    if not meta.get("name"):
        if not meta.get("generateName"):
            raise InputError("the Pod has no metadata.name")
        meta["name"] = meta["generateName"] + MADE_SUFFIX
    meta.setdefault("namespace", "default")
    meta.setdefault("uid", DRY_RUN_UID)
    pod.setdefault("spec", {})
    pod["status"] = {}
    return pod


def _kind_of(obj) -> str:
    if not isinstance(obj, dict):
        return f"a {type(obj).__name__}"
    return f"apiVersion {obj.get('apiVersion')!r}, kind {obj.get('kind')!r}"


def _profile(config: config_.Configuration, pod: dict) -> config_.Profile:
    name = pod["spec"].get("schedulerName") or config_.DEFAULT_SCHEDULER_NAME
    profile = config.profile(name)
    if profile is None:
        known = ", ".join(p.scheduler_name for p in config.profiles)
        raise InputError(f'no profile has schedulerName "{name}" (profiles: {known}): the scheduler leaves this pod alone')
    return profile


def pod_claims(pod: dict, claims: dict[tuple[str, str], dict], templates: list[dict]) -> list[PodClaim]:
    """The pod's claims: the named ones as they are (``claims`` by namespace and name), the others
    made from the pod's spec or ``templates`` as the claims controller would make them (recorded in
    the pod's ``status.deviceClaimStatuses``, as it records them)."""
    namespace = pod["metadata"]["namespace"]
    templates = {t["metadata"]["name"]: t for t in templates if t["metadata"].get("namespace", "") == namespace}
    found, statuses = [], []
    for entry, source, value in podclaims.claim_sources(pod):
        if source == "claimName":
            found.append(PodClaim(entry, source, value, claims.get((namespace, value)), made=False, namespace=namespace))
            continue
        claim = _made_claim(pod, entry, source, value, templates)
        found.append(PodClaim(entry, source, value, claim, made=True, namespace=namespace))
        statuses.append({"name": entry, "deviceClaimName": claim["metadata"]["name"]})
    if statuses:
        pod["status"]["deviceClaimStatuses"] = statuses
    return found


def _made_claim(pod: dict, entry: str, source: str, value, templates: dict) -> dict:
    meta = pod["metadata"]
    labels, annotations, spec = {}, {}, value
    if source == "claimTemplateName":
        template = templates.get(value)
        if template is None:
            raise InputError(f'deviceClaims[{entry}]: DeviceClaimTemplate.devmgmtproto.k8s.io "{value}" not found in namespace "{meta["namespace"]}"')
        template_meta = (template.get("spec") or {}).get("metadata") or {}
        labels, annotations = dict(template_meta.get("labels") or {}), dict(template_meta.get("annotations") or {})
        spec = (template.get("spec") or {}).get("spec") or {}
    annotations[podclaims.POD_CLAIM_NAME] = entry
    claim_meta = {
        "name": f"{meta['name']}-{entry}-{MADE_SUFFIX}", "namespace": meta["namespace"], "generation": 1, "resourceVersion": "0",
        "annotations": annotations, "ownerReferences": [podclaims.owner_reference(pod)],
    }  # fmt: skip
    if labels:
        claim_meta["labels"] = labels
    return {"apiVersion": kinds.API_VERSION, "kind": "DeviceClaim", "metadata": claim_meta, "spec": copy.deepcopy(spec)}


# ------------------------------------------------------------------ the cluster
def leave_out_twin(cluster: Cluster, pod: dict) -> dict | None:
    """The report is for the pod coming now: a pod of the same namespace and name in the cluster
    is left out (:func:`_snapshot` does not count it), and so are the claims made for it (by its
    uid). Returns what was left out, when it held anything (a node or claims), else None."""
    own = pods_.key(pod)
    twin = next((p for p in cluster[PODS] if pods_.key(p) == own), None)
    if twin is None:
        return None
    uid = twin["metadata"].get("uid", "")
    claims = cluster[kinds.CLAIMS]
    made = [c for c in claims if uid and podclaims.controller_pod_uid(c) == uid]
    cluster.objects[kinds.CLAIMS] = [c for c in claims if not any(c is m for m in made)]
    node = (twin.get("spec") or {}).get("nodeName") or ""
    if not node and not made:
        return None
    return {"pod": own, "node": node, "claims": [str(ClaimKey.of(c)) for c in made]}


def with_kubelet_defaults(node: dict, options: kubelet.KubeletOptions = kubelet.KubeletOptions()) -> dict:
    """The Node as the simulated kubelet reports it: capacity and allocatable defaults where it has
    none (a Node that opts out of the kubelet is left as it is)."""
    if (node["metadata"].get("annotations") or {}).get(kubelet.OPT_OUT) == "false":
        return node
    status = dict(node.get("status") or {})
    if status.get("capacity") and status.get("allocatable"):
        return node
    status["capacity"] = status.get("capacity") or dict(options.capacity)
    status["allocatable"] = status.get("allocatable") or dict(status["capacity"])
    return {**node, "status": status}


def _fill(allocator: Allocator, devices: AllocatorDevices, cluster: Cluster, nodes: list[dict]) -> None:
    cache = allocator.cache
    for pool in cluster[kinds.POOLS]:
        cache.apply_pool(ADDED, pool)
    for device_class in cluster[kinds.CLASSES]:
        cache.apply_class(ADDED, device_class)
    for node in nodes:
        cache.apply_node(ADDED, node)
    for claim in cluster[kinds.PRIVILEGED_CLAIMS]:
        cache.apply_claim(ADDED, claim)
    for claim in cluster[kinds.CLAIMS]:
        _take_claim(allocator, devices, claim)


def _take_claim(allocator: Allocator, devices: AllocatorDevices, claim: dict, event_type: str = ADDED) -> None:
    allocator.cache.apply_claim(event_type, claim)
    if claim.get("kind", kinds.CLAIMS.kind) == kinds.CLAIMS.kind:
        meta = claim["metadata"]
        devices.claims[(meta.get("namespace", ""), meta["name"])] = claim


async def allocate_pending(allocator: Allocator, devices: AllocatorDevices, client: Client, cluster: Cluster, *, now: str) -> list[dict]:
    """What the allocator of ``mockapi serve`` does first: each pending claim it is responsible
    for (not pod-owned, not being deleted), in its queue's order, allocated in memory."""
    pending = [
        c for c in cluster[kinds.CLAIMS] + cluster[kinds.PRIVILEGED_CLAIMS]
        if not (c.get("status") or {}).get("allocations") and not pod_owned(c) and not c["metadata"].get("deletionTimestamp")
    ]  # fmt: skip
    found = []
    for claim in sorted(pending, key=priority):
        plan = await run_cycle(allocator.planner, client, claim)
        key = str(ClaimKey.of(claim))
        if plan.failure is not None:
            found.append({"claim": key, "reason": plan.failure.reason, "message": plan.failure.message})
            continue
        generation = claim["metadata"].get("generation", 0)
        status = claim_status.allocated(claim, plan.solution, plan.configs, generation=generation, now=now)
        _take_claim(allocator, devices, {**claim, "status": status}, MODIFIED)
        found.append({"claim": key, "node": plan.solution.node or "", "devices": _devices(plan.solution)})
    return found


def _snapshot(nodes: list[dict], pods: list[dict], pod: dict) -> Snapshot:
    """Every Node; the pods bound to one and not finished (the pod itself aside); pods nominated
    to a node by an earlier preemption count there for pods of lower priority, as in kube."""
    own = pods_.key(pod)
    snapshot = Snapshot(nodes)
    for other in pods:
        if pods_.key(other) == own or is_terminal(other):
            continue
        nominated = (other.get("status") or {}).get("nominatedNodeName")
        if (other.get("spec") or {}).get("nodeName"):
            snapshot.add_pod(other)
        elif nominated and not other["metadata"].get("deletionTimestamp"):
            snapshot.nominate(other, nominated)
    return snapshot


# ------------------------------------------------------------------ the report
def _outcome(attempt: attempts.Attempt, pod: dict, result, now: str) -> dict:
    attempt.time = now
    if isinstance(result, FitError):
        attempt.outcome = attempts.UNSCHEDULABLE if result.status is None else attempts.SCHEDULER_ERROR
        attempt.message = result.message()
        attempt.nominated_node = result.nominated_node
    else:
        attempt.outcome, attempt.node = SCHEDULABLE, result.node
        attempt.message = f"would assign {pods_.key(pod)} to {result.node}"
    report = {"dryRun": True, **attempt.as_dict()}
    if isinstance(result, FitError) and result.victims:
        report["victims"] = [pods_.key(victim) for victim in result.victims]
    return report


def _claim_report(allocator: Allocator, state: CycleState, item: PodClaim, node: str) -> dict:
    report = item.describe()
    if item.claim is None:
        return report
    status = item.claim.get("status") or {}
    if status.get("allocations"):
        report["allocated"] = {"node": status.get("nodeName", ""), "devices": [f"{a['devicePoolName']}/{a['deviceName']}" for a in status["allocations"]]}
    elif not item.made:
        condition = claim_status.condition_of(item.claim)
        report["allocated"] = None
        if condition is not None:
            report["condition"] = {k: condition[k] for k in ("reason", "message") if k in condition}
    found: PodClaims | None = state.get(DEVICE_CLAIMS)
    solution = (found.found_on(node) if found is not None and node else {}).get(ClaimKey.of(item.claim))
    if solution is not None:
        report["devices"] = _devices(solution)
    report["explain"] = explain_claim(allocator.planner, item.claim)
    return report


def _devices(solution) -> list[str]:
    return [f"{pick.device.pool.name}/{pick.device.name}" for picks in solution.picks for pick in picks]
