"""DevicePools parsed once per resourceVersion: typed attributes, exact quantities, problems named.

A pool with duplicate device names or an unusable pool-level value is *invalid* (never used, with
the reason); a device whose value is unusable, or that requests a pool resource the pool does not
declare, is *unallocatable* (with the reason). Device attributes override the pool's. Device
``requests`` are rounded up to the pool resource's ``blockSize`` here, once (rule 7).
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


class Device:
    __slots__ = ("pool", "index", "name", "attributes", "requests", "resources", "problem", "_activation")

    def __init__(self, pool: "Pool", index: int, name: str) -> None:
        self.pool, self.index, self.name = pool, index, name
        self.attributes: dict[str, Attribute] = {}
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


@dataclass
class Pool:
    name: str
    resource_version: str
    node: str  # "" for network-attached
    driver: str
    counters: dict[str, Capacity] = field(default_factory=dict)
    devices: list[Device] = field(default_factory=list)
    by_name: dict[str, Device] = field(default_factory=dict)
    problem: str | None = None


class _Problem(Exception):
    pass


def parse_pool(obj: dict) -> Pool:
    spec = obj.get("spec") or {}
    meta = obj["metadata"]
    pool = Pool(meta["name"], meta.get("resourceVersion", ""), spec.get("nodeName") or "", spec.get("driver", ""))
    try:
        shared = _attributes(spec.get("attributes") or [], "spec.attributes")
        pool.counters = _capacities(spec.get("resources") or [], "spec.resources")
        _check_unique(spec.get("devices") or [])
    except _Problem as exc:
        pool.problem = str(exc)
        return pool
    for index, raw in enumerate(spec.get("devices") or []):
        pool.devices.append(_device(pool, index, raw, shared))
    pool.by_name = {device.name: device for device in pool.devices}
    return pool


def _check_unique(devices: list[dict]) -> None:
    seen = set()
    for index, device in enumerate(devices):
        name = device.get("name")
        if name in seen:
            raise _Problem(f'spec.devices[{index}].name: duplicate device name "{name}"')
        seen.add(name)


def _device(pool: Pool, index: int, raw: dict, shared: dict[str, Attribute]) -> Device:
    device = Device(pool, index, raw.get("name", ""))
    path = f"spec.devices[{index}]"
    try:
        device.attributes = {**shared, **_attributes(raw.get("attributes") or [], f"{path}.attributes")}
        device.resources = _capacities(raw.get("resources") or [], f"{path}.resources") or _NONE
        device.requests = _requests(pool, raw.get("requests") or {}, f"{path}.requests") or _NONE
    except _Problem as exc:
        device.problem = str(exc)
    return device


def _attributes(raw: list[dict], path: str) -> dict[str, Attribute]:
    attributes = {}
    for index, item in enumerate(raw):
        name = item.get("name", "")
        values = [key for key in ("stringValue", "intValue", "quantityValue", "semVerValue") if item.get(key) is not None]
        if len(values) != 1:
            raise _Problem(f'{path}[{index}]: attribute "{name}" must have exactly one value, not {len(values)}')
        attributes[name] = _attribute(values[0], item[values[0]], f"{path}[{index}].{values[0]}")
    return attributes


def _attribute(key: str, value: Any, path: str) -> Attribute:
    try:
        if key == "quantityValue":
            q = quantities.parse(value)
            return Attribute("quantity", q, cel.quantity_value(q))
        if key == "semVerValue":
            version = cel.parse_semver(str(value))
            return Attribute("semver", version, cel.semver_value(version))
    except ValueError as exc:
        raise _Problem(f"{path}: {exc}") from None
    if key == "intValue":
        return Attribute("int", int(value), int(value))
    return Attribute("string", str(value), str(value))


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


def _requests(pool: Pool, raw: dict, path: str) -> dict[str, int]:
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
        return quantities.parse(value)
    except quantities.QuantityError as exc:
        raise _Problem(f"{path}: {exc}") from None
