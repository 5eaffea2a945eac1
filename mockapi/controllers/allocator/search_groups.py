"""A group of candidates with equal matchAttributes values, and what the search prunes with:
per-position equivalence signatures and suffix bounds (smallest pool-counter consumption, largest
free per-device share), each computed on first use."""

from __future__ import annotations

from mockapi.controllers.allocator.inventory import Device


def match_values(device: Device, names: tuple[str, ...]) -> tuple:
    attributes = device.attributes
    return tuple(attributes[name].match_key for name in names)


class Group:
    __slots__ = ("devices", "search", "option", "entry", "_signatures", "_single", "_min", "_max")

    def __init__(self, devices: list[Device], context) -> None:
        self.devices = devices
        self.search, self.option, self.entry = context
        self._signatures: list | None = None
        self._single: list[bool] | None = None
        self._min: list[dict[str, int]] | None = None
        self._max: dict[int, list[int]] = {}

    def signature(self, j: int) -> tuple:
        if self._signatures is None:
            self._signatures = [self._signature(device) for device in self.devices]
        return self._signatures[j]

    def _signature(self, device: Device) -> tuple:
        search, option = self.search, self.option
        consumption = () if option.admin or search.ledger.is_held(device.key) else tuple(device.requests.items())
        free = tuple(search.free_share(device, name, option) for name, _, _ in option.detail.resources)
        values = match_values(device, search.claim_match + option.detail.match)
        membership = search.membership.get(device.key) if search.membership is not None else None
        return (device.pool.name, consumption, free, values, membership)

    def single_pool(self, start: int) -> bool:
        """Whether devices[start:] all belong to one pool."""
        if self._single is None:
            last = self.devices[-1].pool
            single, same = [], True
            for device in reversed(self.devices):
                same = same and device.pool is last
                single.append(same)
            self._single = single[::-1]
        return self._single[start]

    def min_requests(self, start: int) -> dict[str, int]:
        """Pool resource → the smallest consumption among devices[start:] (0 if already held)."""
        if self._min is None:
            ledger, last = self.search.ledger, self.devices[-1].pool
            names = list(last.counters)
            suffix, running = [], {name: None for name in names}
            for device in reversed(self.devices):
                held = ledger.is_held(device.key)
                for name in names:
                    amount = 0 if held else device.requests.get(name, 0)
                    running[name] = amount if running[name] is None else min(running[name], amount)
                suffix.append(dict(running))
            self._min = suffix[::-1]
        return self._min[start]

    def max_free(self, index: int, start: int) -> int:
        """The largest free share of per-device resource ``index`` among devices[start:]."""
        found = self._max.get(index)
        if found is None:
            name = self.option.detail.resources[index][0]
            suffix, best = [], 0
            for device in reversed(self.devices):
                best = max(best, self.search.free_share(device, name, self.option))
                suffix.append(best)
            found = self._max[index] = suffix[::-1]
        return found[start]
