"""What the scheduler knows about each node: kube's ``NodeInfo`` and the cycle's ``Snapshot``.

A :class:`NodeInfo` holds the Node dict, the pods on it (bound, or assumed by a cycle that has not
bound yet) and their requests summed — ``requested`` for fitting, ``non_zero_requested`` (kube's
defaults for containers that request nothing) for scoring — next to ``allocatable`` from
``status.allocatable``. A :class:`Snapshot` holds them by node name; adding a pod counts it at once,
so the next cycle sees an assumed pod exactly as a bound one. Pods whose node is not known (yet)
are kept aside and counted when it appears, as kube keeps "ghost" node infos.

A cycle that awaits (an HTTP extender's call) reads a frozen view (:meth:`Snapshot.freeze`): the
informers go on changing the live snapshot meanwhile, which copies a NodeInfo the view shares
before its first change (copy on write), so the cycle sees the cluster as it was when it began —
kube's snapshot, taken once per cycle and never changed under it.
"""

from __future__ import annotations

import itertools

from mockapi.controllers.scheduler import pods as pods_
from mockapi.controllers.scheduler.pods import Resources

_generations = itertools.count(1)  # every change to any NodeInfo gets a number never used before


class NodeInfo:
    __slots__ = ("node", "name", "pods", "requested", "non_zero_requested", "allocatable", "_requests", "_spec", "generation")

    def __init__(self, node: dict | None, name: str = "") -> None:
        self.name = name or (node or {}).get("metadata", {}).get("name", "")
        self.pods: dict[str, dict] = {}
        self.requested: Resources = {}
        self.non_zero_requested: Resources = {}
        self._requests: dict[str, tuple[Resources, Resources]] = {}
        self.node = None
        self.generation = next(_generations)  # changes with the node or its pods (kube's NodeInfo.Generation)
        self._spec: dict = {}
        self.allocatable: Resources = {}
        if node is not None:
            self.set_node(node)

    def set_node(self, node: dict) -> None:
        self.node = node
        self.generation = next(_generations)
        self._spec = node.get("spec") or {}
        self.allocatable = pods_.resource_list((node.get("status") or {}).get("allocatable"))

    def add_pod(self, pod: dict) -> None:
        key = pods_.key(pod)
        if key in self.pods:
            self.remove_pod(key)
        wanted = (pods_.requests(pod), pods_.requests(pod, non_zero=True))
        self.pods[key] = pod
        self.generation = next(_generations)
        self._requests[key] = wanted
        _add(self.requested, wanted[0], 1)
        _add(self.non_zero_requested, wanted[1], 1)

    def remove_pod(self, key: str) -> bool:
        if self.pods.pop(key, None) is None:
            return False
        self.generation = next(_generations)
        wanted = self._requests.pop(key)
        _add(self.requested, wanted[0], -1)
        _add(self.non_zero_requested, wanted[1], -1)
        return True

    def labels(self) -> dict:
        return ((self.node or {}).get("metadata") or {}).get("labels") or {}

    def spec(self) -> dict:
        return self._spec if self.node is not None else {}

    def clone(self) -> "NodeInfo":
        copy = NodeInfo(None, self.name)
        copy.node, copy.allocatable, copy._spec, copy.generation = self.node, self.allocatable, self._spec, self.generation
        copy.pods, copy._requests = dict(self.pods), dict(self._requests)
        copy.requested, copy.non_zero_requested = dict(self.requested), dict(self.non_zero_requested)
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, requested={self.requested})"


def _add(into: Resources, amounts: Resources, sign: int) -> None:
    for name, value in amounts.items():
        into[name] = into.get(name, 0) + sign * value


