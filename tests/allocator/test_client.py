"""LocalClient: the Client protocol over the in-process registry; watches that list, mark SYNCED,
stream changes and relist with the difference when the watcher falls behind."""

import asyncio

import pytest

from mockapi import app as app_
from mockapi import errors
from mockapi.client import ADDED, DELETED, ECHO, MODIFIED, SYNCED, Kind, LocalClient, _View
from mockapi.settings import Settings

CONFIGMAPS = Kind("v1", "ConfigMap")


def config_map(name: str, value: str = "1") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"v": value}}


def test_crud_goes_through_the_registry_with_its_errors():
    async def scenario():
        client = LocalClient(app_.build(Settings()).registry)
        created = await client.create(CONFIGMAPS, config_map("a"))
        patched = await client.patch(CONFIGMAPS, "default", "a", {"data": {"v": "2"}})
        items, rv = await client.list(CONFIGMAPS, "default")
        await client.delete(CONFIGMAPS, "default", "a")
        with pytest.raises(errors.StatusError) as missing:
            await client.get(CONFIGMAPS, "default", "a")
        with pytest.raises(errors.StatusError) as unknown:
            await client.get(Kind("example.com/v1", "Nope"), "default", "a")
        return created, patched, items, rv, missing.value.code, unknown.value.code

    created, patched, items, rv, missing, unknown = asyncio.run(scenario())
    assert created["metadata"]["uid"] and patched["data"] == {"v": "2"} and [i["metadata"]["name"] for i in items] == ["a"]
    assert int(rv) >= int(patched["metadata"]["resourceVersion"]) and (missing, unknown) == (404, 404)


def test_a_watch_lists_marks_synced_then_streams_changes():
    async def scenario():
        client = LocalClient(app_.build(Settings()).registry)
        await client.create(CONFIGMAPS, config_map("a"))
        stream = client.watch(CONFIGMAPS, "default")
        seen = [await anext(stream), await anext(stream)]
        await client.create(CONFIGMAPS, config_map("b"))
        await client.delete(CONFIGMAPS, "default", "a")
        seen += [await anext(stream), await anext(stream)]
        await stream.aclose()
        return [(e.type, e.object and e.object["metadata"]["name"]) for e in seen]

    assert asyncio.run(scenario()) == [(ADDED, "a"), (SYNCED, None), (ADDED, "b"), (DELETED, "a")]


def test_a_watcher_that_falls_behind_relists_and_gets_the_difference():
    async def scenario():
        server = app_.build(Settings(watcher_buffer=2))
        client = LocalClient(server.registry)
        await client.create(CONFIGMAPS, config_map("gone"))
        await client.create(CONFIGMAPS, config_map("kept"))
        stream = client.watch(CONFIGMAPS, "default")
        assert [(await anext(stream)).type for _ in range(3)] == [ADDED, ADDED, SYNCED]
        await client.delete(CONFIGMAPS, "default", "gone")
        await client.patch(CONFIGMAPS, "default", "kept", {"data": {"v": "2"}})
        for name in ("x", "y", "z"):  # more than the watcher's buffer: it overflows
            await client.create(CONFIGMAPS, config_map(name))
        seen = [await anext(stream) for _ in range(5)]
        await stream.aclose()
        return sorted((e.type, e.object["metadata"]["name"]) for e in seen)

    assert asyncio.run(scenario()) == [(ADDED, "x"), (ADDED, "y"), (ADDED, "z"), (DELETED, "gone"), (MODIFIED, "kept")]


def test_the_view_turns_a_relist_into_events():
    view = _View()
    a1 = {"metadata": {"name": "a", "resourceVersion": "1"}}
    b1 = {"metadata": {"name": "b", "resourceVersion": "1"}}
    assert [e.type for e in view.relist([a1, b1])] == [ADDED, ADDED]
    a2 = {"metadata": {"name": "a", "resourceVersion": "2"}}
    assert [(e.type, e.object["metadata"]) for e in view.relist([a2])] == [(MODIFIED, a2["metadata"]), (DELETED, {"name": "b", "resourceVersion": "1"})]
    assert view.relist([a2]) == []


