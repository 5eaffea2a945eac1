"""What the scheduler remembers between cycles (its equivalence cache) never outlives what it was
computed from: pure Filter and Score verdicts are per pod spec and node generation; parked pods
are indexed by the plugins that rejected them, and an event still moves exactly the pods it did."""

from mockapi.controllers.scheduler import events
from mockapi.controllers.scheduler.framework import CycleState, FitError, Framework, Snapshot
from mockapi.controllers.scheduler.queue import SchedulingQueue
from tests.scheduler.builders import Clock, node, pod


def schedule(fwk: Framework, snapshot: Snapshot, p: dict):
    return fwk.schedule_one(CycleState(), p, snapshot)


def test_a_node_that_filled_up_is_filtered_again_for_the_next_pod_of_the_same_spec():
    fwk, snapshot = Framework(), Snapshot([node("a", cpu="2"), node("b", cpu="2")])
    first = schedule(fwk, snapshot, pod("p1", cpu="2"))
    snapshot.add_pod(pod("p1", cpu="2"), first.node)  # as assume does
    second = schedule(fwk, snapshot, pod("p2", cpu="2"))
    assert {first.node, second.node} == {"a", "b"}
    snapshot.add_pod(pod("p2", cpu="2"), second.node)
    third = schedule(fwk, snapshot, pod("p3", cpu="2"))
    assert isinstance(third, FitError)
    assert third.message().startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_a_node_freed_or_changed_is_seen_at_once():
    fwk, snapshot = Framework(), Snapshot([node("a", cpu="2")], [pod("busy", cpu="2", node_name="a")])
    assert isinstance(schedule(fwk, snapshot, pod("p1", cpu="1")), FitError)
    snapshot.remove_pod("default/busy")
    assert schedule(fwk, snapshot, pod("p2", cpu="1")).node == "a"
    snapshot.set_node(node("a", cpu="2", unschedulable=True))
    assert "node(s) were unschedulable" in schedule(fwk, snapshot, pod("p3", cpu="1")).message()


def test_scores_follow_the_pods_on_each_node():
    fwk, snapshot = Framework(), Snapshot([node("a", cpu="4"), node("b", cpu="4")])
    assert schedule(fwk, snapshot, pod("p1", cpu="1")).node == "a"  # a tie: the first by name
    snapshot.add_pod(pod("p1", cpu="1"), "a")
    assert schedule(fwk, snapshot, pod("p2", cpu="1")).node == "b"  # LeastAllocated: the emptier node
    snapshot.add_pod(pod("p2", cpu="1"), "b")
    snapshot.add_pod(pod("p3", cpu="2"), "b")
    assert schedule(fwk, snapshot, pod("p4", cpu="1")).node == "a"


def test_pods_of_another_spec_get_their_own_verdicts():
    fwk, snapshot = Framework(), Snapshot([node("a", cpu="2", labels={"zone": "x"}), node("b", cpu="2")])
    assert schedule(fwk, snapshot, pod("p1", cpu="1")).node == "a"
    assert schedule(fwk, snapshot, pod("p2", cpu="1", spec={"nodeSelector": {"zone": "y"}})).message().startswith(
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    )
    assert schedule(fwk, snapshot, pod("p3", cpu="3")).message().startswith("0/2 nodes are available: 2 Insufficient cpu.")


def parked_queue() -> SchedulingQueue:
    hints = {"NodeResourcesFit": (events.POD_DELETE,), "NodeName": (events.NODE_ADD,), "DeviceClaims": events.DEVICE_EVENTS}
    queue = SchedulingQueue(monotonic=Clock(), hints=hints, initial_backoff=0.0, max_backoff=0.0)
    for name, plugins in (("fit", {"NodeResourcesFit"}), ("name", {"NodeName"}), ("any", set()), ("both", {"NodeName", "NodeResourcesFit"})):
        queue.add(pod(name))
        queue.add_unschedulable(queue.pop_nowait(), plugins)
    return queue


def test_an_event_moves_the_pods_a_plugin_interested_in_it_rejected_and_those_no_plugin_did():
    queue = parked_queue()
    assert queue.on_event(events.POD_DELETE) == 3
    assert sorted(queue.tiers()["unschedulable"]) == ["default/name"]
    assert queue.on_event(events.NODE_ADD) == 1
    assert queue.tiers()["unschedulable"] == []


def test_an_event_only_other_plugins_registered_moves_only_the_pods_no_plugin_rejected():
    queue = parked_queue()
    assert queue.on_event(events.ClusterEvent(events.DEVICE_POOL, events.ADD)) == 1
    assert sorted(queue.tiers()["unschedulable"]) == ["default/both", "default/fit", "default/name"]
    assert queue.on_event(events.UNSCHEDULABLE_TIMEOUT) == 3


def test_pods_differing_only_in_volumes_share_the_remembered_verdicts():
    """The ServiceAccount admission gives every pod its own ``kube-api-access-<random>`` volume and
    mounts: the memo's key leaves them out, so pods of one template still share verdicts."""
    from types import SimpleNamespace

    from mockapi.controllers.scheduler.framework import _spec_signature

    def pod(volume: str) -> dict:
        mount = [{"name": volume, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}]
        return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}, "volumeMounts": mount}],
                         "volumes": [{"name": volume, "projected": {"sources": []}}]}}

    def signature(p: dict) -> bytes:
        return _spec_signature(SimpleNamespace(spec_signature=None), p)

    assert signature(pod("kube-api-access-abcde")) == signature(pod("kube-api-access-fghij"))
    other = pod("kube-api-access-abcde")
    other["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    assert signature(other) != signature(pod("kube-api-access-abcde"))
