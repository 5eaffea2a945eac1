"""The allocation budget measures the cycle's own work, not the machine's other business."""

import gc
import time

import pytest

from mockapi.controllers.allocator.budget import Budget, Exhausted, Limits, Preempted, work_time


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_time_the_thread_does_not_work_is_not_charged():
    budget = Budget(Limits(seconds=0.05))
    time.sleep(0.15)  # a thread waiting (for the GIL, for a loaded machine) does no work
    budget.check_time()
    _spin(0.06)
    with pytest.raises(Exhausted):
        budget.check_time()


def test_garbage_collections_are_not_charged():
    heap = [[i] for i in range(400_000)]  # a large heap makes a full collection slow
    cpu, work = time.thread_time(), work_time()
    gc.collect()
    cpu, work = time.thread_time() - cpu, work_time() - work
    assert cpu > 0.005, "the collection was too quick to tell"
    assert work < cpu / 4
    del heap


def test_work_elsewhere_is_charged():
    budget = Budget(Limits(seconds=10))
    budget.charge(9.99)
    assert budget.remaining() < 0.01
    budget.charge(0.02)
    with pytest.raises(Exhausted):
        budget.check_time()


def test_the_inline_slice_is_wall_time():
    budget = Budget(Limits(seconds=10), slice_seconds=0.01)
    time.sleep(0.02)  # the event loop was held, whether or not this thread worked
    with pytest.raises(Preempted):
        budget.check_time()
