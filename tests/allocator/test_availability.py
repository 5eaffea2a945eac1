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
    """LocalClient.patch_unread: the same write as patch (the stored status), without parsing the
    answer; the allocator's watch gets an ECHO of it in place of the MODIFIED event, which does to
    the cache what that event would have done."""
    from mockapi import app as app_
    from mockapi.client import ECHO, LocalClient
    from mockapi.controllers.allocator import kinds
    from mockapi.settings import Settings

    async def scenario():
        client = LocalClient(app_.build(Settings(allocator=False, scheduler=False)).registry)
        await client.create(kinds.POOLS, pool("p", 2))
        stream = client.watch(kinds.POOLS, echoes=True)
        first = await anext(stream)
        assert (await anext(stream)).type == "SYNCED"
        cache, twin = Cache(), Cache()
        for each in (cache, twin):
            each.apply_pool(first.type, first.object)
        writer = PoolStatusWriter(cache, client)
        assert await writer.write_changed() == 1
        echo = await anext(stream)
        stored = await client.get(kinds.POOLS, "", "p")
        cache.apply_own_status(*echo.object)
        twin.apply_pool(MODIFIED, stored)  # what the MODIFIED event did before
        await client.patch(kinds.POOLS, "", "p", {"metadata": {"labels": {"a": "b"}}})
        after = await anext(stream)  # a write of someone else's: the object, as ever
        await stream.aclose()
        return echo, stored, after, cache, twin

    echo, stored, after, cache, twin = asyncio.run(scenario())
    assert (echo.type, echo.object) == (ECHO, ("p", 2)) and stored["status"] == {"availableDevices": 2}
    assert (cache.pool_status, cache.touched, cache._versions, cache.inventory_version) == (twin.pool_status, twin.touched, twin._versions, twin.inventory_version)
    assert after.type == MODIFIED and after.object["metadata"]["labels"] == {"a": "b"} and after.object["status"] == {"availableDevices": 2}
