"""The scheduling framework: a profile's plugins run at kube's extension points, in kube's order.

One pod's life in a :class:`Framework`, as kube-scheduler's ``scheduleOne`` has it:

1. **scheduling cycle** (synchronous, one pod at a time) — :meth:`Framework.schedule_one`:
   PreFilter → Filter (per node; the first rejecting plugin gives the node's status) → PreScore →
   Score → NormalizeScore → weighted sum → the highest total wins (ties: the first node by name).
   No feasible node: PostFilter (preemption) and a :class:`FitError` whose :meth:`FitError.message`
   is kube's ``0/3 nodes are available: ...``. Then :meth:`Framework.assume`: the pod counts on the
   node in the snapshot at once, Reserve, Permit (Wait registers a :class:`~.waiting.WaitingPod`).
2. **binding cycle** (asynchronous; the caller runs it as a task while the next pod is scheduled) —
   :meth:`Framework.bind`: wait on Permit → PreBind → Bind → PostBind. Any failure (and any
   rejection in :meth:`assume`) runs Unreserve in reverse order and forgets the assumed pod.

:meth:`Framework.scheduling_cycle` is steps 1 with assume, for callers that want one call.
The plugin interface is :mod:`.plugin`; statuses :mod:`.status`; node infos :mod:`.nodeinfo`.
"""

from __future__ import annotations

import copy
import inspect
import logging
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from mockapi.controllers.scheduler import plugin as plugin_, pods as pods_, status as status_
from mockapi.controllers.scheduler.nodeinfo import NodeInfo, Snapshot, is_terminal  # noqa: F401 - re-exported
from mockapi.controllers.scheduler.plugin import CycleState, Plugin, PostFilterResult
from mockapi.controllers.scheduler.status import Code, Status
from mockapi.controllers.scheduler.waiting import WaitingPod

log = logging.getLogger("mockapi.scheduler")

NO_NODE_AVAILABLE = "0/{} nodes are available:"
Binder = Callable[[dict, str], Awaitable[None]]  # (pod, node name): bind it, or raise


@dataclass
class Diagnosis:
    """Why no node was found: each node's status, the plugins that rejected, PreFilter's and
    PostFilter's messages (kube's ``framework.Diagnosis``)."""

    statuses: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_message: str = ""
    post_filter_message: str = ""


class FitError(Exception):
    """No node fits the pod. Returned (not raised) by :meth:`Framework.schedule_one`."""

    def __init__(self, pod: dict, num_all_nodes: int, diagnosis: Diagnosis, post_filter: PostFilterResult | None = None, *, status: Status | None = None) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        self.post_filter = post_filter
        self.status = status  # set when a plugin failed with Error (the cycle is retried after backoff)

    @property
    def nominated_node(self) -> str:
        return self.post_filter.nominated_node if self.post_filter else ""

    @property
    def victims(self) -> list[dict]:
        return self.post_filter.victims if self.post_filter else []

    def message(self) -> str:
        """kube's ``FitError.Error()``: ``0/X nodes are available: <PreFilter msg>. <reasons counted
        and sorted as strings>. <PostFilter msg>`` (for a plugin's Error: the error's message)."""
        if self.status is not None:
            return self.status.message()  # an error, not a verdict on the nodes: its own words
        text = NO_NODE_AVAILABLE.format(self.num_all_nodes)
        if self.diagnosis.pre_filter_message:
            text += f" {self.diagnosis.pre_filter_message}."
        else:
            histogram = reason_histogram(self.diagnosis.statuses.values())
            if histogram:
                text += f" {histogram}."
        if self.diagnosis.post_filter_message:
            text += f" {self.diagnosis.post_filter_message}"
        return text

    __str__ = message


def reason_histogram(statuses) -> str:
    """``1 Insufficient cpu, 2 node(s) were unschedulable``: each reason counted across nodes, the
    ``"<count> <reason>"`` strings sorted as strings (Go's ``sort.Strings``)."""
    counts: dict[str, int] = {}
    for status in statuses:
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    return ", ".join(sorted(f"{count} {reason}" for reason, count in counts.items()))


@dataclass
class ScheduleResult:
    node: str
    evaluated: int
    feasible: int
    scores: dict[str, int] = field(default_factory=dict)  # node → total weighted score


