"""mockapi.cel.isolated: evaluation in a child process that is killed at the caller's deadline."""

import select
import signal
import time

import pytest

from mockapi import cel
from mockapi.cel.isolated import Isolated, Timeout

SLOW = "[" + ",".join(str(i) for i in range(99)) + "]"
SLOW = f"{SLOW}.all(i, {SLOW}.all(j, " + " && ".join(f"device.n + {k} > 0" for k in range(20)) + "))"


@pytest.fixture
def isolated():
    found = Isolated()
    yield found
    found.close()


def test_results_and_errors_are_the_runtimes(isolated):
    later = time.monotonic() + 30
    assert isolated.evaluate("device.model == 'x'", {"model": "x"}, deadline=later) is True
    assert isolated.evaluate("device.memory.isGreaterThan(quantity('1Gi'))", {"memory": cel.quantity_value(cel.quantities.parse("2Gi"))}, deadline=later) is True
    with pytest.raises(cel.EvaluationError, match='no such attribute'):
        isolated.evaluate("device.missing == 1", {"model": "x"}, deadline=later)


def test_an_unbounded_evaluation_is_killed_at_the_deadline_and_the_next_call_starts_another_child(isolated):
    isolated.evaluate("true", {}, deadline=time.monotonic() + 30)  # started
    child = isolated._process
    with pytest.raises(Timeout):
        isolated.evaluate(SLOW, {"n": 1}, deadline=time.monotonic() + 0.01)
    assert child.returncode == -signal.SIGKILL  # killed mid-evaluation, not waited for (however loaded the machine)
    assert isolated.evaluate("device.n == 1", {"n": 1}, deadline=time.monotonic() + 30) is True


def test_a_bounded_evaluation_is_left_to_finish_and_its_late_reply_is_dropped(isolated):
    isolated.evaluate("true", {}, deadline=time.monotonic() + 30)
    child = isolated._process
    with pytest.raises(Timeout):
        isolated.evaluate(SLOW, {"n": 1}, deadline=time.monotonic() + 0.01, bounded=True)
    # the late reply is written before the next call: the child runs at nice 19, so on a busy
    # machine it may take longer than the 1 s the next call gives a late reply (then: a restart)
    assert select.select([child.stdout], [], [], 60)[0]
    assert isolated.evaluate("device.n == 2", {"n": 1}, deadline=time.monotonic() + 30) is False  # not the late True
    assert isolated._process is child  # no restart


def test_starting_the_child_is_not_charged_to_the_callers_deadline(isolated, monkeypatch):
    isolated.evaluate("true", {}, deadline=time.monotonic() + 30)  # started
    ready = isolated._ready

    def slow_start():  # a start-up (or late replies owed to others) outlasting the caller's deadline
        time.sleep(1.0)
        return ready()

    monkeypatch.setattr(isolated, "_ready", slow_start)
    result, waited = isolated.evaluate_timed("device.n == 1", {"n": 1}, deadline=time.monotonic() + 0.9)
    assert result is True
    assert 0 <= waited < 0.9  # what the caller's budget is charged: the evaluation, not the start-up
