"""A wait cancelled in the loop turns around its wake-up must end cancelled.

``asyncio.wait_for`` on CPython 3.11 swallows a cancel that arrives in the same loop turn as the
wait it guards ends (gh-86296): a controller's worker cancelled once by the server's shutdown then
runs on, and the shutdown hangs. Each controller's wait is checked with :func:`cancels_stick`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

Setup = Callable[[], tuple[Callable[[], Awaitable], Callable[[], None]]]


async def _cancel_sticks(setup: Setup, turns: int) -> bool:
    start_wait, wake = setup()
    waiting = asyncio.ensure_future(start_wait())
    await asyncio.sleep(0.01)
    wake()  # the wait ends...
    for _ in range(turns):
        await asyncio.sleep(0)
    if not waiting.cancel():  # ...as its task is cancelled
        return True  # it had returned already: nothing to stop
    try:
        await asyncio.wait_for(waiting, 5)
    except asyncio.CancelledError:
        return True
    return False


def cancels_stick(setup: Setup) -> list[bool]:
    """For a cancel 0–3 loop turns after the wake-up, whether it ended the wait (all True when it
    never gets lost). ``setup()`` runs in the loop and returns ``(start_wait, wake)``: a coroutine
    function that waits, with a timeout pending, and what ends that wait."""
    return [asyncio.run(_cancel_sticks(setup, turns)) for turns in range(4)]
