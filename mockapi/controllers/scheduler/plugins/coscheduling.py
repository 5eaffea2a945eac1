"""Coscheduling: all-or-nothing for a gang of pods (scheduler-plugins' ``pkg/coscheduling``, with the
group named by a label and its size by an annotation instead of a PodGroup object).

A pod labelled ``scheduling.x-k8s.io/pod-group: <name>`` with the annotation
``scheduling.x-k8s.io/min-available: <N>`` waits in Permit until N pods of its group (same
namespace) are assigned — bound, or assumed and waiting — then every waiting member is allowed at
once. The first member to wait activates its parked siblings (scheduler-plugins'
``ActivateSiblings``), so the group comes back to the queue together. If the group is not complete
within ``permitWaitingTimeSeconds`` (default 30), the pod is rejected (``rejected due to timeout
after waiting 30s at plugin Coscheduling``) and its Unreserve rejects every other waiting member
of the group (``rejection in Unreserve``), so none of them keeps its node.

When a member finds no node (PostFilter, after preemption found nothing), the group cannot
complete this round: unless enough members are assigned already, or the members still missing
are at most ``podGroupRejectPercentage`` % (default 10) of N, every waiting member is rejected
(``optimistic rejection in PostFilter``) and the pod's message says ``PodGroup <ns>/<name> gets
rejected due to Pod <pod> is unschedulable even after PostFilter``. With
``podGroupBackoffSeconds`` > 0 (default 0: off, as in scheduler-plugins) and at least N members
known, the group is then **backed off**: PreFilter rejects its members (``podGroup <ns>/<name>
failed recently``, UnschedulableAndUnresolvable: no preemption) until the backoff ends, when its
parked members are activated together. **Decision**: scheduler-plugins leaves them to the next
event or periodic flush; activating them at the end of the backoff only makes them come back
sooner.

PreFilter also rejects a member while fewer than N pods of its group exist at all (``pre-filter
pod <pod> cannot find enough sibling pods, current pods number: <n>, minMember of group: <N>``,
UnschedulableAndUnresolvable), as scheduler-plugins' ``PodGroupManager.PreFilter`` does with the
scheduler's pod lister; the pod comes back when a pod is added (the plugin's Pod/Add event). The
pods are counted by a :class:`GroupIndex` the scheduler's own pod informer keeps (the handle's
``group_size``): every pod of the group, bound or not, whatever its scheduler, but the Succeeded
and Failed ones (kube-scheduler's informer leaves them out) and the deleted ones; a pod being
deleted counts until it is gone, as in the lister. The same count decides whether a rejected
group is backed off (scheduler-plugins: the lister's pods ≥ N). A framework run without a
scheduler (tests, dry runs) has no index: neither check is made from it.
"""

from __future__ import annotations

import asyncio

from mockapi.controllers.scheduler import events, pods as pods_, status as status_
from mockapi.controllers.scheduler.nodeinfo import is_terminal
from mockapi.controllers.scheduler.plugin import Plugin, PostFilterResult

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
MIN_AVAILABLE = "scheduling.x-k8s.io/min-available"
DEFAULT_TIMEOUT = 30
DEFAULT_BACKOFF = 0
DEFAULT_REJECT_PERCENTAGE = 10
NO_REASON = status_.unschedulable()  # PostFilter with nothing to say (a pod of no group)


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


def _full_name(group: tuple[str, str]) -> str:
    return f"{group[0]}/{group[1]}"


