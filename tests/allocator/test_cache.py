"""The allocator's view of the cluster: right after every kind of event (deletes and re-creates
included), devices held by identity, and no memory kept in reference cycles.

The property test drives a simulated API server (resourceVersions, uids, generations bumped on
spec changes only, status writes) with random creates, spec updates, status updates and deletes
of every input the allocator caches — nodes, pools, classes, claims — and checks after each step
that the view fed those events equals the view of a fresh cache fed one list of what is stored,
down to what a planner with its long-lived caches decides for a probe claim."""

from __future__ import annotations

import copy
import gc
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockapi.client import ADDED, DELETED, MODIFIED
from mockapi.controllers.allocator.availability import available_devices
from mockapi.controllers.allocator.cache import Cache
from mockapi.controllers.allocator.cycle import Planner
from mockapi.controllers.allocator.inventory import Pool
from mockapi.controllers.allocator.kinds import ClaimKey
from tests.allocator.conftest import World, claim, detail, device, device_class, devices, node, pool


# ------------------------------------------------------------------------- nodes (item 3)
def test_deleting_every_node_makes_the_pools_of_other_nodes_usable_again():
    world = World(node("node-a"), node("node-b"), pool("pa", 1, node="node-a"), pool("pc", 1, node="node-c"))
    assert devices(world.allocate(claim("first"))) == ["pa/dev-00"]
    assert world.plan(claim("second")).failure.reason == "Unsatisfiable"  # node-c has no Node object
    world.remove(node("node-a"))
    world.remove(node("node-b"))
    assert world.cache.nodes == {}
    assert devices(world.allocate(claim("second"))) == ["pc/dev-00"]


def test_a_node_deleted_and_created_again_is_usable_again():
    world = World(node("node-a"), node("node-b"), pool("pa", 1, node="node-a"))
    world.remove(node("node-a"))
    assert "does not exist" in world.plan(claim("c")).failure.message
    world.add(node("node-a"))
    assert devices(world.plan(claim("c"))) == ["pa/dev-00"]
    world.add(node("node-a", unschedulable=True))
    assert "unschedulable" in world.plan(claim("c")).failure.message


# ---------------------------------------------------------------- held by identity (item 4)
def test_a_pool_edited_under_an_allocation_keeps_its_free_device_free():
    world = World(pool("p", [device("dev-00")]))
    assert devices(world.allocate(claim("a"))) == ["p/dev-00"]
    world.add(pool("p", [device("dev-01")]))
    assert devices(world.allocate(claim("b"))) == ["p/dev-01"]


def test_a_device_that_comes_back_is_still_its_holders_and_nobody_elses():
    world = World(pool("p", [device("dev-00")]))
    world.allocate(claim("a"))
    world.add(pool("p", [device("dev-01")]))
    world.add(pool("p", [device("dev-00"), device("dev-01")]))
    assert world.cache.ledger.holders(("p", "dev-00")).keys() == {ClaimKey("default", "a", "DeviceClaim")}
    assert devices(world.allocate(claim("b"))) == ["p/dev-01"]
    failure = world.plan(claim("c")).failure
    assert failure.reason == "Unsatisfiable" and "0 of 2 matching devices free" in failure.message
    world.remove(world.claims["a"])
    assert devices(world.allocate(claim("c"))) == ["p/dev-00"]


def test_held_counts_and_counters_follow_the_pools_current_spec():
    resources = [{"name": "slots", "capacity": "4"}]
    world = World(pool("p", [device("d0", requests={"slots": "2"}), device("d1", requests={"slots": "2"})], resources=resources))
    world.allocate(claim("a", detail(count=2)))
    ledger = world.cache.ledger
    assert ledger.held_count("p") == 2 and ledger.counters_used(world.cache.pools["p"]) == {"slots": 4 * 10**9}
    world.add(pool("p", [device("d1", requests={"slots": "1"}), device("d2", requests={"slots": "1"})], resources=resources))
    assert ledger.held_count("p") == 1 and ledger.counters_used(world.cache.pools["p"]) == {"slots": 10**9}
    assert available_devices(world.cache.pools["p"], ledger) == 1


