"""ALLOCATOR.md's rules, one by one, through the planner (validate → classes → filter → search → score)."""

import pytest

from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator import status as status_
from tests.allocator.conftest import World, claim, detail, device, device_class, devices, node, one_of, pool, q

GI = 2**30 * 10**9


# -- rule 1: one node per claim, network pools with any node
def test_node_local_devices_of_one_claim_come_from_one_node():
    world = World(pool("a", 1, node="node-a"), pool("b", 1, node="node-b"))
    plan = world.plan(claim("c", detail("gpu", count=2)))
    assert plan.failure.reason == kinds.UNSATISFIABLE
    assert plan.failure.message.startswith("0/2 nodes can allocate the claim: 2 had too few matching devices.")


def test_network_pools_combine_with_a_nodes_devices_or_stand_alone():
    world = World(pool("local", 1, node="node-a"), pool("net", 1, node=None))
    both = world.plan(claim("c", detail("gpu", count=2)))
    assert devices(both) == ["local/dev-00", "net/dev-00"] and both.solution.node == "node-a"
    alone = World(pool("net", 2, node=None)).plan(claim("c", detail("gpu", count=2)))
    assert devices(alone) == ["net/dev-00", "net/dev-01"] and not alone.solution.uses_node


def test_nodes_are_the_pools_nodes_intersected_with_node_objects_skipping_unschedulable_ones():
    world = World(pool("a", 1, node="node-a"), pool("b", 1, node="node-b"), pool("c", 1, node="node-c"))
    world.add(node("node-b"), node("node-c", unschedulable=True))
    assert devices(world.plan(claim("x"))) == ["b/dev-00"]
    assert world.cache.inventory().ignored == {"a": 'Node "node-a" does not exist', "c": 'Node "node-c" is unschedulable'}


# -- rule 2: all or nothing
def test_nothing_is_allocated_unless_every_entry_is_satisfied():
    world = World(pool("p", 2))
    plan = world.allocate(claim("c", detail("gpu"), detail("gpu", count=5)))
    assert plan.failure.reason == kinds.UNSATISFIABLE and world.cache.ledger.claims() == []


# -- rule 3: deviceType
def test_device_type_uses_the_first_class_in_name_order_that_matches_and_its_settings():
    world = World(pool("p", [device("a", model="x")]))
    world.add(device_class("b-admin", admin=True, constraints="device.model == 'x'"), device_class("a-none", constraints="device.model == 'y'"))
    # The classes of type gpu, in name order: a-none (matches nothing), b-admin, gpu.
    chosen = world.plan(claim("c", detail(device_type="gpu"))).solution.options[0]
    assert (chosen.device_class.name, chosen.class_rank, chosen.admin) == ("b-admin", 1, True)


# -- rule 5: counts
def test_the_minimum_count_is_allocated_for_exclusive_devices():
    assert len(devices(World(pool("p", 8)).plan(claim("c", detail("gpu", count=2, limit=6))))) == 2


# -- rule 6: per-device resources
def shared_pool(name="p", count=2, capacity="80Gi", block="1Gi", node="node-a"):
    resources = [{"name": "memory", "capacity": capacity, "blockSize": block}]
    return pool(name, [device(f"dev-{i:02d}", resources=resources) for i in range(count)], node=node)


def test_resource_requests_take_shares_rounded_up_to_the_block_size_from_the_fewest_devices():
    world = World(shared_pool())
    plan = world.allocate(claim("c", detail("gpu", count=1, limit=2, memory="100Gi")))
    entries = status_.entries(plan.solution)
    assert [(e["deviceName"], e["allocations"]) for e in entries] == [
        ("dev-00", [{"name": "memory", "allocation": "80Gi"}]),
        ("dev-01", [{"name": "memory", "allocation": "20Gi"}]),
    ]
    small = World(shared_pool()).plan(claim("c", detail("gpu", memory="1500Mi")))
    assert status_.entries(small.solution)[0]["allocations"] == [{"name": "memory", "allocation": "2Gi"}]


def test_other_claims_share_the_rest_of_a_device_but_exclusive_claims_do_not():
    world = World(shared_pool(count=1))
    world.allocate(claim("a", detail("gpu", memory="50Gi")))
    assert devices(world.allocate(claim("b", detail("gpu", memory="30Gi")))) == ["p/dev-00"]
    assert world.plan(claim("c", detail("gpu", memory="1Gi"))).failure.reason == kinds.UNSATISFIABLE
    assert world.plan(claim("d", detail("gpu"))).failure.reason == kinds.UNSATISFIABLE
    exclusive = World(shared_pool(count=1))
    exclusive.allocate(claim("a", detail("gpu")))
    assert exclusive.plan(claim("b", detail("gpu", memory="1Gi"))).failure.reason == kinds.UNSATISFIABLE


def test_a_resource_limit_caps_the_rounded_sum():
    world = World(shared_pool(block="4Gi"))
    capped = world.plan(claim("c", detail("gpu", memory="1Gi", limit={"memory": "2Gi"})))
    assert capped.failure.reason == kinds.UNSATISFIABLE  # one 4Gi block is over the 2Gi limit


