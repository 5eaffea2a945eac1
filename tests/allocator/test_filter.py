"""Plugin FilterDevices: candidates per option, every ruled-out pool and device with its reason."""

import pytest

from mockapi.controllers.allocator import classes, kinds, request
from mockapi.controllers.allocator.budget import Budget, Exhausted, Limits, Preempted
from mockapi.controllers.allocator.filter import Filter
from tests.allocator.conftest import World, claim, detail, device, device_class, pool, q


def candidates(world: World, spec_claim):
    validated = request.validate(spec_claim)
    entries = classes.resolve(validated, world.cache.classes)
    return Filter().run(entries, world.cache.inventory(), validated.match, Budget())


def test_class_and_claim_constraints_are_anded():
    world = World(pool("p", [device("a", model="x", size=1), device("b", model="x", size=2), device("c", model="y", size=2)]))
    world.add(device_class("x-only", constraints="device.model == 'x'"))
    [[found]] = candidates(world, claim("c", detail("x-only", constraints="device.size == 2")))
    assert [d.name for d in found.on("node-a")] == ["b"]
    [ruled] = found.by_node["node-a"]
    assert dict((d.name, why) for d, why in ruled.ruled_out) == {"a": "spec.claims[0].constraints are false", "c": 'DeviceClass "x-only" constraints are false'}


def test_pools_of_another_driver_or_invalid_are_ignored_with_the_reason():
    world = World(pool("other", 2, driver="vendor-b"), pool("dup", [device("a"), device("a")]), pool("ok", 1))
    [[found]] = candidates(world, claim("c"))
    assert dict(found.ignored_pools) == {
        "other": 'driver "vendor-b" is not the class driver "example.com-foozer"',
        "dup": 'the pool is invalid: spec.devices[1].name: duplicate device name "a"',
    }


def test_devices_lacking_a_match_attribute_or_a_requested_resource_are_never_candidates():
    shared = [{"name": "memory", "capacity": "8Gi"}]
    world = World(pool("p", [device("a", numa="0", resources=shared), device("b", resources=shared), device("c", numa="0")]))
    [[found]] = candidates(world, claim("c", detail("gpu", memory="1Gi"), match=["numa"]))
    assert [d.name for d in found.on("node-a")] == ["a"]
    reasons = {d.name: why for d, why in found.by_node["node-a"][0].ruled_out}
    assert reasons == {"b": 'has no attribute "numa" (matchAttributes)', "c": 'has no resource "memory"'}


def test_a_runtime_error_fails_the_claim_naming_the_expression_and_the_device():
    world = World(pool("p", [device("a", model="x"), device("b")]))
    found = candidates(world, claim("c", detail("gpu", constraints="device.model == 'x'")))
    assert found.reason == kinds.CONSTRAINT_EVALUATION_ERROR
    assert found.message == "spec.claims[0].constraints \"device.model == 'x'\" failed on device p/b: no such attribute : \"model\""


def test_has_guards_are_the_users_tool_against_missing_attributes():
    world = World(pool("p", [device("a", model="x"), device("b")]))
    [[found]] = candidates(world, claim("c", detail("gpu", constraints="has(device.model) && device.model == 'x'")))
    assert [d.name for d in found.on("node-a")] == ["a"]


def test_network_pools_follow_a_nodes_own_pools():
    world = World(pool("z-local", 1), pool("a-net", 1, node=None), pool("b-local", 1, node="node-b"))
    [[found]] = candidates(world, claim("c"))
    assert [f"{d.pool.name}/{d.name}" for d in found.on("node-a")] == ["z-local/dev-00", "a-net/dev-00"]
    assert [d.pool.name for d in found.on(None)] == ["a-net"]


def test_quantity_attributes_compare_as_quantities_in_constraints():
    world = World(pool("p", [device("small", memory=q("16Gi")), device("big", memory=q("80Gi"))]))
    [[found]] = candidates(world, claim("c", detail("gpu", constraints="device.memory.compareTo(quantity('64Gi')) >= 0")))
    assert [d.name for d in found.on("node-a")] == ["big"]


SLOW = "[" + ",".join(str(i) for i in range(99)) + "]"
SLOW = f"{SLOW}.all(i, {SLOW}.all(j, " + " && ".join(f"device.size + {k} > 0" for k in range(20)) + "))"  # estimated past INLINE_COST: tens of ms


def test_a_device_whose_values_exceed_the_estimates_sizes_is_never_evaluated_on_the_event_loop():
    world = World(pool("p", [device("a", big="a" * 100_000), device("b", big="b")]))
    spec = claim("c", detail("gpu", constraints="device.big.contains('b')"))
    with pytest.raises(Preempted):
        world.planner.plan(spec, inline=True)
    plan = world.plan(spec)  # off the loop, "a" in the isolated evaluator
    assert plan.failure is None and [p.device.name for p in plan.solution.picks[0]] == ["b"]


def test_an_evaluation_past_the_cycles_deadline_is_stopped_naming_the_expression_and_the_device():
    world = World(pool("p", [device("a", size=1)]))
    spec = claim("c", detail("gpu", constraints=SLOW))
    validated = request.validate(spec)
    entries = classes.resolve(validated, world.cache.classes)
    past = Budget(Limits(seconds=0.01))  # 10 ms of work: the expression needs far more
    with pytest.raises(Exhausted) as stopped:
        Filter().run(entries, world.cache.inventory(), validated.match, past)
    assert stopped.value.what.startswith("spec.claims[0].constraints '[0,1,2")
    assert stopped.value.what.endswith("did not finish on device p/a within the allocation budget (0.01s); simplify the expression")


def test_a_claim_whose_evaluation_does_not_finish_in_time_fails_with_allocation_timeout():
    world = World(pool("p", [device("a", size=1)]), limits=Limits(seconds=0.01))
    plan = world.plan(claim("c", detail("gpu", constraints=SLOW)))
    assert plan.failure.reason == kinds.ALLOCATION_TIMEOUT
    assert world.plan(claim("d", detail("gpu", constraints="device.size == 1"))).failure is None  # and the next cycle works