# ------------------------------------------------------------------------- memory (item 7)
def test_deleted_pools_leave_no_garbage_for_the_cycle_collector():
    cache = Cache()
    resources = [{"name": "slots", "capacity": "8"}]
    pools = [pool(f"p{i}", [device(f"d{d}", numa=str(d % 2), index=d, requests={"slots": "1"}) for d in range(4)], resources=resources, model="m") for i in range(50)]
    for i, obj in enumerate(pools):
        obj["metadata"].update(resourceVersion=str(i + 1), uid=f"u{i}", generation=1)
        cache.apply_pool(ADDED, obj)
    cache.inventory()
    for p in cache.pools.values():
        for d in p.devices:
            d.activation()
    gc.collect()
    gc.disable()
    try:
        for obj in pools:
            cache.apply_pool(DELETED, obj)
        cache.inventory()
        assert gc.collect() == 0  # every pool, device and attribute went when its last reference did
    finally:
        gc.enable()


def test_equal_attribute_values_are_one_object():
    cache = Cache()
    for i in range(2):
        obj = pool(f"p{i}", [device("d0", numa="0", index=1)], model="foozer")
        cache.apply_pool(ADDED, obj)
    a, b = (cache.pools[f"p{i}"].devices[0].attributes for i in range(2))
    assert a["numa"] is b["numa"] and a["model"] is b["model"] and a["index"] is b["index"]


def test_a_status_write_does_not_reparse_the_pool_but_a_spec_change_does():
    cache = Cache()
    obj = pool("p", 2)
    obj["metadata"].update(uid="u1", generation=1, resourceVersion="1")
    assert cache.apply_pool(ADDED, obj)
    parsed = cache.pools["p"]
    status = dict(copy.deepcopy(obj), status={"availableDevices": 2})
    status["metadata"]["resourceVersion"] = "2"
    assert not cache.apply_pool(MODIFIED, status) and cache.pools["p"] is parsed and cache.pool_status["p"] == 2
    recreated = copy.deepcopy(obj)
    recreated["metadata"].update(uid="u2", resourceVersion="4")  # deleted and created again: generation 1 again
    assert cache.apply_pool(DELETED, status) and cache.apply_pool(ADDED, recreated)
    assert cache.pools["p"] is not parsed


# ------------------------------------------------------------- the property (items 3 and 4)
NODES = ["node-a", "node-b", "node-c"]
POOLS = ["p0", "p1", "p2"]
CLASSES = ["gpu", "nic"]
CLAIMS = ["k0", "k1", "k2"]
DRIVERS = ["example.com-foozer", "example.com-barzer"]


@st.composite
def pool_specs(draw, name):
    names = draw(st.lists(st.sampled_from(["d0", "d1", "d2"]), min_size=0, max_size=3))  # may repeat: an invalid pool
    counter = draw(st.booleans())
    items = []
    for index, device_name in enumerate(names):
        requests = {draw(st.sampled_from(["slots", "undeclared"])): "1"} if draw(st.booleans()) else None
        items.append(device(device_name, requests=requests, numa=str(index % 2)))
    node_name = draw(st.sampled_from(NODES + [None]))
    return pool(name, items, node=node_name, driver=draw(st.sampled_from(DRIVERS)), resources=[{"name": "slots", "capacity": "2"}] if counter else None)


