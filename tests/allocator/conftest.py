"""Builders for the allocator's unit tests: manifests in a line, and a :class:`World` — a cache and
a planner fed like the controller feeds them, which commits each successful plan to the claim's
status the way the controller does (so later plans see the devices held)."""

from __future__ import annotations

import copy
import itertools

import pytest

from mockapi.client import ADDED, DELETED, MODIFIED
from mockapi.controllers.allocator import status as status_
from mockapi.controllers.allocator.budget import Limits
from mockapi.controllers.allocator.cache import Cache
from mockapi.controllers.allocator.cycle import Plan, Planner

API = "devmgmtproto.k8s.io/v1alpha1"
DRIVER = "example.com-foozer"


def attributes(**values) -> list[dict]:
    """``numa="0"`` → stringValue, ``index=3`` → intValue, ``memory=q("40Gi")`` → quantityValue,
    ``firmware=v("1.2.3")`` → semVerValue."""
    found = []
    for name, value in values.items():
        if isinstance(value, tuple):
            found.append({"name": name, value[0]: value[1]})
        elif isinstance(value, int):
            found.append({"name": name, "intValue": value})
        else:
            found.append({"name": name, "stringValue": value})
    return found


def q(text: str) -> tuple[str, str]:
    return ("quantityValue", text)


def v(text: str) -> tuple[str, str]:
    return ("semVerValue", text)


def device(name: str, *, requests: dict | None = None, resources: list | None = None, **attrs) -> dict:
    found: dict = {"name": name}
    if attrs:
        found["attributes"] = attributes(**attrs)
    if requests:
        found["requests"] = requests
    if resources:
        found["resources"] = resources
    return found


def pool(name: str, devices: list[dict] | int, *, node: str | None = "node-a", driver: str = DRIVER, resources: list | None = None, **attrs) -> dict:
    if isinstance(devices, int):
        devices = [device(f"dev-{i:02d}") for i in range(devices)]
    spec: dict = {"driver": driver, "devices": devices}
    if node:
        spec["nodeName"] = node
    if attrs:
        spec["attributes"] = attributes(**attrs)
    if resources:
        spec["resources"] = resources
    return {"apiVersion": API, "kind": "DevicePool", "metadata": {"name": name}, "spec": spec}


def device_class(name: str, *, driver: str = DRIVER, device_type: str = "gpu", constraints: str | None = None, admin: bool = False, configs: list | None = None) -> dict:
    spec: dict = {"driver": driver, "deviceType": device_type}
    if constraints:
        spec["constraints"] = constraints
    if admin:
        spec["adminAccess"] = True
    if configs:
        spec["configs"] = configs
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def detail(device_class: str | None = "gpu", *, device_type: str | None = None, count=None, limit=None, constraints=None, match=None, configs=None, **resources) -> dict:
    found: dict = {"deviceType": device_type} if device_type else {"deviceClass": device_class}
    requests = dict(resources)
    if count is not None:
        requests["count"] = count
    if requests:
        found["requests"] = requests
    if limit is not None:
        found["limits"] = {"count": limit} if not isinstance(limit, dict) else limit
    if constraints:
        found["constraints"] = constraints
    if match:
        found["matchAttributes"] = match
    if configs:
        found["configs"] = configs
    return found


def claim(name: str, *entries: dict, namespace: str = "default", match: list[str] | None = None, kind: str = "DeviceClaim") -> dict:
    spec: dict = {"claims": list(entries) or [detail()]}
    if match:
        spec["matchAttributes"] = match
    meta = {"name": name, "namespace": namespace, "generation": 1, "uid": f"uid-{name}", "creationTimestamp": "2024-01-01T00:00:00Z"}
    return {"apiVersion": API, "kind": kind, "metadata": meta, "spec": spec}


def one_of(*alternatives: dict) -> dict:
    return {"oneOf": list(alternatives)}


def node(name: str, *, unschedulable: bool = False) -> dict:
    found: dict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    if unschedulable:
        found["spec"] = {"unschedulable": True}
    return found


class World:
    """A cache and a planner, fed objects as watch events would feed them."""

    def __init__(self, *objects: dict, policy: str = "binpack", limits: Limits = Limits(steps=200_000, seconds=5.0)) -> None:
        self.cache = Cache()
        self.planner = Planner(self.cache, policy=policy, limits=limits)
        self._rv = itertools.count(1)
        self.claims: dict[str, dict] = {}  # the latest version of each claim, as the API would hold it
        self.add(device_class("gpu"))
        self.add(*objects)

    def _stamp(self, obj: dict) -> dict:
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(next(self._rv))
        return obj

    def add(self, *objects: dict) -> None:
        for obj in objects:
            obj = self._stamp(obj)
            apply = {"DevicePool": self.cache.apply_pool, "DeviceClass": self.cache.apply_class, "Node": self.cache.apply_node}.get(obj["kind"])
            if apply is not None:
                apply(MODIFIED, obj)
            else:
                self.claims[obj["metadata"]["name"]] = obj
                self.cache.apply_claim(MODIFIED, obj)

    def remove(self, obj: dict) -> None:
        obj = self._stamp(obj)
        apply = {"DevicePool": self.cache.apply_pool, "DeviceClass": self.cache.apply_class, "Node": self.cache.apply_node}.get(obj["kind"], self.cache.apply_claim)
        apply(DELETED, obj)

    def plan(self, obj: dict) -> Plan:
        return self.planner.plan(obj)

    def allocate(self, obj: dict) -> Plan:
        """Plan, and on success write the status into the cache as the controller would."""
        plan = self.planner.plan(obj)
        if plan.failure is None:
            allocated = copy.deepcopy(obj)
            allocated["status"] = status_.allocated(obj, plan.solution, ([], []), generation=1, now="2024-01-01T00:00:00Z")
            allocated = self._stamp(allocated)
            self.claims[obj["metadata"]["name"]] = allocated
            self.cache.apply_claim(ADDED, allocated)
        return plan


def devices(plan: Plan) -> list[str]:
    """The chosen devices as "pool/device", in order."""
    assert plan.failure is None, plan.failure
    return [f"{p.device.pool.name}/{p.device.name}" for picks in plan.solution.picks for p in picks]


@pytest.fixture
def world():
    return World
