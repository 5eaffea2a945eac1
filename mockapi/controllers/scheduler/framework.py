"""The scheduling framework: a profile's plugins run at kube's extension points, in kube's order.

One pod's life in a :class:`Framework`, as kube-scheduler's ``scheduleOne`` has it:

1. **scheduling cycle** (one pod at a time) — :meth:`Framework.schedule_pod`:
   PreFilter → Filter (per node; the first rejecting plugin gives the node's status) → the
   extenders' filter, in turn, on the nodes kept (:mod:`.extenders`) → PreScore → Score →
   NormalizeScore → weighted sum, plus each extender's score × weight × 10 → the highest total wins
   (ties: the first node by name). No feasible node: PostFilter (preemption) and a
   :class:`FitError` whose :meth:`FitError.message` is kube's ``0/3 nodes are available: ...``.
   Then :meth:`Framework.assume`: the pod counts on the node in the snapshot at once, Reserve,
   Permit (Wait registers a :class:`~.waiting.WaitingPod`).
2. **binding cycle** (the caller runs it as a task while the next pod is scheduled) —
   :meth:`Framework.bind`: wait on Permit → PreBind → Bind (a binding extender interested in the
   pod first, then the Bind plugins) → PostBind. Any failure (and any rejection in :meth:`assume`)
   runs Unreserve in reverse order and forgets the assumed pod.

:meth:`Framework.run_scheduling_cycle` is step 1 with assume, for callers that want one call.
The scheduling cycle is a coroutine only because extenders are called over HTTP: without an
extender interested in the pod it never suspends, and :meth:`Framework.schedule_one` /
:meth:`Framework.scheduling_cycle` run it to its end without an event loop. Each cycle fills
``state.attempt`` (:mod:`.attempts`): what each plugin and extender decided, for people to read.
The plugin interface is :mod:`.plugin`; statuses :mod:`.status`; node infos :mod:`.nodeinfo`.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import logging
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable

import orjson

from mockapi.controllers.scheduler import attempts as attempts_, events as events_, extenders as extenders_, plugin as plugin_, pods as pods_, status as status_
from mockapi.controllers.scheduler.attempts import Attempt
from mockapi.controllers.scheduler.nodeinfo import NodeInfo, Snapshot, is_terminal  # noqa: F401 - re-exported
from mockapi.controllers.scheduler.plugin import CycleState, Plugin, PostFilterResult
from mockapi.controllers.scheduler.status import Code, Status
from mockapi.controllers.scheduler.waiting import WaitingPod
from mockapi.wire import exact

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

    def __init__(self, profile=None, *, registry=None, binder: Binder | None = None, device_plugin=None, monotonic: Callable[[], float] = time.monotonic,
                 on_extender_call: extenders_.Observer | None = None) -> None:  # fmt: skip
        from mockapi.controllers.scheduler import config as config_, plugins as plugins_

        self.profile = profile or config_.default_profile()
        self.registry = registry or plugins_.REGISTRY
        self.binder = binder
        self.device_plugin = device_plugin
        self.monotonic = monotonic
        self.waiting_pods: dict[str, WaitingPod] = {}
        self._next_start = 0  # where the next pod's filtering starts (kube's nextStartNodeIndex)
        self._filter_memo: dict[tuple, dict[str, tuple[int, Status]]] = {}  # (pod spec, pure filters) → node → (generation, verdict)
        self._score_memo: dict[tuple, dict[str, tuple[int, int]]] = {}  # (pod spec, pure Score plugin) → node → (generation, score)
        self.snapshot: Snapshot | None = None  # the snapshot of the cycle running (for plugins)
        self.plugins: dict[str, Plugin] = {}
        self.points: dict[str, list[Plugin]] = {}
        self._build()
        self.extenders = extenders_.build(self.profile.extenders, observe=on_extender_call)

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
        self._filter_names = tuple(p.NAME for p in self.points["filter"])

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
        hints = {name: tuple(p.EVENTS) for name, p in self.plugins.items()}
        if self.extenders:  # an extender registers no events: any event may help (kube #122019)
            hints[extenders_.EXTENDER_NAME] = (events_.WILDCARD,)
        return hints

    # ------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: dict) -> str | None:
        """The name of the first PreEnqueue plugin that keeps the pod out of activeQ, or None."""
        for p in self.points["preEnqueue"]:
            if not p.pre_enqueue(pod).success:
                return p.NAME
        return None

    # ------------------------------------------------------ scheduling cycle
    def schedule_one(self, state: CycleState, pod: dict, snapshot: Snapshot) -> ScheduleResult | FitError:
        """:meth:`schedule_pod` without an event loop (tests, dry runs): only when no extender is
        interested in the pod, since extenders are called over HTTP."""
        self._refuse_extenders(pod)
        return _complete(self.schedule_pod(state, pod, snapshot))

    def _awaits_extenders(self, pod: dict) -> bool:
        """Whether a scheduling cycle of ``pod`` calls an extender (and so awaits)."""
        return any((e.is_filter or e.is_prioritizer or e.is_preempter) and e.is_interested(pod) for e in self.extenders)

    def _refuse_extenders(self, pod: dict) -> None:
        if self._awaits_extenders(pod):
            raise RuntimeError("an extender is interested in this pod: await the framework's async methods (schedule_pod, run_scheduling_cycle)")

    async def schedule_pod(self, state: CycleState, pod: dict, snapshot: Snapshot) -> ScheduleResult | FitError:
        """Find the pod's node (PreFilter … NormalizeScore, the extenders; PostFilter on failure)."""
        self.snapshot = snapshot
        infos = snapshot.node_infos()
        attempt = state.attempt = self._attempt(pod, len(infos))
        if not infos:  # kube's ErrNoNodesAvailable: an error (backoff), no filters, no preemption
            return self._error(pod, 0, status_.error(NO_NODES))
        extenders = [e for e in self.extenders if e.is_interested(pod)] if self.extenders else ()
        diagnosis = Diagnosis()
        status, allowed, restricting = self._run_pre_filter(state, pod, snapshot)
        attempt.skipped_filters = state.skip_filter
        if status.rejected:
            attempt.pre_filter = status
            diagnosis.pre_filter_message = status.message()
            diagnosis.unschedulable_plugins.add(status.plugin)
            diagnosis.statuses = {info.name: status for info in infos}
            return await self._fit_error(state, pod, snapshot, len(infos), diagnosis)
        if not status.success:
            attempt.pre_filter = status
            return self._error(pod, len(infos), status)
        candidates = infos if allowed is None else [info for info in infos if info.name in allowed]
        nominated = await self._nominated_fit(state, pod, snapshot, extenders)
        if nominated is not None and (allowed is None or nominated in allowed):
            attempt.all_nodes = attempt.feasible = [nominated]
            return ScheduleResult(nominated, 1, 1)
        attempt.all_nodes, attempt.restricted, attempt.statuses = [info.name for info in infos], allowed, diagnosis.statuses
        feasible = self._find_feasible(state, pod, candidates, diagnosis)
        if isinstance(feasible, Status):
            return self._error(pod, len(infos), feasible)
        if allowed is not None:
            absent = status_.unresolvable(f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(restricting))}]")
            for info in infos:
                if info.name not in allowed:
                    diagnosis.statuses[info.name] = absent
        if extenders and feasible:
            feasible = await self._filter_by_extenders(pod, feasible, diagnosis, extenders, attempt)
            if isinstance(feasible, Status):
                return self._error(pod, len(infos), feasible)
        attempt.feasible = [info.name for info in feasible]
        if not feasible:
            return await self._fit_error(state, pod, snapshot, len(infos), diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, len(candidates), 1)
        scores = self._prioritize(state, pod, feasible, attempt)
        if isinstance(scores, Status):
            return self._error(pod, len(infos), scores)
        if extenders:
            await self._prioritize_by_extenders(pod, feasible, scores, extenders, attempt)
        attempt.totals = scores
        top = max(scores[info.name] for info in feasible)
        best = min(info.name for info in feasible if scores[info.name] == top)  # ties: the first node by name
        return ScheduleResult(best, len(candidates), len(feasible), scores)

    def _attempt(self, pod: dict, num_nodes: int) -> Attempt:
        meta = pod["metadata"]
        return Attempt(meta.get("namespace", ""), meta["name"], meta.get("uid", ""), self.scheduler_name, num_nodes=num_nodes, filter_plugins=self._filter_names, weights=self.weights)

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

    async def _nominated_fit(self, state: CycleState, pod: dict, snapshot: Snapshot, extenders) -> str | None:
        """A pod nominated by an earlier preemption tries that node first, through the filters and
        the extenders (kube's evaluateNominatedNode; an extender's error only skips this shortcut)."""
        name = (pod.get("status") or {}).get("nominatedNodeName")
        info = snapshot.get(name) if name else None
        if info is None or not self.run_filters(state, pod, info).success:
            return None
        if extenders:
            kept = await self._filter_by_extenders(pod, [info], Diagnosis(), extenders, state.attempt)
            if isinstance(kept, Status) or not kept:
                state.attempt.extender_filters.clear()  # the record shows the full pass (the calls stay)
                return None
        return name

    def _find_feasible(self, state: CycleState, pod: dict, infos: list[NodeInfo], diagnosis: Diagnosis) -> list[NodeInfo] | Status:
        """The nodes that pass every filter — kube's ``findNodesThatPassFilters``: enough of them
        (:func:`num_feasible_nodes_to_find`), from where the last pod's search stopped, so that
        big clusters are not filtered whole for every pod and pods spread over them."""
        feasible: list[NodeInfo] = []
        total = len(infos)
        wanted = num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, total)
        start = self._next_start % total if total else 0
        processed = 0
        run_filters = self._node_filters(state, pod)
        success, fits, statuses, plugins = status_.SUCCESS, Code.SUCCESS, diagnosis.statuses, diagnosis.unschedulable_plugins
        for info in infos[start:] + infos[:start] if start else infos:  # from where the last search stopped
            processed += 1
            status = run_filters(info)
            if status is success or status.code is fits:
                feasible.append(info)
                if len(feasible) >= wanted:
                    break
            elif status.rejected:
                statuses[info.name] = status
                plugins.add(status.plugin)
            else:
                return status
        self._next_start = (start + processed) % total if total else 0
        return feasible

    def run_filters(self, state: CycleState, pod: dict, info: NodeInfo) -> Status:
        """Every Filter plugin on one node, stopping at the first that does not succeed. Pods
        nominated to the node with at least this pod's priority count as if there already (kube's
        ``RunFilterPluginsWithNominatedPods``)."""
        snapshot = self.snapshot
        nominated = snapshot.nominated_on(info.name, at_least=pods_.priority(pod), besides=pods_.key(pod)) if snapshot is not None and snapshot.nominated else ()
        if nominated:
            info = info.clone()
            for other in nominated:
                info.add_pod(other)
        filters = state.filters
        if filters is None or state.filters_skipped != len(state.skip_filter):  # the cycle's filters, once (PreFilter may skip some)
            self._plan_filters(state, pod)
            filters = state.filters
        success = status_.SUCCESS
        memo = state.filter_memo
        if memo is not None and not nominated and snapshot is not None and snapshot.get(info.name) is info:
            remembered = memo.get(info.name)
            if remembered is not None and remembered[0] == info.generation:
                status = remembered[1]
            else:
                status = memo[info.name] = (info.generation, self._run_filters(state, pod, info, filters[: state.pure_filters]))
                status = status[1]
            if status is not success:
                return status
            filters = filters[state.pure_filters :]
        return self._run_filters(state, pod, info, filters)

    def _node_filters(self, state: CycleState, pod: dict):
        """:meth:`run_filters` for this cycle's nodes, as one callable ``info → Status``. When no
        pod is nominated anywhere and the pure filters' verdicts are remembered (the common case)
        it is made once per cycle: the filters planned, the remembered verdicts and each other
        plugin's :meth:`~.plugin.Plugin.node_filter` looked up once, not per node."""
        snapshot = self.snapshot
        if state.filters is None or state.filters_skipped != len(state.skip_filter):
            self._plan_filters(state, pod)
        memo = state.filter_memo
        if snapshot is None or snapshot.nominated or memo is None:
            return functools.partial(self.run_filters, state, pod)
        pure, rest = state.filters[: state.pure_filters], state.filters[state.pure_filters :]
        checks = tuple((p.NAME, _node_filter(p, state, pod)) for p in rest)
        success, run, own, full = status_.SUCCESS, self._run_filters, snapshot.by_name, functools.partial(self.run_filters, state, pod)
        stamped: dict[int, tuple[Status, Status]] = {}  # id(a check's status) → (it, it said by that plugin): one Status per verdict, not per node

        def run_filters(info: NodeInfo) -> Status:
            name = info.name
            if own.get(name) is not info or info.node is None:  # not the snapshot's own NodeInfo (snapshot.get)
                return full(info)
            remembered = memo.get(name)
            if remembered is None or remembered[0] != info.generation:
                remembered = memo[name] = (info.generation, run(state, pod, info, pure))
            if remembered[1] is not success:
                return remembered[1]
            for plugin, check in checks:
                status = check(info)
                if status is not success and status.code is not Code.SUCCESS:
                    said = stamped.get(id(status))
                    if said is None or said[0] is not status or said[1].plugin != plugin:
                        said = stamped[id(status)] = (status, status.by(plugin))
                    return said[1]
            return success

        return run_filters

    @staticmethod
    def _run_filters(state: CycleState, pod: dict, info: NodeInfo, filters) -> Status:
        success = status_.SUCCESS
        for p in filters:
            status = p.filter(state, pod, info)
            if status is not success and status.code is not Code.SUCCESS:
                return status.by(p.NAME)
        return success

    def _plan_filters(self, state: CycleState, pod: dict) -> None:
        """The cycle's Filter plugins (those PreFilter did not skip) and, when the first of them
        are pure (:attr:`Plugin.PURE_FILTER`: a verdict from the pod's spec and the NodeInfo
        alone), the verdicts they gave pods with the same spec, per node, while the node's
        generation stays — kube's old equivalence cache: a burst of pods made from one template
        is not filtered again on every node that did not change."""
        state.filters = tuple(p for p in self.points["filter"] if p.NAME not in state.skip_filter)
        state.filters_skipped = len(state.skip_filter)
        pure = 0
        while pure < len(state.filters) and state.filters[pure].PURE_FILTER:
            pure += 1
        state.pure_filters, state.filter_memo = pure, None
        if pure:
            state.filter_memo = _memo(self._filter_memo, (_spec_signature(state, pod), state.filters[:pure]))

    def _score_memo_for(self, state: CycleState, pod: dict, plugin: Plugin) -> dict:
        """node → (generation, score) that a pure Score plugin gave pods of this spec."""
        return _memo(self._score_memo, (_spec_signature(state, pod), plugin))

    def _prioritize(self, state: CycleState, pod: dict, feasible: list[NodeInfo], attempt: Attempt | None = None) -> dict[str, int] | Status:
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
            memo = self._score_memo_for(state, pod, p) if p.PURE_SCORE else None
            if memo is None:
                scores = {info.name: int(p.score(state, pod, info)) for info in feasible}
            else:  # remembered per node generation for pods of the same spec (scores before normalizing)
                scores = {}
                for info in feasible:
                    hit = memo.get(info.name)
                    if hit is None or hit[0] != info.generation:
                        hit = memo[info.name] = (info.generation, int(p.score(state, pod, info)))
                    scores[info.name] = hit[1]
            p.normalize_score(state, pod, scores)
            if attempt is not None:
                attempt.plugin_scores[p.NAME] = scores
            weight = self.weights.get(p.NAME, 1)
            for name, score in scores.items():
                if not 0 <= score <= plugin_.MAX_NODE_SCORE:
                    return status_.error(f"plugin {p.NAME!r} returns an invalid score {score}, it should in the range of [0, 100] after normalizing", plugin=p.NAME)
                totals[name] += score * weight
        return totals

    # ------------------------------------------------------------- extenders
    async def _filter_by_extenders(self, pod: dict, feasible: list[NodeInfo], diagnosis: Diagnosis, extenders, attempt: Attempt | None) -> list[NodeInfo] | Status:
        """kube's ``findNodesThatPassExtenders``: each filtering extender in turn, on the nodes the
        previous kept; its failed nodes join the diagnosis (FailedAndUnresolvableNodes first); an
        error fails the cycle unless the extender is ignorable."""
        before = len(feasible)
        calls = attempt.calls if attempt is not None else None
        for extender in extenders:
            if not feasible:
                break
            if not extender.is_filter:
                continue
            record = attempts_.ExtenderFilter(extender.name, [info.name for info in feasible])
            if attempt is not None:
                attempt.extender_filters.append(record)
            try:
                result = await extender.filter(pod, [info.node for info in feasible], calls=calls)
            except extenders_.ExtenderError as exc:
                record.error = str(exc)
                if extender.ignorable:
                    extenders_.mark_ignored(calls, extender)
                    log.info("skipping extender %s as it returned error and has ignorable flag set: %s", extender.name, exc)
                    continue
                return status_.error(str(exc))
            record.kept = result.kept
            for name, message in result.unresolvable.items():
                diagnosis.statuses[name] = status_.unresolvable(message, plugin=extender.name)
            for name, message in result.failed.items():
                if name not in result.unresolvable:
                    diagnosis.statuses[name] = status_.unschedulable(message, plugin=extender.name)
            by_name = {info.name: info for info in feasible}
            feasible = [by_name[name] for name in dict.fromkeys(result.kept)]
        feasible = [info for info in feasible if info.node is not None]  # a node deleted while we waited
        if len(feasible) != before:
            diagnosis.unschedulable_plugins.add(extenders_.EXTENDER_NAME)
        return feasible

    async def _prioritize_by_extenders(self, pod: dict, feasible: list[NodeInfo], totals: dict[str, int], extenders, attempt: Attempt) -> None:
        """kube's ``prioritizeNodes``, extender part: the prioritizing extenders at once; each
        reply × weight × 10 added to the totals. A failed call only loses that extender's scores."""
        prioritizers = [e for e in extenders if e.is_prioritizer]
        if not prioritizers:
            return
        nodes = [info.node for info in feasible]
        replies = await asyncio.gather(*(self._extender_scores(e, pod, nodes, attempt.calls) for e in prioritizers))
        for extender, scores in zip(prioritizers, replies):
            if scores is None:
                continue
            attempt.extender_scores[extender.name] = (extender.weight, scores)
            for host, score in scores.items():
                if host in totals:
                    totals[host] += score * extender.weight * extenders_.SCORE_SCALE

    async def _extender_scores(self, extender, pod: dict, nodes: list[dict], calls: list) -> dict[str, int] | None:
        try:
            return await extender.prioritize(pod, nodes, calls=calls)
        except extenders_.ExtenderError as exc:
            log.debug("failed to run extender's priority function, no score given by %s: %s", extender.name, exc)
            return None

    async def _bind_by_extender(self, state: CycleState, pod: dict, node_name: str) -> Status | None:
        """kube's ``extendersBinding``: the binding extender interested in the pod binds it (an
        ignorable one that fails leaves it to the next binder); None: no extender bound it."""
        calls = state.attempt.calls if getattr(state, "attempt", None) is not None else None
        for extender in self.extenders:
            if not extender.is_binder or not extender.is_interested(pod):
                continue
            try:
                await extender.bind(pod, node_name, calls=calls)
            except extenders_.ExtenderError as exc:
                if extender.ignorable:
                    extenders_.mark_ignored(calls, extender)
                    log.info("skipping extender %s in bind as it returned error and has ignorable flag set: %s", extender.name, exc)
                    continue
                return status_.error(str(exc))
            return status_.SUCCESS
        return None

    async def aclose(self) -> None:
        """Close the extenders' HTTP connections."""
        for extender in self.extenders:
            await extender.aclose()

    async def _fit_error(self, state: CycleState, pod: dict, snapshot: Snapshot, num_nodes: int, diagnosis: Diagnosis) -> FitError:
        # kube's RunPostFilterPlugins: the first Success, Unresolvable or Error ends it; the
        # Unschedulable plugins' reasons add up (one with none, e.g. Coscheduling for a pod of no
        # group, adds nothing), and the result kept is the first one's unless a later one nominates
        result, reasons = None, []
        for p in self.points["postFilter"]:
            found = p.post_filter(state, pod, snapshot, diagnosis.statuses)
            if inspect.isawaitable(found):  # it calls out (DefaultPreemption asking preempting extenders)
                found = await found
            if found.status.success or found.status.code is not Code.UNSCHEDULABLE:
                result, reasons = found, list(found.status.reasons)
                break
            if result is None or found.nominated_node:
                result = found
            reasons += found.status.reasons
        if result is not None:
            diagnosis.post_filter_message = ", ".join(reasons)
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
        """:meth:`run_scheduling_cycle` without an event loop (no extender interested in the pod)."""
        self._refuse_extenders(pod)
        return _complete(self.run_scheduling_cycle(state, pod, snapshot))

    async def run_scheduling_cycle(self, state: CycleState, pod: dict, snapshot: Snapshot) -> tuple[ScheduleResult | FitError, Status]:
        """:meth:`schedule_pod`, then :meth:`assume` on the chosen node. A cycle that calls extenders
        reads a frozen view of ``snapshot`` (:meth:`Snapshot.freeze`): what the informers change
        while it awaits is in ``snapshot``, not in what the cycle sees, as kube's cycle reads the
        snapshot it took when it began; the pod is assumed in ``snapshot`` itself."""
        if self.extenders and self._awaits_extenders(pod):
            view = snapshot.freeze()
            try:
                result = await self.schedule_pod(state, pod, view)
            finally:
                snapshot.thaw(view)
        else:
            result = await self.schedule_pod(state, pod, snapshot)
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
        """An interested binding extender first, then the Bind plugins (kube's ``bind``)."""
        if self.extenders:
            status = await self._bind_by_extender(state, pod, node_name)
            if status is not None:
                return status
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


