"""The small plugins: SchedulingGates, PrioritySort, NodeName, NodeUnschedulable, DefaultBinder.

Names, messages and codes are kube's (``pkg/scheduler/framework/plugins/...``)."""

from __future__ import annotations

from mockapi.controllers.scheduler import events, pods as pods_, status as status_
from mockapi.controllers.scheduler.plugin import Plugin

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


class SchedulingGates(Plugin):
    """PreEnqueue: a pod with ``spec.schedulingGates`` stays out of activeQ until they are removed."""

    NAME = "SchedulingGates"
    EVENTS = (events.ClusterEvent(events.POD, events.UPDATE, "PodUpdate"),)

    def pre_enqueue(self, pod):
        gates = [g.get("name", "") for g in (pod.get("spec") or {}).get("schedulingGates") or []]
        if not gates:
            return status_.SUCCESS
        return status_.unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]", plugin=self.NAME)


class PrioritySort(Plugin):
    """QueueSort: higher ``spec.priority`` first, then earlier creation (the queue applies this order)."""

    NAME = "PrioritySort"

    def less(self, a: dict, b: dict) -> bool:
        return (-pods_.priority(a), pods_.created(a)) < (-pods_.priority(b), pods_.created(b))


class NodeName(Plugin):
    NAME = "NodeName"
    PURE_FILTER = True
    EVENTS = (events.NODE_ADD, events.NODE_UPDATE)
    REASON = "node(s) didn't match the requested node name"

    def filter(self, state, pod, node_info):
        wanted = (pod.get("spec") or {}).get("nodeName")
        if wanted and wanted != node_info.name:
            return status_.unresolvable(self.REASON)
        return status_.SUCCESS


class NodeUnschedulable(Plugin):
    NAME = "NodeUnschedulable"
    PURE_FILTER = True
    EVENTS = (events.NODE_ADD, events.NODE_UPDATE)
    REASON = "node(s) were unschedulable"

    def filter(self, state, pod, node_info):
        if not node_info.spec().get("unschedulable"):
            return status_.SUCCESS
        taint = {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
        if pods_.tolerates(pods_.tolerations(pod), taint):
            return status_.SUCCESS
        return status_.unresolvable(self.REASON)


class DefaultBinder(Plugin):
    """Bind through the framework's binder (the controller's: POST ``pods/{name}/binding``)."""

    NAME = "DefaultBinder"

    async def bind(self, state, pod, node_name):
        if self.handle is None or self.handle.binder is None:
            return status_.error("no binder configured")
        await self.handle.binder(pod, node_name)
        return status_.SUCCESS
