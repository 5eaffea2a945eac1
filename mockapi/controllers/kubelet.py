"""A simulated kubelet for every Node (kwok's idea): Nodes report ready, bound pods run, deleted pods end.

Informers over Nodes, Pods and DeviceClaims feed one worker through a :class:`KeyQueue`
(level-triggered: each key is looked at afresh before acting — a pod and its claims as the
informers last saw them, kube's kubelet's pod manager; a Node read from the API):

- ``("node", name)`` — a Node without this kubelet's report gets one (status merge patch with the
  resourceVersion read): the capacity/allocatable defaults it lacks, an InternalIP (node *i* of
  ``node_cidr``) and Hostname address, ``nodeInfo``, ``daemonEndpoints`` and kube's four kubelet
  conditions (``Ready=True``, ``KubeletReady``). The same key comes back every
  ``heartbeat_interval`` (staggered per node) to renew the node's Lease in ``kube-node-lease``
  (:mod:`mockapi.controllers.kubelet_lease`: one update, no read), and every
  ``status_report_interval`` (kube's ``nodeStatusReportFrequency``, 5 minutes) the report is
  refreshed as well (one GET and one patch: the conditions' ``lastHeartbeatTime``) — as kube's
  kubelet does since NodeLease.
- ``("pod", namespace, name)`` — a pod bound to a simulated node is first admitted
  (:mod:`mockapi.controllers.kubelet_admit`: it must fit on the node's allocatable next to the pods
  admitted before it, else it is rejected: ``Failed``, ``OutOfcpu``/``OutOfpods``/..., a Warning);
  a Node created again or whose allocatable changed has its pods admitted again in creation order.
  An admitted pod starts once each DeviceClaim it uses is allocated and lists it in
  ``status.podNames`` (else a ``FailedPrepareDynamicResources`` Warning names the claim, once per
  distinct reason, and the pod is looked at again when that claim changes), after
  ``start_delay``: ``phase: Running``, conditions, host and pod IPs (pod IPs from the node's
  ``spec.podCIDR``, else /24 number *i* of ``cluster_cidr``), containers running, and
  ``Pulled``/``Created``/``Started`` Events. A pod with a deletionTimestamp is ended: ``Killing``
  Events; after min(its grace period, ``max_grace``) its containers have exited 0 (``phase:
  Succeeded``, written as a kubelet does before the pod goes), then ``DELETE ?gracePeriodSeconds=0``.
- ``("node-gone", name)`` — kube's pod GC: the pods bound to a deleted Node are marked ``Failed``
  (condition ``DisruptionTarget``, reason ``DeletionByPodGC``) and force-deleted at once;
  those bound to a node this kubelet does not know (never created, or deleted before the binding
  came: a scheduler may choose a node that goes while it decides) after kube's quarantine of
  ``orphan_quarantine`` seconds, if the Node still does not exist then (podgc's ``gcOrphaned``).

A Node annotated ``mockapi.k8s.io/kubelet: "false"`` is left alone, with its pods. Restarting
converges: a running pod is left as it is, a node's report is only refreshed.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from dataclasses import dataclass, field

from mockapi import clock as clocks, errors
from mockapi.client import DELETED, Client, Kind
from mockapi.controllers import kubelet_admit as admit_, kubelet_lease as lease_, kubelet_status as status_
from mockapi.controllers.keyqueue import KeyQueue
from mockapi.controllers.kubelet_ips import Addresses
from mockapi.controllers import informer

log = logging.getLogger("mockapi.kubelet")

NODES, PODS = Kind("v1", "Node"), Kind("v1", "Pod")
CLAIMS = Kind("devmgmtproto.k8s.io/v1alpha1", "DeviceClaim")
OPT_OUT = "mockapi.k8s.io/kubelet"  # "false" on a Node: no simulated kubelet there
DEFAULT_CAPACITY = {"cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "1Ti"}
DEFAULT_GRACE = 30  # a pod's terminationGracePeriodSeconds when it has none
DISRUPTION_TARGET = "DisruptionTarget"  # the condition the pod GC sets before it deletes a pod
PodKey = tuple[str, str]


@dataclass(frozen=True)
class KubeletOptions:
    capacity: dict = field(default_factory=lambda: dict(DEFAULT_CAPACITY))  # also allocatable
    heartbeat_interval: float = 10.0  # seconds between two renewals of a node's Lease (kube's renewInterval)
    status_report_interval: float = 300.0  # seconds between two refreshes of a node's conditions (nodeStatusReportFrequency)
    start_delay: float = 0.0  # seconds from "may start" to Running
    max_grace: float = 0.0  # a deleted pod ends after min(its grace period, this) seconds
    node_cidr: str = "10.0.0.0/16"  # node i's InternalIP is address i+1 of it
    cluster_cidr: str = "10.244.0.0/14"  # node i's pod range is /24 number i of it (without spec.podCIDR)
    kubelet_version: str = "v1.32.0"
    events: bool = True  # record Pulled/Created/Started/Killing Events (one write each)
    orphan_quarantine: float = 40.0  # seconds a pod bound to an unknown node waits before its node is looked up (podgc's quarantineTime)


@dataclass
class _Node:
    simulated: bool
    ready: bool  # reported on (by this kubelet or an earlier run): its pods may start
    address: str = ""  # its InternalIP
    uid: str = ""  # its uid (the Lease's ownerReference)


class Kubelet:
    def __init__(self, client: Client, *, clock: clocks.Clock | None = None, options: KubeletOptions = KubeletOptions()) -> None:
        self.client = client
        self.clock = clock or clocks.SystemClock()
        self.options = options
        self.queue = KeyQueue(monotonic=self.clock.monotonic)
        self.synced = asyncio.Event()
        self._pending_sync = {NODES, PODS, CLAIMS}
        self._nodes: dict[str, _Node] = {}
        self.addresses = Addresses(node_cidr=options.node_cidr, cluster_cidr=options.cluster_cidr)
        self._pods_on: dict[str, set[PodKey]] = {}  # node → the pods bound to it
        self._pods: dict[PodKey, dict] = {}  # the simulated nodes' pods as last seen (informer or own write; read-only)
        self._claims: dict[PodKey, dict] = {}  # every DeviceClaim as last seen (read-only)
        self._waiting: dict[PodKey, set[PodKey]] = {}  # claim → pods waiting for it
        self._waits_for: dict[PodKey, set[PodKey]] = {}  # pod → the claims it waits for
        self._warned: dict[PodKey, str] = {}  # pod → the last FailedPrepareDynamicResources message
        self._ready_since: dict[PodKey, float] = {}  # pod → when it could first start
        self._ending: dict[PodKey, float] = {}  # pod → when its termination began
        self._beats: dict[str, float] = {}  # node → when its Lease was last renewed
        self._reported: dict[str, float] = {}  # node → when its conditions were last written
        self._leases: dict[str, dict] = {}  # node → the Lease last written (renewed without a read)
        self._admissions: dict[str, admit_.Admission] = {}  # node → the pods admitted there
        self._rejected: dict[PodKey, admit_.Rejection] = {}  # pods to be written Failed (not admitted)
        self._last_event_ns = 0
        self._informers: list[asyncio.Task] = []

    # ------------------------------------------------------------------ running
    async def run(self) -> None:
        """Inform, wait for the initial lists, then work until cancelled."""
        handlers = {NODES: self._on_node, PODS: self._on_pod, CLAIMS: self._on_claim}
        self._informers = [asyncio.create_task(self._inform(kind, handle)) for kind, handle in handlers.items()]
        try:
            await self.synced.wait()
            log.info("kubelet synced: %d nodes simulated", sum(n.simulated for n in self._nodes.values()))
            await self._work()
        finally:
            for task in self._informers:
                task.cancel()
            await asyncio.gather(*self._informers, return_exceptions=True)

    def idle(self) -> bool:
        """Synced, and nothing ready to work on (delayed keys — heartbeats, start delays, grace
        periods — do not count)."""
        return self.synced.is_set() and not self.queue.busy()

    async def _inform(self, kind: Kind, handle) -> None:
        await informer.inform(self.client, kind, handle, self._mark_synced, log)

    def _mark_synced(self, kind: Kind) -> None:
        self._pending_sync.discard(kind)
        if not self._pending_sync:
            self.synced.set()

    async def _work(self) -> None:
        while True:
            key = await self.queue.get()
            try:
                await self._reconcile(key)
                self.queue.forget(key)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - one object's trouble never stops the worker
                log.warning("kubelet: %s failed (%s); retrying", key, exc)
                self.queue.retry(key)
            finally:
                self.queue.done(key)
            await asyncio.sleep(0)

    async def _reconcile(self, key: tuple) -> None:
        if key[0] == "pod":
            await self._sync_pod((key[1], key[2]))
        elif key[0] == "node":
            await self._sync_node(key[1])
        else:
            await self._collect_pods_of(key[1])

    # ---------------------------------------------------------------- handlers
    def _on_node(self, event_type: str, node: dict) -> None:
        name = node["metadata"]["name"]
        before = self._nodes.get(name)
        if event_type == DELETED:
            self._nodes.pop(name, None)
            self._admissions.pop(name, None)
            self.addresses.forget_node(name)
            self._forget_node(name)
            self.queue.add(("node-gone", name))
            return
        simulated = (node["metadata"].get("annotations") or {}).get(OPT_OUT) != "false"
        ready = not status_.needs_init(node)
        self._nodes[name] = _Node(simulated, ready, _internal_ip(node), node["metadata"].get("uid", ""))
        self.addresses.observe_node(name, internal_ip=self._nodes[name].address, pod_cidr=(node.get("spec") or {}).get("podCIDR") or "")
        if not simulated:
            return
        if not ready:
            self.queue.add(("node", name))
        elif name not in self._beats and name not in self._reported:  # reported by an earlier run (a restart): heartbeats from now on
            self.queue.add_after(("node", name), self._stagger(name, self.options.heartbeat_interval))
        if ready:
            self._admit_all(name, node)
        if ready and (before is None or not before.simulated or not before.ready):
            for pod in sorted(self._pods_on.get(name, ())):
                self.queue.add(("pod", *pod))

    def _on_pod(self, event_type: str, pod: dict) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if event_type == DELETED:
            self._forget_pod(key, node)
            return
        if not node:
            return
        self._seen_pod(key, pod)
        self._pods_on.setdefault(node, set()).add(key)
        if node not in self._nodes:  # no such Node (yet: the node informer may not have listed it)
            self.queue.add_after(("node-gone", node), self.options.orphan_quarantine)
        ip = (pod.get("status") or {}).get("podIP")
        if ip and not (pod.get("spec") or {}).get("hostNetwork"):
            self.addresses.observe_pod(node, key, ip)
        admission = self._admissions.get(node)
        if admission is not None:
            if _terminal(pod):
                admission.release(key)  # a finished pod holds nothing on its node
                self._rejected.pop(key, None)
            elif status_.started(pod) and key not in self._rejected:
                admission.admit(key, pod, check=False)  # running already (an earlier run admitted it)
        known = self._nodes.get(node)
        if known is not None and known.simulated and (meta.get("deletionTimestamp") or not status_.started(pod)):
            self.queue.add(("pod", *key))

    def _on_claim(self, event_type: str, claim: dict) -> None:
        meta = claim["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if event_type == DELETED:
            self._claims.pop(key, None)
        else:
            self._claims[key] = claim
        for pod in sorted(self._waiting.get((meta.get("namespace", ""), meta["name"]), ())):
            self.queue.add(("pod", *pod))

    def _forget_pod(self, key: PodKey, node: str) -> None:
        for name in [node] if node else [n for n, pods in self._pods_on.items() if key in pods]:  # a relist's tombstone has no spec
            self._pods_on.get(name, set()).discard(key)
            self.addresses.forget_pod(name, key)
            if name in self._admissions:
                self._admissions[name].release(key)
        self._pods.pop(key, None)
        self._rejected.pop(key, None)
        self._unwait(key)
        for memo in (self._warned, self._ready_since, self._ending):
            memo.pop(key, None)
        self.queue.discard(("pod", *key))

    def _wait(self, pod: PodKey, claim: PodKey) -> None:
        self._waiting.setdefault(claim, set()).add(pod)
        self._waits_for.setdefault(pod, set()).add(claim)

    def _unwait(self, pod: PodKey) -> None:
        for claim in self._waits_for.pop(pod, ()):
            self._waiting[claim].discard(pod)
            if not self._waiting[claim]:
                del self._waiting[claim]

    # -------------------------------------------------------------------- nodes
    async def _sync_node(self, name: str) -> None:
        """Report the node's status when it lacks this kubelet's report or the report is due,
        renew its Lease, then come back at its next renewal."""
        known = self._nodes.get(name)
        if known is None or not known.simulated:
            self._forget_node(name)
            return
        now = self.clock.monotonic()
        reported = self._reported.get(name)
        if not known.ready or reported is None or now - reported >= self.options.status_report_interval * 0.99:
            if not await self._report(name, known, now, first=reported is None):
                return
        last = self._beats.get(name)
        if last is None or now - last >= self.options.heartbeat_interval * 0.99:
            self._leases[name] = await lease_.renew(
                self.client, self._leases.get(name), name, known.uid, renew_interval=self.options.heartbeat_interval, now=clocks.rfc3339_micro(self.clock.now()),
            )  # fmt: skip
            last = self._beats[name] = now - (self._stagger(name, self.options.heartbeat_interval) if last is None else 0.0)
        self.queue.add_after(("node", name), max(last + self.options.heartbeat_interval - now, 0.001))

    async def _report(self, name: str, known: _Node, now: float, *, first: bool) -> bool:
        """Write the node's status (the defaults it lacks, the conditions refreshed) with the
        resourceVersion read. False when the Node is gone."""
        node = await self._get(NODES, "", name)
        if node is None:
            return False
        status = status_.node_status(
            node, capacity=self.options.capacity, address=known.address or self.addresses.node_ip(name),
            kubelet_version=self.options.kubelet_version, now=self._now(),
        )  # fmt: skip
        patch = {"metadata": {"resourceVersion": node["metadata"]["resourceVersion"]}, "status": status}
        written = await self.client.patch(NODES, "", name, patch, subresource="status")
        interval = self.options.status_report_interval
        self._reported[name] = now - (self._stagger(name, interval) if first else 0.0)
        self._on_node("MODIFIED", written)  # seen here first: its pods may start now
        return True

    def _forget_node(self, name: str) -> None:
        for memo in (self._beats, self._reported, self._leases):
            memo.pop(name, None)

    @staticmethod
    def _stagger(name: str, interval: float) -> float:
        """A fixed part of an interval per node, so 500 nodes do not beat (or report) at once."""
        return interval * (zlib.crc32(name.encode()) % 1000) / 1000

    # --------------------------------------------------------------------- pods
    def _seen_pod(self, key: PodKey, pod: dict) -> None:
        """Keep the newer of what is cached and ``pod`` (an informer's event may trail our own write)."""
        cached = self._pods.get(key)
        if cached is None or cached["metadata"].get("uid") != pod["metadata"].get("uid") or _rv(pod) >= _rv(cached):
            self._pods[key] = pod

    async def _sync_pod(self, key: PodKey) -> None:
        # from the informer's cache, as kube's kubelet works from its pod manager: no GET per pod (a
        # stale copy's write fails on its resourceVersion, and the newer pod's event comes back here)
        pod = self._pods.get(key)
        node = ((pod or {}).get("spec") or {}).get("nodeName") or ""
        known = self._nodes.get(node)
        if pod is None or known is None or not known.simulated:
            return
        if pod["metadata"].get("deletionTimestamp"):
            await self._end(key, pod, node)
        elif key in self._rejected and not _terminal(pod):
            await self._reject(key, pod, node)
        elif not status_.started(pod) and known.ready:
            if not self._admitted(key, pod, node):
                await self._reject(key, pod, node)
            elif await self._claims_ready(key, pod, node) and self._start_due(key):
                await self._start(key, pod, node)

    # ---------------------------------------------------------------- admission
    def _admitted(self, key: PodKey, pod: dict, node: str) -> bool:
        """kube's ``canAdmitPod``: the pod counts on its node if it fits next to the pods admitted
        there before it (a counter compare on the common path); else it is to be rejected."""
        admission = self._admissions.get(node)
        rejection = None if admission is None else admission.admit(key, pod)
        if rejection is None:
            return True
        self._rejected[key] = rejection
        return False

    def _admit_all(self, name: str, node: dict) -> None:
        """A Node seen for the first time, created again or with another allocatable: its pods are
        admitted again in creation order, as a (re)started kubelet admits them; those that no longer
        fit are rejected (queued to be written Failed)."""
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        uid = node["metadata"].get("uid", "")
        admission = self._admissions.get(name)
        if admission is not None and admission.same_node(uid, allocatable):
            return
        admission = self._admissions[name] = admit_.Admission(uid, allocatable)
        pods = [(key, self._pods[key]) for key in self._pods_on.get(name, ()) if key in self._pods]
        for key, pod in sorted(pods, key=lambda kp: (kp[1]["metadata"].get("creationTimestamp") or "", kp[0])):
            self._rejected.pop(key, None)  # not written yet: judged afresh
            if _terminal(pod):
                continue
            # a pod being deleted still holds its share, and is not rejected (kube admits only new pods)
            rejection = admission.admit(key, pod, check=not pod["metadata"].get("deletionTimestamp"))
            if rejection is not None:
                self._rejected[key] = rejection
                self.queue.add(("pod", *key))

    async def _reject(self, key: PodKey, pod: dict, node: str) -> None:
        """kube's ``rejectPod``: phase Failed with the admission's reason and message, and a Warning
        Event; a running pod's containers stop. Its claims are then released as any finished pod's."""
        rejection = self._rejected[key]
        stopped = status_.terminated_status(pod, now=self._now()) if status_.started(pod) else None
        if await self._write_status(key, pod, admit_.rejected_status(pod, rejection, now=self._now(), stopped=stopped)) is None:
            return
        self._rejected.pop(key, None)
        self._ready_since.pop(key, None)
        self._unwait(key)
        await self._record(pod, node, rejection[0], rejection[1], warning=True, always=True)

    async def _claims_ready(self, key: PodKey, pod: dict, node: str) -> bool:
        """Whether every claim the pod uses is allocated and reserved for it; if not, say which
        (once per reason) and wait for that claim to change."""
        self._unwait(key)
        for entry, claim_name in status_.claim_names(pod):
            problem = f'pod "{key[1]}": DeviceClaim for entry "{entry}" not created yet' if claim_name is None else None
            if claim_name is not None:
                claim = self._claims.get((key[0], claim_name))
                problem = f"fetch DeviceClaim {key[0]}/{claim_name}: not found" if claim is None else status_.claim_problem(pod, claim)
                if problem is not None:
                    self._wait(key, (key[0], claim_name))
            if problem is not None:
                await self._warn(key, pod, node, f"Failed to prepare dynamic resources: {problem}")
                return False
        return True

    def _start_due(self, key: PodKey) -> bool:
        now = self.clock.monotonic()
        since = self._ready_since.setdefault(key, now)
        remaining = since + self.options.start_delay - now
        if remaining > 0:
            self.queue.add_after(("pod", *key), remaining)
            return False
        return True

    async def _start(self, key: PodKey, pod: dict, node: str) -> None:
        host_ip = self._nodes[node].address or self.addresses.node_ip(node)
        pod_ip = host_ip if (pod.get("spec") or {}).get("hostNetwork") else self.addresses.pod_ip(node, key)
        written = await self._write_status(key, pod, status_.running_status(pod, host_ip=host_ip, pod_ip=pod_ip, now=self._now()))
        if written is None:
            return
        self._warned.pop(key, None)
        self._ready_since.pop(key, None)
        for path, container in status_.containers(written):
            image, name = container.get("image", ""), container["name"]
            await self._record(written, node, "Pulled", f'Container image "{image}" already present on machine', path)
            await self._record(written, node, "Created", f"Created container {name}", path)
            await self._record(written, node, "Started", f"Started container {name}", path)

    async def _end(self, key: PodKey, pod: dict, node: str) -> None:
        """A deleted pod: its containers are stopped, then it goes once its grace period is over."""
        now = self.clock.monotonic()
        if key not in self._ending:
            self._ending[key] = now
            if status_.started(pod):
                for path, container in status_.containers(pod):
                    if path.startswith("spec.containers") or container.get("restartPolicy") == "Always":
                        await self._record(pod, node, "Killing", f"Stopping container {container['name']}", path)
        remaining = self._ending[key] + _grace(pod, self.options.max_grace) - now
        if remaining > 0:
            self.queue.add_after(("pod", *key), remaining)
            return
        if (pod.get("status") or {}).get("phase") == status_.RUNNING:
            # the containers stopped: the pod's final status first (what tells others it is done)
            if await self._write_status(key, pod, status_.terminated_status(pod, now=self._now())) is None:
                return
        try:
            await self.client.delete(PODS, *key, grace_period_seconds=0)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise

    async def _collect_pods_of(self, node: str) -> None:
        """kube's pod GC: a Node is gone, so are the pods bound to it — each marked ``Failed`` with
        the ``DisruptionTarget`` condition first, then force-deleted (``markFailedAndDeletePodWithCondition``)."""
        if await self._get(NODES, "", node) is not None:
            return  # created again meanwhile
        for key in sorted(self._pods_on.get(node, ())):
            try:
                await self._mark_failed(key)
                await self.client.delete(PODS, *key, grace_period_seconds=0)
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise

    async def _mark_failed(self, key: PodKey) -> None:
        """``phase: Failed`` and ``DisruptionTarget`` (reason ``DeletionByPodGC``) on a pod not
        finished yet, kept with its other conditions (kube applies them as the field manager
        ``PodGC``; here a /status merge patch on the resourceVersion read, read again on a conflict)."""
        for _ in range(5):
            pod = await self._get(PODS, *key)
            if pod is None or _terminal(pod):
                return
            conditions = [c for c in (pod.get("status") or {}).get("conditions") or () if c.get("type") != DISRUPTION_TARGET]
            conditions.append({"type": DISRUPTION_TARGET, "status": "True", "lastTransitionTime": self._now(),
                               "reason": "DeletionByPodGC", "message": "PodGC: node no longer exists"})
            patch = {"metadata": {"resourceVersion": pod["metadata"]["resourceVersion"]}, "status": {"phase": "Failed", "conditions": conditions}}
            try:
                await self.client.patch(PODS, *key, patch, subresource="status")
                return
            except errors.StatusError as exc:
                if exc.code != 409:
                    raise

    # ------------------------------------------------------------------ helpers
    async def _write_status(self, key: PodKey, pod: dict, status: dict) -> dict | None:
        """A /status merge patch with the resourceVersion read. None when the pod changed
        meanwhile (looked at again) or is gone."""
        patch = {"metadata": {"resourceVersion": pod["metadata"]["resourceVersion"]}, "status": status}
        try:
            written = await self.client.patch(PODS, *key, patch, subresource="status")
        except errors.StatusError as exc:
            if exc.code == 409:
                self.queue.add(("pod", *key))
                return None
            if exc.code == 404:
                return None
            raise
        self._seen_pod(key, written)
        return written

    async def _get(self, kind: Kind, namespace: str, name: str) -> dict | None:
        try:
            return await self.client.get(kind, namespace, name)
        except errors.StatusError as exc:
            if exc.code == 404:
                return None
            raise

    async def _warn(self, key: PodKey, pod: dict, node: str, message: str) -> None:
        if self._warned.get(key) != message:
            self._warned[key] = message
            await self._record(pod, node, "FailedPrepareDynamicResources", message, warning=True, always=True)

    async def _record(self, pod: dict, node: str, reason: str, message: str, field_path: str = "", *, warning: bool = False, always: bool = False) -> None:
        if not (self.options.events or always):
            return
        moment = self.clock.now()
        stamp = self._last_event_ns = max(int(moment.timestamp() * 1e9), self._last_event_ns + 1)
        name = f"{pod['metadata']['name']}.{stamp:x}"
        event = status_.event(pod, reason=reason, message=message, node=node, now=clocks.rfc3339(moment), name=name, field_path=field_path, warning=warning)
        try:
            await self.client.create_event(event)
        except errors.StatusError as exc:  # Events are best effort, as in client-go's recorder
            log.debug("could not record event %s on %s: %s", reason, pod["metadata"]["name"], exc)

    def _now(self) -> str:
        return clocks.rfc3339(self.clock.now())


def _internal_ip(node: dict) -> str:
    for address in (node.get("status") or {}).get("addresses") or ():
        if address.get("type") == "InternalIP":
            return address.get("address", "")
    return ""


def _terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _rv(obj: dict) -> int:
    try:
        return int(obj["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


def _grace(pod: dict, max_grace: float) -> float:
    """Seconds the pod is given to stop: its deletionGracePeriodSeconds (else its spec's, else
    30), shortened to ``max_grace``."""
    grace = pod["metadata"].get("deletionGracePeriodSeconds")
    if grace is None:
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    return max(0.0, min(float(DEFAULT_GRACE if grace is None else grace), max_grace))
