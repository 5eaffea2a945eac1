"""Plugin FilterDevices: which devices each search option may use, and why the others may not.

For one option (a detail through one class) a device is a candidate when its pool is valid and of
the class's driver, the device is allocatable, it has every matchAttributes attribute (claim-wide
and the detail's) and every per-device resource the detail requests, and the class constraints AND
the claim constraints are true (rule 4). A CEL runtime error fails the claim with
ConstraintEvaluationError, naming the expression and the device. Results are cached per pool
version (and, for the whole inventory, per inventory version), so steady-state cycles do no CEL.

An evaluation runs in this process only when it is cheap by its estimated cost and the device's
values are within the sizes that estimate assumed (:mod:`mockapi.cel.cost`); any other runs in the
isolated evaluator, off the event loop (:meth:`Budget.off_loop`), and is killed at the cycle's
deadline (AllocationTimeout, naming the expression and the device).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from mockapi import cel
from mockapi.cel import cost as costs
from mockapi.cel import isolated
from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator.budget import Budget, Exhausted
from mockapi.controllers.allocator.cache import Inventory
from mockapi.controllers.allocator.classes import Option
from mockapi.controllers.allocator.inventory import Device, Pool

NAME = "FilterDevices"
_CACHE_LIMIT = 200_000
ISOLATED = isolated.Isolated()  # one child process for the allocator's costly evaluations


@dataclass
class PoolCandidates:
    pool: Pool
    devices: list[Device] = field(default_factory=list)
    ruled_out: list[tuple[Device, str]] = field(default_factory=list)
    error: kinds.Failure | None = None


@dataclass
class Candidates:
    """One option's candidates across the inventory."""

    option: Option
    by_node: dict[str, list[PoolCandidates]] = field(default_factory=dict)
    network: list[PoolCandidates] = field(default_factory=list)
    ignored_pools: list[tuple[str, str]] = field(default_factory=list)  # (pool, reason)
    _on: dict = field(default_factory=dict)
    _bounds: dict = field(default_factory=dict)

    def on(self, node: str | None) -> list[Device]:
        """The candidates usable with ``node``: its pools' (name order), then network pools'."""
        found = self._on.get(node)
        if found is None:
            pools = (self.by_node.get(node, []) if node else []) + self.network
            found = self._on[node] = [device for pc in pools for device in pc.devices]
        return found

    def upper_free(self, node: str | None, held_count) -> int:
        """How many candidates could be free for an exclusive option: a pool whose every device
        is a candidate contributes its unheld devices, any other pool all its candidates."""
        spec = self._bounds.get(node)
        if spec is None:
            pools = (self.by_node.get(node, []) if node else []) + self.network
            spec = self._bounds[node] = tuple((pc.pool.name, len(pc.devices), len(pc.devices) == len(pc.pool.devices)) for pc in pools)
        total = 0
        for name, count, everything in spec:
            total += count - held_count(name) if everything else count
        return total

    def has_local(self) -> bool:
        return any(pc.devices for pools in self.by_node.values() for pc in pools)


class Filter:
    """The plugin, with its caches (it lives as long as the allocator)."""

    def __init__(self) -> None:
        self._pools: dict[str, dict[tuple, PoolCandidates]] = {}  # pool → (version, option, match) → candidates
        self._pool_entries = 0
        self._options: dict[tuple, Candidates] = {}

    def forget_pool(self, name: str) -> None:
        """The pool's spec changed or it was deleted: drop what was cached of it at once, so
        that its memory follows what is stored (the cache calls this)."""
        self._pool_entries -= len(self._pools.pop(name, ()))
        self._options.clear()  # they list the pools of older inventories

    def run(self, entries: list[list[Option]], inventory: Inventory, claim_match: tuple[str, ...], budget: Budget) -> list[list[Candidates]] | kinds.Failure:
        found = []
        for options in entries:
            row = []
            for option in options:
                candidates = self._candidates(option, inventory, claim_match, budget)
                if isinstance(candidates, kinds.Failure):
                    return candidates
                row.append(candidates)
            found.append(row)
        return found

    def _candidates(self, option: Option, inventory: Inventory, claim_match, budget: Budget) -> Candidates | kinds.Failure:
        key = (inventory.version, option.signature, claim_match)
        cached = self._options.get(key)
        if cached is None:
            cached = self._build(option, inventory, claim_match, budget)
            if len(self._options) > 1000:
                self._options.clear()
            self._options[key] = cached
        if isinstance(cached, kinds.Failure):
            return cached
        return Candidates(option, cached.by_node, cached.network, cached.ignored_pools, cached._on, cached._bounds)  # this option's own detail

    def _build(self, option: Option, inventory: Inventory, claim_match, budget: Budget) -> Candidates | kinds.Failure:
        result = Candidates(option)
        driver = option.device_class.driver
        for node in inventory.nodes:
            for pool in inventory.node_pools[node]:
                if self._keep(result, pool, driver):
                    found = self._pool(option, pool, claim_match, budget)
                    if found.error:
                        return found.error
                    result.by_node.setdefault(node, []).append(found)
        for pool in inventory.network:
            if self._keep(result, pool, driver):
                found = self._pool(option, pool, claim_match, budget)
                if found.error:
                    return found.error
                result.network.append(found)
        result.ignored_pools += sorted(inventory.ignored.items())
        return result

    @staticmethod
    def _keep(result: Candidates, pool: Pool, driver: str) -> bool:
        if pool.driver != driver:
            result.ignored_pools.append((pool.name, f'driver "{pool.driver}" is not the class driver "{driver}"'))
            return False
        if pool.problem:
            result.ignored_pools.append((pool.name, f"the pool is invalid: {pool.problem}"))
            return False
        return True

    def _pool(self, option: Option, pool: Pool, claim_match, budget: Budget) -> PoolCandidates:
        key = (pool.resource_version, option.signature, claim_match)
        entries = self._pools.get(pool.name)
        found = entries.get(key) if entries is not None else None
        if found is None:
            found = _filter_pool(option, pool, claim_match, budget)
            if self._pool_entries > _CACHE_LIMIT:
                self._pools.clear()
                self._pool_entries = 0
            self._pools.setdefault(pool.name, {})[key] = found
            self._pool_entries += 1
        return found


