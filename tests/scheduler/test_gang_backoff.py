"""Coscheduling's gang-level failure handling, as scheduler-plugins' pkg/coscheduling: a member with
no node rejects its waiting siblings in PostFilter, the group is backed off (PreFilter rejects its
members until the backoff ends, then they come back together), small gaps are left to retry, and
the first member to wait brings its parked siblings back."""

import asyncio

from mockapi.clock import FakeClock
from mockapi.controllers.scheduler import config
from mockapi.controllers.scheduler.framework import FitError, Framework
from mockapi.controllers.scheduler.nodeinfo import Snapshot
from mockapi.controllers.scheduler.plugin import CycleState
from mockapi.controllers.scheduler.status import Code
from tests.scheduler.builders import Clock, node, pod
from tests.scheduler.fake_client import NODES, PODS
from tests.scheduler.test_controller import condition, run, until

GROUP = "scheduling.x-k8s.io/pod-group"
MIN = "scheduling.x-k8s.io/min-available"


def member(name, group="g", size=3, cpu="1"):
    return pod(name, cpu=cpu, labels={GROUP: group}, annotations={MIN: str(size)})


def gang_config(**args) -> config.Configuration:
    return config.parse({
        "apiVersion": config.API_VERSION, "kind": config.KIND,
        "profiles": [{"pluginConfig": [{"name": "Coscheduling", "args": args}]}],
    })  # fmt: skip


def framework(clock, **args) -> Framework:
    async def binder(p, node_name):
        pass

    return Framework(gang_config(**args).profiles[0], binder=binder, monotonic=clock)


