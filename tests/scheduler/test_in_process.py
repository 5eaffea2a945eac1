"""The Scheduler against the real registry in-process (LocalClient): bindings, the status patch and
the Events are accepted by the server as kube-scheduler's are."""

import asyncio

from mockapi import app as app_
from mockapi.client import Kind, LocalClient
from mockapi.clock import FakeClock
from mockapi.controllers.scheduler.controller import Scheduler
from mockapi.settings import Settings
from tests.scheduler.builders import node, pod

PODS, NODES, EVENTS = Kind("v1", "Pod"), Kind("v1", "Node"), Kind("v1", "Event")


def bare(obj: dict) -> dict:
    meta = {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace", "labels")}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


async def eventually(read, predicate, timeout: float = 5.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await read()
        if predicate(value):
            return value
        assert asyncio.get_running_loop().time() < deadline, value
        await asyncio.sleep(0.005)


def test_pods_bind_and_failures_are_written_through_the_real_api():
    async def main():
        server = app_.build(Settings())
        client = LocalClient(server.registry)
        for n in (node("a", unschedulable=True), node("b", cpu="1")):
            await client.create(NODES, {**bare(n), "status": n["status"]})
        scheduler = Scheduler(client, clock=FakeClock())
        await asyncio.wait_for(scheduler.start(), 5)
        try:
            await client.create(PODS, bare(pod("fits", cpu="500m")))
            await client.create(PODS, bare(pod("too-big", cpu="2")))
            bound = await eventually(lambda: client.get(PODS, "default", "fits"), lambda p: p["spec"].get("nodeName"))
            failed = await eventually(lambda: client.get(PODS, "default", "too-big"), lambda p: p.get("status", {}).get("conditions"))
            events, _ = await client.list(EVENTS, "default")
            return bound, failed, events
        finally:
            await scheduler.stop()

    bound, failed, events = asyncio.run(main())
    assert bound["spec"]["nodeName"] == "b"
    condition = next(c for c in failed["status"]["conditions"] if c["type"] == "PodScheduled")
    message = ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. "
               "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")  # fmt: skip
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", message)
    seen = {(e["involvedObject"]["name"], e["reason"], e["type"]) for e in events}
    assert {("fits", "Scheduled", "Normal"), ("too-big", "FailedScheduling", "Warning")} <= seen
