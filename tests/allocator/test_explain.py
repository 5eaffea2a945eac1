"""The full diagnosis: every node, entry, option and pool, every device ruled out or unavailable
and why, and the scores of the feasible nodes."""

import asyncio

from mockapi import app as app_
from mockapi.client import LocalClient
from mockapi.controllers.allocator import ClaimKey, explain, explain_with, kinds
from mockapi.settings import Settings
from tests.allocator.conftest import World, claim, detail, device, device_class, pool
from tests.allocator.test_controller import create


def test_every_node_is_shown_with_scores_or_reasons_and_every_device_with_why():
    world = World(
        pool("a", [device("d0", numa="0"), device("d1", numa="1"), device("d2")], node="node-a"),
        pool("b", [device("d0", numa="0"), device("d1", numa="0")], node="node-b"),
        pool("other", 1, driver="vendor-b", node="node-b"),
    )
    world.allocate(claim("holder", detail("gpu", constraints="has(device.numa) && device.numa == '0'")))
    report = explain(world.planner, claim("x", detail("gpu", count=2, match=["numa"])))
    assert report["result"]["reason"] == kinds.ALLOCATED and report["result"]["node"] == "node-b"
    assert report["options"][0]["ignoredPools"] == [{"pool": "other", "reason": 'driver "vendor-b" is not the class driver "example.com-foozer"'}]
    node_a, node_b = report["nodes"]
    assert (node_a["node"], node_a["feasible"], node_a["reason"]) == ("node-a", False, "had too few free devices")
    [pool_a] = node_a["entries"][0]["options"][0]["pools"]
    assert pool_a["unavailable"] == {"d0": "allocated to default/holder"}
    assert pool_a["ruledOut"] == {"d2": 'has no attribute "numa" (matchAttributes)'}
    assert node_a["entries"][0]["options"][0]["verdict"] == "1 of 2 matching devices free, needs 2"
    assert node_b["score"] == {"oneOfIndices": 0, "classRanks": 0, "poolsUsed": 1, "freeDevicesLeft": 1}  # the vendor-b device
    assert node_b["devices"] == ["b/d0 (spec.claims[0])", "b/d1 (spec.claims[0])"]


def test_an_allocated_claim_is_explained_as_if_it_held_nothing_and_keeps_its_devices():
    world = World(pool("p", 2))
    held = claim("c")
    world.allocate(held)
    current = world.claims["c"]
    report = explain(world.planner, current)
    assert report["holds"] == ["p/dev-00"] and report["result"]["devices"] == ["p/dev-00 (spec.claims[0])"]
    assert report["condition"]["reason"] == "Allocated"
    assert world.cache.ledger.claim_devices(ClaimKey("default", "c")) == [("p", "dev-00")]


def test_explain_with_any_client_lists_what_it_needs():
    async def scenario():
        client = LocalClient(app_.build(Settings()).registry)
        await create(client, device_class("gpu"), pool("p", 1), claim("c", detail("gpu", count=2)))
        return await explain_with(client, ClaimKey("default", "c"))

    report = asyncio.run(scenario())
    assert report["result"]["reason"] == kinds.UNSATISFIABLE and report["nodes"][0]["reason"] == "had too few matching devices"
