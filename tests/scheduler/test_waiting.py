"""A pod that Permit told to wait (``WaitingPod``): its binding cycle stops when cancelled."""

import time

from mockapi.controllers.scheduler.waiting import WaitingPod
from tests.cancellation import cancels_stick
from tests.scheduler.builders import pod


def test_a_binding_cycle_cancelled_as_its_wait_ends_is_cancelled():
    """Stopping the scheduler cancels its binding cycles once: a wait that ends (the pod was
    allowed) in the loop turns around that cancel must not swallow it (asyncio.wait_for does on
    3.11), or the cycle runs on after the server stopped it."""

    def setup():
        waiting_pod = WaitingPod(pod("p"), "node-a", {"Gang": 60.0}, time.monotonic)
        return waiting_pod.wait, lambda: waiting_pod.allow("Gang")

    assert cancels_stick(setup) == [True] * 4
