"""The simulated kubelet's pod admission: what kube's kubelet checks in ``canAdmitPod`` before it runs
a pod bound to its node (``pkg/kubelet/lifecycle/predicate.go``, the resource part of
``generalFilter``: the scheduler's NodeResourcesFit rules).

Per node, an :class:`Admission` holds the pods admitted there (non-terminal) and their requests
summed, against the node's ``status.allocatable``. A pod is admitted when it fits next to the pods
admitted before it: the pod count first (``allocatable.pods``), then cpu, memory,
ephemeral-storage and each requested scalar resource — an *extended* resource the node does not
list is not counted (kube's ``removeMissingExtendedResources``). The requests are the scheduler's
(:func:`mockapi.controllers.scheduler.pods.requests`), so the kubelet never disagrees with it about
what a pod asks for.

A pod that does not fit is rejected with the first shortfall, as kube's ``rejectPod`` writes it:
reason ``OutOf<resource>`` (``OutOfcpu``, ``OutOfpods``, ...) and the message of kube's
``InsufficientResourceError``: ``Node didn't have enough resource: cpu, requested: 1000, used: 500,
capacity: 1000`` (cpu in millicores, the rest in units).

The scheduler never overcommits a node, so on the common path the check is a handful of integer
compares; pods get rejected when something bypassed it (``spec.nodeName`` given at create) or the
node changed under its pods (created again, or its allocatable changed: the pods are admitted
again in creation order, as a restarted kubelet does).
"""

from __future__ import annotations

from mockapi.controllers.scheduler import pods as pods_

FIXED = (pods_.CPU, pods_.MEMORY, pods_.EPHEMERAL_STORAGE)
REJECTED_PREFIX = "Pod was rejected: "  # kube's rejectPod puts it before the admission's message
PodKey = tuple[str, str]
Rejection = tuple[str, str]  # (reason, message without REJECTED_PREFIX)


class Admission:
    """The pods admitted on one node (by uid and allocatable of the Node they were admitted to)."""

    __slots__ = ("uid", "source", "allocatable", "pods", "used")

    def __init__(self, uid: str, allocatable: dict) -> None:
        self.uid = uid
        self.source = allocatable  # status.allocatable as read: a change means admitting again
        self.allocatable = pods_.resource_list(allocatable)
        self.pods: dict[PodKey, pods_.Resources] = {}
        self.used: pods_.Resources = {}

    def same_node(self, uid: str, allocatable: dict) -> bool:
        return uid == self.uid and allocatable == self.source

    def admit(self, key: PodKey, pod: dict, *, check: bool = True) -> Rejection | None:
        """Count the pod here if it fits (always, without ``check``); else why not."""
        if key in self.pods:
            return None
        requested = pods_.requests(pod)
        if check:
            rejection = self.rejection(requested)
            if rejection is not None:
                return rejection
        self.pods[key] = requested
        for name, value in requested.items():
            self.used[name] = self.used.get(name, 0) + value
        return None

    def release(self, key: PodKey) -> None:
        requested = self.pods.pop(key, None)
        for name, value in (requested or {}).items():
            self.used[name] -= value

    def rejection(self, requested: pods_.Resources) -> Rejection | None:
        """kube's ``fitsRequest`` order; the first shortfall as (reason, message)."""
        allowed = self.allocatable.get(pods_.PODS, 0)
        if len(self.pods) + 1 > allowed:
            return _insufficient(pods_.PODS, 1, len(self.pods), allowed)
        for name in FIXED:
            want = requested.get(name, 0)
            if want > 0 and want > self.allocatable.get(name, 0) - self.used.get(name, 0):
                return _insufficient(name, want, self.used.get(name, 0), self.allocatable.get(name, 0))
        for name in sorted(n for n in requested if pods_.is_scalar(n) and (n in self.allocatable or not _extended(n))):
            want, have, used = requested[name], self.allocatable.get(name, 0), self.used.get(name, 0)
            if want > 0 and want > have - used:
                return _insufficient(name, want, used, have)
        return None


def _insufficient(name: str, requested: int, used: int, capacity: int) -> Rejection:
    return f"OutOf{name}", f"Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}"


def _extended(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: a domain-prefixed name outside ``kubernetes.io/``."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def rejected_status(pod: dict, rejection: Rejection, *, now: str, stopped: dict | None = None) -> dict:
    """What kube's ``rejectPod`` sets: phase Failed, the reason and "Pod was rejected: <message>";
    the start time if the pod has none (the status manager's). ``stopped``: a running pod's status
    with its containers stopped, merged under it."""
    reason, message = rejection
    status = dict(stopped or {})
    status.update({"phase": "Failed", "reason": reason, "message": REJECTED_PREFIX + message})
    if not (pod.get("status") or {}).get("startTime"):
        status["startTime"] = now
    return status
