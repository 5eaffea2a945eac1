"""Coscheduling: all-or-nothing for a gang of pods (the scheduler-plugins' lightweight coscheduling).

A pod labelled ``scheduling.x-k8s.io/pod-group: <name>`` with the annotation
``scheduling.x-k8s.io/min-available: <N>`` waits in Permit until N pods of its group (same
namespace) are assigned — bound, or assumed and waiting — then every waiting member is allowed at
once. If that does not happen within ``permitWaitingTimeSeconds`` (default 30), the pod is rejected
(``rejected due to timeout after waiting 30s at plugin Coscheduling``) and its Unreserve rejects
every other waiting member of the group, so none of them keeps its node.
"""

from __future__ import annotations

from mockapi.controllers.scheduler import events, pods as pods_, status as status_
from mockapi.controllers.scheduler.plugin import Plugin

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
MIN_AVAILABLE = "scheduling.x-k8s.io/min-available"
DEFAULT_TIMEOUT = 30


def group_of(pod: dict) -> tuple[str, str] | None:
    meta = pod["metadata"]
    name = (meta.get("labels") or {}).get(GROUP_LABEL)
    return (meta.get("namespace", ""), name) if name else None


def min_available(pod: dict) -> int | None:
    text = (pod["metadata"].get("annotations") or {}).get(MIN_AVAILABLE)
    try:
        return int(text) if text is not None else 1
    except ValueError:
        return None


class Coscheduling(Plugin):
    NAME = "Coscheduling"
    EVENTS = (events.ClusterEvent(events.POD, events.ADD, "PodAdd"),)  # another member may complete the group

    @classmethod
    def default_args(cls) -> dict:
        return {"permitWaitingTimeSeconds": DEFAULT_TIMEOUT}

    @classmethod
    def validate_args(cls, args: dict) -> list[tuple[str, str]]:
        value = args.get("permitWaitingTimeSeconds", DEFAULT_TIMEOUT)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            return [("permitWaitingTimeSeconds", f"Invalid value: {value!r}: must be greater than 0")]
        return []

    def pre_filter(self, state, pod, snapshot):
        if group_of(pod) is not None and min_available(pod) is None:
            text = pod["metadata"]["annotations"][MIN_AVAILABLE]
            return status_.unresolvable(f'invalid {MIN_AVAILABLE} annotation "{text}": must be an integer')
        return status_.SUCCESS

    def permit(self, state, pod, node_name):
        group = group_of(pod)
        if group is None:
            return status_.SUCCESS, 0
        assigned = self._assigned(group)
        if assigned >= (min_available(pod) or 1):
            for waiting in self.handle.iterate_waiting_pods():
                if group_of(waiting.pod) == group:
                    waiting.allow(self.NAME)
            return status_.SUCCESS, 0
        return status_.wait(self.NAME), float(self.args.get("permitWaitingTimeSeconds", DEFAULT_TIMEOUT))

    def unreserve(self, state, pod, node_name):
        group = group_of(pod)
        if group is None:
            return
        for waiting in self.handle.iterate_waiting_pods():
            if waiting.key != pods_.key(pod) and group_of(waiting.pod) == group:
                waiting.reject(self.NAME, "rejection in Unreserve")

    def _assigned(self, group: tuple[str, str]) -> int:
        snapshot = self.handle.snapshot
        return sum(1 for info in snapshot.node_infos() for p in info.pods.values() if group_of(p) == group)

    def reserve(self, state, pod, node_name):
        return status_.SUCCESS
