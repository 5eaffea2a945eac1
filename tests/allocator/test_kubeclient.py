"""KubeClient: the Client protocol over the official kubernetes client, against a live server."""

from __future__ import annotations

import asyncio

import pytest

from mockapi import errors
from mockapi.client import ADDED, DELETED, MODIFIED, SYNCED, Kind, KubeClient
from mockapi.controllers.allocator import kinds

pytestmark = pytest.mark.e2e
CONFIGMAPS = Kind("v1", "ConfigMap")


def config_map(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"v": "1"}}


@pytest.fixture
def kube(make_live):
    server = make_live(history_size=8)
    client = KubeClient.from_kubeconfig(str(server.kubeconfig))
    yield client
    client.close()


def test_requests_map_kinds_to_resources_and_errors_to_status_errors(kube):
    async def scenario():
        created = await kube.create(CONFIGMAPS, config_map("a"))
        patched = await kube.patch(CONFIGMAPS, "default", "a", {"data": {"v": "2"}})
        items, rv = await kube.list(CONFIGMAPS, "default")
        pool = {"apiVersion": kinds.API_VERSION, "kind": "DevicePool", "metadata": {"name": "p"}, "spec": {"driver": "d", "devices": [{"name": "x"}]}}
        await kube.create(kinds.POOLS, pool)
        current = await kube.get(kinds.POOLS, "", "p")
        written = await kube.update_status(kinds.POOLS, {**current, "status": {"availableDevices": 1}})
        event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "default"}, "involvedObject": {"kind": "ConfigMap", "name": "a", "namespace": "default"}, "reason": "R", "message": "m"}
        await kube.create_event(event)
        await kube.delete(CONFIGMAPS, "default", "a")
        failures = []
        for call in (kube.get(CONFIGMAPS, "default", "a"), kube.get(Kind("example.com/v1", "Nope"), "default", "x"), kube.update(CONFIGMAPS, {**created, "data": {}})):
            try:
                await call
            except errors.StatusError as exc:
                failures.append((exc.code, exc.reason))
        return created, patched, items, rv, written, failures

    created, patched, items, rv, written, failures = asyncio.run(scenario())
    assert created["metadata"]["uid"] and patched["data"] == {"v": "2"} and [i["metadata"]["name"] for i in items] == ["a"] and rv
    assert written["status"] == {"availableDevices": 1}
    assert failures == [(404, "NotFound"), (404, "NotFound"), (404, "NotFound")]


def test_a_watch_lists_marks_synced_streams_changes_and_ends_a_stream_on_410(kube):
    async def scenario():
        await kube.create(CONFIGMAPS, config_map("a"))
        stream = kube.watch(CONFIGMAPS, "default")
        seen = [await anext(stream), await anext(stream)]
        await kube.create(CONFIGMAPS, config_map("b"))
        await kube.patch(CONFIGMAPS, "default", "a", {"data": {"v": "3"}})
        await kube.delete(CONFIGMAPS, "default", "b")
        seen += [await asyncio.wait_for(anext(stream), 10) for _ in range(3)]
        await stream.aclose()
        for index in range(12):  # push the first events out of the server's 8-event history
            await kube.create(CONFIGMAPS, config_map(f"filler-{index}"))
        expired = [event async for event in kube._stream(await kube._path(CONFIGMAPS, "default"), "1")]
        return [(e.type, e.object and e.object["metadata"]["name"]) for e in seen], expired

    seen, expired = asyncio.run(scenario())
    assert seen == [(ADDED, "a"), (SYNCED, None), (ADDED, "b"), (MODIFIED, "a"), (DELETED, "b")]
    assert expired == []  # 410 Gone: the stream ends so that watch() lists again