def test_in_process_watchers_share_one_parsed_event_for_one_pass_of_the_loop():
    """Every watcher woken by a write reads the same dict (parsed once); two passes later it is
    forgotten, so parsed events do not outlive the young collections (watchwire.parsed)."""
    from mockapi import watchwire

    async def informer(client, into):
        async for event in client.watch(CONFIGMAPS, "default"):
            into.append(event)

    async def scenario():
        client = LocalClient(app_.build(Settings()).registry)
        first, second = [], []
        tasks = [asyncio.create_task(informer(client, first)), asyncio.create_task(informer(client, second))]
        while len(first) < 1 or len(second) < 1:  # SYNCED
            await asyncio.sleep(0)
        await client.create(CONFIGMAPS, config_map("a"))
        while len(first) < 2 or len(second) < 2:
            await asyncio.sleep(0)
        shared_then = sum(map(len, watchwire._tables))
        for _ in range(3):
            await asyncio.sleep(0)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return first[1], second[1], shared_then, sum(map(len, watchwire._tables))

    one, other, shared_then, shared_later = asyncio.run(scenario())
    assert one.type == other.type == ADDED and one.object is other.object and one.object["metadata"]["name"] == "a"
    assert shared_then == 1 and shared_later == 0


def test_an_announced_write_comes_back_as_its_echo_in_its_place_and_only_once():
    async def scenario():
        client = LocalClient(app_.build(Settings()).registry)
        await client.create(CONFIGMAPS, config_map("a"))
        stream = client.watch(CONFIGMAPS, "default", echoes=True)
        plain = client.watch(CONFIGMAPS, "default")  # another watch of the kind on the same client, not asking
        for each in (stream, plain):
            assert [(await anext(each)).type for _ in range(2)] == [ADDED, SYNCED]
        await client.create(CONFIGMAPS, config_map("b"))
        await client.patch_unread(CONFIGMAPS, "default", "a", {"data": {"v": "2"}}, echo="mine")
        await client.patch_unread(CONFIGMAPS, "default", "a", {"data": {"v": "2"}}, echo="no-op")  # changes nothing: no event, no echo
        await client.patch(CONFIGMAPS, "default", "a", {"data": {"v": "3"}})
        seen = [await anext(stream) for _ in range(3)]
        seen_plain = [await anext(plain) for _ in range(3)]
        leftover = sum(len(v) for book in client._echoes[CONFIGMAPS] for v in book.values())
        await stream.aclose()
        await plain.aclose()
        return seen, seen_plain, leftover, client._echoes[CONFIGMAPS]

    seen, seen_plain, leftover, books = asyncio.run(scenario())
    assert [(e.type, e.object if e.type == ECHO else e.object["metadata"]["name"]) for e in seen] == [(ADDED, "b"), (ECHO, "mine"), (MODIFIED, "a")]
    assert seen[2].object["data"] == {"v": "3"} and leftover == 0
    assert [(e.type, e.object["metadata"]["name"], e.object["data"]) for e in seen_plain[1:]] == [(MODIFIED, "a", {"v": "2"}), (MODIFIED, "a", {"v": "3"})]
    assert books == []  # a closed watch's book goes with it


def test_an_echo_the_watch_lost_comes_back_as_the_relists_object():
    async def scenario():
        server = app_.build(Settings(watcher_buffer=2))
        client = LocalClient(server.registry)
        await client.create(CONFIGMAPS, config_map("a"))
        stream = client.watch(CONFIGMAPS, "default", echoes=True)
        assert [(await anext(stream)).type for _ in range(2)] == [ADDED, SYNCED]
        [book] = client._echoes[CONFIGMAPS]
        await client.create(CONFIGMAPS, config_map("w"))
        assert (await anext(stream)).object["metadata"]["name"] == "w"  # the watcher is live and waiting
        await client.patch_unread(CONFIGMAPS, "default", "a", {"data": {"v": "2"}}, echo="mine")
        for name in ("x", "y", "z"):  # more than the watcher's buffer: it overflows, and relists
            await client.create(CONFIGMAPS, config_map(name))
        seen = [await anext(stream) for _ in range(4)]
        await stream.aclose()
        return sorted((e.type, e.object["metadata"]["name"]) for e in seen), book

    seen, book = asyncio.run(scenario())
    assert seen == [(ADDED, "x"), (ADDED, "y"), (ADDED, "z"), (MODIFIED, "a")] and book == {}
