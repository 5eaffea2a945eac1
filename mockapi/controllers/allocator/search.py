"""Plugin Search: the first way to satisfy every claim entry on one node (ALLOCATOR.md, Search).

Depth-first over claim entries → options (oneOf alternatives in order, each through its classes
in name order) → device counts (fewest first) → groups of equal matchAttributes values →
*combinations* of candidates in order (never permutations), with LIFO undo of every tentative
change (devices taken, pool counters consumed, the claim-wide matchAttributes binding). Pruning,
in order: the count bound (too few candidates left), grouping by attribute value, lower bounds on
pool counters and per-device resource sums, and skipping a device equivalent to one that already
failed at the same depth (same pool, consumption, free amounts, match values and membership in the
other entries' candidates). Every device tried spends one step of the :class:`Budget`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockapi import quantity as quantities
from mockapi.controllers.allocator.budget import Budget
from mockapi.controllers.allocator.classes import Option
from mockapi.controllers.allocator.filter import Candidates
from mockapi.controllers.allocator.inventory import Device
from mockapi.controllers.allocator.ledger import Ledger
from mockapi.controllers.allocator.search_groups import Group, match_values

NAME = "Search"


@dataclass
class Pick:
    device: Device
    option: Option
    amounts: tuple[tuple[str, int, str], ...] = ()  # per-device shares: (resource, nano-units, format)
    consumed: tuple[tuple[str, int], ...] = ()  # pool counters this pick consumed
    bound: bool = False  # this pick set the claim-wide matchAttributes binding


@dataclass
class Solution:
    node: str | None
    options: list[Option]
    picks: list[list[Pick]] = field(default_factory=list)

    @property
    def alternatives(self) -> int:
        return sum(option.detail.alternative for option in self.options)

    @property
    def class_ranks(self) -> int:
        return sum(option.class_rank for option in self.options)

    @property
    def pools(self) -> list[str]:
        return sorted({pick.device.pool.name for picks in self.picks for pick in picks})

    @property
    def uses_node(self) -> bool:
        return any(pick.device.pool.node for picks in self.picks for pick in picks)


class NodeSearch:
    def __init__(self, node: str | None, rows: list[list[Candidates]], ledger: Ledger, claim_match: tuple[str, ...], budget: Budget) -> None:
        self.node = node
        self.rows = [[(c.option, c.on(node)) for c in row] for row in rows]
        self.ledger = ledger
        self.claim_match = claim_match
        self.budget = budget
        self.picked: set[tuple[str, str]] = set()
        self.delta: dict[str, dict[str, int]] = {}
        self.binding: tuple | None = None
        self.chosen: list[Option | None] = [None] * len(rows)
        self.picks: list[list[Pick]] = [[] for _ in rows]
        self.membership = _membership(self.rows) if len(rows) > 1 else None

    def run(self) -> Solution | None:
        if not self._entry(0):
            return None
        return Solution(self.node, list(self.chosen), [list(p) for p in self.picks])

    # ---------------------------------------------------------------- recursion
    def _entry(self, i: int) -> bool:
        if i == len(self.rows):
            return True
        for option, devices in self.rows[i]:
            self.chosen[i] = option
            for count in _counts(option):
                for group in self._groups(option, devices, count, i):
                    remaining = tuple(amount for _, amount, _ in option.detail.resources)
                    if self._combine(i, option, group, 0, count, remaining):
                        return True
        return False

    def _combine(self, i: int, option: Option, group: Group, start: int, left: int, remaining: tuple) -> bool:
        devices = group.devices
        if left == 0:
            return all(r <= 0 for r in remaining) and self._entry(i + 1)
        if len(devices) - start < left or self._bounded_out(option, group, start, left, remaining):
            return False
        failed = set()
        for j in range(start, len(devices) - left + 1):
            signature = group.signature(j)
            if signature in failed:
                continue
            self.budget.spend()
            pick = self._take(devices[j], option, remaining)
            if pick is not None:
                self.picks[i].append(pick)
                rest = tuple(r - a for r, (_, a, _) in zip(remaining, pick.amounts)) if pick.amounts else remaining
                if self._combine(i, option, group, j + 1, left - 1, rest):
                    return True
                self.picks[i].pop()
                self._undo(pick)
            failed.add(signature)
        return False

    def _groups(self, option: Option, devices: list[Device], count: int, i: int) -> list[Group]:
        available = [d for d in devices if self._available(d, option)]
        if len(available) < count:
            return []
        claim, detail = self.claim_match, option.detail.match
        if claim and self.binding is not None:
            available = [d for d in available if match_values(d, claim) == self.binding]
        by_value: dict[tuple, list[Device]] = {}
        for device in available:
            value = (match_values(device, claim) if claim and self.binding is None else ()) + match_values(device, detail)
            by_value.setdefault(value, []).append(device)
        context = (self, option, i)
        return [Group(members, context) for members in by_value.values() if len(members) >= count]

    # ------------------------------------------------------------------ pruning
    def _bounded_out(self, option: Option, group: Group, start: int, left: int, remaining: tuple) -> bool:
        for index, need in enumerate(remaining):
            if need > 0 and group.max_free(index, start) * left < need:
                return True
        if option.admin or not group.single_pool(start):
            return False
        pool = group.devices[start].pool
        for resource, smallest in group.min_requests(start).items():
            if smallest * left > self.counter_free(pool, resource):
                return True
        return False

    # ------------------------------------------------------- tentative changes
    def counter_free(self, pool, resource: str) -> int:
        capacity = pool.counters[resource].capacity
        return capacity - self.ledger.counters_used(pool).get(resource, 0) - self.delta.get(pool.name, {}).get(resource, 0)

    def free_share(self, device: Device, resource: str, option: Option) -> int:
        capacity = device.resources[resource].capacity
        return capacity if option.admin else capacity - self.ledger.used(device.key, resource)

    def _available(self, device: Device, option: Option) -> bool:
        key = device.key
        if key in self.picked:
            return False  # never the same device twice in one claim
        if option.admin:
            return True
        ledger = self.ledger
        if option.detail.shared:
            if ledger.exclusively_held(key):
                return False
            if any(self.free_share(device, name, option) <= 0 for name, _, _ in option.detail.resources):
                return False
            if ledger.is_held(key):
                return True  # its pool counters are already consumed
        elif ledger.is_held(key):
            return False
        return all(amount <= self.counter_free(device.pool, name) for name, amount in device.requests.items())

    def _take(self, device: Device, option: Option, remaining: tuple) -> Pick | None:
        if not self._available(device, option):
            return None
        amounts = self._shares(device, option, remaining) if option.detail.shared else ()
        if amounts is None:
            return None
        pick = Pick(device, option, amounts)
        if not option.admin and not self.ledger.is_held(device.key) and device.requests:
            pick.consumed = tuple(device.requests.items())
            delta = self.delta.setdefault(device.pool.name, {})
            for name, amount in pick.consumed:
                delta[name] = delta.get(name, 0) + amount
        self.picked.add(device.key)
        if self.claim_match and self.binding is None:
            self.binding, pick.bound = match_values(device, self.claim_match), True
        return pick

    def _shares(self, device: Device, option: Option, remaining: tuple):
        """Each device's share: what is still needed (at least one block), rounded up to its
        blockSize, or as much as it has; None when that is nothing or would pass a limit."""
        detail, amounts = option.detail, []
        caps = dict(detail.resource_limits)
        for (name, requested, fmt), need in zip(detail.resources, remaining):
            block = device.resources[name].block
            free = self.free_share(device, name, option)
            share = quantities.round_up(max(need, 1), block)
            if share > free:
                share = free // block * block
            if share <= 0 or (name in caps and requested - need + share > caps[name]):
                return None
            amounts.append((name, share, fmt))
        return tuple(amounts)

    def _undo(self, pick: Pick) -> None:
        self.picked.discard(pick.device.key)
        if pick.consumed:
            delta = self.delta[pick.device.pool.name]
            for name, amount in pick.consumed:
                delta[name] -= amount
        if pick.bound:
            self.binding = None


def _counts(option: Option) -> range:
    """Fewest devices first. Exclusive devices: the minimum is enough (more never helps)."""
    detail = option.detail
    return range(detail.count, detail.limit + 1) if detail.shared else range(detail.count, detail.count + 1)


def _membership(rows) -> dict[tuple[str, str], frozenset[int]]:
    found: dict[tuple[str, str], set[int]] = {}
    for row in rows:
        for option, devices in row:
            for device in devices:
                found.setdefault(device.key, set()).add(option.id)
    return {key: frozenset(ids) for key, ids in found.items()}
