"""run_cycle: the plan plus what needs the API — privileged namespaces and configs."""

import asyncio
import threading

import pytest

from mockapi import errors
from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator.budget import Limits, Preempted
from mockapi.controllers.allocator.cycle import run_cycle
from tests.allocator.conftest import World, claim, detail, device, device_class, pool


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


SLOW = "[" + ",".join(str(i) for i in range(99)) + "]"
SLOW = f"{SLOW}.all(i, {SLOW}.all(j, device.size + 1 > 0))"  # past INLINE_COST: not on the event loop


def test_a_cycle_that_would_hold_the_event_loop_is_preempted_and_planned_again_in_the_worker_thread():
    # a budget no evaluation nears: the isolated evaluator runs at nice 19, so on a busy machine it
    # waits for the CPU behind every other process, and its speed is not the point here
    world = World(pool("p", [device("a", size=1)]), limits=Limits(seconds=60))
    spec = claim("c", detail("gpu", constraints=SLOW))
    with pytest.raises(Preempted):
        world.planner.plan(spec, inline=True)
    loop_thread, planned_in = threading.get_ident(), []
    plan_on = world.planner.plan

    def recording(*args, **kwargs):
        planned_in.append(threading.get_ident())
        return plan_on(*args, **kwargs)

    world.planner.plan = recording
    plan = asyncio.run(run_cycle(world.planner, Objects(), spec))
    assert plan.failure is None and [p.device.name for p in plan.solution.picks[0]] == ["a"]
    assert planned_in[0] == loop_thread and planned_in[1] != loop_thread  # inline first, then off the loop


def test_a_cheap_cycle_stays_on_the_event_loop():
    world = World(pool("p", [device("a", size=1)]))
    world.planner.monotonic = lambda: 0.0  # time stands still: a slow machine cannot use up the 2 ms slice; only cost preempts
    plan = world.planner.plan(claim("c", detail("gpu", constraints="device.size == 1")), inline=True)
    assert plan.failure is None


def test_constraints_over_the_cost_limit_fail_with_constraint_compile_error():
    over = "[" + ",".join(str(i) for i in range(99)) + "]"
    over = f"{over}.all(i, {over}.all(j, !'{'a' * 4000}'.contains(device.s)))"
    world = World(pool("p", 1))
    plan = world.plan(claim("c", detail("gpu", constraints=over)))
    assert plan.failure.reason == kinds.CONSTRAINT_COMPILE_ERROR
    assert "spec.claims[0].constraints" in plan.failure.message
    assert plan.failure.message.endswith("is too complex: its estimated cost 27,503,003 exceeds the limit of 1,000,000")
    world.add(device_class("heavy", constraints=over))
    plan = world.plan(claim("d", detail("heavy")))
    assert plan.failure.reason == kinds.CONSTRAINT_COMPILE_ERROR and 'DeviceClass "heavy" constraints' in plan.failure.message


def test_a_plan_on_an_event_loop_never_waits_for_the_isolated_evaluator():
    world = World(pool("p", [device("a", size=1)]))

    async def on_the_loop():
        return world.planner.plan(claim("c", detail("gpu", constraints=SLOW)), explain=True)

    plan = asyncio.run(on_the_loop())
    assert plan.failure.reason == kinds.ALLOCATION_TIMEOUT
    assert plan.failure.message.endswith("is too costly to evaluate on the event loop (device p/a): explain leaves it to the allocator, which evaluates it off the loop")
