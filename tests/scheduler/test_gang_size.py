"""Coscheduling's PreFilter group-size check (scheduler-plugins' PodGroupManager.PreFilter): a member
is rejected, UnschedulableAndUnresolvable, while fewer than min-available pods of its group exist
at all, counted from the scheduler's pod informer; a sibling's creation brings it back."""

import asyncio

from mockapi.controllers.scheduler.framework import FitError, Framework
from mockapi.controllers.scheduler.nodeinfo import Snapshot
from mockapi.controllers.scheduler.plugin import CycleState
from mockapi.controllers.scheduler.plugins.coscheduling import GroupIndex
from mockapi.controllers.scheduler.status import Code
from tests.scheduler.builders import node, pod
from tests.scheduler.fake_client import NODES, PODS
from tests.scheduler.test_controller import condition, run, until
from tests.scheduler.test_gang_backoff import gang_config, member

SHORT = "pre-filter pod {} cannot find enough sibling pods, current pods number: {}, minMember of group: 3"


# ----------------------------------------------------------------------------- the index
def test_the_index_counts_a_groups_pods_but_not_finished_or_deleted_ones():
    groups = GroupIndex()
    for name in ("g0", "g1"):
        groups.observe(member(name))
    groups.observe(member("other", group="h"))
    groups.observe(pod("plain"))
    elsewhere = member("g9")
    elsewhere["metadata"]["namespace"] = "team"
    groups.observe(elsewhere)
    assert (groups.size(("default", "g")), groups.size(("default", "h")), groups.size(("team", "g"))) == (2, 1, 1)
    done = member("g1")
    done["status"]["phase"] = "Succeeded"
    groups.observe(done)  # kube-scheduler's informer leaves finished pods out
    assert groups.size(("default", "g")) == 1
    groups.observe(member("g2"))
    groups.observe(member("g0"), gone=True)
    assert groups.size(("default", "g")) == 1
    moved = member("g2", group="h")  # its label changed: it counts in its new group only
    groups.observe(moved)
    assert (groups.size(("default", "g")), groups.size(("default", "h"))) == (0, 2)
    deleting = member("g3")
    deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    groups.observe(deleting)  # being deleted: still listed until it is gone, as in the lister
    assert groups.size(("default", "g")) == 1


# ------------------------------------------------------------------------- the framework
def test_pre_filter_rejects_a_member_of_a_group_short_of_pods_without_preemption():
    fwk = Framework(gang_config(permitWaitingTimeSeconds=5).profiles[0])
    fwk.group_size = lambda group: {("default", "g"): 2}.get(group, 0)  # the scheduler's count
    failed = fwk.schedule_one(CycleState(), member("g0"), Snapshot([node("a"), node("b")]))
    assert isinstance(failed, FitError)
    assert failed.message().startswith(f"0/2 nodes are available: {SHORT.format('g0', 2)}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert {(s.code, s.plugin) for s in failed.diagnosis.statuses.values()} == {(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "Coscheduling")}
    assert failed.diagnosis.unschedulable_plugins == {"Coscheduling"}
    fwk.group_size = lambda group: 3
    state = CycleState()
    result, status = fwk.scheduling_cycle(state, member("g0"), Snapshot([node("a")]))
    assert (result.node, status.code) == ("a", Code.WAIT)  # enough pods: on to Permit, as before
    fwk.reject_waiting_pod("default/g0", "", "done")


def test_a_pod_of_no_group_or_of_one_is_never_held_back():
    fwk = Framework(gang_config().profiles[0])
    fwk.group_size = lambda group: 1
    assert fwk.schedule_one(CycleState(), pod("solo"), Snapshot([node("a")])).node == "a"
    alone = pod("g0", labels={"scheduling.x-k8s.io/pod-group": "g"}, annotations={"scheduling.x-k8s.io/min-available": "1"})
    assert fwk.schedule_one(CycleState(), alone, Snapshot([node("a")])).node == "a"


# ------------------------------------------------------------------------- the scheduler
def test_a_gang_short_of_pods_stays_pending_with_the_sibling_message_then_binds_when_the_last_is_created():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a"))
        fake.put(PODS, member("g0"))
        fake.put(PODS, member("g1"))
        await until(lambda: condition(fake, "g0") is not None and condition(fake, "g1") is not None)
        held = {name: condition(fake, name)["message"] for name in ("g0", "g1")}
        fwk = scheduler.frameworks["default-scheduler"]
        nothing_held = (list(fake.bindings), dict(scheduler.snapshot.pod_node), fwk.iterate_waiting_pods())
        fake.put(PODS, member("g2"))  # its Pod/Add brings the parked members back
        await until(lambda: len(fake.bindings) == 3, timeout=8)
        return held, nothing_held, sorted(key for key, _ in fake.bindings)

    held, nothing_held, bound = run(scenario, config=gang_config(permitWaitingTimeSeconds=5))
    for name, message in held.items():
        assert message.startswith(f"0/1 nodes are available: {SHORT.format(name, 2)}. preemption:"), message
    assert nothing_held == ([], {}, [])  # rejected before any node was assumed: nobody waits in Permit
    assert bound == ["default/g0", "default/g1", "default/g2"]


def test_a_finished_sibling_does_not_count():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a"))
        done = member("g9")
        done["spec"]["nodeName"] = "a"
        done["status"]["phase"] = "Succeeded"
        fake.put(PODS, done)
        fake.put(PODS, member("g0"))
        fake.put(PODS, member("g1"))
        await until(lambda: condition(fake, "g1") is not None)
        await asyncio.sleep(0.05)
        return condition(fake, "g1")["message"], fake.bindings

    message, bindings = run(scenario, config=gang_config(permitWaitingTimeSeconds=5))
    assert SHORT.format("g1", 2) in message and bindings == []
