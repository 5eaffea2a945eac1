"""Plugin Search: combinations with LIFO undo, pruning, equivalence skipping and the budget —
including ALLOCATOR.md's pathological cases, which must end fast."""

import pytest

from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator.budget import Limits, work_time
from tests.allocator.conftest import World, claim, detail, device, devices, pool

GI = 2**30 * 10**9


def counter_pool(capacity: str, requests: list[str], name: str = "p") -> dict:
    items = [device(f"device-{i + 1}", requests={"memory": amount}) for i, amount in enumerate(requests)]
    return pool(name, items, resources=[{"name": "memory", "capacity": capacity}])


def interleaved(count: int, groups: int) -> dict:
    return pool("p", [device(f"dev-{i:02d}", numa=str(i % groups)) for i in range(count)])


def timed(world: World, spec_claim):
    """The plan, and the milliseconds of work it took: CPU time less garbage collections, as the
    budget counts (the pytest process's full collections take up to ~1 s of wall time)."""
    started = work_time()
    plan = world.plan(spec_claim)
    return plan, (work_time() - started) * 1000


def test_seventeen_devices_from_a_node_of_sixteen_fail_fast():
    plan, ms = timed(World(pool("p", 16)), claim("c", detail("gpu", count=17)))
    assert plan.failure.reason == kinds.UNSATISFIABLE and ms < 100


def test_seventeen_with_match_attributes_over_two_interleaved_numa_groups_of_sixteen_fail_fast():
    plan, ms = timed(World(interleaved(32, 2)), claim("c", detail("gpu", count=17, match=["numa"])))
    assert plan.failure.reason == kinds.UNSATISFIABLE and ms < 100
    assert "failed matchAttributes numa" in plan.failure.message


def test_seven_of_ten_gi_from_a_sixty_gi_counter_with_twenty_four_devices_fail_fast():
    plan, ms = timed(World(counter_pool("60Gi", ["10Gi"] * 24)), claim("c", detail("gpu", count=7)))
    assert plan.failure.reason == kinds.UNSATISFIABLE and ms < 100
    assert "had too little pool resources" in plan.failure.message


def test_seven_under_a_seventy_gi_counter_skip_the_twenty_gi_device_fast():
    plan, ms = timed(World(counter_pool("70Gi", ["20Gi"] + ["10Gi"] * 7)), claim("c", detail("gpu", count=7)))
    assert devices(plan) == [f"p/device-{i}" for i in range(2, 9)] and ms < 50


def test_counter_lower_bounds_prune_before_any_device_is_tried():
    world = World(counter_pool("60Gi", ["10Gi"] * 24))
    budget_of_one = World(counter_pool("60Gi", ["10Gi"] * 24), limits=Limits(steps=1, seconds=5))
    assert world.plan(claim("c", detail("gpu", count=7))).failure.reason == kinds.UNSATISFIABLE
    assert budget_of_one.plan(claim("c", detail("gpu", count=7))).failure.reason == kinds.UNSATISFIABLE


def test_equivalent_devices_are_tried_once_per_depth():
    # 12 identical devices whose counter fits 5: without equivalence skipping, C(12,6) leaves.
    world = World(counter_pool("50Gi", ["10Gi"] * 12), limits=Limits(steps=40, seconds=5))
    plan = world.plan(claim("c", detail("gpu", count=6)))
    assert plan.failure.reason == kinds.UNSATISFIABLE  # not AllocationTimeout


def test_an_exhausted_budget_is_allocation_timeout_with_what_to_do():
    # 20 of 40 devices requesting 1..40Gi under a 200Gi counter: the 20 smallest need 210Gi, but
    # only a search proves it (every device differs, so none is skipped as equivalent).
    world = World(counter_pool("200Gi", [f"{i}Gi" for i in range(1, 41)]), limits=Limits(steps=50, seconds=5))
    plan = world.plan(claim("c", detail("gpu", count=20)))
    assert plan.failure.reason == kinds.ALLOCATION_TIMEOUT
    assert plan.failure.transient and "search budget (50 steps" in plan.failure.message and "raise the budget" in plan.failure.message


def test_the_time_budget_ends_a_long_search():
    world = World(counter_pool("200Gi", [f"{i}Gi" for i in range(1, 41)]), limits=Limits(steps=10**9, seconds=0.05))
    plan, ms = timed(world, claim("c", detail("gpu", count=20)))
    assert plan.failure.reason == kinds.ALLOCATION_TIMEOUT and ms < 500


def test_combinations_not_permutations_keep_a_satisfiable_claim_cheap():
    world = World(pool("p", 20), limits=Limits(steps=25, seconds=5))
    assert len(devices(world.plan(claim("c", detail("gpu", count=20))))) == 20


def test_the_first_entry_backtracks_when_a_later_one_cannot_fit():
    # Entry 0 may take a or b; entry 1 needs b (the only "fast" one): entry 0 must give it up.
    world = World(pool("p", [device("a", speed="slow"), device("b", speed="fast")]))
    plan = world.plan(claim("c", detail("gpu"), detail("gpu", constraints="device.speed == 'fast'")))
    assert devices(plan) == ["p/a", "p/b"]


def test_claim_wide_match_attributes_bind_across_entries_and_undo_on_backtrack():
    items = [device("a0", numa="0", kind="gpu"), device("a1", numa="1", kind="gpu"), device("n1", numa="1", kind="nic")]
    world = World(pool("p", items))
    plan = world.plan(claim("c", detail("gpu", constraints="device.kind == 'gpu'"), detail("gpu", constraints="device.kind == 'nic'"), match=["numa"]))
    assert devices(plan) == ["p/a1", "p/n1"]


def test_no_device_is_taken_twice_in_one_claim():
    world = World(pool("p", 1))
    assert world.plan(claim("c", detail("gpu"), detail("gpu"))).failure.reason == kinds.UNSATISFIABLE


@pytest.mark.parametrize("count", [1, 4, 8])
def test_a_satisfiable_count_takes_devices_in_spec_order(count):
    assert devices(World(pool("p", 8)).plan(claim("c", detail("gpu", count=count)))) == [f"p/dev-{i:02d}" for i in range(count)]
