"""The full diagnosis of one claim, like the prototype's verbose scheduling output: per node, per
claim entry and option, each pool's candidates, each device ruled out or unavailable and why, and
the scores of the feasible nodes.

:func:`explain` evaluates the claim against the current cache as if it held nothing (so an
allocated claim shows what it would get now, next to what it holds) and writes nothing.
:func:`explain_with` builds a one-off cache through any :class:`~mockapi.client.Client`.
"""

from __future__ import annotations

import copy

from mockapi import quantity as quantities
from mockapi.client import ADDED, Client
from mockapi.controllers.allocator import kinds, score
from mockapi.controllers.allocator.budget import Budget, Limits
from mockapi.controllers.allocator.cache import Cache
from mockapi.controllers.allocator.cycle import Plan, Planner, Verdict
from mockapi.controllers.allocator.filter import Candidates
from mockapi.controllers.allocator.inventory import Device
from mockapi.controllers.allocator.search import NodeSearch, Solution
from mockapi.controllers.allocator.status import condition_of


def explain(planner: Planner, claim: dict) -> dict:
    key = kinds.ClaimKey.of(claim)
    ledger = planner.cache.ledger
    holding = [f"{pool}/{device}" for pool, device in ledger.claim_devices(key)]
    pending = copy.deepcopy(claim)
    pending.setdefault("status", {}).pop("allocations", None)
    with ledger.without(key):
        plan = planner.plan(pending, explain=True)
        return _report(planner, claim, plan, holding)


async def explain_with(client: Client, key: kinds.ClaimKey, *, policy: str = score.DEFAULT_POLICY, limits: Limits = Limits()) -> dict:
    """Explain a claim by listing what the allocator needs through ``client`` (any API server)."""
    cache = Cache()
    loads = [(kinds.POOLS, cache.apply_pool), (kinds.CLASSES, cache.apply_class), (kinds.NODES, cache.apply_node)]
    loads += [(kinds.CLAIMS, cache.apply_claim), (kinds.PRIVILEGED_CLAIMS, cache.apply_claim)]
    for kind, apply in loads:
        items, _ = await client.list(kind)
        for item in items:
            apply(ADDED, item)
    claim = await client.get(key.api_kind, key.namespace, key.name)
    return explain(Planner(cache, policy=policy, limits=limits), claim)


async def explain_claim(allocator, client: Client, key: kinds.ClaimKey, *, policy: str = score.DEFAULT_POLICY, limits: Limits = Limits()) -> dict:
    """With a running (synced) allocator, from its cache and the claim as it is now; otherwise
    through ``client``. Raises the API's 404 when the claim does not exist."""
    if allocator is not None and allocator.synced.is_set():
        claim = await client.get(key.api_kind, key.namespace, key.name)
        async with allocator.holding():  # off the event loop, with no cycle running (explain edits the ledger)
            return await allocator.planner.off_loop(explain, allocator.planner, claim)
    return await explain_with(client, key, policy=policy, limits=limits)


def _report(planner: Planner, claim: dict, plan: Plan, holding: list[str]) -> dict:
    condition = condition_of(claim) or {}
    report: dict = {"claim": str(kinds.ClaimKey.of(claim)), "generation": claim["metadata"].get("generation", 0)}
    report["condition"] = {k: condition[k] for k in ("status", "reason", "message", "observedGeneration") if k in condition}
    report["holds"] = holding
    report["policy"] = planner.policy
    if plan.failure is not None:
        report["result"] = {"reason": plan.failure.reason, "message": plan.failure.message}
    else:
        report["result"] = {"reason": kinds.ALLOCATED, "node": plan.solution.node, "devices": _devices(plan.solution)}
    report["options"] = [_option(c) for row in plan.rows for c in row]
    report["nodes"] = [_node(planner, plan, verdict) for verdict in plan.verdicts]
    return report


def _devices(solution: Solution) -> list[str]:
    found = []
    for picks in solution.picks:
        for pick in picks:
            shares = "".join(f" {n}={quantities.Quantity(a, f)}" for n, a, f in pick.amounts)
            found.append(f"{pick.device.pool.name}/{pick.device.name} ({pick.option.detail.path}{shares})")
    return found


def _option(candidates: Candidates) -> dict:
    found = {"option": candidates.option.describe(), "driver": candidates.option.device_class.driver}
    if candidates.ignored_pools:
        found["ignoredPools"] = [{"pool": pool, "reason": reason} for pool, reason in candidates.ignored_pools]
    return found


def _node(planner: Planner, plan: Plan, verdict: Verdict) -> dict:
    found: dict = {"node": verdict.node or "(network-attached pools only)", "feasible": verdict.solution is not None}
    if verdict.solution is not None:
        names = ("oneOfIndices", "classRanks", "poolsUsed", "freeDevicesLeft" if planner.policy == "binpack" else "negativeFreeDevicesLeft")
        found["score"] = dict(zip(names, verdict.score[:4])) if len(verdict.score) > 1 else {"firstFit": True}
        found["devices"] = _devices(verdict.solution)
    elif verdict.diagnosis is not None:
        found["reason"] = verdict.diagnosis.category
    found["entries"] = [_entry(planner, plan, verdict, index) for index in range(len(plan.rows))]
    return found


def _entry(planner: Planner, plan: Plan, verdict: Verdict, index: int) -> dict:
    checks = verdict.diagnosis.entries[index] if verdict.diagnosis is not None else []
    options = []
    for position, candidates in enumerate(plan.rows[index]):
        option = {"option": candidates.option.describe()}
        if position < len(checks):
            option["verdict"] = "fits on its own" if checks[position].ok else checks[position].text
        option["pools"] = _pools(planner, plan, verdict.node, candidates)
        options.append(option)
    return {"entry": f"spec.claims[{index}]", "options": options}


def _pools(planner: Planner, plan: Plan, node: str | None, candidates: Candidates) -> list[dict]:
    probe = NodeSearch(node, plan.rows, planner.cache.ledger, plan.request.match, Budget())
    pools = (candidates.by_node.get(node, []) if node else []) + candidates.network
    found = []
    for pc in pools:
        entry: dict = {"pool": pc.pool.name, "candidates": [d.name for d in pc.devices]}
        unavailable = {d.name: _unavailable(probe, d, candidates) for d in pc.devices if not probe._available(d, candidates.option)}
        if unavailable:
            entry["unavailable"] = unavailable
        if pc.ruled_out:
            entry["ruledOut"] = {device.name: why for device, why in pc.ruled_out}
        found.append(entry)
    return found


def _unavailable(probe: NodeSearch, device: Device, candidates: Candidates) -> str:
    option, holders = candidates.option, probe.ledger.holders(device.key)
    exclusive = sorted(str(k) for k, hold in holders.items() if hold.exclusive)
    if exclusive:
        return f"allocated to {', '.join(exclusive)}"
    if holders and not option.detail.shared:
        return f"shared by {', '.join(sorted(str(k) for k in holders))}"
    for name, _, _ in option.detail.resources:
        if probe.free_share(device, name, option) <= 0:
            return f"no {name} left (shared by {', '.join(sorted(str(k) for k in holders))})"
    for name, amount in device.requests.items():
        free = probe.counter_free(device.pool, name)
        if amount > free:
            fmt = device.pool.counters[name].format
            return f"pool resource {name}: needs {quantities.Quantity(amount, fmt)}, {quantities.Quantity(max(free, 0), fmt)} free"
    return "unavailable"
