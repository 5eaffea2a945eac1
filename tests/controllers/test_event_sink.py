"""LocalClient's ``defer_events``: the built-in controllers' Events written when the loop is idle,
each as recorded, in order, none lost (mockapi.client.EventSink)."""

from __future__ import annotations

import asyncio

from mockapi import app as app_
from mockapi.client import EventSink, LocalClient, event_sink
from mockapi.settings import Settings
from tests.controllers.conftest import EVENTS, until


def event(name: str, reason: str = "Started") -> dict:
    return {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "p"},
        "reason": reason, "message": "m", "type": "Normal", "source": {"component": "test"},
    }  # fmt: skip


async def names(client) -> list[str]:
    items, _ = await client.list(EVENTS, "default")
    return [e["metadata"]["name"] for e in items]


def test_deferred_events_are_written_once_the_loop_is_idle_in_order():
    async def main():
        registry = app_.build(Settings()).registry
        deferring, plain = LocalClient(registry, defer_events=True), LocalClient(registry)
        for i in range(20):
            await deferring.create_event(event(f"e-{i:02d}"))
        assert await names(plain) == []  # not before create_event returned: later
        assert len(event_sink(registry)) == 20
        written = await until(lambda: names(plain), lambda found: len(found) == 20)
        assert written == [f"e-{i:02d}" for i in range(20)] and len(event_sink(registry)) == 0

    asyncio.run(main())


def test_a_busy_loop_holds_them_back_and_stopping_writes_the_rest():
    async def main():
        registry = app_.build(Settings()).registry
        deferring, plain = LocalClient(registry, defer_events=True), LocalClient(registry)
        stop = asyncio.Event()

        async def busy():  # another task always ready: the loop is never idle
            while not stop.is_set():
                await asyncio.sleep(0)
                sum(range(100_000))  # a few ms of work per turn, as a controller step

        spinner = asyncio.create_task(busy())
        for i in range(EventSink.BURST):  # a burst of Events (a scheduler binding pods): they wait for an idle loop
            await deferring.create_event(event(f"held-{i:02d}"))
        await asyncio.sleep(0.05)
        held = await names(plain)
        stop.set()
        await spinner
        return registry, held

    registry, held = asyncio.run(main())
    assert held == []
    # asyncio.run cancelled the sink's task as the loop stopped: it wrote what was left
    assert [e.load()["metadata"]["name"] for e in registry.list(registry.types.by_kind("", "v1", "Event"), "default", _list_options()).items] == [
        f"held-{i:02d}" for i in range(EventSink.BURST)
    ]


def test_outside_a_burst_an_event_is_written_at_the_next_turn_even_on_a_busy_loop():
    async def main():
        registry = app_.build(Settings()).registry
        deferring, plain = LocalClient(registry, defer_events=True), LocalClient(registry)
        stop = asyncio.Event()

        async def busy():
            while not stop.is_set():
                await asyncio.sleep(0)
                sum(range(100_000))

        spinner = asyncio.create_task(busy())
        await deferring.create_event(event("prompt"))  # one Event (a pod that failed to schedule): no waiting for idle
        await asyncio.sleep(0.05)
        written = await names(plain)
        stop.set()
        await spinner
        return written

    assert asyncio.run(main()) == ["prompt"]


def _list_options():
    from mockapi.registry import options

    return options.ListOptions()


def test_past_the_backlog_limit_the_oldest_is_written_at_once(monkeypatch):
    monkeypatch.setattr(EventSink, "MAX_BACKLOG", 3)

    async def main():
        registry = app_.build(Settings()).registry
        deferring, plain = LocalClient(registry, defer_events=True), LocalClient(registry)
        for i in range(5):
            await deferring.create_event(event(f"e-{i}"))
        assert await names(plain) == ["e-0", "e-1"] and len(event_sink(registry)) == 3
        assert await until(lambda: names(plain), lambda found: len(found) == 5) == [f"e-{i}" for i in range(5)]

    asyncio.run(main())


def test_a_refused_event_is_logged_and_the_next_still_written():
    async def main():
        registry = app_.build(Settings()).registry
        deferring, plain = LocalClient(registry, defer_events=True), LocalClient(registry)
        await deferring.create_event(event("bad name!"))
        await deferring.create_event(event("good"))
        return await until(lambda: names(plain), lambda found: len(found) == 1)

    assert asyncio.run(main()) == ["good"]


def test_without_defer_events_create_event_writes_before_it_returns():
    async def main():
        registry = app_.build(Settings()).registry
        client = LocalClient(registry)
        await client.create_event(event("now"))
        return await names(client)

    assert asyncio.run(main()) == ["now"]


def test_stopping_the_servers_controllers_writes_the_waiting_events():
    async def main():
        server = app_.build(Settings())
        await LocalClient(server.registry, defer_events=True).create_event(event("waiting"))
        await server.stop_background()
        return len(event_sink(server.registry)), await names(LocalClient(server.registry))

    assert asyncio.run(main()) == (0, ["waiting"])
