"""The Scheduler controller over an in-memory client: binding, kube's failure condition and Events,
requeue on a helpful event, preemption, gangs, and profiles."""

import asyncio

from mockapi.clock import FakeClock
from mockapi.controllers.scheduler import config
from mockapi.controllers.scheduler.controller import Scheduler
from tests.scheduler.builders import node, pod
from tests.scheduler.fake_client import NODES, PODS, FakeClient


def run(scenario, *, client=None, **options):
    async def main():
        fake = client or FakeClient()
        scheduler = Scheduler(fake, **options)
        await asyncio.wait_for(scheduler.start(), 5)
        try:
            return await asyncio.wait_for(scenario(fake, scheduler), 10)
        finally:
            await scheduler.stop()

    return asyncio.run(main())


async def until(predicate, *, timeout: float = 5.0):
    """Poll ``predicate`` (the fake client has no latency: a few loop turns suffice)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.002)


def condition(fake: FakeClient, name: str) -> dict | None:
    found = fake.pod("default", name)
    return next((c for c in (found or {}).get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"), None)


def gang_config(timeout: float) -> config.Configuration:
    return config.parse({
        "apiVersion": config.API_VERSION, "kind": config.KIND,
        "profiles": [{"pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": timeout}}]}],
    })  # fmt: skip


def test_pending_pods_are_bound_with_a_scheduled_event():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", cpu="2"))
        fake.put(NODES, node("b", cpu="2"))
        for name in ("p1", "p2", "p3"):
            fake.put(PODS, pod(name, cpu="1"))
        await until(lambda: len(fake.bindings) == 3)
        await until(lambda: fake.reasons("p3") == ["Scheduled"])
        return sorted(fake.bindings), next(e for e in fake.events if e["involvedObject"]["name"] == "p1")

    bindings, event = run(scenario)
    assert sorted(node_name for _, node_name in bindings).count("a") in (1, 2) and len({k for k, _ in bindings}) == 3
    assert (event["type"], event["reason"], event["source"]["component"]) == ("Normal", "Scheduled", "default-scheduler")
    assert event["message"].startswith("Successfully assigned default/p1 to ")


def test_an_unschedulable_pod_gets_kubes_condition_and_event_then_binds_when_a_node_is_uncordoned():
    async def scenario(fake, scheduler):
        for name in ("a", "b", "c"):
            fake.put(NODES, node(name, unschedulable=True))
        fake.put(PODS, pod("p"))
        await until(lambda: condition(fake, "p") is not None)
        failed = condition(fake, "p")
        event = fake.events[-1]
        scheduler.clock.advance(1)  # the pod's first backoff is over
        fake.put(NODES, node("b"))
        await until(lambda: fake.bindings == [("default/p", "b")])
        return failed, event

    failed, event = run(scenario, clock=FakeClock())
    message = "0/3 nodes are available: 3 node(s) were unschedulable. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    assert (failed["status"], failed["reason"], failed["message"]) == ("False", "Unschedulable", message)
    assert (event["type"], event["reason"], event["message"]) == ("Warning", "FailedScheduling", message)


def test_an_unhelpful_event_does_not_retry_a_parked_pod():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", unschedulable=True))
        fake.put(PODS, pod("p"))
        await until(lambda: condition(fake, "p") is not None)
        fake.put(PODS, pod("other", node_name="a"))  # an assigned pod added: NodeUnschedulable does not care
        await asyncio.sleep(0.02)
        return len([e for e in fake.events if e["involvedObject"]["name"] == "p"]), scheduler.queue.tiers()["unschedulable"]

    assert run(scenario) == (1, ["default/p"])


def test_pods_of_other_schedulers_and_bound_pods_are_left_alone_but_bound_pods_count():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", cpu="2"))
        fake.put(NODES, node("b", cpu="2"))
        fake.put(PODS, pod("running", cpu="2", node_name="a"))
        fake.put(PODS, pod("theirs", spec={"schedulerName": "other-scheduler"}))
        fake.put(PODS, pod("ours", cpu="1"))
        await until(lambda: len(fake.bindings) == 1)
        await asyncio.sleep(0.02)
        return fake.bindings

    assert run(scenario) == [("default/ours", "b")]


def test_a_failing_bind_is_reported_and_retried_after_backoff():
    client = FakeClient(fail_bind={"p"})

    async def scenario(fake, scheduler):
        fake.put(NODES, node("a"))
        fake.put(PODS, pod("p"))
        await until(lambda: condition(fake, "p") is not None)
        failed = condition(fake, "p")
        fake.fail_bind.clear()
        await until(lambda: fake.bindings == [("default/p", "a")])
        return failed

    cfg = config.default()
    cfg.pod_initial_backoff = 0.01
    failed = run(scenario, client=client, config=cfg)
    assert (failed["reason"], failed["message"]) == ("SchedulerError", 'binding pod "p" failed')


def test_a_higher_priority_pod_preempts_and_is_nominated_then_bound():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", cpu="2"))
        fake.put(PODS, pod("low", cpu="2", priority=1, node_name="a"))
        fake.put(PODS, pod("high", cpu="2", priority=100))
        await until(lambda: fake.pod("default", "low") is None and fake.pod("default", "high")["status"].get("nominatedNodeName"))
        scheduler.clock.advance(1)
        scheduler.queue.flush()
        await until(lambda: fake.bindings == [("default/high", "a")])
        return [w for w in fake.writes if w[0] == "delete"], fake.reasons("low"), fake.pod("default", "high")["status"].get("nominatedNodeName")

    deletes, low_events, nominated = run(scenario, clock=FakeClock())
    assert deletes == [("delete", "Pod", "default", "low")]
    assert low_events == ["Preempted"] and nominated == "a"


def test_a_gang_binds_together_and_does_not_block_other_pods():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a"))
        members = [pod(f"g{i}", labels={"scheduling.x-k8s.io/pod-group": "g"}, annotations={"scheduling.x-k8s.io/min-available": "3"}) for i in range(3)]
        fake.put(PODS, members[0])
        fake.put(PODS, members[1])
        fake.put(PODS, pod("solo"))
        await until(lambda: ("default/solo", "a") in fake.bindings)
        assert len(fake.bindings) == 1  # the two members are held back (PreFilter: 2 of 3 pods exist)
        fake.put(PODS, members[2])
        await until(lambda: len(fake.bindings) == 4)
        return sorted(k for k, _ in fake.bindings)

    assert run(scenario, config=gang_config(5)) == ["default/g0", "default/g1", "default/g2", "default/solo"]


def test_an_incomplete_gang_times_out_and_no_member_is_bound():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a"))
        for i in range(3):  # the third member exists (PreFilter counts it) but is gated: it never comes
            gates = {"schedulingGates": [{"name": "hold"}]} if i == 2 else None
            fake.put(PODS, pod(f"g{i}", labels={"scheduling.x-k8s.io/pod-group": "g"}, annotations={"scheduling.x-k8s.io/min-available": "3"}, spec=gates))
        await until(lambda: condition(fake, "g0") is not None and condition(fake, "g1") is not None)
        return fake.bindings, {condition(fake, n)["message"] for n in ("g0", "g1")}, len(scheduler.snapshot.pod_node)

    bindings, messages, counted = run(scenario, config=gang_config(0.05))
    assert bindings == [] and counted == 0
    assert "rejected due to timeout after waiting 50ms at plugin Coscheduling" in messages


def test_a_deleted_pending_pod_leaves_the_queue():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", unschedulable=True))
        fake.put(PODS, pod("p"))
        await until(lambda: condition(fake, "p") is not None)
        await fake.delete(PODS, "default", "p")
        await until(lambda: len(scheduler.queue) == 0)
        return True

    assert run(scenario)


def test_a_stale_unassigned_event_after_binding_does_not_schedule_the_pod_again():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a"))
        fake.put(PODS, pod("p"))
        await until(lambda: fake.bindings == [("default/p", "a")])
        await until(lambda: scheduler.snapshot.pod_node.get("default/p") == "a" and not scheduler._binding)
        stale = pod("p")
        stale["metadata"]["resourceVersion"] = "1"
        fake._emit(PODS, "MODIFIED", stale)  # an older event delivered late
        await asyncio.sleep(0.02)
        return [w for w in fake.writes if w[0] == "bind"], fake.reasons("p")

    binds, reasons = run(scenario)
    assert len(binds) == 1 and reasons == ["Scheduled"]
