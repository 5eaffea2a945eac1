"""The queue's ``activate`` (kube's ``Handle.Activate``) for a pod being scheduled: like kube's
EventForceActivate, the pod does not park if its cycle fails — it backs off and is retried, so a
claim allocated (or a gang sibling waiting) while the pod's cycle runs is not missed until the
periodic flush."""

from tests.scheduler.builders import Clock, pod
from tests.scheduler.test_queue import make


def test_activating_a_pod_in_flight_sends_it_to_backoff_instead_of_parking_it():
    clock = Clock()
    queue = make(clock)
    queue.add(pod("p"))
    info = queue.pop_nowait()
    assert queue.activate(["default/p"]) == 0  # nothing parked to move now
    assert queue.add_unschedulable(info, {"DeviceClaims"}) == "backoff"
    clock.advance(1)
    assert queue.pop_nowait().key == "default/p"


def test_without_an_activation_the_pod_parks():
    queue = make(Clock())
    queue.add(pod("p"))
    assert queue.add_unschedulable(queue.pop_nowait(), {"DeviceClaims"}) == "unschedulable"


def test_activating_a_parked_pod_moves_it():
    clock = Clock()
    queue = make(clock)
    queue.add(pod("p"))
    queue.add_unschedulable(queue.pop_nowait(), {"DeviceClaims"})
    assert queue.activate(["default/p", "default/unknown"]) == 1
    clock.advance(1)
    assert queue.pop_nowait().key == "default/p"
