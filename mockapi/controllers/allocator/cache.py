"""The allocator's view of the cluster, fed by watch events: pools, classes, nodes, claims and the
:class:`~.ledger.Ledger` of what the claims hold.

Each ``apply_*`` method takes one watch event and says what changed, so the controller can wake
the claims waiting for it. Claims are kept at their newest resourceVersion: an event older than
what the allocator already wrote itself is ignored, so a late echo can never free held devices.
:meth:`Cache.inventory` groups the parsed pools by eligible node (rule 1), rebuilt only when a
pool or node changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from mockapi.client import DELETED
from mockapi.controllers.allocator.classes import DeviceClass, parse_class
from mockapi.controllers.allocator.inventory import Pool, parse_pool
from mockapi.controllers.allocator.kinds import ClaimKey
from mockapi.controllers.allocator.ledger import Ledger


@dataclass
class Inventory:
    version: int
    nodes: list[str]  # eligible nodes, in name order
    node_pools: dict[str, list[Pool]]  # eligible node → its pools, in name order
    network: list[Pool]  # network-attached pools, in name order
    ignored: dict[str, str] = field(default_factory=dict)  # pool → why it is not used (its node)

    sizes: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)  # node → (pool, devices)

    def pools_of(self, node: str | None) -> list[Pool]:
        return (self.node_pools.get(node, []) if node else []) + self.network

    def free_devices(self, node: str | None, held_count) -> int:
        """Devices of the node's own pools that nobody holds."""
        total = 0
        for name, size in self.sizes.get(node, ()):
            total += size - held_count(name)
        return total


class ClaimRecord(NamedTuple):
    """What the allocator keeps of a claim (the ledger keeps what it holds): a few scalars, not
    the object — thousands of claim dicts would make the server's garbage collections long."""

    resource_version: str
    generation: int
    created: str
    allocated: bool
    deleting: bool

    @classmethod
    def of(cls, claim: dict) -> "ClaimRecord":
        meta = claim["metadata"]
        allocated = bool((claim.get("status") or {}).get("allocations"))
        return cls(meta.get("resourceVersion", ""), meta.get("generation", 0), meta.get("creationTimestamp", ""), allocated, bool(meta.get("deletionTimestamp")))


@dataclass
class ClaimChange:
    old: ClaimRecord | None  # what the cache had before
    freed: bool = False  # devices the claim held were freed
    stale: bool = False  # the event was older than the cache's version: ignored


def spec_version(obj: dict) -> tuple | None:
    """The identity of an object's spec: its uid and ``metadata.generation`` (which the API
    server bumps on every spec change, and only then). None when it has no generation (then
    every event counts as a change)."""
    meta = obj["metadata"]
    generation = meta.get("generation")
    return (meta.get("uid", ""), generation) if generation else None


def newer(old: ClaimRecord | None, new: dict) -> bool:
    """Whether ``new`` is at least as recent as ``old`` (resourceVersions compared as integers
    when both are, as etcd's are; otherwise trusted)."""
    if old is None:
        return True
    a, b = old.resource_version, new["metadata"].get("resourceVersion", "")
    return not (a.isdigit() and b.isdigit()) or int(b) >= int(a)


