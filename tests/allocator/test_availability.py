"""status.availableDevices: what counts as available, and which pools the writer writes."""

from __future__ import annotations

import asyncio

from mockapi.client import ADDED, MODIFIED
from mockapi.controllers.allocator.availability import PoolStatusWriter, available_devices
from mockapi.controllers.allocator.cache import Cache
from tests.allocator.conftest import World, claim, detail, device, pool


class Recorder:
    def __init__(self) -> None:
        self.patches: list[tuple[str, dict, str]] = []

    async def patch(self, kind, namespace, name, patch, *, subresource=""):
        self.patches.append((name, patch, subresource))
        return {}


def test_available_devices_are_the_listed_allocatable_unheld_ones():
    world = World(pool("p", [device("a"), device("b"), device("c", requests={"undeclared": "1"})]), pool("bad", [device("x"), device("x")]))
    world.allocate(claim("one"))
    assert available_devices(world.cache.pools["p"], world.cache.ledger) == 1  # a held, c unallocatable
    assert available_devices(world.cache.pools["bad"], world.cache.ledger) == 0


def test_the_writer_writes_only_pools_whose_stored_count_differs():
    cache, client = Cache(), Recorder()
    cache.apply_pool(ADDED, pool("fresh", 2))
    current = pool("current", 3)
    current["status"] = {"availableDevices": 3}
    cache.apply_pool(ADDED, current)
    writer = PoolStatusWriter(cache, client)
    assert asyncio.run(writer.write_changed()) == 1
    assert client.patches == [("fresh", {"status": {"availableDevices": 2}}, "status")]
    assert asyncio.run(writer.write_changed()) == 0  # nothing touched since
    cache.apply_claim(MODIFIED, {**claim("c", detail()), "status": {"allocations": [{"devicePoolName": "current", "deviceName": "dev-00"}]}})
    assert asyncio.run(writer.write_changed()) == 1 and client.patches[-1] == ("current", {"status": {"availableDevices": 2}}, "status")

