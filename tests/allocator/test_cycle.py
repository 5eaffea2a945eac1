"""run_cycle: the plan plus what needs the API — privileged namespaces and configs."""

import asyncio

from mockapi import errors
from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator.cycle import run_cycle
from tests.allocator.conftest import World, claim, detail, device_class, pool


class Objects:
    """A Client with a few objects (only ``get`` is needed here)."""

    def __init__(self, *objects: dict) -> None:
        self.objects = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objects}
        self.reads = []

    async def get(self, kind, namespace, name):
        self.reads.append((kind.kind, namespace, name))
        found = self.objects.get((kind.kind, namespace, name))
        if found is None:
            raise errors.not_found(errors.GroupResource("", kind.kind.lower() + "s"), name)
        return found


def config(kind: str, namespace: str, name: str) -> dict:
    return {"apiVersion": "example.com/v1", "kind": kind, "metadata": {"name": name, "namespace": namespace}}


def ref(kind: str, name: str, namespace: str | None = None) -> dict:
    found = {"apiVersion": "example.com/v1", "kind": kind, "name": name}
    if namespace is not None:
        found["namespace"] = namespace
    return found


def test_class_configs_are_copied_once_per_class_and_claim_configs_from_the_claims_namespace():
    world = World(pool("p", 3))
    world.add(device_class("cfg", configs=[ref("Setting", "s1", "infra")]))
    client = Objects(config("Setting", "infra", "s1"), config("Tuning", "default", "t1"))
    spec = claim("c", detail("cfg"), detail("cfg", configs=[ref("Tuning", "t1")]))
    plan = asyncio.run(run_cycle(world.planner, client, spec))
    class_configs, claim_configs = plan.configs
    assert [c["metadata"]["name"] for c in class_configs] == ["s1"] and [c["metadata"]["name"] for c in claim_configs] == ["t1"]


def test_a_missing_config_is_config_not_found_waiting_for_that_object():
    world = World(pool("p", 1))
    plan = asyncio.run(run_cycle(world.planner, Objects(), claim("c", detail("gpu", configs=[ref("Tuning", "t1")]))))
    assert plan.failure.reason == kinds.CONFIG_NOT_FOUND
    assert ("config", "example.com/v1", "Tuning", "default", "t1") in plan.failure.waits


def test_a_privileged_claim_outside_an_opted_in_namespace_is_refused():
    world = World(pool("p", 1))
    namespace = {"kind": "Namespace", "metadata": {"name": "default"}}
    plan = asyncio.run(run_cycle(world.planner, Objects(namespace), claim("c", kind="DevicePrivilegedClaim")))
    assert plan.failure.reason == kinds.INVALID_SPEC
    assert plan.failure.message == 'namespace "default" does not allow admin access to devices: label it devmgmtproto.k8s.io/admin-access=true'
    opted = {"kind": "Namespace", "metadata": {"name": "default", "labels": {kinds.ADMIN_ACCESS_LABEL: "true"}}}
    assert asyncio.run(run_cycle(world.planner, Objects(opted), claim("c", kind="DevicePrivilegedClaim"))).failure is None
