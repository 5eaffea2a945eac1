"""NodeResourcesFit: the pod's requests against ``status.allocatable`` minus what the node's pods
request (kube's plugin).

Filter checks the pod count (``Too many pods``), then cpu, memory, ephemeral-storage and every
requested extended resource (``Insufficient cpu``, ...), giving every shortfall. A shortfall even on
an empty node is UnschedulableAndUnresolvable (preemption cannot help), any other Unschedulable.

Score follows ``scoringStrategy`` (default ``LeastAllocated`` with cpu and memory weighted 1):
per resource with a non-zero allocatable, ``LeastAllocated`` scores ``(allocatable - requested) *
100 / allocatable`` and ``MostAllocated`` ``requested * 100 / allocatable`` (integer division, as
kube), where requested includes the pod and uses the non-zero defaults for cpu and memory; the
node's score is the weighted mean.
"""

from __future__ import annotations

from mockapi.controllers.scheduler import events, pods as pods_, status as status_
from mockapi.controllers.scheduler.plugin import MAX_NODE_SCORE, Plugin

LEAST_ALLOCATED, MOST_ALLOCATED = "LeastAllocated", "MostAllocated"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED)
DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
FIXED = (pods_.CPU, pods_.MEMORY, pods_.EPHEMERAL_STORAGE)
CPU_MEMORY = (pods_.CPU, pods_.MEMORY)
CHECKS = ("NodeResourcesFit", "checks")  # the cycle state's key for what Filter compares


def insufficient(requested: pods_.Resources, node_info, *, ignored: frozenset = frozenset()) -> list[tuple[str, bool]]:
    """Each shortfall as (reason, unresolvable) — kube's ``fitsRequest``."""
    found = []
    allowed_pods = node_info.allocatable.get(pods_.PODS, 0)
    if len(node_info.pods) + 1 > allowed_pods:
        found.append(("Too many pods", False))  # kube never marks the pod count unresolvable
    for name in FIXED + tuple(sorted(n for n in requested if pods_.is_scalar(n) and n not in ignored)):
        want = requested.get(name, 0)
        if want <= 0:
            continue
        have = node_info.allocatable.get(name, 0)
        if want > have - node_info.requested.get(name, 0):
            found.append((f"Insufficient {name}", want > have))
    return found


class NodeResourcesFit(Plugin):
    NAME = "NodeResourcesFit"
    PURE_FILTER = True
    PURE_SCORE = True
    EVENTS = (events.POD_DELETE, events.NODE_ADD, events.NODE_UPDATE)

    @classmethod
    def default_args(cls) -> dict:
        return {"scoringStrategy": {"type": LEAST_ALLOCATED, "resources": DEFAULT_RESOURCES}, "ignoredResources": []}

    @classmethod
    def validate_args(cls, args: dict) -> list[tuple[str, str]]:
        problems = []
        strategy = args.get("scoringStrategy") or {}
        if strategy.get("type", LEAST_ALLOCATED) not in STRATEGIES:
            problems.append(("scoringStrategy.type", f'Unsupported value: "{strategy.get("type")}": supported values: "{LEAST_ALLOCATED}", "{MOST_ALLOCATED}"'))
        for i, resource in enumerate(strategy.get("resources") or []):
            weight = resource.get("weight", 1)
            if not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= 100:
                problems.append((f"scoringStrategy.resources[{i}].weight", f"Invalid value: {weight!r}: resource weight of {resource.get('name')} should be in range [1, 100]"))
            if not resource.get("name"):
                problems.append((f"scoringStrategy.resources[{i}].name", "Required value"))
        return problems

    def __init__(self, args: dict | None = None, handle=None) -> None:
        super().__init__(args, handle)
        strategy = {**self.default_args()["scoringStrategy"], **(self.args.get("scoringStrategy") or {})}
        self.strategy = strategy["type"]
        self.resources = [(r["name"], int(r.get("weight", 1))) for r in strategy.get("resources") or DEFAULT_RESOURCES]
        self.ignored = frozenset(self.args.get("ignoredResources") or ())

    def pre_filter(self, state, pod, snapshot):
        state[self.NAME] = (pods_.requests(pod), pods_.requests(pod, non_zero=True))
        return status_.SUCCESS

    def _requests(self, state, pod):
        found = state.get(self.NAME)
        if found is None:
            found = state[self.NAME] = (pods_.requests(pod), pods_.requests(pod, non_zero=True))
        return found

    def _checks(self, state, pod) -> tuple[tuple[str, int], ...]:
        """The amounts :func:`insufficient` compares, in its order (once per cycle)."""
        found = state.get(CHECKS)
        if found is None:
            requested = self._requests(state, pod)[0]
            names = FIXED + tuple(sorted(n for n in requested if pods_.is_scalar(n) and n not in self.ignored))
            found = state[CHECKS] = tuple((name, requested[name]) for name in names if requested.get(name, 0) > 0)
        return found

    def filter(self, state, pod, node_info):
        allocatable, used = node_info.allocatable, node_info.requested
        if len(node_info.pods) < allocatable.get(pods_.PODS, 0):  # the common case, without building reasons
            for name, want in self._checks(state, pod):
                if want > allocatable.get(name, 0) - used.get(name, 0):
                    break
            else:
                return status_.SUCCESS
        shortfalls = insufficient(self._requests(state, pod)[0], node_info, ignored=self.ignored)
        if not shortfalls:
            return status_.SUCCESS
        reasons = tuple(reason for reason, _ in shortfalls)
        if any(unresolvable for _, unresolvable in shortfalls):
            return status_.unresolvable(*reasons)
        return status_.unschedulable(*reasons)

    def score(self, state, pod, node_info):
        requested, non_zero = self._requests(state, pod)
        total = weights = 0
        for name, weight in self.resources:
            if name in CPU_MEMORY:  # _allocation's first case, inline: every node, every pod
                allocatable, used = node_info.allocatable.get(name, 0), node_info.non_zero_requested.get(name, 0) + non_zero.get(name, 0)
            else:
                allocatable, used = self._allocation(node_info, name, requested, non_zero)
            if allocatable == 0:
                continue
            total += self._resource_score(used, allocatable) * weight
            weights += weight
        return total // weights if weights else 0

    @staticmethod
    def _allocation(node_info, name: str, requested, non_zero) -> tuple[int, int]:
        if name in (pods_.CPU, pods_.MEMORY):
            return node_info.allocatable.get(name, 0), node_info.non_zero_requested.get(name, 0) + non_zero.get(name, 0)
        want = requested.get(name, 0)
        if want == 0 and pods_.is_scalar(name):
            return 0, 0
        return node_info.allocatable.get(name, 0), node_info.requested.get(name, 0) + want

    def _resource_score(self, used: int, allocatable: int) -> int:
        if self.strategy == MOST_ALLOCATED:
            return min(used, allocatable) * MAX_NODE_SCORE // allocatable
        if used > allocatable:
            return 0
        return (allocatable - used) * MAX_NODE_SCORE // allocatable