class Cache:
    """What the informers told, kept compact: parsed pools and classes, each node's
    schedulability, a few scalars per claim — and, per pool and class, only the identity of the
    spec it was parsed from (:func:`spec_version`), not the spec."""

    def __init__(self) -> None:
        self.pools: dict[str, Pool] = {}
        self.classes: dict[str, DeviceClass] = {}
        self.nodes: dict[str, bool] = {}  # node → unschedulable
        self.claims: dict[ClaimKey, ClaimRecord] = {}
        self.ledger = Ledger(self.pools)
        self.inventory_version = 0
        self.pool_status: dict[str, int | None] = {}  # pool → status.availableDevices as last seen
        self.touched: set[str] = set()  # pools seen changed since the status writer last looked
        self._versions: dict[tuple[str, str], tuple | None] = {}
        self.pool_listeners: list = []  # called with a pool's name when its spec changed or it went
        self._inventory: Inventory | None = None

    # ------------------------------------------------------------- events
    def apply_pool(self, event_type: str, obj: dict) -> bool:
        name = obj["metadata"]["name"]
        if event_type == DELETED:
            self.pool_status.pop(name, None)
            self.touched.discard(name)
        else:
            self.pool_status[name] = (obj.get("status") or {}).get("availableDevices")
            self.touched.add(name)
        if not self._spec_changed(("pool", name), event_type, obj):
            return False
        if event_type == DELETED:
            self.pools.pop(name, None)
        else:
            self.pools[name] = parse_pool(obj)
        self.ledger.pool_changed(name)
        for listener in self.pool_listeners:
            listener(name)
        self._invalidate()
        return True

    def apply_own_status(self, name: str, value: int) -> None:
        """The echo of the status writer's own write (``status.availableDevices`` = ``value``),
        where its MODIFIED event was in the stream: what :meth:`apply_pool` does with that event —
        a status write changes neither the spec nor the generation — without the object to parse."""
        self.pool_status[name] = value
        self.touched.add(name)

    def apply_node(self, event_type: str, obj: dict) -> bool:
        """Nodes matter by their existence and ``spec.unschedulable`` only."""
        name = obj["metadata"]["name"]
        before = self.nodes.get(name)
        if event_type == DELETED:
            self.nodes.pop(name, None)
        else:
            self.nodes[name] = bool((obj.get("spec") or {}).get("unschedulable"))
        if self.nodes.get(name) == before:
            return False
        self._invalidate()
        return True

    def apply_class(self, event_type: str, obj: dict) -> bool:
        name = obj["metadata"]["name"]
        if not self._spec_changed(("class", name), event_type, obj):
            return False
        if event_type == DELETED:
            self.classes.pop(name, None)
        else:
            self.classes[name] = parse_class(obj)
        return True

    def apply_claim(self, event_type: str, obj: dict) -> ClaimChange:
        """Apply one claim event. An event older than what the cache has changes nothing."""
        key = ClaimKey.of(obj)
        old = self.claims.get(key)
        if not newer(old, obj):
            return ClaimChange(old, stale=True)
        if event_type == DELETED:
            self.claims.pop(key, None)
            return ClaimChange(old, freed=self.ledger.release(key))
        self.claims[key] = ClaimRecord.of(obj)
        # a claim being deleted holds its devices until it is gone (or its allocations are cleared):
        # no watcher may see a device in two claims' statuses at once, as in kube
        return ClaimChange(old, freed=self.ledger.set_claim(key, obj.get("status")))

    def _spec_changed(self, key: tuple[str, str], event_type: str, obj: dict) -> bool:
        """Pools and classes matter only through their spec (a driver writing a pool's status
        changes nothing for the allocator). A delete always changes the view."""
        if event_type == DELETED:
            self._versions.pop(key, None)
            return True
        version = spec_version(obj)
        if version is not None and key in self._versions and self._versions[key] == version:
            return False
        self._versions[key] = version
        return True

    def _invalidate(self) -> None:
        self.inventory_version += 1
        self._inventory = None

    # -------------------------------------------------------------- reads
    def inventory(self) -> Inventory:
        if self._inventory is None:
            self._inventory = self._build_inventory()
        return self._inventory

    def _build_inventory(self) -> Inventory:
        inventory = Inventory(self.inventory_version, [], {}, [])
        for name in sorted(self.pools):
            pool = self.pools[name]
            if not pool.node:
                inventory.network.append(pool)
                continue
            why = self._node_problem(pool.node)
            if why:
                inventory.ignored[name] = why
            else:
                inventory.node_pools.setdefault(pool.node, []).append(pool)
        inventory.nodes = sorted(inventory.node_pools)
        inventory.sizes = {node: tuple((p.name, len(p.devices)) for p in pools) for node, pools in inventory.node_pools.items()}
        return inventory

    def _node_problem(self, node: str) -> str | None:
        if not self.nodes:
            return None  # no Node objects at all: nodes are the pools' nodeNames
        unschedulable = self.nodes.get(node)
        if unschedulable is None:
            return f'Node "{node}" does not exist'
        if unschedulable:
            return f'Node "{node}" is unschedulable'
        return None