# ------------------------------------------------------------------------- in the framework
def test_a_member_with_no_node_rejects_its_waiting_siblings_and_backs_the_group_off():
    async def scenario():
        clock = Clock()
        fwk, snapshot = framework(clock, permitWaitingTimeSeconds=30, podGroupBackoffSeconds=5), Snapshot([node("a", cpu="2")])
        waiting = []
        for name in ("g0", "g1"):
            state = CycleState()
            result, status = await fwk.run_scheduling_cycle(state, member(name), snapshot)
            assert status.code is Code.WAIT
            waiting.append(asyncio.create_task(fwk.bind(state, member(name), result.node, snapshot)))
        failed = fwk.schedule_one(CycleState(), member("g2"), snapshot)  # no cpu left for the third
        outcomes = await asyncio.gather(*waiting)
        blocked = fwk.schedule_one(CycleState(), member("g0"), Snapshot([node("a", cpu="8")]))
        clock.advance(5)
        after = fwk.schedule_one(CycleState(), member("g0"), Snapshot([node("a", cpu="8")]))
        return failed, outcomes, blocked, after

    failed, outcomes, blocked, after = asyncio.run(scenario())
    assert isinstance(failed, FitError)
    assert failed.message() == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod., "
        "PodGroup default/g gets rejected due to Pod g2 is unschedulable even after PostFilter"
    )
    assert {(o.code.value, o.plugin, o.message()) for o in outcomes} == {("Unschedulable", "Coscheduling", "optimistic rejection in PostFilter")}
    assert isinstance(blocked, FitError) and blocked.message().startswith("0/1 nodes are available: podGroup default/g failed recently.")
    assert blocked.diagnosis.statuses["a"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE  # no preemption for a backed-off group
    assert not isinstance(after, FitError)


def test_without_a_backoff_the_group_is_rejected_but_retried_at_once():
    async def scenario():
        clock = Clock()
        fwk, snapshot = framework(clock), Snapshot([node("a", cpu="1")])
        state = CycleState()
        result, _ = await fwk.run_scheduling_cycle(state, member("g0", size=2), snapshot)
        task = asyncio.create_task(fwk.bind(state, member("g0", size=2), result.node, snapshot))
        failed = fwk.schedule_one(CycleState(), member("g1", size=2), snapshot)
        outcome = await task
        again = fwk.schedule_one(CycleState(), member("g1", size=2), Snapshot([node("a", cpu="4")]))
        return failed, outcome, again

    failed, outcome, again = asyncio.run(scenario())
    assert failed.message().endswith("PodGroup default/g gets rejected due to Pod g1 is unschedulable even after PostFilter")
    assert outcome.message() == "optimistic rejection in PostFilter"
    assert not isinstance(again, FitError)  # podGroupBackoffSeconds defaults to 0, as in scheduler-plugins


def test_a_small_gap_or_a_complete_group_is_not_rejected():
    # 10 of 11 members assigned: 1/11 missing is under podGroupRejectPercentage (10%): nobody rejected.
    fwk = framework(Clock(), podGroupBackoffSeconds=5)
    assigned = [dict(member(f"g{i}", size=11), spec={**member(f"g{i}", size=11)["spec"], "nodeName": "a"}) for i in range(10)]
    snapshot = Snapshot([node("a", cpu="10")], assigned)
    failed = fwk.schedule_one(CycleState(), member("g10", size=11), snapshot)
    assert "PodGroup" not in failed.message() and not fwk.plugins["Coscheduling"].backed_off
    plain = fwk.schedule_one(CycleState(), pod("solo", cpu="1"), snapshot)
    assert plain.message() == "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."


def test_the_new_arguments_are_validated():
    try:
        gang_config(podGroupBackoffSeconds=-1, podGroupRejectPercentage=101)
    except config.ConfigError as exc:
        text = str(exc)
    else:
        raise AssertionError("accepted")
    assert "podGroupBackoffSeconds: Invalid value: -1: must be greater than or equal to 0" in text
    assert "podGroupRejectPercentage: Invalid value: 101: must be in the range [0, 100]" in text


# -------------------------------------------------------------------------- in the scheduler
def test_a_backed_off_group_comes_back_together_when_its_backoff_ends():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", cpu="2"))
        for name in ("g0", "g1", "g2"):
            fake.put(PODS, member(name))
        # two members wait on a, the third finds no cpu: all three fail, the group is backed off
        await until(lambda: all(condition(fake, n) is not None for n in ("g0", "g1", "g2")))
        coscheduling = scheduler.frameworks["default-scheduler"].plugins["Coscheduling"]
        assert ("default", "g") in coscheduling.backed_off
        fake.put(NODES, node("a", cpu="4"))  # room for all now; the backoff still holds them
        await asyncio.sleep(0.05)
        assert fake.bindings == []
        await until(lambda: len(fake.bindings) == 3, timeout=8)  # the backoff (0.2 s) ends: all bind (after their own backoffs)
        return {condition(fake, n)["message"] for n in ("g0", "g1", "g2") if condition(fake, n)["status"] == "False"}, fake.events

    messages, events = run(scenario, config=gang_config(permitWaitingTimeSeconds=5, podGroupBackoffSeconds=0.2))
    failed = [e["message"] for e in events if e["reason"] == "FailedScheduling"]
    assert any("PodGroup default/g gets rejected due to Pod" in m for m in failed)
    assert any(m == "optimistic rejection in PostFilter" for m in failed)


def test_a_gang_member_times_out_without_backing_the_group_off():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a"))
        for i in range(2):
            fake.put(PODS, member(f"g{i}"))
        gated = member("g2")  # the group has its 3 pods (PreFilter lets it through), the third never comes
        gated["spec"]["schedulingGates"] = [{"name": "hold"}]
        fake.put(PODS, gated)
        await until(lambda: condition(fake, "g0") is not None and condition(fake, "g1") is not None)
        assert "rejected due to timeout" in condition(fake, "g0")["message"]
        return scheduler.frameworks["default-scheduler"].plugins["Coscheduling"].backed_off

    assert run(scenario, config=gang_config(permitWaitingTimeSeconds=0.05, podGroupBackoffSeconds=30), clock=FakeClock()) == {}
