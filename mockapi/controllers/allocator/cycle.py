"""One allocation cycle, as a recipe of named plugin steps:

    ValidateSpec → ResolveClasses → FilterDevices → Search (per node) → Score → DereferenceConfigs

:meth:`Planner.plan` runs the synchronous steps on the cache; :func:`run_cycle` adds the steps that
read the API. Every outcome is a value: a :class:`Plan` with a solution, or a
:class:`~.kinds.Failure` with its reason and message.

The event loop serves every API request, so a cycle may hold it for :data:`~.budget.INLINE_SLICE`
only: :func:`run_cycle` plans inline first (most claims take well under a millisecond), and when
the slice runs out or a costly CEL evaluation is next (:class:`~.budget.Preempted`), plans again
in the planner's worker thread, whose Python work the interpreter interleaves with the loop's
every few milliseconds, and whose costly evaluations run in a killable child process. The
controller holds back cache updates while a cycle runs, so the thread sees one consistent view.
"""

from __future__ import annotations

import asyncio
import functools
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from mockapi import errors
from mockapi.client import Client
from mockapi.controllers.allocator import classes, configs, diagnose, kinds, request, score
from mockapi.controllers.allocator.budget import INLINE_SLICE, Budget, Exhausted, Limits, Preempted
from mockapi.controllers.allocator.cache import Cache
from mockapi.controllers.allocator.filter import Candidates, Filter
from mockapi.controllers.allocator.search import NodeSearch, Solution


@dataclass
class Verdict:
    node: str | None
    solution: Solution | None = None
    score: tuple | None = None
    skipped: str = ""  # why the node was not searched
    diagnosis: diagnose.NodeDiagnosis | None = None


@dataclass
class Plan:
    request: request.Request | None = None
    failure: kinds.Failure | None = None
    solution: Solution | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    rows: list[list[Candidates]] = field(default_factory=list)
    configs: tuple[list, list] = ([], [])


class Planner:
    def __init__(self, cache: Cache, *, policy: str = score.DEFAULT_POLICY, limits: Limits = Limits(), monotonic=time.monotonic) -> None:
        if policy not in score.POLICIES:
            raise ValueError(f"unknown allocation policy {policy!r}; choose one of {', '.join(score.POLICIES)}")
        self.cache, self.policy, self.limits = cache, policy, limits
        self.monotonic = monotonic  # the wall clock of an inline attempt's slice (the budget's seconds are work: budget.work_time)
        self.filter = Filter()
        cache.pool_listeners.append(self.filter.forget_pool)  # its caches must not outlive a pool
        self._worker: ThreadPoolExecutor | None = None

    async def off_loop(self, function, *args, **kwargs):
        """``function(*args, **kwargs)`` in the planner's worker thread (the caller keeps the cache
        still meanwhile)."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="allocator-plan")
        return await asyncio.get_running_loop().run_in_executor(self._worker, functools.partial(function, *args, **kwargs))

    def plan(self, claim: dict, *, explain: bool = False, inline: bool = False) -> Plan:
        """The plan for ``claim``; ``inline``: raise :class:`Preempted` rather than hold the event
        loop past :data:`INLINE_SLICE` or evaluate a costly expression."""
        budget = Budget(self.limits, clock=self.monotonic, slice_seconds=INLINE_SLICE if inline else None, may_wait=not _on_event_loop())
        validated = request.validate(claim)  # ValidateSpec
        if isinstance(validated, kinds.Failure):
            return Plan(failure=validated)
        plan = Plan(validated)
        entries = classes.resolve(validated, self.cache.classes)  # ResolveClasses
        if isinstance(entries, kinds.Failure):
            plan.failure = entries
            return plan
        try:
            rows = self.filter.run(entries, self.cache.inventory(), validated.match, budget)  # FilterDevices
            if isinstance(rows, kinds.Failure):
                plan.failure = rows
                return plan
            plan.rows = rows
            self._search(plan, budget, explain=explain)  # Search + Score
        except Exhausted as exc:
            plan.failure = _timeout(plan, budget, exc.what)
            return plan
        if plan.solution is None:
            plan.failure = kinds.failure(kinds.UNSATISFIABLE, self._message(plan, _diagnosis_budget(budget)))
        return plan

    def _search(self, plan: Plan, budget: Budget, *, explain: bool) -> None:
        inventory, ledger = self.cache.inventory(), self.cache.ledger
        best: Verdict | None = None
        after_first = 0
        most_taken = sum(max(c.option.detail.limit for c in row) for row in plan.rows)
        for node in _nodes(plan.rows, inventory):
            if best is not None and not explain:
                if self.policy == "first-fit" or after_first >= score.EXAMINED_AFTER_FIRST:
                    break
                after_first += 1
                if node and score.cannot_beat(self.policy, node, inventory.free_devices(node, ledger.held_count), most_taken, best.score):
                    continue
            verdict = self._examine(node, plan, budget, explain=explain)
            if verdict.solution is not None:
                best = verdict if best is None or verdict.score < best.score else best
            plan.verdicts.append(verdict)
        plan.solution = best.solution if best is not None else None

    def _examine(self, node: str | None, plan: Plan, budget: Budget, *, explain: bool) -> Verdict:
        ledger, match = self.cache.ledger, plan.request.match
        if not explain and _too_few(node, plan.rows, ledger):
            return Verdict(node, skipped="too few candidates")
        solution = NodeSearch(node, plan.rows, ledger, match, budget).run()
        if solution is None:
            found = diagnose.diagnose(node, plan.rows, ledger, match, _diagnosis_budget(budget)) if explain else None
            return Verdict(node, diagnosis=found)
        free_left = score.free_after(solution, self.cache.inventory(), ledger)
        return Verdict(node, solution, score.key(self.policy, solution, free_left))

    def _message(self, plan: Plan, budget: Budget) -> str:
        ledger, match = self.cache.ledger, plan.request.match
        for verdict in plan.verdicts:
            if verdict.diagnosis is None:
                verdict.diagnosis = diagnose.diagnose(verdict.node, plan.rows, ledger, match, budget)
        describe = _entry_describer(plan)
        total = len([v for v in plan.verdicts if v.node])
        return diagnose.summarize([v.diagnosis for v in plan.verdicts], describe, total=total)


def _on_event_loop() -> bool:
    """Whether this thread runs an event loop (which must never wait for the isolated evaluator)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _nodes(rows: list[list[Candidates]], inventory) -> list[str | None]:
    """Every eligible node, in name order; only ``None`` (network pools alone) when no entry has
    node-local candidates anywhere."""
    if any(c.has_local() for row in rows for c in row):
        return list(inventory.nodes)
    return [None]


