"""The allocation gate (mockapi.controllers.gate) as the allocator and the control API drive it."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockapi.controllers.gate import AllocationGate, ClaimKey

A = ClaimKey("default", "a")
B = ClaimKey("default", "b")


def bound(gate: AllocationGate) -> list[ClaimKey]:
    requeued: list[ClaimKey] = []
    gate.bind(requeued.append)
    return requeued


def test_immediate_mode_admits_every_attempt_at_once():
    gate = AllocationGate()
    assert gate.admit(A) and gate.admit(A) and gate.waiting() == []


def test_manual_mode_parks_a_claim_until_it_is_stepped_and_then_requeues_it():
    gate = AllocationGate("manual")
    requeued = bound(gate)
    assert not gate.admit(A)
    assert not gate.admit(A)
    assert gate.waiting() == [A]
    assert gate.step() == [A]
    assert requeued == [A] and gate.waiting() == []
    assert gate.admit(A)
    assert not gate.admit(A)  # one step, one attempt


def test_step_without_a_claim_takes_the_oldest_waiting_and_all_takes_every_one():
    gate = AllocationGate("manual")
    requeued = bound(gate)
    gate.admit(B)
    gate.admit(A)
    assert gate.step() == [B]
    assert gate.step(all=True) == [A]
    assert gate.step() == []
    assert requeued == [B, A]


def test_stepping_a_claim_before_the_allocator_sees_it_is_kept_as_a_permit():
    gate = AllocationGate("manual")
    assert gate.step(A) == [A]
    assert gate.admit(A)
    assert not gate.admit(A)


def test_leaving_manual_mode_releases_every_waiting_claim():
    gate = AllocationGate("manual")
    requeued = bound(gate)
    gate.admit(A)
    gate.admit(B)
    gate.configure(mode="immediate")
    assert sorted(requeued) == [A, B] and gate.waiting() == []


def test_delay_mode_admits_after_the_delay_through_the_requeue_callback():
    async def scenario():
        gate = AllocationGate("delay", delay=0.02)
        requeued = bound(gate)
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert not gate.admit(A)
        assert gate.waiting() == [A]
        while not requeued:
            await asyncio.sleep(0.005)
        assert loop.time() - started >= 0.015
        assert gate.admit(A)

    asyncio.run(scenario())


def test_wait_returns_once_the_claim_is_stepped():
    async def scenario():
        gate = AllocationGate("manual")
        waiter = asyncio.ensure_future(gate.wait(A))
        await asyncio.sleep(0.01)
        assert not waiter.done() and gate.waiting() == [A]
        gate.step(A)
        await asyncio.wait_for(waiter, 1)

    asyncio.run(scenario())


def test_forget_drops_a_deleted_claim():
    gate = AllocationGate("manual")
    gate.admit(A)
    gate.step(B)
    gate.forget(A)
    gate.forget(B)
    assert gate.waiting() == [] and not gate.admit(B)


def test_reset_returns_to_the_start_up_settings_and_holds_nothing():
    gate = AllocationGate("delay", delay=2, jitter=0.5)
    gate.configure(mode="manual")
    gate.admit(A)
    gate.reset()
    assert (gate.mode, gate.delay, gate.jitter, gate.waiting()) == ("delay", 2, 0.5, [])


def test_finished_reports_each_attempt_to_the_listeners():
    gate = AllocationGate()
    seen = []
    gate.listeners.append(lambda key, reason, seconds: seen.append((key, reason, seconds)))
    gate.finished(A, reason="Unsatisfiable", seconds=0.01)
    assert seen == [(A, "Unsatisfiable", 0.01)]


@pytest.mark.parametrize("mode, delay, jitter", [("sometimes", 0, 0), ("delay", -1, 0), ("delay", 1, -1)])
def test_configure_refuses_unknown_modes_and_negative_times(mode, delay, jitter):
    with pytest.raises(ValueError):
        AllocationGate().configure(mode=mode, delay=delay, jitter=jitter)


@pytest.mark.parametrize(
    "text, key",
    [
        ("default/a", A),
        ("deviceprivilegedclaims/monitoring/x", ClaimKey("monitoring", "x", "DevicePrivilegedClaim")),
    ],
)
def test_claim_keys_parse_from_the_control_apis_form_and_answer_in_it(text, key):
    found = ClaimKey.parse(text)
    assert found == key
    as_text = f"{found.namespace}/{found.name}" if found.resource == "deviceclaims" else f"{found.resource}/{found.namespace}/{found.name}"
    assert as_text == text and found.to_dict() == {"resource": text.split("/")[0] if text.count("/") == 2 else "deviceclaims", "namespace": key.namespace, "name": key.name}


@pytest.mark.parametrize("text", ["a", "pods/default/a", "/a", "default/", "a/b/c/d"])
def test_malformed_claim_keys_are_refused(text):
    with pytest.raises(ValueError):
        ClaimKey.parse(text)


@given(st.lists(st.tuples(st.sampled_from(["admit", "step", "step_all", "forget"]), st.sampled_from([A, B])), max_size=30))
def test_in_manual_mode_no_claim_gets_more_attempts_than_it_was_stepped(actions):
    gate = AllocationGate("manual", rng=random.Random(0))
    steps = {A: 0, B: 0}
    admitted = {A: 0, B: 0}
    for action, key in actions:
        if action == "admit":
            admitted[key] += gate.admit(key)
        elif action == "step":
            steps[key] += 1
            gate.step(key)
        elif action == "step_all":
            for stepped in gate.step(all=True):
                steps[stepped] += 1
        else:
            gate.forget(key)
            steps[key] = admitted[key]  # forgetting drops unused permits
    assert all(admitted[key] <= steps[key] for key in (A, B))