# -- rule 7: pool counters
def test_device_requests_consume_pool_counters_rounded_to_their_block():
    resources = [{"name": "memory", "capacity": "40Gi", "blockSize": "1Gi"}]
    items = [device(f"part-{i}", requests={"memory": "9856Mi"}) for i in range(5)]
    world = World(pool("gpu", items, resources=resources))
    assert len(devices(world.allocate(claim("a", detail("gpu", count=4))))) == 4  # 4 x 10Gi = 40Gi
    assert world.plan(claim("b")).failure.reason == kinds.UNSATISFIABLE


# -- rule 8: matchAttributes
def test_match_attributes_pick_devices_with_equal_values_and_quantities_compare_by_value():
    items = [device("a", numa="0", mem=q("1Gi")), device("b", numa="1", mem=q("1024Mi")), device("c", numa="1", mem=q("2Gi"))]
    world = World(pool("p", items))
    assert devices(world.plan(claim("x", detail("gpu", count=2, match=["numa"])))) == ["p/b", "p/c"]
    assert devices(world.plan(claim("y", detail("gpu", count=2, match=["mem"])))) == ["p/a", "p/b"]


def test_a_device_lacking_a_match_attribute_is_never_chosen():
    world = World(pool("p", [device("a"), device("b", numa="0")]))
    assert devices(world.plan(claim("c", detail("gpu", match=["numa"])))) == ["p/b"]


# -- rule 9: oneOf
def test_one_of_takes_the_first_alternative_that_makes_the_whole_claim_fit():
    world = World(pool("p", [device("big", size="big"), device("small", size="small")]))
    spec = claim("c", one_of(detail("gpu", constraints="device.size == 'big'"), detail("gpu")), detail("gpu", constraints="device.size == 'big'"))
    plan = world.plan(spec)
    assert devices(plan) == ["p/small", "p/big"] and [o.detail.alternative for o in plan.solution.options] == [1, 0]


# -- rule 10: admin access
def test_admin_access_takes_held_devices_consumes_nothing_and_never_one_device_twice():
    world = World(pool("p", 2, resources=[{"name": "m", "capacity": "1"}]))
    world.add(device_class("admin", admin=True))
    world.allocate(claim("user", detail("gpu", count=2)))
    admin = world.allocate(claim("watcher", detail("admin", count=2)))
    assert devices(admin) == ["p/dev-00", "p/dev-01"] and all(e["adminAccess"] for e in status_.entries(admin.solution))
    assert world.cache.ledger.claim_devices(kinds.ClaimKey("default", "watcher")) == []
    assert world.plan(claim("more", detail("admin", count=3))).failure.reason == kinds.UNSATISFIABLE
    privileged = world.plan(claim("priv", detail("gpu", count=2), kind="DevicePrivilegedClaim"))
    assert devices(privileged) == ["p/dev-00", "p/dev-01"]


# -- rule 12: choice
def test_the_default_policy_packs_the_node_left_with_the_fewest_free_devices():
    world = World(pool("a", 4, node="node-a"), pool("b", 2, node="node-b"))
    assert devices(world.allocate(claim("first"))) == ["b/dev-00"]
    assert devices(world.allocate(claim("second"))) == ["b/dev-01"]
    assert devices(world.allocate(claim("third"))) == ["a/dev-00"]


@pytest.mark.parametrize("policy, expected", [("first-fit", "a/dev-00"), ("spread", "a/dev-00"), ("binpack", "b/dev-00")])
def test_the_policy_flag_chooses_first_fit_spread_or_binpack(policy, expected):
    world = World(pool("a", 4, node="node-a"), pool("b", 2, node="node-b"), policy=policy)
    assert devices(world.plan(claim("c"))) == [expected]


def test_lower_one_of_indices_and_fewer_pools_win_before_packing():
    world = World(pool("a", [device("x", kind="second")], node="node-a"), pool("b1", [device("y", kind="first")], node="node-b"))
    spec = claim("c", one_of(detail("gpu", constraints="device.kind == 'first'"), detail("gpu")))
    assert devices(world.plan(spec)) == ["b1/y"]
    pools = World(pool("a1", 1, node="node-a"), pool("a2", 1, node="node-a"), pool("b", 4, node="node-b"))
    assert devices(pools.plan(claim("c", detail("gpu", count=2)))) == ["b/dev-00", "b/dev-01"]


def test_ties_go_to_the_node_that_sorts_first():
    world = World(pool("z", 1, node="node-z"), pool("y", 1, node="node-m"))
    assert world.plan(claim("c")).solution.node == "node-m"


def test_at_most_a_hundred_nodes_are_examined_after_the_first_feasible_one():
    pools = [pool(f"p{i:03d}", 2, node=f"node-{i:03d}") for i in range(101)] + [pool("p999", 1, node="node-999")]
    plan = World(*pools).plan(claim("c"))
    assert plan.solution.node == "node-000"  # node-999 would pack tighter, but it is node 102


# -- rule 15 at the planner: the plan ignores the claim's own status
def test_planning_is_pure():
    world = World(pool("p", 1))
    world.plan(claim("c"))
    assert world.cache.ledger.claims() == []
