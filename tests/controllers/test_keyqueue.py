"""The controllers' key queue: each key once, re-queued when added while worked on, delays on the
injected clock."""

from __future__ import annotations

import asyncio

from mockapi import clock as clocks
from mockapi.controllers.keyqueue import KeyQueue


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