class Framework:
    """A profile's plugins, built once, run per pod. ``profile`` is a :class:`~.config.Profile`
    (None: kube's default profile); ``binder`` is what DefaultBinder calls."""

    def __init__(self, profile=None, *, registry=None, binder: Binder | None = None, device_plugin=None, monotonic: Callable[[], float] = time.monotonic) -> None:
        from mockapi.controllers.scheduler import config as config_, plugins as plugins_

        self.profile = profile or config_.default_profile()
        self.registry = registry or plugins_.REGISTRY
        self.binder = binder
        self.device_plugin = device_plugin
        self.monotonic = monotonic
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.snapshot: Snapshot | None = None  # the snapshot of the cycle running (for plugins)
        self.plugins: dict[str, Plugin] = {}
        self.points: dict[str, list[Plugin]] = {}
        self._build()

    @property
    def scheduler_name(self) -> str:
        return self.profile.scheduler_name

    def _build(self) -> None:
        for point in plugin_.POINTS:
            self.points[point] = []
            for name in self.profile.plugins.get(point, []):
                built = self._plugin(name)
                if built is not None and type(built).implements(point):
                    self.points[point].append(built)
        self.weights = {name: self.profile.weights.get(name, 1) for name in self.plugins}

    def _plugin(self, name: str) -> Plugin | None:
        if name not in self.plugins:
            cls = self.registry[name]
            args = {**cls.default_args(), **self.profile.args.get(name, {})}
            built = cls.create(args, self) if hasattr(cls, "create") else cls(args, self)
            if built is None:
                return None  # e.g. DeviceClaims without a device plugin
            self.plugins[name] = built
        return self.plugins[name]

    def hints(self) -> dict[str, tuple]:
        """Plugin name → the cluster events it registered (for the scheduling queue)."""
        return {name: tuple(p.EVENTS) for name, p in self.plugins.items()}

    # ------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: dict) -> str | None:
        """The name of the first PreEnqueue plugin that keeps the pod out of activeQ, or None."""
        for p in self.points["preEnqueue"]:
            if not p.pre_enqueue(pod).success:
                return p.NAME
        return None

    # ------------------------------------------------------ scheduling cycle
    def schedule_one(self, state: CycleState, pod: dict, snapshot: Snapshot) -> ScheduleResult | FitError:
        """Find the pod's node (PreFilter … NormalizeScore, PostFilter on failure)."""
        self.snapshot = snapshot
        infos = snapshot.node_infos()
        diagnosis = Diagnosis()
        status, allowed, restricting = self._run_pre_filter(state, pod, snapshot)
        if status.rejected:
            diagnosis.pre_filter_message = status.message()
            diagnosis.unschedulable_plugins.add(status.plugin)
            diagnosis.statuses = {info.name: status for info in infos}
            return self._fit_error(state, pod, snapshot, len(infos), diagnosis)
        if not status.success:
            return self._error(pod, len(infos), status)
        candidates = infos if allowed is None else [info for info in infos if info.name in allowed]
        nominated = self._nominated_fit(state, pod, snapshot)
        if nominated is not None and (allowed is None or nominated in allowed):
            return ScheduleResult(nominated, 1, 1)
        feasible = self._find_feasible(state, pod, candidates, diagnosis)
        if isinstance(feasible, Status):
            return self._error(pod, len(infos), feasible)
        if allowed is not None:
            absent = status_.unresolvable(f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(restricting))}]")
            for info in infos:
                if info.name not in allowed:
                    diagnosis.statuses[info.name] = absent
        if not feasible:
            return self._fit_error(state, pod, snapshot, len(infos), diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, len(candidates), 1)
        scores = self._prioritize(state, pod, feasible)
        if isinstance(scores, Status):
            return self._error(pod, len(infos), scores)
        best = max(feasible, key=lambda info: (scores[info.name], _reversed(info.name)))
        return ScheduleResult(best.name, len(candidates), len(feasible), scores)

    def _run_pre_filter(self, state: CycleState, pod: dict, snapshot: Snapshot) -> tuple[Status, set[str] | None, list[str]]:
        """PreFilter in order. A plugin may restrict the nodes to consider (kube's PreFilterResult)
        by leaving a set of names in ``state[("node_names", NAME)]``."""
        allowed: set[str] | None = None
        restricting = []
        for p in self.points["preFilter"]:
            status = p.pre_filter(state, pod, snapshot)
            if status.code is Code.SKIP:
                state.skip_filter.add(p.NAME)
                continue
            if not status.success:
                return status.by(p.NAME), None, []
            restricted = state.pop(("node_names", p.NAME), None)
            if restricted is not None:
                restricting.append(p.NAME)
                allowed = set(restricted) if allowed is None else allowed & set(restricted)
        return status_.SUCCESS, allowed, restricting

    def _nominated_fit(self, state: CycleState, pod: dict, snapshot: Snapshot) -> str | None:
        """A pod nominated by an earlier preemption tries that node first (kube's evaluateNominatedNode)."""
        name = (pod.get("status") or {}).get("nominatedNodeName")
        info = snapshot.get(name) if name else None
        if info is None:
            return None
        return name if self.run_filters(state, pod, info).success else None

    def _find_feasible(self, state: CycleState, pod: dict, infos: list[NodeInfo], diagnosis: Diagnosis) -> list[NodeInfo] | Status:
        feasible = []
        for info in infos:
            status = self.run_filters(state, pod, info)
            if status.success:
                feasible.append(info)
            elif status.rejected:
                diagnosis.statuses[info.name] = status
                diagnosis.unschedulable_plugins.add(status.plugin)
            else:
                return status
        return feasible

    def run_filters(self, state: CycleState, pod: dict, info: NodeInfo) -> Status:
        """Every Filter plugin on one node, stopping at the first that does not succeed. Pods
        nominated to the node with at least this pod's priority count as if there already (kube's
        ``RunFilterPluginsWithNominatedPods``)."""
        nominated = self.snapshot.nominated_on(info.name, at_least=pods_.priority(pod), besides=pods_.key(pod)) if self.snapshot else []
        if nominated:
            info = info.clone()
            for other in nominated:
                info.add_pod(other)
        for p in self.points["filter"]:
            if p.NAME in state.skip_filter:
                continue
            status = p.filter(state, pod, info)
            if not status.success:
                return status.by(p.NAME)
        return status_.SUCCESS

    def _prioritize(self, state: CycleState, pod: dict, feasible: list[NodeInfo]) -> dict[str, int] | Status:
        for p in self.points["preScore"]:
            status = p.pre_score(state, pod, feasible)
            if status.code is Code.SKIP:
                state.skip_score.add(p.NAME)
            elif not status.success:
                return status.by(p.NAME)
        totals = {info.name: 0 for info in feasible}
        for p in self.points["score"]:
            if p.NAME in state.skip_score:
                continue
            scores = {info.name: int(p.score(state, pod, info)) for info in feasible}
            p.normalize_score(state, pod, scores)
            weight = self.weights.get(p.NAME, 1)
            for name, score in scores.items():
                if not 0 <= score <= plugin_.MAX_NODE_SCORE:
                    return status_.error(f"plugin {p.NAME!r} returns an invalid score {score}, it should in the range of [0, 100] after normalizing", plugin=p.NAME)
                totals[name] += score * weight
        return totals

    def _fit_error(self, state: CycleState, pod: dict, snapshot: Snapshot, num_nodes: int, diagnosis: Diagnosis) -> FitError:
        result = None
        for p in self.points["postFilter"]:
            result = p.post_filter(state, pod, snapshot, diagnosis.statuses)
            if result.status.success or not result.status.rejected:
                break
        if result is not None:
            diagnosis.post_filter_message = result.status.message()
        return FitError(pod, num_nodes, diagnosis, result)

    def _error(self, pod: dict, num_nodes: int, status: Status) -> FitError:
        """An Error status (not a verdict on nodes): a FitError carrying it, with no node statuses."""
        return FitError(pod, num_nodes, Diagnosis(), status=status)

    # ---------------------------------------------------------------- assume
    def assume(self, state: CycleState, pod: dict, node_name: str, snapshot: Snapshot) -> Status:
        """Count the pod on the node at once, then Reserve and Permit. Success or Wait: go on to
        :meth:`bind`; anything else has been undone already (Unreserve, forgotten)."""
        self.snapshot = snapshot
        assumed = copy.copy(pod)
        assumed["spec"] = {**(pod.get("spec") or {}), "nodeName": node_name}
        snapshot.add_pod(assumed, node_name)
        for p in self.points["reserve"]:
            status = p.reserve(state, pod, node_name)
            if not status.success:
                self._undo(state, pod, node_name, snapshot)
                return status.by(p.NAME)
        return self._run_permit(state, pod, node_name, snapshot)

    def _run_permit(self, state: CycleState, pod: dict, node_name: str, snapshot: Snapshot) -> Status:
        timeouts = {}
        for p in self.points["permit"]:
            status, timeout = p.permit(state, pod, node_name)
            if status.code is Code.WAIT:
                timeouts[p.NAME] = timeout
            elif not status.success:
                self._undo(state, pod, node_name, snapshot)
                return status.by(p.NAME)
        if not timeouts:
            return status_.SUCCESS
        self.waiting_pods[pods_.key(pod)] = WaitingPod(pod, node_name, timeouts, self.monotonic)
        return status_.wait()

    def _undo(self, state: CycleState, pod: dict, node_name: str, snapshot: Snapshot) -> None:
        """Unreserve every Reserve plugin, in reverse order, and forget the assumed pod."""
        for p in reversed(self.points["reserve"]):
            try:
                p.unreserve(state, pod, node_name)
            except Exception:  # noqa: BLE001 - Unreserve must not fail; one that does is logged
                log.exception("unreserve of %s by %s failed", pods_.key(pod), p.NAME)
        snapshot.remove_pod(pod)

    def scheduling_cycle(self, state: CycleState, pod: dict, snapshot: Snapshot) -> tuple[ScheduleResult | FitError, Status]:
        """:meth:`schedule_one`, then :meth:`assume` on the chosen node."""
        result = self.schedule_one(state, pod, snapshot)
        if isinstance(result, FitError):
            return result, result.status if result.status is not None else status_.unschedulable(result.message())
        return result, self.assume(state, pod, result.node, snapshot)

    # ---------------------------------------------------------- binding cycle
    async def bind(self, state: CycleState, pod: dict, node_name: str, snapshot: Snapshot) -> Status:
        """Wait on Permit, PreBind, Bind, PostBind. On failure everything is undone."""
        status = await self._wait_on_permit(pod)
        for p in self.points["preBind"] if status.success else ():
            status = await _maybe(p.pre_bind(state, pod, node_name))
            if not status.success:
                status = status.by(p.NAME)
                break
        if status.success:
            status = await self._run_bind(state, pod, node_name)
        if not status.success:
            self._undo(state, pod, node_name, snapshot)
            return status
        for p in self.points["postBind"]:
            await _maybe(p.post_bind(state, pod, node_name))
        return status

    async def _wait_on_permit(self, pod: dict) -> Status:
        waiting = self.waiting_pods.get(pods_.key(pod))
        if waiting is None:
            return status_.SUCCESS
        try:
            return await waiting.wait()
        finally:
            self.waiting_pods.pop(waiting.key, None)

    async def _run_bind(self, state: CycleState, pod: dict, node_name: str) -> Status:
        for p in self.points["bind"]:
            try:
                status = await p.bind(state, pod, node_name)
            except Exception as exc:  # noqa: BLE001 - a failed bind is the pod's error, not ours
                status = status_.error(str(exc))
            if status.code is not Code.SKIP:
                return status.by(p.NAME)
        return status_.error("no bind plugin bound the pod")

    # ----------------------------------------------------- the plugins' handle
    def iterate_waiting_pods(self) -> list[WaitingPod]:
        return list(self.waiting_pods.values())

    def get_waiting_pod(self, key: str) -> WaitingPod | None:
        return self.waiting_pods.get(key)

    def reject_waiting_pod(self, key: str, plugin: str, message: str) -> bool:
        waiting = self.waiting_pods.get(key)
        if waiting is None:
            return False
        waiting.reject(plugin, message)
        return True


def _reversed(name: str) -> tuple:
    """A key under which ``max`` prefers the smaller name on equal scores."""
    return tuple(-ord(c) for c in name) + (1,)


async def _maybe(value):
    return await value if inspect.isawaitable(value) else value
