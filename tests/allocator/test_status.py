"""The status the allocator writes: its own fields replaced, everyone else's kept, the condition's
lastTransitionTime moving only when the status flips."""

from mockapi.controllers.allocator import kinds
from mockapi.controllers.allocator import status as status_
from tests.allocator.conftest import World, claim, detail, device, pool


def allocated_claim():
    world = World(pool("p", [device("a", resources=[{"name": "memory", "capacity": "8Gi"}])]))
    spec = claim("c", detail("gpu", memory="1Gi"))
    spec["status"] = {"podNames": ["pod-a"], "deviceStatuses": [{"devicePoolName": "p", "deviceName": "a"}], "conditions": [{"type": "Ready", "status": "True"}]}
    plan = world.plan(spec)
    return spec, plan


def test_an_allocation_sets_entries_node_and_condition_and_keeps_other_fields():
    spec, plan = allocated_claim()
    found = status_.allocated(spec, plan.solution, ([{"kind": "A"}], []), generation=3, now="T1")
    assert found["allocations"] == [{"devicePoolName": "p", "deviceName": "a", "allocations": [{"name": "memory", "allocation": "1Gi"}]}]
    assert found["classConfigs"] == [{"kind": "A"}] and "claimConfigs" not in found
    assert found["nodeName"] == "node-a" and found["podNames"] == ["pod-a"] and found["deviceStatuses"][0]["deviceName"] == "a"
    assert found["conditions"][0] == {"type": "Ready", "status": "True"}
    assert found["conditions"][1] == {
        "type": "Allocated", "status": "True", "observedGeneration": 3, "lastTransitionTime": "T1", "reason": "Allocated",
        "message": "allocated 1 device on node node-a: p/a",
    }


def test_a_failure_removes_the_allocators_fields_and_keeps_the_transition_time_while_false():
    spec, plan = allocated_claim()
    spec["status"] = status_.allocated(spec, plan.solution, ([], []), generation=1, now="T1")
    failed = status_.failed(spec, kinds.failure(kinds.UNSATISFIABLE, "no"), generation=2, now="T2")
    assert "allocations" not in failed and "nodeName" not in failed and failed["podNames"] == ["pod-a"]
    spec["status"] = failed
    again = status_.failed(spec, kinds.failure(kinds.CLASS_NOT_FOUND, "gone"), generation=2, now="T3")
    condition = status_.condition_of({"status": again})
    assert (condition["lastTransitionTime"], condition["reason"], condition["status"]) == ("T2", "ClassNotFound", "False")


def test_events_point_at_the_claim():
    spec, _ = allocated_claim()
    spec["metadata"]["resourceVersion"] = "7"
    event = status_.event(spec, reason="Unsatisfiable", message="m", warning=True, now="T", name="c.1")
    assert event["involvedObject"] == {"apiVersion": "devmgmtproto.k8s.io/v1alpha1", "kind": "DeviceClaim", "namespace": "default", "name": "c", "uid": "uid-c", "resourceVersion": "7"}
    assert (event["type"], event["reason"], event["source"], event["metadata"]) == ("Warning", "Unsatisfiable", {"component": "mockapi-allocator"}, {"name": "c.1", "namespace": "default"})


def test_network_only_allocations_have_no_node():
    world = World(pool("net", 1, node=None))
    spec = claim("c")
    found = status_.allocated(spec, world.plan(spec).solution, ([], []), generation=1, now="T")
    assert "nodeName" not in found and found["conditions"][0]["message"] == "allocated 1 device from network-attached pools: net/dev-00"
