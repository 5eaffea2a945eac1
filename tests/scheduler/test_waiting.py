"""A pod that Permit told to wait (``WaitingPod``): its binding cycle stops when cancelled."""

import asyncio
import time

from mockapi.controllers.scheduler.waiting import WaitingPod
from tests.scheduler.builders import pod


def test_a_binding_cycle_cancelled_as_its_wait_ends_is_cancelled():
    """Stopping the scheduler cancels its binding cycles once: a wait that ends (the pod was
    allowed) in the loop turns around that cancel must not swallow it (asyncio.wait_for does on
    3.11), or the cycle runs on after the server stopped it."""

    async def cancelled_after(turns: int) -> bool:
        waiting_pod = WaitingPod(pod("p"), "node-a", {"Gang": 60.0}, time.monotonic)
        waiting = asyncio.ensure_future(waiting_pod.wait())
        await asyncio.sleep(0.01)
        waiting_pod.allow("Gang")
        for _ in range(turns):
            await asyncio.sleep(0)
        if not waiting.cancel():
            return True  # it had returned its verdict already: nothing to stop
        try:
            await asyncio.wait_for(waiting, 5)
        except asyncio.CancelledError:
            return True
        return False

    assert [asyncio.run(cancelled_after(turns)) for turns in range(4)] == [True] * 4
