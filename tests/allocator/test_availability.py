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



def test_the_in_process_writer_does_not_read_its_writes_back():
    """LocalClient.patch_unread: the same write as patch (its watch event, the stored status),
    without parsing the answer; the writer uses it when the client has it."""
    from mockapi import app as app_
    from mockapi.client import LocalClient
    from mockapi.controllers.allocator import kinds
    from mockapi.settings import Settings

    async def scenario():
        client = LocalClient(app_.build(Settings(allocator=False, scheduler=False)).registry)
        await client.create(kinds.POOLS, pool("p", 2))
        stream = client.watch(kinds.POOLS)
        assert [(await anext(stream)).type for _ in range(2)] == [ADDED, "SYNCED"]
        cache = Cache()
        cache.apply_pool(ADDED, await client.get(kinds.POOLS, "", "p"))
        writer = PoolStatusWriter(cache, client)
        assert writer._patch == client.patch_unread
        assert await writer.write_changed() == 1
        event = await anext(stream)
        await stream.aclose()
        return event, await client.get(kinds.POOLS, "", "p")

    event, stored = asyncio.run(scenario())
    assert event.type == MODIFIED and event.object == stored and stored["status"] == {"availableDevices": 2}