def _too_few(node: str | None, rows: list[list[Candidates]], ledger) -> bool:
    """The count bound before any search: an entry none of whose options has enough devices
    that could be free (exclusive options: pools' unheld devices when all of a pool matches)."""
    held_count = ledger.held_count
    for row in rows:
        for c in row:
            option = c.option
            could = len(c.on(node)) if option.admin or option.detail.shared else c.upper_free(node, held_count)
            if could >= option.detail.count:
                break
        else:
            return True
    return False


def _entry_describer(plan: Plan):
    def describe(index: int) -> str:
        options = plan.rows[index]
        return options[0].option.detail.path.split(".oneOf")[0] if options else f"spec.claims[{index}]"

    return describe


def _diagnosis_budget(budget: Budget) -> Budget:
    """The diagnosis's own budget, within the same inline slice as the cycle's."""
    found = Budget(diagnose.DIAGNOSIS)
    found.slice_end = budget.slice_end
    return found


def _timeout(plan: Plan, budget: Budget, what: str = "") -> kinds.Failure:
    if what:
        return kinds.failure(kinds.ALLOCATION_TIMEOUT, what)
    searched = len(plan.verdicts)
    message = (
        f"the search budget ({budget.describe()}) ran out after {budget.steps} steps on {searched} nodes; "
        "simplify the claim (fewer devices, fewer oneOf alternatives, a narrower class) or raise the budget"
    )
    return kinds.failure(kinds.ALLOCATION_TIMEOUT, message)


async def run_cycle(planner: Planner, client: Client, claim: dict) -> Plan:
    """The whole cycle for one claim: the namespace opt-in of privileged claims, the plan, then
    the configs of the chosen solution."""
    key = kinds.ClaimKey.of(claim)
    if key.privileged:
        refused = await _privileged_refused(client, key)
        if refused is not None:
            return Plan(failure=refused)
    try:
        plan = planner.plan(claim, inline=True)
    except Preempted:
        plan = await planner.off_loop(planner.plan, claim)
    if plan.failure is not None:
        return plan
    found = await configs.dereference(client, plan.solution, key.namespace)  # DereferenceConfigs
    if isinstance(found, kinds.Failure):
        plan.failure = found
    else:
        plan.configs = found
    return plan


async def _privileged_refused(client: Client, key: kinds.ClaimKey) -> kinds.Failure | None:
    try:
        namespace = await client.get(kinds.NAMESPACES, "", key.namespace)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
        namespace = {"metadata": {}}
    if (namespace["metadata"].get("labels") or {}).get(kinds.ADMIN_ACCESS_LABEL) == "true":
        return None
    message = f'namespace "{key.namespace}" does not allow admin access to devices: label it {kinds.ADMIN_ACCESS_LABEL}=true'
    return kinds.failure(kinds.INVALID_SPEC, message)
