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


def test_a_pass_that_wrote_a_burst_of_pools_makes_the_next_wait_the_busy_period(monkeypatch):
    from mockapi.controllers.allocator import availability

    monkeypatch.setattr(availability, "PERIOD", 0.001)
    now = [0.0]
    cache, client = Cache(), Recorder()
    for i in range(availability.BURST):
        cache.apply_pool(ADDED, pool(f"p-{i:02d}", 1))
    writer = PoolStatusWriter(cache, client, monotonic=lambda: now[0])

    async def main():
        task = asyncio.create_task(writer.run())
        try:
            while len(client.patches) < availability.BURST:
                await asyncio.sleep(0.001)
            cache.apply_pool(ADDED, pool("late", 1))
            await asyncio.sleep(0.02)  # many periods, no time on the writer's clock: held back
            held = len(client.patches)
            now[0] += availability.BUSY_PERIOD
            while len(client.patches) == held:
                await asyncio.sleep(0.001)
            return held, client.patches[-1][0]
        finally:
            task.cancel()

    held, last = asyncio.run(main())
    assert held == availability.BURST and last == "late"