NO_NODES = "no nodes available to schedule pods"  # kube's ErrNoNodesAvailable
MEMO_SPECS = 64  # distinct pod specs (× plugins) whose pure verdicts and scores are remembered (then forgotten at once)
MIN_FEASIBLE_NODES_TO_FIND = 100  # kube's minFeasibleNodesToFind
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """kube's ``numFeasibleNodesToFind``: every node up to 100; then ``percentage`` of them, or
    when it is 0, 50% less one point per 125 nodes (at least 5%), and never fewer than 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage <= 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


async def _maybe(value):
    return await value if inspect.isawaitable(value) else value


def _node_filter(plugin: Plugin, state: CycleState, pod: dict):
    """The plugin's Filter for this cycle's nodes: its own :meth:`~.plugin.Plugin.node_filter`, else :meth:`~.plugin.Plugin.filter`."""
    made = getattr(plugin, "node_filter", None)
    return (made(state, pod) if made is not None else None) or functools.partial(plugin.filter, state, pod)


def _spec_signature(state: CycleState, pod: dict) -> bytes:
    """The pod's spec, canonical (once per cycle): what pure plugins read of the pod — all of it
    but its volumes and the containers' volume mounts, which no pure plugin reads and which differ
    from pod to pod of one template (the ServiceAccount admission's ``kube-api-access-<random>``
    volume): with them, pods of one template never shared a verdict."""
    if state.spec_signature is None:
        # exact: the memos keep it as their key (wire.exact)
        state.spec_signature = exact(orjson.dumps(_without_volumes(pod.get("spec") or {}), option=orjson.OPT_SORT_KEYS))
    return state.spec_signature


_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _without_volumes(spec: dict) -> dict:
    if "volumes" not in spec:
        return spec
    spec = {key: value for key, value in spec.items() if key != "volumes"}
    for key in _CONTAINER_LISTS:
        if type(spec.get(key)) is list:
            spec[key] = [{k: v for k, v in c.items() if k != "volumeMounts"} if type(c) is dict else c for c in spec[key]]
    return spec


def _memo(memos: dict, key: tuple) -> dict:
    found = memos.get(key)
    if found is None:
        if len(memos) >= MEMO_SPECS:
            memos.clear()
        found = memos[key] = {}
    return found


def _complete(coroutine):
    """Run a coroutine that never suspends (no extender call in it) to its result."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("an extender is interested in this pod: await the framework's async methods (schedule_pod, run_scheduling_cycle)")