class Coscheduling(Plugin):
    NAME = "Coscheduling"
    EVENTS = (events.ClusterEvent(events.POD, events.ADD, "PodAdd"),)  # another member may complete the group

    def __init__(self, args: dict | None = None, handle=None) -> None:
        super().__init__(args, handle)
        self.backed_off: dict[tuple[str, str], float] = {}  # group → when its backoff ends (the framework's monotonic clock)

    @classmethod
    def default_args(cls) -> dict:
        return {"permitWaitingTimeSeconds": DEFAULT_TIMEOUT, "podGroupBackoffSeconds": DEFAULT_BACKOFF, "podGroupRejectPercentage": DEFAULT_REJECT_PERCENTAGE}

    @classmethod
    def validate_args(cls, args: dict) -> list[tuple[str, str]]:
        problems = []
        value = args.get("permitWaitingTimeSeconds", DEFAULT_TIMEOUT)
        if not _number(value) or value <= 0:
            problems.append(("permitWaitingTimeSeconds", f"Invalid value: {value!r}: must be greater than 0"))
        value = args.get("podGroupBackoffSeconds", DEFAULT_BACKOFF)
        if not _number(value) or value < 0:
            problems.append(("podGroupBackoffSeconds", f"Invalid value: {value!r}: must be greater than or equal to 0"))
        value = args.get("podGroupRejectPercentage", DEFAULT_REJECT_PERCENTAGE)
        if not _number(value) or not 0 <= value <= 100:
            problems.append(("podGroupRejectPercentage", f"Invalid value: {value!r}: must be in the range [0, 100]"))
        return problems

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, state, pod, snapshot):
        group = group_of(pod)
        if group is None:
            return status_.SUCCESS
        if min_available(pod) is None:
            text = pod["metadata"]["annotations"][MIN_AVAILABLE]
            return status_.unresolvable(f'invalid {MIN_AVAILABLE} annotation "{text}": must be an integer')
        until = self.backed_off.get(group)
        if until is not None:
            if self.handle.monotonic() < until:
                return status_.unresolvable(f"podGroup {_full_name(group)} failed recently")
            del self.backed_off[group]
        size, wanted = self._size(group), min_available(pod)
        if size is not None and size < wanted:
            return status_.unresolvable(
                f"pre-filter pod {pod['metadata']['name']} cannot find enough sibling pods, current pods number: {size}, minMember of group: {wanted}"
            )
        return status_.SUCCESS

    # ----------------------------------------------------------------- PostFilter
    def post_filter(self, state, pod, snapshot, statuses):
        group = group_of(pod)
        if group is None:
            return PostFilterResult(NO_REASON)
        wanted = min_available(pod) or 1
        assigned = self._assigned(group)
        if assigned >= wanted:
            return PostFilterResult(NO_REASON)  # the group is complete already: nothing to undo
        missing = (wanted - assigned) / wanted
        if missing <= float(self.args.get("podGroupRejectPercentage", DEFAULT_REJECT_PERCENTAGE)) / 100:
            return PostFilterResult(NO_REASON)  # a small gap: let the next members try
        for waiting in self.handle.iterate_waiting_pods():
            if group_of(waiting.pod) == group:
                waiting.reject(self.NAME, "optimistic rejection in PostFilter")
        backoff = float(self.args.get("podGroupBackoffSeconds", DEFAULT_BACKOFF))
        if backoff > 0 and self._known(group, pod) >= wanted:
            self._back_off(group, backoff)
        message = f"PodGroup {_full_name(group)} gets rejected due to Pod {pod['metadata']['name']} is unschedulable even after PostFilter"
        return PostFilterResult(status_.unschedulable(message, plugin=self.NAME))

    def _back_off(self, group: tuple[str, str], seconds: float) -> None:
        now = self.handle.monotonic()
        if self.backed_off.get(group, now) > now:
            return  # backed off already: not extended (scheduler-plugins' cache Add keeps the first)
        self.backed_off[group] = now + seconds
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a cycle run without a loop (tests, dry runs): nothing to wake later
            return
        loop.call_later(seconds, self._activate_group, group)

    def _activate_group(self, group: tuple[str, str]) -> None:
        activate = getattr(self.handle, "activate", None)
        if activate is not None:
            activate(self._parked(group))

    # --------------------------------------------------------------------- Permit
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
        if assigned == 1:  # the first member to wait brings its parked siblings back (ActivateSiblings)
            self._activate_group(group)
        return status_.wait(self.NAME), float(self.args.get("permitWaitingTimeSeconds", DEFAULT_TIMEOUT))

    def unreserve(self, state, pod, node_name):
        group = group_of(pod)
        if group is None:
            return
        for waiting in self.handle.iterate_waiting_pods():
            if waiting.key != pods_.key(pod) and group_of(waiting.pod) == group:
                waiting.reject(self.NAME, "rejection in Unreserve")

    def reserve(self, state, pod, node_name):
        return status_.SUCCESS

    # -------------------------------------------------------------------- reading
    def _assigned(self, group: tuple[str, str]) -> int:
        """Members bound or assumed (waiting in Permit included): the snapshot counts both."""
        snapshot = self.handle.snapshot
        return sum(1 for info in snapshot.node_infos() for p in info.pods.values() if group_of(p) == group)

    def _size(self, group: tuple[str, str]) -> int | None:
        """How many pods of the group exist (the scheduler's :class:`GroupIndex`); None without one."""
        size = getattr(self.handle, "group_size", None)
        return size(group) if size is not None else None

    def _known(self, group: tuple[str, str], pod: dict) -> int:
        """The group's pods for the backoff decision: all of them when the scheduler counts them,
        else those the scheduler holds (assigned, waiting, parked) and the pod itself."""
        size = self._size(group)
        if size is not None:
            return size
        return self._assigned(group) + len(self._parked(group, besides=pods_.key(pod))) + 1

    def _parked(self, group: tuple[str, str], *, besides: str = "") -> list[str]:
        """The queue keys of the group's parked members (none without a queue: tests, dry runs)."""
        parked = getattr(self.handle, "parked", None)
        if parked is None:
            return []
        return [key for key in (pods_.key(p) for p in parked() if group_of(p) == group) if key != besides]


class GroupIndex:
    """The pods of each group, as the scheduler's pod informer sees them (scheduler-plugins lists
    them with kube-scheduler's pod lister): fed every pod event by the scheduler before it acts on
    it, so a sibling's Pod/Add that requeues a member finds the sibling counted. Succeeded and
    Failed pods are left out (kube-scheduler's informer filters them), deleted ones forgotten."""

    def __init__(self) -> None:
        self._members: dict[tuple[str, str], set[str]] = {}  # group → pod keys
        self._group: dict[str, tuple[str, str]] = {}  # pod key → its group

    def observe(self, pod: dict, *, gone: bool = False) -> None:
        """A pod event: the pod counts in its group unless ``gone`` (deleted) or finished."""
        group = None if gone or is_terminal(pod) else group_of(pod)
        if group is None and not self._group:
            return  # the common case: no group pod at all, nothing to look up
        key = pods_.key(pod)
        before = self._group.get(key)
        if before == group:
            return
        if before is not None:
            members = self._members[before]
            members.discard(key)
            if not members:
                del self._members[before]
            del self._group[key]
        if group is not None:
            self._members.setdefault(group, set()).add(key)
            self._group[key] = group

    def size(self, group: tuple[str, str]) -> int:
        members = self._members.get(group)
        return len(members) if members else 0


def _number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))
