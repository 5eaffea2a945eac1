"""The work queue: active (FIFO by creation), backoff (1 s doubling to 10 s), unschedulable (woken by events)."""

import asyncio

from mockapi.controllers.allocator.queue import WorkQueue
from tests.cancellation import cancels_stick


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(coroutine):
    return asyncio.run(coroutine)


def test_active_keys_come_out_by_creation_time_then_name_once_each():
    async def scenario():
        queue = WorkQueue()
        queue.add("late", ("2024-01-02", "ns", "a"))
        queue.add("b", ("2024-01-01", "ns", "b"))
        queue.add("a", ("2024-01-01", "ns", "a"))
        queue.add("a", ("2024-01-01", "ns", "a"))
        found = []
        for _ in range(3):
            key = await queue.get()
            found.append(key)
            queue.done(key)
        return found, len(queue)

    assert run(scenario()) == (["a", "b", "late"], 0)


def test_backoff_doubles_from_one_second_to_ten():
    queue = WorkQueue(clock=Clock())
    assert [queue.backoff("k", ()) for _ in range(6)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    queue.forget("k")
    assert queue.backoff("k", ()) == 1.0


def test_a_backed_off_key_comes_back_when_due():
    async def scenario():
        clock = Clock()
        queue = WorkQueue(clock=clock)
        queue.backoff("k", ())
        assert queue.tiers()["backoff"] == ["k"]
        clock.now += 1.0
        return await asyncio.wait_for(queue.get(), 1)

    assert run(scenario()) == "k"


def test_parked_keys_wake_only_on_events_they_wait_for():
    queue = WorkQueue()
    queue.park("a", ("1",), frozenset({"pools"}))
    queue.park("b", ("2",), frozenset({"capacity"}))
    assert queue.wake("classes") == 0 and queue.tiers()["unschedulable"] == ["a", "b"]
    assert queue.wake("capacity") == 1
    assert queue.tiers() == {"active": ["b"], "backoff": [], "unschedulable": ["a"]}


def test_an_event_during_processing_sends_the_key_back_to_active_when_done():
    async def scenario():
        queue = WorkQueue()
        queue.add("k", ("1",))
        key = await queue.get()
        queue.wake("pools")  # something that could help happened meanwhile
        queue.park(key, ("1",), frozenset({"pools"}))
        queue.done(key)
        return queue.tiers()

    assert run(scenario())["active"] == ["k"]


def test_an_update_during_processing_is_not_lost():
    async def scenario():
        queue = WorkQueue()
        queue.add("k", ("1",))
        key = await queue.get()
        queue.add("k", ("1",))
        assert queue.tiers()["active"] == []
        queue.done(key)
        return queue.tiers()["active"]

    assert run(scenario()) == ["k"]


def test_adding_a_parked_or_backed_off_key_makes_it_active_and_forget_drops_it():
    queue = WorkQueue(clock=Clock())
    queue.park("a", ("1",), frozenset({"pools"}))
    queue.backoff("b", ("2",))
    queue.add("a", ("1",))
    queue.add("b", ("2",))
    assert queue.tiers() == {"active": ["a", "b"], "backoff": [], "unschedulable": []}
    queue.forget("a")
    assert queue.tiers()["active"] == ["b"] and len(queue) == 1


def test_get_waits_for_work_without_spinning():
    async def scenario():
        queue = WorkQueue()
        waiting = asyncio.ensure_future(queue.get())
        await asyncio.sleep(0)
        assert not waiting.done()
        queue.add("k", ())
        return await asyncio.wait_for(waiting, 1)

    assert run(scenario()) == "k"



def test_a_worker_cancelled_as_its_wait_ends_is_cancelled_not_handed_a_key():
    """The server stops the allocator by cancelling its worker once: a wait that ends (work came)
    in the loop turns around that cancel must not swallow it, or the worker runs on and the
    server's shutdown hangs. Whatever the turn, a cancel that found ``get()`` still running ends it."""

    def setup():
        queue = WorkQueue()
        queue.backoff("later", ())  # so the wait has a timeout (the backoff's due time)
        return queue.get, lambda: queue.add("now", ())

    assert cancels_stick(setup) == [True] * 4
