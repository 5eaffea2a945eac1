"""In-process watchers read a write's committed object itself when the writer handed it over
(an HTTP body decoded from JSON for that request, a controller's patch copied by LocalClient), and
a parse of the event otherwise — the same content either way (mockapi.watchwire, Store.create's
``shared``). The suite runs with ``watchwire.checking`` on (tests/conftest.py), which compares every
shared object with its line's parse; these tests also check that the check catches what it must."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from mockapi import app as app_
from mockapi import watchwire
from mockapi.client import ADDED, MODIFIED, SYNCED, Kind, LocalClient
from mockapi.registry.options import WriteOptions
from mockapi.settings import Settings
from mockapi.watchwire import event_line

CONFIGMAPS = Kind("v1", "ConfigMap")
PODS = Kind("v1", "Pod")


def config_map(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}


class CountingLoads:
    """Stands for watchwire's orjson: counts the parses of watch lines."""

    def __init__(self) -> None:
        self.calls = 0

    def loads(self, raw):
        self.calls += 1
        return orjson.loads(raw)


async def _watching(client: LocalClient, kind: Kind, write):
    """Two informers of ``kind``; ``write()`` (a coroutine function); the events each saw after its sync."""
    seen: list[list] = [[], []]

    async def informer(into):
        async for event in client.watch(kind, "default"):
            into.append(event)

    tasks = [asyncio.create_task(informer(into)) for into in seen]
    while not all(into and into[-1].type == SYNCED for into in seen):
        await asyncio.sleep(0)
    synced = [len(into) for into in seen]
    result = await write()
    for _ in range(50):
        await asyncio.sleep(0)
        if all(len(into) > n for into, n in zip(seen, synced)):
            break
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return [into[n:] for into, n in zip(seen, synced)], result


@pytest.fixture
def unchecked(monkeypatch):
    """Parses counted, with the check (which parses too) off."""
    counting = CountingLoads()
    monkeypatch.setattr(watchwire, "checking", False)
    monkeypatch.setattr(watchwire, "orjson", counting)
    return counting


def test_a_handed_over_create_is_read_by_every_watcher_as_written_without_a_parse(unchecked):
    registry = app_.build(Settings()).registry
    rt = registry.types.by_kind("", "v1", "ConfigMap")
    body = config_map("a")

    async def write():
        return registry.create(rt, "default", body, WriteOptions(owned=True))

    (one, other), written = asyncio.run(_watching(LocalClient(registry), CONFIGMAPS, write))
    assert [e.type for e in one] == [e.type for e in other] == [ADDED]
    assert one[0].object is other[0].object is body  # the registry stored the body it was handed
    assert body == orjson.loads(written.raw)
    assert unchecked.calls == 0


def test_a_create_not_handed_over_is_parsed_once_for_all_watchers(unchecked):
    """A controller's create (LocalClient) keeps its dict: the watchers get a parse of the event."""
    registry = app_.build(Settings()).registry
    client = LocalClient(registry)
    body = config_map("b")

    async def write():
        return await client.create(CONFIGMAPS, body)

    (one, other), written = asyncio.run(_watching(client, CONFIGMAPS, write))
    assert one[0].object is other[0].object
    assert one[0].object is not body and one[0].object == written
    assert unchecked.calls == 1


def test_a_controllers_patch_is_copied_so_the_patched_object_is_shared(unchecked):
    registry = app_.build(Settings()).registry
    client = LocalClient(registry)
    asyncio.run(client.create(CONFIGMAPS, config_map("c")))
    patch = {"metadata": {"finalizers": ["example.com/x"]}, "data": {"k": "w"}}

    async def write():
        return await client.patch(CONFIGMAPS, "default", "c", patch)

    calls_before = unchecked.calls
    (one, other), written = asyncio.run(_watching(client, CONFIGMAPS, write))
    assert [e.type for e in one] == [MODIFIED] and one[0].object is other[0].object
    assert one[0].object == written and unchecked.calls == calls_before
    patch["metadata"]["finalizers"].append("example.com/changed-later")  # the controller's own list, not the stored one's
    assert one[0].object["metadata"]["finalizers"] == ["example.com/x"]


def test_a_yaml_body_is_not_handed_over(unchecked):
    """YAML may decode to values JSON gives back otherwise (.nan, .inf): such bodies are parsed."""
    from mockapi.http import verbs

    registry = app_.build(Settings()).registry
    rt = registry.types.by_kind("", "v1", "ConfigMap")
    opts = WriteOptions()

    class Call(verbs.Call):
        def __init__(self):
            self.rt = rt

        async def body(self):
            return b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\n", "application/yaml"

    asyncio.run(Call().decoded_body(opts))
    assert opts.owned is False
    opts = WriteOptions()

    class JsonCall(Call):
        async def body(self):
            return orjson.dumps(config_map("j")), "application/json"

    asyncio.run(JsonCall().decoded_body(opts))
    assert opts.owned is True


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda obj: obj["data"].update(k="changed after the write"), id="changed-after-the-write"),
        pytest.param(lambda obj: obj["metadata"].update(finalizers=("a",)), id="a-tuple-for-a-list"),
        pytest.param(lambda obj: obj["metadata"].update(generation=1.0), id="a-float-for-an-int"),
    ],
)
def test_the_check_catches_an_object_that_is_not_what_its_line_says(monkeypatch, spoil):
    monkeypatch.setattr(watchwire, "checking", True)
    obj = config_map("d")
    line = event_line(ADDED, orjson.dumps(obj))

    async def scenario():
        watchwire.share(line, ADDED, obj)
        assert watchwire.parsed(line)[0]["object"] is obj
        spoil(obj)
        with pytest.raises(AssertionError, match="not what its line says"):
            watchwire.parsed(line)

    asyncio.run(scenario())


def test_nothing_is_shared_outside_an_event_loop():
    obj = config_map("e")
    line = event_line(ADDED, orjson.dumps(obj))
    watchwire.share(line, ADDED, obj)
    assert all(id(line) not in table for table in watchwire._tables)


def test_a_line_shared_in_a_busy_loop_is_there_for_the_pass_after_its_write():
    """A write made while a turn of the tables is already due (the loop is busy with other writes)
    keeps its object through that turn: its watchers, woken after the turn was scheduled, read it
    in the next pass — and two passes on it is gone."""
    first, second = config_map("f"), config_map("g")
    first_line, second_line = event_line(ADDED, orjson.dumps(first)), event_line(ADDED, orjson.dumps(second))

    async def scenario():
        watchwire.share(first_line, ADDED, first)  # a turn is due at the next pass
        await asyncio.sleep(0)  # that turn: first is kept one more pass, and another turn is due
        watchwire.share(second_line, ADDED, second)
        await asyncio.sleep(0)  # the pass the watchers of the second write read it in
        kept = watchwire.parsed(second_line)[0]["object"] is second
        for _ in range(3):
            await asyncio.sleep(0)
        return kept, sum(map(len, watchwire._tables))

    assert asyncio.run(scenario()) == (True, 0)
