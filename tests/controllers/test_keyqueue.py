"""The controllers' key queue: each key once, re-queued when added while worked on, delays on the
injected clock."""

from __future__ import annotations

import asyncio

from mockapi import clock as clocks
from mockapi.controllers.keyqueue import KeyQueue
from tests.cancellation import cancels_stick


def test_a_key_is_queued_once_and_again_after_the_worker_if_added_meanwhile():
    async def main():
        queue = KeyQueue()
        queue.add("a")
        queue.add("b")
        queue.add("a")
        assert len(queue) == 2
        assert await queue.get() == "a"
        queue.add("a")  # while being worked on
        assert await queue.get() == "b"
        queue.done("b")
        assert queue.busy()
        queue.done("a")
        assert await queue.get() == "a"
        queue.done("a")
        assert queue.idle()

    asyncio.run(main())


def test_delays_and_retries_run_on_the_injected_clock():
    async def main():
        clock = clocks.FakeClock()
        queue = KeyQueue(monotonic=clock.monotonic)
        queue.add_after("later", 3600)
        assert not queue.busy() and not queue.idle()
        clock.advance(3600)
        queue.kick()
        assert await asyncio.wait_for(queue.get(), 1) == "later"
        queue.done("later")
        assert [queue.retry("x") for _ in range(3)] == [0.1, 0.2, 0.4]
        queue.forget("x")
        assert queue.retry("x") == 0.1
        queue.discard("x")
        assert queue.idle()

    asyncio.run(main())


def test_a_worker_cancelled_as_its_wait_ends_is_cancelled_not_handed_a_key():
    """Stopping a controller cancels its worker once: a wait that ends (work came) in the loop
    turns around that cancel must not swallow it (asyncio.wait_for does on 3.11), or the worker
    runs on and the server's shutdown hangs."""

    def setup():
        queue = KeyQueue()
        queue.add_after("later", 60)  # so the wait has a timeout
        return queue.get, lambda: queue.add("now")

    assert cancels_stick(setup) == [True] * 4