@st.composite
def claim_objects(draw, name):
    obj = claim(name, detail(draw(st.sampled_from(CLASSES))))
    held = draw(st.lists(st.tuples(st.sampled_from(POOLS), st.sampled_from(["d0", "d1", "d2", "gone"])), max_size=2, unique=True))
    if held:
        obj["status"] = {"allocations": [{"devicePoolName": p, "deviceName": d} for p, d in held]}
    if draw(st.booleans()) and held:
        obj["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:01Z"
        obj["metadata"]["finalizers"] = ["devmgmtproto.k8s.io/allocation"]
    return obj


@st.composite
def steps(draw):
    kind = draw(st.sampled_from(["node", "pool", "class", "claim"]))
    verb = draw(st.sampled_from(["put", "put", "status", "delete"]))
    if kind == "node":
        name = draw(st.sampled_from(NODES))
        return verb, node(name, unschedulable=draw(st.booleans()))
    if kind == "pool":
        name = draw(st.sampled_from(POOLS))
        return verb, draw(pool_specs(name))
    if kind == "class":
        name = draw(st.sampled_from(CLASSES))
        return verb, device_class(name, driver=draw(st.sampled_from(DRIVERS)))
    return verb, draw(claim_objects(draw(st.sampled_from(CLAIMS))))


class Server:
    """What the API server does to what it stores: resourceVersions, uids, generations."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict] = {}
        self._rv = itertools.count(1)
        self._uid = itertools.count(1)

    def apply(self, verb: str, obj: dict) -> tuple[str, dict] | None:
        key = (obj["kind"], obj["metadata"]["name"])
        old = self.objects.get(key)
        if verb == "delete":
            if old is None:
                return None
            del self.objects[key]
            gone = copy.deepcopy(old)
            gone["metadata"]["resourceVersion"] = str(next(self._rv))
            return DELETED, gone
        new = copy.deepcopy(obj)
        meta = new["metadata"]
        if old is None:
            if verb == "status":
                return None
            meta.update(uid=f"uid-{next(self._uid)}", generation=1)
        elif verb == "status":  # a status write: the spec stays, the status changes, the generation too
            new = copy.deepcopy(old)
            new["status"] = {**(old.get("status") or {}), **(obj.get("status") or {"availableDevices": next(self._rv)})}
            meta = new["metadata"]
        else:
            meta.update(uid=old["metadata"]["uid"])
            changed = old.get("spec") != new.get("spec")
            meta["generation"] = old["metadata"]["generation"] + (1 if changed else 0)
            if "status" not in new and "status" in old:
                new["status"] = old["status"]
        meta["resourceVersion"] = str(next(self._rv))
        self.objects[key] = new
        return (ADDED if old is None else MODIFIED), new


APPLY = {"Node": Cache.apply_node, "DevicePool": Cache.apply_pool, "DeviceClass": Cache.apply_class}


def feed(cache: Cache, event_type: str, obj: dict) -> None:
    apply = APPLY.get(obj["kind"])
    if apply is None:
        cache.apply_claim(event_type, obj)
    else:
        apply(cache, event_type, obj)


def describe_pool(p) -> tuple:
    return (
        p.node, p.driver, p.problem, sorted(p.counters.items()),
        [(d.name, d.problem, sorted((n, a.type, str(a.value)) for n, a in d.attributes.items()), sorted(d.requests.items())) for d in p.devices],
    )


def view(cache: Cache) -> dict:
    inventory = cache.inventory()
    ledger = cache.ledger
    return {
        "pools": {name: describe_pool(p) for name, p in cache.pools.items()},
        "classes": {name: (c.driver, c.device_type, c.constraints, c.admin, c.configs) for name, c in cache.classes.items()},
        "nodes": dict(cache.nodes),
        "claims": dict(cache.claims),
        "holds": {key: sorted(ledger.claim_devices(key)) for key in ledger.claims()},
        "held": {name: (ledger.held_count(name), ledger.counters_used(p), available_devices(p, ledger)) for name, p in cache.pools.items()},
        "inventory": (inventory.nodes, {n: [p.name for p in ps] for n, ps in inventory.node_pools.items()}, [p.name for p in inventory.network], inventory.ignored),
        "free": {n: inventory.free_devices(n, ledger.held_count) for n in inventory.nodes},
    }


def outcome(planner: Planner, probe: dict) -> tuple:
    plan = planner.plan(probe)
    if plan.failure is not None:
        return (plan.failure.reason, plan.failure.message)
    return ("Allocated", [f"{p.device.pool.name}/{p.device.name}" for picks in plan.solution.picks for p in picks])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(steps(), min_size=1, max_size=25))
def test_the_view_fed_events_equals_a_fresh_read_after_every_step(sequence):
    server, cache = Server(), Cache()
    planner = Planner(cache)
    probe = claim("probe", detail("gpu", count=1))
    for verb, obj in sequence:
        event = server.apply(verb, obj)
        if event is None:
            continue
        feed(cache, *event)
        fresh = Cache()
        for stored in server.objects.values():
            feed(fresh, ADDED, copy.deepcopy(stored))
        assert view(cache) == view(fresh)
        assert outcome(planner, probe) == outcome(Planner(fresh), probe)


def test_no_parsed_pool_outlives_its_deletion_even_after_claims_were_planned():
    gc.collect()
    earlier = [o for o in gc.get_objects() if type(o) is Pool]  # other tests' servers may still hold theirs
    world = World(*(pool(f"p{i}", 2, node=f"node-{i % 3}") for i in range(9)))
    for name in ("a", "b", "c"):
        world.allocate(claim(name))
    world.plan(claim("d", detail(count=2)))
    for i in range(9):
        world.remove(pool(f"p{i}", 2, node=f"node-{i % 3}"))
    gc.collect()
    known = {id(o) for o in earlier}
    assert [o for o in gc.get_objects() if type(o) is Pool and id(o) not in known] == []  # not in the planner's caches either
