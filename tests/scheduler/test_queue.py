"""The scheduling queue: activeQ order, backoff, requeue only on helpful events, the periodic flush."""

import asyncio

import pytest

from mockapi.controllers.scheduler import events
from mockapi.controllers.scheduler.queue import Closed, SchedulingQueue, backoff_duration
from tests.scheduler.builders import Clock, pod
from tests.cancellation import cancels_stick

HINTS = {"NodeResourcesFit": (events.POD_DELETE, events.NODE_ADD, events.NODE_UPDATE), "NodeName": (events.NODE_ADD,), "DeviceClaims": events.DEVICE_EVENTS}
POOL_ADDED = events.ClusterEvent(events.DEVICE_POOL, events.ADD)


def make(clock=None, **kwargs) -> SchedulingQueue:
    return SchedulingQueue(monotonic=clock or Clock(), hints=HINTS, **kwargs)


def popped(queue: SchedulingQueue) -> list[str]:
    found = []
    while (info := queue.pop_nowait()) is not None:
        found.append(info.key)
    return found


def test_active_pods_come_out_by_priority_then_creation_time():
    queue = make()
    queue.add(pod("low-early", priority=1, created="2024-01-01T00:00:00Z"))
    queue.add(pod("high-late", priority=10, created="2024-01-01T00:00:09Z"))
    queue.add(pod("low-late", priority=1, created="2024-01-01T00:00:05Z"))
    queue.add(pod("none", created="2024-01-01T00:00:00Z"))
    assert popped(queue) == ["default/high-late", "default/low-early", "default/low-late", "default/none"]


def test_adding_a_pod_twice_keeps_one_entry_with_the_new_object():
    queue = make()
    queue.add(pod("a", priority=1))
    queue.add(pod("a", priority=5))
    info = queue.pop_nowait()
    assert (info.key, info.pod["spec"]["priority"], queue.pop_nowait()) == ("default/a", 5, None)


def test_pop_waits_for_a_pod_without_busy_looping():
    async def scenario():
        queue = make()
        waiter = asyncio.create_task(queue.pop())
        await asyncio.sleep(0.01)
        assert not waiter.done()
        queue.add(pod("late"))
        return (await asyncio.wait_for(waiter, 1)).key

    assert asyncio.run(scenario()) == "default/late"


def test_backoff_doubles_from_one_second_to_ten():
    assert [backoff_duration(n) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]


def test_a_failed_pod_waits_out_its_backoff_then_is_active_again():
    clock = Clock()
    queue = make(clock)
    queue.add(pod("a"))
    for expected in (1, 2, 4, 8, 10, 10):
        info = queue.pop_nowait()
        queue.add_backoff(info)
        clock.advance(expected - 0.01)
        assert queue.pop_nowait() is None and queue.tiers()["backoff"] == ["default/a"]
        clock.advance(0.01)
    assert queue.pop_nowait().attempts == 7


def test_an_unschedulable_pod_moves_only_on_an_event_a_rejecting_plugin_registered():
    clock = Clock()
    queue = make(clock)
    queue.add(pod("a"))
    assert queue.add_unschedulable(queue.pop_nowait(), {"NodeResourcesFit"}) == "unschedulable"
    clock.advance(5)
    assert queue.on_event(POOL_ADDED) == 0
    assert queue.tiers()["unschedulable"] == ["default/a"]
    assert queue.on_event(events.NODE_ADD) == 1
    assert popped(queue) == ["default/a"]


def test_a_pod_moved_while_backing_off_goes_to_backoff_first():
    clock = Clock()
    queue = make(clock)
    queue.add(pod("a"))
    queue.add_unschedulable(queue.pop_nowait(), {"DeviceClaims"})
    clock.advance(0.5)  # the first backoff is 1 s
    queue.on_event(events.ClusterEvent(events.DEVICE_CLAIM, events.DEALLOCATE))
    assert queue.tiers()["backoff"] == ["default/a"]
    queue.add(pod("b"))
    assert queue.pop_nowait().key == "default/b"  # activeQ first: "a" is still backing off
    clock.advance(0.5)
    assert popped(queue) == ["default/a"]


def test_an_idle_queue_takes_a_backing_off_pod_before_its_backoff_ends():
    """kube-scheduler's SchedulerPopFromBackoffQ (on since 1.33): with activeQ empty, the pod whose
    backoff ends first is scheduled at once, then by activeQ's order (priority)."""
    clock = Clock()
    queue = make(clock)
    for name, priority in (("early", 0), ("late-low", 0), ("late-high", 10)):
        queue.add(pod(name, priority=priority))
    infos = {info.key: info for info in (queue.pop_nowait(), queue.pop_nowait(), queue.pop_nowait())}
    for key in ("default/early", "default/late-high", "default/late-low"):
        queue.on_event(events.NODE_ADD)  # in flight: each failure then backs off instead of parking
        assert queue.add_unschedulable(infos[key], {"NodeResourcesFit"}) == "backoff"
        if key == "default/early":
            clock.advance(0.25)
    assert queue.pop_nowait().key == "default/early"  # 0.75 s of backoff left, nothing else to do
    assert popped(queue) == ["default/late-high", "default/late-low"]


