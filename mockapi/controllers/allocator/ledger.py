"""Who holds which device: the allocation state, rebuilt from claim statuses (the truth).

A status entry with per-device ``allocations`` is a *share* of the device (its amounts count
against the device's ``resources``); one without is an *exclusive* hold. Entries marked
``adminAccess`` hold nothing. A held device consumes its pool counters once, however many claims
share it (rule 7), computed from the pool's current spec. A device stays held by name even if its
pool is edited or deleted under it (rule 14).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from mockapi import quantity as quantities
from mockapi.controllers.allocator.inventory import Pool
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
    def __init__(self) -> None:
        self._holds: dict[DeviceKey, dict[ClaimKey, Hold]] = {}
        self._claims: dict[ClaimKey, tuple[tuple[DeviceKey, Hold], ...]] = {}
        self._by_pool: dict[str, dict[str, int]] = {}  # pool → held device name → number of holds
        self._serial: dict[str, int] = {}
        self._counters: dict[str, tuple[tuple, dict[str, int]]] = {}

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
            self._touch(device[0])
        self._claims.pop(claim, None)

    def _touch(self, pool: str) -> None:
        self._serial[pool] = self._serial.get(pool, 0) + 1

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
        return len(self._by_pool.get(pool) or ())

    def claim_devices(self, claim: ClaimKey) -> list[DeviceKey]:
        return [device for device, _ in self._claims.get(claim, ())]

    def claims(self) -> list[ClaimKey]:
        return sorted(self._claims)

    def counters_used(self, pool: Pool) -> dict[str, int]:
        """Pool resource → amount consumed by its held devices, per the pool's current spec."""
        version = (pool.resource_version, self._serial.get(pool.name, 0))
        cached = self._counters.get(pool.name)
        if cached is not None and cached[0] == version:
            return cached[1]
        used: dict[str, int] = {}
        for name in self._by_pool.get(pool.name) or ():
            device = pool.by_name.get(name)
            for resource, amount in (device.requests.items() if device is not None else ()):
                used[resource] = used.get(resource, 0) + amount
        self._counters[pool.name] = (version, used)
        return used