def is_terminal(pod: dict) -> bool:
    """Succeeded and Failed pods hold nothing on their node (kube's informer filters them out)."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class Snapshot:
    """Node infos by name, plus where each counted pod is."""

    def __init__(self, nodes=(), pods=()) -> None:
        self._infos: dict[str, NodeInfo] = {}
        self.pod_node: dict[str, str] = {}  # pod key → the node it counts on
        self.nominated: dict[str, tuple[dict, str]] = {}  # pod key → (pod, node) preemption made room on
        self._listed: tuple[NodeInfo, ...] | None = None  # node_infos(), while no node comes or goes
        self._shared: set[str] = set()  # names whose NodeInfo a frozen view holds: copied before a change
        self._views = 0  # frozen views not thawed yet
        for node in nodes:
            self.set_node(node)
        for pod in pods:
            self.add_pod(pod)

    # ---------------------------------------------------------------- nodes
    def set_node(self, node: dict) -> NodeInfo:
        name = node["metadata"]["name"]
        info = self._infos.get(name)
        if info is None:
            info = self._infos[name] = NodeInfo(node)
            self._listed = None
        else:
            if info.node is None:
                self._listed = None
            info = self._own(name, info)
            info.set_node(node)
        return info

    def remove_node(self, name: str) -> None:
        info = self._infos.get(name)
        if info is None:
            return
        self._listed = None
        if info.pods:
            info = self._own(name, info)
            info.node = None  # pods stay counted until they go (kube's ghost node info)
            info.generation = next(_generations)
        else:
            del self._infos[name]

    # ----------------------------------------------------------------- pods
    def add_pod(self, pod: dict, node_name: str = "") -> None:
        """Count ``pod`` on ``node_name`` (default: its ``spec.nodeName``); moves it if counted elsewhere."""
        node_name = node_name or (pod.get("spec") or {}).get("nodeName") or ""
        if not node_name:
            return
        key = pods_.key(pod)
        if self.pod_node.get(key, node_name) != node_name:
            self.remove_pod(key)
        info = self._infos.get(node_name)
        if info is None:
            info = self._infos[node_name] = NodeInfo(None, node_name)
        else:
            info = self._own(node_name, info)
        info.add_pod(pod)
        self.pod_node[key] = node_name
        self.nominated.pop(key, None)

    # ---------------------------------------------------------- nominations
    def nominate(self, pod: dict, node_name: str) -> None:
        """``pod`` will go to ``node_name`` once its victims are gone: lower-priority pods must not
        take that room meanwhile (kube's nominator)."""
        self.nominated[pods_.key(pod)] = (pod, node_name)

    def forget_nomination(self, key: str) -> None:
        self.nominated.pop(key, None)

    def nominated_on(self, node_name: str, *, at_least: int, besides: str) -> list[dict]:
        """Pods nominated to ``node_name`` with priority ≥ ``at_least``, other than ``besides``."""
        return [p for key, (p, name) in self.nominated.items() if name == node_name and key != besides and pods_.priority(p) >= at_least]

    def remove_pod(self, pod: dict | str) -> bool:
        key = pod if isinstance(pod, str) else pods_.key(pod)
        node_name = self.pod_node.pop(key, None)
        if node_name is None:
            return False
        info = self._own(node_name, self._infos[node_name])
        info.remove_pod(key)
        if info.node is None and not info.pods:
            del self._infos[node_name]
        return True

    # ---------------------------------------------------------- frozen views
    def freeze(self) -> "Snapshot":
        """A view of the snapshot as it is now, for a cycle that awaits: it shares every NodeInfo,
        and this snapshot copies one before changing it while the view is not thawed. Read the view,
        never change it; :meth:`thaw` it when the cycle is done with it."""
        view = Snapshot()
        view._infos, view.pod_node, view.nominated, view._listed = dict(self._infos), dict(self.pod_node), dict(self.nominated), self._listed
        self._shared = set(self._infos)  # (every current one: an earlier view may hold others as well)
        self._views += 1
        return view

    def thaw(self, view: "Snapshot") -> None:
        """The cycle is done with ``view``: once no view is left, NodeInfos are changed in place again."""
        self._views -= 1
        if not self._views:
            self._shared = set()

    def _own(self, name: str, info: NodeInfo) -> NodeInfo:
        """``info`` (this snapshot's, under ``name``), ready to change: a copy if a frozen view shares it."""
        if name not in self._shared:
            return info
        self._shared.discard(name)
        copy = self._infos[name] = info.clone()
        self._listed = None  # the listing holds the shared one
        return copy

    # -------------------------------------------------------------- reading
    @property
    def by_name(self) -> dict[str, NodeInfo]:
        """Every NodeInfo by node name, those of deleted nodes whose pods are still counted
        included (``node`` None): read it, never change it."""
        return self._infos

    def get(self, name: str) -> NodeInfo | None:
        info = self._infos.get(name)
        return info if info is not None and info.node is not None else None

    def node_infos(self) -> list[NodeInfo]:
        """The known nodes, by name."""
        if self._listed is None:  # sorted again only when a node came or went
            self._listed = tuple(self._infos[name] for name in sorted(self._infos) if self._infos[name].node is not None)
        return list(self._listed)

    def __len__(self) -> int:
        return sum(1 for info in self._infos.values() if info.node is not None)
