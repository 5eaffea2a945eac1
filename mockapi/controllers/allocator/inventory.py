"""DevicePools parsed once per resourceVersion: typed attributes, exact quantities, problems named.

A pool with duplicate device names or an unusable pool-level value is *invalid* (never used, with
the reason); a device whose value is unusable, or that requests a pool resource the pool does not
declare, is *unallocatable* (with the reason). Device attributes override the pool's. Device
``requests`` are rounded up to the pool resource's ``blockSize`` here, once (rule 7).

The parsed view is compact and free of reference cycles, so that a deleted pool's memory comes
back as soon as the last reference goes (the server's GC settings make full collections rare):
devices point to their pool's :class:`PoolInfo` (its scalars, counters and device requests),
never to the :class:`Pool` that lists them; equal attribute values are one shared
:class:`Attribute` (a bounded intern table); names are interned strings.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any

from mockapi import cel
from mockapi import quantity as quantities

UNIT = quantities.NANO  # the default blockSize: one whole unit
_NONE: dict = {}  # shared by every device without requests or resources (never mutated)


@dataclass(frozen=True, slots=True)
class Attribute:
    type: str  # string, int, quantity, semver
    value: Any  # str, int, Quantity (compared by nanos), semver.Version
    cel: Any  # the value CEL sees

    @property
    def match_key(self) -> tuple:
        """Equal for matchAttributes when equal in type and value (``1Gi`` == ``1024Mi``)."""
        if self.type == "quantity":
            return ("quantity", self.value.nanos)
        if self.type == "semver":
            return ("semver", self.value.replace(build=None))
        return (self.type, self.value)

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Capacity:
    capacity: int  # nano-units
    block: int
    format: str


class PoolInfo:
    """What a device knows of its pool: no reference back to the devices (no cycle)."""

    __slots__ = ("name", "resource_version", "node", "driver", "counters", "problem", "requests")

    def __init__(self, name: str, resource_version: str, node: str, driver: str) -> None:
        self.name, self.resource_version, self.node, self.driver = name, resource_version, node, driver
        self.counters: dict[str, Capacity] = _NONE
        self.problem: str | None = None
        self.requests: dict[str, dict[str, int]] = _NONE  # device name → its requests (devices with requests only)

    def __repr__(self) -> str:
        return f"PoolInfo({self.name})"


class Device:
    __slots__ = ("pool", "index", "name", "attributes", "requests", "resources", "problem", "_activation")

    def __init__(self, pool: PoolInfo, index: int, name: str) -> None:
        self.pool, self.index, self.name = pool, index, name
        self.attributes: dict[str, Attribute] = _NONE
        self.requests: dict[str, int] = _NONE  # pool resource → nano-units consumed while allocated
        self.resources: dict[str, Capacity] = _NONE  # per-device allocatable amounts
        self.problem: str | None = None
        self._activation = None

    @property
    def key(self) -> tuple[str, str]:
        return self.pool.name, self.name

    def activation(self):
        if self._activation is None:
            self._activation = cel.activation({name: a.cel for name, a in self.attributes.items()})
        return self._activation

    def __repr__(self) -> str:
        return f"{self.pool.name}/{self.name}"


class Pool:
    """A parsed DevicePool: its :class:`PoolInfo` (the scalars are repeated here) and its devices."""

    __slots__ = ("info", "name", "resource_version", "node", "driver", "devices", "by_name")

    def __init__(self, info: PoolInfo, devices: list[Device]) -> None:
        self.info, self.devices = info, devices
        self.name, self.resource_version, self.node, self.driver = info.name, info.resource_version, info.node, info.driver
        self.by_name = {device.name: device for device in devices}

    @property
    def counters(self) -> dict[str, Capacity]:
        return self.info.counters

    @property
    def problem(self) -> str | None:
        return self.info.problem

    @property
    def requests(self) -> dict[str, dict[str, int]]:
        return self.info.requests

    def __repr__(self) -> str:
        return f"Pool({self.name}, {len(self.devices)} devices)"


class _Problem(Exception):
    def at(self, prefix: str) -> "_Problem":
        """The problem with ``prefix`` before its message's path (a device's paths are made only then)."""
        return _Problem(prefix + str(self))


def parse_pool(obj: dict) -> Pool:
    spec = obj.get("spec") or {}
    meta = obj["metadata"]
    info = PoolInfo(_name(meta["name"]), meta.get("resourceVersion", ""), _name(spec.get("nodeName") or ""), _name(spec.get("driver", "")))
    raw_devices = spec.get("devices") or []
    try:
        shared = _attributes(spec.get("attributes") or [], "spec.attributes")
        info.counters = _capacities(spec.get("resources") or [], "spec.resources") or _NONE
        _check_unique(raw_devices)
    except _Problem as exc:
        info.problem = str(exc)
        return Pool(info, [])
    devices = [_device(info, index, raw, shared) for index, raw in enumerate(raw_devices)]
    requests = {device.name: device.requests for device in devices if device.requests}
    info.requests = requests or _NONE
    return Pool(info, devices)


def _check_unique(devices: list[dict]) -> None:
    seen = set()
    for index, device in enumerate(devices):
        name = device.get("name")
        if name in seen:
            raise _Problem(f'spec.devices[{index}].name: duplicate device name "{name}"')
        seen.add(name)


def _device(pool: PoolInfo, index: int, raw: dict, shared: dict[str, Attribute]) -> Device:
    device = Device(pool, index, _name(raw.get("name", "")))
    try:  # the fields' paths are spelled out only for a problem (_Problem.at)
        own = _attributes(raw.get("attributes") or [], "attributes") if raw.get("attributes") else None
        device.attributes = {**shared, **own} if own else shared
        device.resources = (_capacities(raw["resources"], "resources") if raw.get("resources") else None) or _NONE
        device.requests = (_requests(pool, raw["requests"], "requests") if raw.get("requests") else None) or _NONE
    except _Problem as exc:
        device.problem = str(exc.at(f"spec.devices[{index}]."))
    return device


def _name(text: Any) -> Any:
    """Names repeat across pools and devices: one string object each."""
    return sys.intern(text) if type(text) is str else text


_VALUE_KEYS = ("stringValue", "intValue", "quantityValue", "semVerValue")


def _attributes(raw: list[dict], path: str) -> dict[str, Attribute]:
    attributes = {}
    for index, item in enumerate(raw):
        name = item.get("name", "")
        if len(item) == 2 and "name" in item and (key := _value_key(item)) is not None:  # the common case: a name and one value
            values = [key]
        else:
            values = [key for key in _VALUE_KEYS if item.get(key) is not None]
        if len(values) != 1:
            raise _Problem(f'{path}[{index}]: attribute "{name}" must have exactly one value, not {len(values)}')
        if name in attributes:
            raise _Problem(f'{path}[{index}].name: duplicate attribute name "{name}"')
        attributes[_name(name)] = _attribute(values[0], item[values[0]], path, index)
    return attributes


def _value_key(item: dict) -> str | None:
    for key in _VALUE_KEYS:
        if item.get(key) is not None:
            return key
    return None


def _attribute(key: str, value: Any, path: str, index: int) -> Attribute:
    try:
        return _shared_attribute(key, value) if type(value) in (str, int) else _parse_attribute(key, value)
    except ValueError as exc:
        raise _Problem(f"{path}[{index}].{key}: {exc}") from None


@functools.lru_cache(maxsize=8192)
def _shared_attribute(key: str, value: str | int) -> Attribute:
    """Equal values parse to one object (bounded: the table never holds more than 8,192)."""
    return _parse_attribute(key, value)


def _parse_attribute(key: str, value: Any) -> Attribute:
    if key == "quantityValue":
        q = quantities.parse(value)
        return Attribute("quantity", q, cel.quantity_value(q))
    if key == "semVerValue":
        version = cel.parse_semver(str(value))
        return Attribute("semver", version, cel.semver_value(version))
    if key == "intValue":
        return Attribute("int", int(value), int(value))
    text = _name(str(value))
    return Attribute("string", text, text)


def _capacities(raw: list[dict], path: str) -> dict[str, Capacity]:
    found = {}
    for index, item in enumerate(raw):
        here = f"{path}[{index}]"
        capacity = _quantity(item.get("capacity", 0), f"{here}.capacity")
        block = _quantity(item["blockSize"], f"{here}.blockSize") if item.get("blockSize") is not None else None
        if capacity.nanos < 0:
            raise _Problem(f"{here}.capacity: must not be negative")
        if block is not None and block.nanos <= 0:
            raise _Problem(f"{here}.blockSize: must be positive")
        found[item.get("name", "")] = Capacity(capacity.nanos, block.nanos if block else UNIT, capacity.format)
    return found


def _requests(pool: PoolInfo, raw: dict, path: str) -> dict[str, int]:
    requests = {}
    for name in sorted(raw):
        amount = _quantity(raw[name], f"{path}.{name}")
        counter = pool.counters.get(name)
        if counter is None:
            raise _Problem(f'{path}.{name}: requests pool resource "{name}", which the pool does not declare')
        requests[name] = quantities.round_up(max(amount.nanos, 0), counter.block)
    return requests


def _quantity(value: Any, path: str) -> quantities.Quantity:
    try:
        return _shared_quantity(value) if type(value) in (str, int) else quantities.parse(value)
    except quantities.QuantityError as exc:
        raise _Problem(f"{path}: {exc}") from None


@functools.lru_cache(maxsize=4096)
def _shared_quantity(value: str | int) -> quantities.Quantity:
    """Pools repeat their amounts (every device of a model requests the same): each text parsed
    once (a quarter of a pool's parse went to them). Quantities are frozen, so sharing is safe;
    a text that does not parse raises each time (errors are not cached)."""
    return quantities.parse(value)