def test_a_pod_backing_off_after_an_error_waits_its_backoff_out_even_when_idle():
    clock = Clock()
    queue = make(clock)
    queue.add(pod("a"))
    queue.add_backoff(queue.pop_nowait())  # an error, not a verdict (kube's podErrorBackoffQ)
    clock.advance(0.99)
    assert queue.pop_nowait() is None
    clock.advance(0.01)
    assert popped(queue) == ["default/a"]


def test_parked_pods_are_flushed_after_sixty_seconds_or_as_configured():
    clock = Clock()
    queue = make(clock)
    queue.add(pod("a"))
    queue.add_unschedulable(queue.pop_nowait(), {"NodeName"})
    clock.advance(59.9)
    assert queue.pop_nowait() is None
    clock.advance(0.1)
    assert popped(queue) == ["default/a"]

    quick = make(clock, max_unschedulable=5)
    quick.add(pod("b"))
    quick.add_unschedulable(quick.pop_nowait(), {"NodeName"})
    clock.advance(5)
    assert popped(quick) == ["default/b"]


def test_a_pod_rejected_by_no_particular_plugin_moves_on_any_event():
    clock = Clock()
    queue = make(clock)
    queue.add(pod("a"))
    queue.add_unschedulable(queue.pop_nowait(), set())
    clock.advance(2)
    assert queue.on_event(POOL_ADDED) == 1


def test_an_event_during_the_cycle_sends_the_pod_to_backoff_instead_of_parking_it():
    clock = Clock()
    queue = make(clock)
    queue.add(pod("a"))
    info = queue.pop_nowait()
    queue.on_event(events.NODE_ADD)  # while "a" is being scheduled
    assert queue.add_unschedulable(info, {"NodeResourcesFit"}) == "backoff"
    clock.advance(1)
    assert popped(queue) == ["default/a"]


def test_an_unhelpful_event_during_the_cycle_still_parks_the_pod():
    queue = make()
    queue.add(pod("a"))
    info = queue.pop_nowait()
    queue.on_event(POOL_ADDED)
    assert queue.add_unschedulable(info, {"NodeResourcesFit"}) == "unschedulable"


def test_updating_a_parked_pod_moves_it_only_when_more_than_its_status_changed():
    clock = Clock()
    queue = make(clock)
    original = pod("a")
    queue.add(original)
    queue.add_unschedulable(queue.pop_nowait(), {"NodeName"})
    clock.advance(10)
    queue.update({**original, "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]}})
    assert queue.tiers()["unschedulable"] == ["default/a"]
    queue.update({**original, "metadata": {**original["metadata"], "labels": {"fixed": "yes"}}})
    assert popped(queue) == ["default/a"]


def test_deleting_a_pod_removes_it_from_every_tier_and_from_flight():
    queue = make()
    for name in ("active", "parked", "flying"):
        queue.add(pod(name))
    parked = queue.pop_nowait()
    queue.add_unschedulable(parked, {"NodeName"})
    flying = queue.pop_nowait()
    for name in ("active", "parked", "flying"):
        queue.delete(pod(name))
    assert len(queue) == 0
    assert queue.add_unschedulable(flying, {"NodeName"}) == ""
    assert len(queue) == 0


def test_a_gated_pod_waits_until_an_update_lifts_the_gate():
    gate = lambda p: "SchedulingGates" if p["spec"].get("schedulingGates") else None  # noqa: E731
    clock = Clock()
    queue = make(clock, pre_enqueue=gate)
    gated = pod("a", spec={"schedulingGates": [{"name": "wait"}]})
    queue.add(gated)
    clock.advance(120)
    assert queue.on_event(events.NODE_ADD) == 0 and queue.pop_nowait() is None
    queue.update({**gated, "spec": {k: v for k, v in gated["spec"].items() if k != "schedulingGates"}})
    assert popped(queue) == ["default/a"]


def test_done_forgets_a_scheduled_pod():
    queue = make()
    queue.add(pod("a"))
    queue.done(queue.pop_nowait().key)
    assert len(queue) == 0 and "default/a" not in queue


def test_pop_on_a_closed_queue_raises_closed():
    async def scenario():
        queue = make()
        waiter = asyncio.create_task(queue.pop())
        await asyncio.sleep(0)
        queue.close()
        with pytest.raises(Closed):
            await waiter

    asyncio.run(scenario())


def test_a_scheduler_cancelled_as_its_wait_ends_is_cancelled_not_handed_a_pod():
    """Stopping the scheduler cancels its loop once: a wait that ends (a pod came) in the loop
    turns around that cancel must not swallow it (asyncio.wait_for does on 3.11), or the loop
    runs on and the server's shutdown hangs."""

    def setup():
        queue = make()
        queue.add(pod("parked"))
        queue.add_unschedulable(queue.pop_nowait(), ["NodeName"])  # so the wait has a timeout (the flush)
        return queue.pop, lambda: queue.add(pod("now"))

    assert cancels_stick(setup) == [True] * 4
