"""DefaultPreemption: when no node fits, find one where evicting lower-priority pods would make
room (kube's PostFilter plugin, PodDisruptionBudgets respected as kube respects them).

Per node that rejected the pod as Unschedulable (UnschedulableAndUnresolvable nodes are "not
helpful"), remove every pod of lower priority and run the filters again; if the pod fits, add the
removed pods back one by one — first those whose eviction would violate a PodDisruptionBudget, then
the others, each group most important first (higher priority, then earlier start) — keeping each
that still leaves room: those left out are the victims, and the violating ones left out are the
node's PDB violations (kube's ``SelectVictimsOnNode`` with ``filterPodsWithPDBViolation``, read
in :mod:`.disruption`). A budget is best effort, as in kube: a pod is evicted despite its budget
when nothing else makes room. Among the candidate nodes kube's ``pickOneNodeForPreemption``
picks the one with the fewest PDB violations, then the lowest highest-victim priority, then the
lowest sum of victim priorities (each shifted by 2^31, so fewer victims weigh less), then the
fewest victims, then the latest start among its highest-priority victims, then the first by
name. The result nominates that node and lists the victims; the caller deletes them and sets the
pod's ``status.nominatedNodeName``.

Before that choice the candidates go to each HTTP extender that has a ``preemptVerb`` and is
interested in the pod, in turn (kube's ``callExtenders``): each answers the nodes it keeps with
the victims it chose there, and the next extender gets that answer. A node left out is no longer a
candidate; no node left means no preemption (``no candidate node for preemption``). An extender's
error, or a node it kept with no victim, fails preemption with the error as the PostFilter message
(the pod stays Unschedulable) — unless the extender is ``ignorable``: then its error skips it and
its node without victims is dropped. :meth:`DefaultPreemption.post_filter` then returns an
awaitable, which the framework awaits.

The budgets come from the plugin's own informer on ``policy/v1`` PodDisruptionBudgets
(:meth:`DefaultPreemption.informers`, started by the scheduler); with none, preemption costs
what it did without them.
"""

from __future__ import annotations

import logging

from mockapi.client import DELETED
from mockapi.controllers.scheduler import extenders as extenders_, pods as pods_, status as status_
from mockapi.controllers.scheduler.framework import reason_histogram
from mockapi.controllers.scheduler.plugins import disruption
from mockapi.controllers.scheduler.plugin import Plugin, PostFilterResult
from mockapi.controllers.scheduler.status import Code

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
NO_CANDIDATE = "no candidate node for preemption"

log = logging.getLogger("mockapi.scheduler.preemption")


def _start(pod: dict) -> str:
    return (pod.get("status") or {}).get("startTime") or pod["metadata"].get("creationTimestamp", "")


def importance(pod: dict) -> tuple:
    """Sort key, most important first: higher priority, then earlier start (kube's ``MoreImportantPod``)."""
    return (-pods_.priority(pod), _start(pod), pods_.key(pod))


