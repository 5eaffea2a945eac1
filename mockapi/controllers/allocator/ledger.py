"""Who holds which device: the allocation state, rebuilt from claim statuses (the truth).

A status entry with per-device ``allocations`` is a *share* of the device (its amounts count
against the device's ``resources``); one without is an *exclusive* hold. Entries marked
``adminAccess`` hold nothing. A held device consumes its pool counters once, however many claims
share it (rule 7), computed from the pool's current spec. A device stays held by name even if its
pool is edited or deleted under it (rule 14): held devices are tracked by identity, so a device
the pool no longer lists takes nothing from the devices it lists now, and one that comes back is
still its holder's and nobody else's.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from mockapi import quantity as quantities
from collections.abc import Mapping

from mockapi.controllers.allocator.inventory import Pool, PoolInfo
from mockapi.controllers.allocator.kinds import ClaimKey

DeviceKey = tuple[str, str]  # (pool name, device name)


@dataclass(frozen=True, slots=True)
class Hold:
    claim: ClaimKey
    amounts: tuple[tuple[str, int], ...] = ()  # per-device resources; empty: the whole device

    @property
    def exclusive(self) -> bool:
        return not self.amounts


def holds_of(status: dict | None) -> list[tuple[DeviceKey, tuple[tuple[str, int], ...]]]:
    """The non-admin device entries of a claim status, with their per-device amounts."""
    found = []
    for entry in (status or {}).get("allocations") or []:
        if entry.get("adminAccess"):
            continue
        amounts = []
        for item in entry.get("allocations") or []:
            parsed = quantities.parse_or_none(item.get("allocation"))
            amounts.append((item.get("name", ""), parsed.nanos if parsed else 0))
        found.append(((entry.get("devicePoolName", ""), entry.get("deviceName", "")), tuple(sorted(amounts))))
    return found


class Ledger:
    """``pools``: the current pools by name (the cache's), to count which held devices a pool
    still lists; without it every held device of a pool counts."""

    def __init__(self, pools: Mapping[str, Pool] | None = None) -> None:
        self._pools = pools
        self._holds: dict[DeviceKey, dict[ClaimKey, Hold]] = {}
        self._claims: dict[ClaimKey, tuple[tuple[DeviceKey, Hold], ...]] = {}
        self._by_pool: dict[str, dict[str, int]] = {}  # pool → held device name → number of holds
        self._serial: dict[str, int] = {}  # pool → changes of its holds (while it has any)
        self._counters: dict[str, tuple[tuple, dict[str, int]]] = {}  # pool → (version, counters used)
        self._listed: dict[str, tuple[int, int]] = {}  # pool → (serial, held devices its spec lists)
        self.touched: set[str] = set()  # pools whose holds changed since the status writer last looked

    # ------------------------------------------------------------- changes
    def set_claim(self, claim: ClaimKey, status: dict | None) -> bool:
        """Make ``claim`` hold what its status says. True when something it held was freed."""
        new = tuple((device, Hold(claim, amounts)) for device, amounts in holds_of(status))
        old = self._claims.get(claim, ())
        if new == old:
            return False
        self._drop(claim, old)
        self._add(claim, new)
        return not set(old) <= set(new)

    def _add(self, claim: ClaimKey, new: tuple) -> None:
        for device, hold in new:
            self._holds.setdefault(device, {})[claim] = hold
            held = self._by_pool.setdefault(device[0], {})
            held[device[1]] = held.get(device[1], 0) + 1
            self._touch(device[0])
        if new:
            self._claims[claim] = new

    def release(self, claim: ClaimKey) -> bool:
        return self.set_claim(claim, None)

    @contextlib.contextmanager
    def without(self, claim: ClaimKey):
        """As if ``claim`` held nothing, until the block ends (then exactly as before)."""
        held = self._claims.get(claim, ())
        self._drop(claim, held)
        try:
            yield
        finally:
            self._add(claim, held)

    def _drop(self, claim: ClaimKey, old: tuple) -> None:
        for device, _ in old:
            holders = self._holds.get(device, {})
            holders.pop(claim, None)
            if not holders:
                self._holds.pop(device, None)
            held = self._by_pool.get(device[0], {})
            held[device[1]] = held.get(device[1], 1) - 1
            if held[device[1]] <= 0:
                del held[device[1]]
            if not held:
                self._by_pool.pop(device[0], None)
            self._touch(device[0])
        self._claims.pop(claim, None)

    def _touch(self, pool: str) -> None:
        self._serial[pool] = self._serial.get(pool, 0) + 1
        self.touched.add(pool)

    def pool_changed(self, pool: str) -> None:
        """The pool's spec changed (or it went): forget what was derived from the old one."""
        self._counters.pop(pool, None)
        self._listed.pop(pool, None)
        if pool not in self._by_pool:
            self._serial.pop(pool, None)

    # --------------------------------------------------------------- reads
    def holders(self, device: DeviceKey) -> dict[ClaimKey, Hold]:
        return self._holds.get(device) or {}

    def is_held(self, device: DeviceKey) -> bool:
        return device in self._holds

    def exclusively_held(self, device: DeviceKey) -> bool:
        return any(hold.exclusive for hold in self._holds.get(device, {}).values())

    def used(self, device: DeviceKey, resource: str) -> int:
        return sum(dict(hold.amounts).get(resource, 0) for hold in self._holds.get(device, {}).values())

    def held_count(self, pool: str) -> int:
        """How many of the devices the pool lists now are held (a held device its spec no longer
        lists takes nothing from the others)."""
        held = self._by_pool.get(pool)
        if not held:
            return 0
        if self._pools is None:
            return len(held)
        current = self._pools.get(pool)
        if current is None:
            return 0
        serial = self._serial.get(pool, 0)
        cached = self._listed.get(pool)
        if cached is None or cached[0] != serial:
            listed = current.by_name
            cached = self._listed[pool] = (serial, sum(1 for name in held if name in listed))
        return cached[1]

    @property
    def serials(self) -> dict[str, int]:
        """pool → :meth:`serial` (0 when absent): the ledger's own dict, read-only to callers, kept
        (changed in place, never replaced) — a filter looks serials up without a call each."""
        return self._serial

    def serial(self, pool: str) -> int:
        """A number that changes whenever what the pool's devices are held by changes (a search's
        outcome on the pool is the same while it stays the same)."""
        return self._serial.get(pool, 0)

    def pool(self, name: str) -> Pool | None:
        """The current pool of that name (None without the cache's pools)."""
        return self._pools.get(name) if self._pools is not None else None

    def held_names(self, pool: str):
        """The names of the pool's held devices (listed by its spec or not)."""
        return (self._by_pool.get(pool) or {}).keys()

    def claim_devices(self, claim: ClaimKey) -> list[DeviceKey]:
        return [device for device, _ in self._claims.get(claim, ())]

    def claims(self) -> list[ClaimKey]:
        return sorted(self._claims)

    def counters_used(self, pool: Pool | PoolInfo) -> dict[str, int]:
        """Pool resource → amount consumed by its held devices, per the pool's current spec."""
        requests = pool.requests
        version = (id(requests), pool.resource_version, self._serial.get(pool.name, 0))
        cached = self._counters.get(pool.name)
        if cached is not None and cached[0] == version:
            return cached[1]
        used: dict[str, int] = {}
        if requests:
            for name in self._by_pool.get(pool.name) or ():
                for resource, amount in (requests.get(name) or {}).items():
                    used[resource] = used.get(resource, 0) + amount
        self._counters[pool.name] = (version, used)
        return used
