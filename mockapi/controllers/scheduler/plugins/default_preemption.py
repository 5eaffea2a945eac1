"""DefaultPreemption: when no node fits, find one where evicting lower-priority pods would make
room (kube's PostFilter plugin, without PodDisruptionBudgets).

Per node that rejected the pod as Unschedulable (UnschedulableAndUnresolvable nodes are "not
helpful"), remove every pod of lower priority and run the filters again; if the pod fits, add the
removed pods back one by one, most important first (higher priority, then earlier start), keeping
each that still leaves room — those left out are the victims. Among the candidate nodes kube's
``pickOneNodeForPreemption`` picks the one with the lowest highest-victim priority, then the lowest
sum of victim priorities (each shifted by 2^31, so fewer victims weigh less), then the fewest
victims, then the latest start among its highest-priority victims, then the first by name. The result nominates that node and lists the
victims; the caller deletes them and sets the pod's ``status.nominatedNodeName``.
"""

from __future__ import annotations

from mockapi.controllers.scheduler import pods as pods_, status as status_
from mockapi.controllers.scheduler.framework import reason_histogram
from mockapi.controllers.scheduler.plugin import Plugin, PostFilterResult
from mockapi.controllers.scheduler.status import Code

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."


def _start(pod: dict) -> str:
    return (pod.get("status") or {}).get("startTime") or pod["metadata"].get("creationTimestamp", "")


def importance(pod: dict) -> tuple:
    """Sort key, most important first: higher priority, then earlier start (kube's ``MoreImportantPod``)."""
    return (-pods_.priority(pod), _start(pod), pods_.key(pod))


class DefaultPreemption(Plugin):
    NAME = "DefaultPreemption"

    def post_filter(self, state, pod, snapshot, statuses):
        if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
            return PostFilterResult(status_.unschedulable(NEVER, plugin=self.NAME))
        outcomes: dict[str, status_.Status] = {}
        candidates = {}
        for info in snapshot.node_infos():
            status = statuses.get(info.name)
            if status is None:
                continue
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                outcomes[info.name] = status_.unresolvable(NOT_HELPFUL)
                continue
            victims = self.select_victims(state, pod, info)
            if victims is None:
                outcomes[info.name] = status_.unschedulable(NO_VICTIMS)
            else:
                candidates[info.name] = victims
        if not candidates:
            message = f"preemption: 0/{len(snapshot)} nodes are available: {reason_histogram(outcomes.values())}."
            return PostFilterResult(status_.unschedulable(message, plugin=self.NAME))
        node = pick_one_node(candidates)
        return PostFilterResult(status_.SUCCESS, node, candidates[node])

    def select_victims(self, state, pod: dict, info) -> list[dict] | None:
        """The fewest lower-priority pods whose leaving makes ``pod`` fit on ``info``'s node, or None."""
        ours = pods_.priority(pod)
        lower = sorted((p for p in info.pods.values() if pods_.priority(p) < ours), key=importance)
        trial = info.clone()
        for victim in lower:
            trial.remove_pod(pods_.key(victim))
        if not self.handle.run_filters(state, pod, trial).success:
            return None
        victims = []
        for candidate in lower:  # reprieve the most important first
            trial.add_pod(candidate)
            if not self.handle.run_filters(state, pod, trial).success:
                trial.remove_pod(pods_.key(candidate))
                victims.append(candidate)
        return victims


def pick_one_node(candidates: dict[str, list[dict]]) -> str:
    def cost(name: str) -> tuple:
        victims = candidates[name]
        if not victims:
            return (0, -(2**63), 0, 0, "", name)
        highest = max(pods_.priority(v) for v in victims)
        earliest_of_highest = min(_start(v) for v in victims if pods_.priority(v) == highest)
        # kube adds MaxInt32+1 to each priority before summing: with negative priorities allowed,
        # one more victim always weighs more than any difference in priority.
        total = sum(pods_.priority(v) + 2**31 for v in victims)
        return (1, highest, total, len(victims), _negate(earliest_of_highest), name)

    return min(candidates, key=cost)


def _negate(text: str) -> tuple:
    """A key under which ``min`` prefers the later timestamp."""
    return tuple(-ord(c) for c in text)
