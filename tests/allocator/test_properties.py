"""Properties that must hold whatever the cluster: no device double-allocated, no counter or
device resource over capacity, and the same results whatever order objects were created in and
across restarts. The checker reads the claim statuses only (it shares no code with the allocator
beyond quantity parsing)."""

from __future__ import annotations

import asyncio
import contextlib
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockapi import app as app_
from mockapi import quantity
from mockapi.client import LocalClient
from mockapi.clock import FakeClock
from mockapi.controllers.allocator import Allocator
from mockapi.settings import Settings
from tests.allocator.conftest import World, claim, detail, device, device_class, pool
from tests.allocator.test_controller import create, until

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def clusters(draw):
    pools = []
    for n in range(draw(st.integers(1, 3))):
        for p in range(draw(st.integers(1, 2))):
            counter = draw(st.sampled_from([None, 4, 6]))
            shared = draw(st.booleans())
            items = []
            for d in range(draw(st.integers(1, 5))):
                extra = {"requests": {"slots": str(draw(st.integers(1, 3)))}} if counter else {}
                if shared:
                    extra["resources"] = [{"name": "mem", "capacity": f"{draw(st.sampled_from([4, 8]))}Gi", "blockSize": "1Gi"}]
                items.append(device(f"d{d}", numa=str(d % 2), **extra))
            resources = [{"name": "slots", "capacity": str(counter)}] if counter else None
            pools.append(pool(f"n{n}-p{p}", items, node=f"node-{n}", resources=resources))
    if draw(st.booleans()):
        pools.append(pool("net", [device(f"v{i}", numa="0") for i in range(draw(st.integers(1, 3)))], node=None))
    return pools


@st.composite
def claim_lists(draw):
    found = []
    for index in range(draw(st.integers(1, 8))):
        entries = []
        for _ in range(draw(st.integers(1, 2))):
            options = {"count": draw(st.integers(1, 3))}
            if draw(st.booleans()):
                options["match"] = ["numa"]
            if draw(st.integers(0, 3)) == 0:
                options["mem"] = f"{draw(st.integers(1, 10))}Gi"
            entries.append(detail("gpu", **options))
        found.append(claim(f"c{index}", *entries, match=["numa"] if draw(st.integers(0, 4)) == 0 else None))
    return found


def allocations(world: World) -> dict[str, list]:
    return {name: sorted(obj.get("status", {}).get("allocations", []), key=str) for name, obj in world.claims.items()}


def check_capacity(pools: list[dict], statuses: list[dict]) -> None:
    """The invariants, from the statuses alone."""
    specs = {p["metadata"]["name"]: p["spec"] for p in pools}
    exclusive, shared, held = {}, {}, set()
    for status in statuses:
        seen_in_claim = set()
        for entry in status.get("allocations") or []:
            key = (entry["devicePoolName"], entry["deviceName"])
            assert key not in seen_in_claim, f"{key} twice in one claim"
            seen_in_claim.add(key)
            if entry.get("adminAccess"):
                continue
            held.add(key)
            if entry.get("allocations"):
                for item in entry["allocations"]:
                    shared.setdefault(key, {}).setdefault(item["name"], 0)
                    shared[key][item["name"]] += quantity.parse(item["allocation"]).nanos
            else:
                assert key not in exclusive, f"{key} allocated twice"
                exclusive[key] = True
    assert not set(exclusive) & set(shared), "a device is both exclusive and shared"
    for (pool_name, device_name), amounts in shared.items():
        capacities = {r["name"]: r["capacity"] for d in specs[pool_name]["devices"] if d["name"] == device_name for r in d.get("resources", [])}
        for name, used in amounts.items():
            assert used <= quantity.parse(capacities[name]).nanos, f"{pool_name}/{device_name} {name} over capacity"
    for pool_name, spec in specs.items():
        for counter in spec.get("resources") or []:
            used = sum(
                quantity.parse(d["requests"][counter["name"]]).nanos
                for d in spec["devices"]
                if (pool_name, d["name"]) in held and counter["name"] in (d.get("requests") or {})
            )
            assert used <= quantity.parse(counter["capacity"]).nanos, f"{pool_name} counter {counter['name']} over capacity"


@SETTINGS
@given(clusters(), claim_lists())
def test_no_device_is_double_allocated_and_nothing_goes_over_capacity(pools, claims):
    world = World(*pools)
    for spec in claims:
        world.allocate(spec)
    check_capacity(pools, [obj.get("status") or {} for obj in world.claims.values()])


@SETTINGS
@given(clusters(), claim_lists(), st.randoms(use_true_random=False))
def test_results_do_not_depend_on_the_order_pools_were_created_in(pools, claims, rng):
    ordered = World(*pools)
    shuffled_pools = list(pools)
    rng.shuffle(shuffled_pools)
    shuffled = World(*shuffled_pools)
    for spec in claims:
        ordered.allocate(spec)
        shuffled.allocate(spec)
    assert allocations(ordered) == allocations(shuffled)


@SETTINGS
@given(clusters(), claim_lists(), st.integers(0, 8))
def test_a_restart_rebuilds_the_same_state_and_continues_identically(pools, claims, cut):
    straight = World(*pools)
    for spec in claims:
        straight.allocate(spec)
    before = World(*pools)
    for spec in claims[:cut]:
        before.allocate(spec)
    restarted = World(*pools)
    restarted.add(*before.claims.values())  # what the informers list after a restart
    for spec in claims[cut:]:
        restarted.allocate(spec)
    assert allocations(restarted) == allocations(straight)


def test_claims_created_in_any_order_within_a_second_are_allocated_identically():
    """Through the controller: the queue orders by creation time, then namespace/name."""

    async def allocate(order: list[int]) -> dict:
        server = app_.build(Settings(), clock=FakeClock())  # every claim created in the same second
        client = LocalClient(server.registry)
        allocator = Allocator(client)
        task = asyncio.create_task(allocator.run())
        try:
            await create(client, *[pool(f"p{n}", 3, node=f"node-{n}") for n in range(2)], device_class("gpu"))
            specs = [claim(f"c{i}", detail("gpu", count=1 + i % 3)) for i in range(5)]
            for i in order:
                await create(client, specs[i])
            found = {}
            for spec in specs:
                name = spec["metadata"]["name"]
                obj = await asyncio.wait_for(until(client, name, lambda o: bool(o.get("status", {}).get("conditions"))), 10)
                found[name] = obj["status"].get("allocations")
            return found
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    forward = asyncio.run(allocate([0, 1, 2, 3, 4]))
    for seed in range(2):
        order = list(range(5))
        random.Random(seed).shuffle(order)
        assert asyncio.run(allocate(order)) == forward