class DefaultPreemption(Plugin):
    NAME = "DefaultPreemption"

    def __init__(self, args: dict | None = None, handle=None) -> None:
        super().__init__(args, handle)
        self.pdbs: dict[tuple[str, str], dict] = {}  # every PodDisruptionBudget, as the informer saw it

    def informers(self):
        """The kinds this plugin watches, with their handlers (the scheduler runs the informers)."""
        return [(disruption.PDBS, self.on_pdb)]

    def on_pdb(self, event_type: str, pdb: dict) -> None:
        meta = pdb["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if event_type == DELETED:
            self.pdbs.pop(key, None)
        else:
            self.pdbs[key] = pdb

    def post_filter(self, state, pod, snapshot, statuses):
        if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
            return PostFilterResult(status_.unschedulable(NEVER, plugin=self.NAME))
        outcomes: dict[str, status_.Status] = {}
        candidates, violations = {}, {}
        budgets = disruption.budgets(self.pdbs.values(), _bound_pods(snapshot)) if self.pdbs else []
        for info in snapshot.node_infos():
            status = statuses.get(info.name)
            if status is None:
                continue
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                outcomes[info.name] = status_.unresolvable(NOT_HELPFUL)
                continue
            found = self.select_victims(state, pod, info, budgets)
            if found is None:
                outcomes[info.name] = status_.unschedulable(NO_VICTIMS)
            else:
                candidates[info.name], violations[info.name] = found
        if not candidates:
            message = f"preemption: 0/{len(snapshot)} nodes are available: {reason_histogram(outcomes.values())}."
            return PostFilterResult(status_.unschedulable(message, plugin=self.NAME))
        extenders = self._preempting_extenders(pod)
        if extenders:
            return self._ask_extenders(state, pod, snapshot, candidates, violations, extenders)
        return _nominate(candidates, violations)

    def _preempting_extenders(self, pod: dict) -> list:
        """The extenders kube's ``callExtenders`` asks: a ``preemptVerb``, and interested in the pod."""
        return [e for e in getattr(self.handle, "extenders", ()) if e.is_preempter and e.is_interested(pod)]

    async def _ask_extenders(self, state, pod, snapshot, candidates: dict[str, list[dict]], violations: dict[str, int], extenders) -> PostFilterResult:
        """kube's ``callExtenders``, then ``SelectCandidate`` among what the extenders left."""
        victims = {node: extenders_.Victims(pods, violations.get(node, 0)) for node, pods in candidates.items()}
        calls = state.attempt.calls if state.attempt is not None else None
        for extender in extenders:
            try:
                found = await extender.process_preemption(pod, victims, snapshot, calls=calls)
            except extenders_.ExtenderError as exc:
                if extender.ignorable:
                    extenders_.mark_ignored(calls, extender)
                    log.info("skipped extender %s as it returned error and has ignorable flag set: %s", extender.name, exc)
                    continue
                return PostFilterResult(status_.error(str(exc), plugin=self.NAME))
            for node in [node for node, kept in found.items() if not kept.pods]:
                if not extender.ignorable:
                    return PostFilterResult(status_.error(f"expected at least one victim pod on node {extenders_.quote(node)}", plugin=self.NAME))
                log.info("ignored node %s for which the extender %s didn't report victims", node, extender.name)
                del found[node]
            victims = found
            if not victims:  # no preemption can happen, whatever the other extenders say
                break
        if not victims:
            return PostFilterResult(status_.unschedulable(NO_CANDIDATE, plugin=self.NAME))
        return _nominate({node: v.pods for node, v in victims.items()}, {node: v.num_pdb_violations for node, v in victims.items()})

    def select_victims(self, state, pod: dict, info, budgets: list | None = None) -> tuple[list[dict], int] | None:
        """The fewest lower-priority pods whose leaving makes ``pod`` fit on ``info``'s node, and
        how many of them violate a PodDisruptionBudget; None when no eviction makes it fit."""
        ours = pods_.priority(pod)
        lower = sorted((p for p in info.pods.values() if pods_.priority(p) < ours), key=importance)
        trial = info.clone()
        for victim in lower:
            trial.remove_pod(pods_.key(victim))
        if not self.handle.run_filters(state, pod, trial).success:
            return None
        violating, fine = disruption.split_by_violation(lower, budgets) if budgets else ([], lower)
        victims, num_violating = [], 0
        for group in (violating, fine):  # reprieve the violating first, each group most important first
            for candidate in group:
                trial.add_pod(candidate)
                if not self.handle.run_filters(state, pod, trial).success:
                    trial.remove_pod(pods_.key(candidate))
                    victims.append(candidate)
                    num_violating += group is violating
        if violating and fine:
            victims.sort(key=importance)
        return victims, num_violating


def _nominate(candidates: dict[str, list[dict]], violations: dict[str, int]) -> PostFilterResult:
    node = pick_one_node(candidates, violations)
    return PostFilterResult(status_.SUCCESS, node, candidates[node])


def _bound_pods(snapshot):
    for info in snapshot.by_name.values():
        yield from info.pods.values()


def pick_one_node(candidates: dict[str, list[dict]], violations: dict[str, int] | None = None) -> str:
    violations = violations or {}

    def cost(name: str) -> tuple:
        victims = candidates[name]
        if not victims:
            return (violations.get(name, 0), 0, -(2**63), 0, 0, "", name)
        highest = max(pods_.priority(v) for v in victims)
        earliest_of_highest = min(_start(v) for v in victims if pods_.priority(v) == highest)
        # kube adds MaxInt32+1 to each priority before summing: with negative priorities allowed,
        # one more victim always weighs more than any difference in priority.
        total = sum(pods_.priority(v) + 2**31 for v in victims)
        return (violations.get(name, 0), 1, highest, total, len(victims), _negate(earliest_of_highest), name)

    return min(candidates, key=cost)


def _negate(text: str) -> tuple:
    """A key under which ``min`` prefers the later timestamp."""
    return tuple(-ord(c) for c in text)
