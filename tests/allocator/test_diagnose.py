"""Why a claim does not fit, node by node, in the condition message."""

from mockapi.controllers.allocator import kinds
from tests.allocator.conftest import World, claim, detail, device, pool, q


def test_the_message_counts_nodes_by_reason_then_lists_them():
    world = World(
        pool("a", 2, node="node-a"),
        pool("b", 3, node="node-b"),
        pool("c", [device(f"d{i}", numa=str(i % 2)) for i in range(4)], node="node-c"),
    )
    message = world.plan(claim("x", detail("gpu", count=3, match=["numa"]))).failure.message
    lines = message.splitlines()
    assert lines[0] == "0/3 nodes can allocate the claim: 2 had too few matching devices, 1 failed matchAttributes numa."
    assert lines[1] == "node-a: could not satisfy these claim entries: spec.claims[0]: 0 matching devices, needs 3"
    assert lines[3] == "node-c: could not satisfy these claim entries: spec.claims[0]: at most 2 free devices have equal numa, needs 3"


def test_devices_held_by_others_are_too_few_free_not_too_few_matching():
    world = World(pool("p", 2))
    world.allocate(claim("first"))
    message = world.plan(claim("second", detail("gpu", count=2))).failure.message
    assert "1 had too few free devices" in message and "1 of 2 matching devices free, needs 2" in message


def test_no_pool_of_the_driver_says_so():
    message = World(pool("p", 1, driver="other")).plan(claim("x")).failure.message
    assert message.splitlines()[0] == "no node has matching devices, and network-attached pools alone cannot satisfy the claim."
    assert 'no usable DevicePool of driver "example.com-foozer"' in message


def test_constraints_that_rule_out_every_device_say_so():
    world = World(pool("p", [device("a", mem=q("1Gi"))]))
    message = world.plan(claim("x", detail("gpu", constraints="device.mem.compareTo(quantity('2Gi')) >= 0"))).failure.message
    assert 'no device of the 1 pools of driver "example.com-foozer" passes the constraints' in message


def test_entries_that_fit_alone_but_not_together_are_reported_as_such():
    message = World(pool("p", 1)).plan(claim("x", detail("gpu"), detail("gpu"))).failure.message
    assert message.startswith("0/1 nodes can allocate the claim: 1 could not satisfy all claim entries together.")


def test_long_messages_list_ten_nodes_and_point_to_explain():
    world = World(*[pool(f"p{i:02d}", 1, node=f"node-{i:02d}") for i in range(12)])
    plan = world.plan(claim("x", detail("gpu", count=2)))
    lines = plan.failure.message.splitlines()
    assert plan.failure.reason == kinds.UNSATISFIABLE and len(lines) == 12
    assert lines[-1] == "... and 2 more nodes (mockapi explain shows every node)"


def test_shared_requests_that_do_not_fit_name_the_resource():
    resources = [{"name": "memory", "capacity": "8Gi"}]
    world = World(pool("p", [device("a", resources=resources)]))
    message = world.plan(claim("x", detail("gpu", memory="16Gi"))).failure.message
    assert "had too little device resources" in message and "free devices cannot provide memory 16Gi" in message


def test_a_device_requesting_an_undeclared_pool_resource_is_named_with_that_resource():
    world = World(pool("p", [device("a", requests={"memory": "1Gi"}), device("b")]))
    message = world.plan(claim("c", detail(count=2))).failure.message
    assert '1 matching devices, needs 2 (1 unallocatable device of driver "example.com-foozer": ' in message
    assert 'p/a: spec.devices[0].requests.memory: requests pool resource "memory", which the pool does not declare' in message


def test_a_stored_pool_with_duplicate_device_names_is_named_as_such():
    world = World(pool("p", [device("a"), device("a")]), pool("other", 1, driver="example.com-barzer"))
    message = world.plan(claim("c")).failure.message
    assert '(no usable DevicePool of driver "example.com-foozer": p: the pool is invalid: spec.devices[1].name: duplicate device name "a")' in message


def test_pools_ignored_for_their_node_are_named_with_the_reason():
    world = World(pool("p", 1, node="gone"), {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-x"}})
    message = world.plan(claim("c")).failure.message
    assert '(no usable DevicePool of driver "example.com-foozer": p: Node "gone" does not exist)' in message