def _filter_pool(option: Option, pool: Pool, claim_match: tuple[str, ...], budget: Budget) -> PoolCandidates:
    result = PoolCandidates(pool)
    needed = tuple(dict.fromkeys(claim_match + option.detail.match))
    resources = [name for name, _, _ in option.detail.resources]
    programs = _programs(option)
    for device in pool.devices:
        try:
            budget.check_time()
        except Exhausted:
            if not programs:
                raise
            # the budget went on evaluating the constraints: say which, and how far they got
            label, program = next(((lb, pg) for lb, pg in programs if not pg.inline), programs[0])
            raise _unfinished(label, program, device, budget) from None
        why = _static_reason(device, needed, resources)
        if why is None and programs:
            why = _constraints_reason(device, programs, budget)
            if isinstance(why, kinds.Failure):
                result.error = why
                return result
        if why is None:
            result.devices.append(device)
        else:
            result.ruled_out.append((device, why))
    return result


def _static_reason(device: Device, needed: tuple[str, ...], resources: list[str]) -> str | None:
    if device.problem:
        return f"unallocatable: {device.problem}"
    for name in needed:
        if name not in device.attributes:
            return f'has no attribute "{name}" (matchAttributes)'
    for name in resources:
        if name not in device.resources:
            return f'has no resource "{name}"'
    return None


def _programs(option: Option) -> list[tuple[str, cel.Program]]:
    programs = []
    if option.device_class.constraints is not None:
        programs.append((f'DeviceClass "{option.device_class.name}" constraints', cel.compile(option.device_class.constraints)))
    if option.detail.constraints is not None:
        programs.append((f"{option.detail.path}.constraints", cel.compile(option.detail.constraints)))
    return programs


def _constraints_reason(device: Device, programs, budget: Budget) -> str | kinds.Failure | None:
    fits = _fits_estimate(device)
    for label, program in programs:
        try:
            if program.inline and fits:
                matched = program.evaluate(_activation(device, budget))
            else:
                matched = _evaluate_isolated(label, program, device, budget, bounded=fits)
            if not matched:
                return f"{label} are false"
        except cel.EvaluationError as exc:
            message = f"{label} {program.expression!r} failed on device {device.pool.name}/{device.name}: {exc}"
            return kinds.failure(kinds.CONSTRAINT_EVALUATION_ERROR, message)
    return None


def _activation(device: Device, budget: Budget):
    """The device's cached bindings on the event loop's thread; fresh ones elsewhere (the runtime
    ties bindings to the thread that made them)."""
    return device.activation() if budget.inline else cel.activation({name: a.cel for name, a in device.attributes.items()})


def _evaluate_isolated(label: str, program: cel.Program, device: Device, budget: Budget, *, bounded: bool) -> bool:
    budget.off_loop()
    where = f"{label} {program.expression!r}"
    if not budget.may_wait:
        raise Exhausted(f"{where} is too costly to evaluate on the event loop (device {device.pool.name}/{device.name}): explain leaves it to the allocator, which evaluates it off the loop")
    values = {name: a.cel for name, a in device.attributes.items()}
    try:
        result, waited = ISOLATED.evaluate_timed(program.expression, values, deadline=time.monotonic() + budget.remaining(), bounded=bounded)
    except isolated.Timeout:
        raise _unfinished(label, program, device, budget) from None
    budget.charge(waited)  # the child's work is the cycle's
    return result


def _unfinished(label: str, program: cel.Program, device: Device, budget: Budget) -> Exhausted:
    where = f"{label} {program.expression!r}"
    return Exhausted(f"{where} did not finish on device {device.pool.name}/{device.name} within the allocation budget ({budget.limits.seconds:g}s); simplify the expression")


def _fits_estimate(device: Device) -> bool:
    """Whether the device's values are within the sizes the cost estimate assumed (a pool stored
    before those caps were validated, or one on a real cluster, may hold larger ones)."""
    attributes = device.attributes
    if len(attributes) > 2 * costs.MAX_ATTRIBUTES:
        return False
    for name, attribute in attributes.items():
        value = attribute.cel
        if len(name) > costs.MAX_NAME_LENGTH:
            return False
        if isinstance(value, str) and len(value) > costs.MAX_VALUE_LENGTH:
            return False
        if isinstance(value, dict) and any(len(part) > costs.MAX_VALUE_LENGTH for part in value.values()):
            return False
    return True
