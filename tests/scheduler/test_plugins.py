"""Each in-tree plugin: kube's verdicts, messages, codes and scores."""

import asyncio

import pytest

from mockapi.controllers.scheduler import config, pods as pods_
from mockapi.controllers.scheduler.framework import CycleState, FitError, Framework, NodeInfo, Snapshot
from mockapi.controllers.scheduler.plugins.basic import NodeName, NodeUnschedulable, SchedulingGates
from mockapi.controllers.scheduler.plugins.default_preemption import DefaultPreemption
from mockapi.controllers.scheduler.plugins.node_affinity import NodeAffinity
from mockapi.controllers.scheduler.plugins.node_resources_fit import NodeResourcesFit
from mockapi.controllers.scheduler.plugins.taint_toleration import TaintToleration
from mockapi.controllers.scheduler.status import Code
from tests.scheduler.builders import node, pod


def info(n: dict, *on: dict) -> NodeInfo:
    found = NodeInfo(n)
    for p in on:
        found.add_pod(p)
    return found


def verdict(plugin, p: dict, node_info: NodeInfo) -> tuple:
    state = CycleState()
    if type(plugin).implements("preFilter"):
        plugin.pre_filter(state, p, Snapshot())
    status = plugin.filter(state, p, node_info)
    return status.code.value, status.reasons


def affinity(required=None, preferred=None) -> dict:
    node_affinity = {}
    if required is not None:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return {"affinity": {"nodeAffinity": node_affinity}}


# ---------------------------------------------------------------------------- NodeName
def test_node_name_rejects_every_other_node_unresolvably():
    plugin = NodeName()
    wanted = pod("p", node_name="b")
    assert verdict(plugin, wanted, info(node("a"))) == ("UnschedulableAndUnresolvable", ("node(s) didn't match the requested node name",))
    assert verdict(plugin, wanted, info(node("b")))[0] == "Success"


# ---------------------------------------------------------------------------- NodeUnschedulable
def test_node_unschedulable_rejects_cordoned_nodes_unless_the_pod_tolerates_the_taint():
    plugin, cordoned = NodeUnschedulable(), info(node("a", unschedulable=True))
    assert verdict(plugin, pod("p"), cordoned) == ("UnschedulableAndUnresolvable", ("node(s) were unschedulable",))
    tolerant = pod("t", spec={"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]})
    assert verdict(plugin, tolerant, cordoned)[0] == "Success"


# ---------------------------------------------------------------------------- NodeAffinity
NO_MATCH = ("UnschedulableAndUnresolvable", ("node(s) didn't match Pod's node affinity/selector",))


def test_node_selector_needs_every_label():
    plugin, labelled = NodeAffinity(), info(node("a", labels={"zone": "z1", "gpu": "yes"}))
    assert verdict(plugin, pod("p", spec={"nodeSelector": {"zone": "z1", "gpu": "yes"}}), labelled)[0] == "Success"
    assert verdict(plugin, pod("p", spec={"nodeSelector": {"zone": "z2"}}), labelled) == NO_MATCH


@pytest.mark.parametrize("operator, values, matches", [
    ("In", ["z1", "z2"], True), ("In", ["z3"], False), ("NotIn", ["z3"], True), ("NotIn", ["z1"], False),
    ("Exists", [], True), ("DoesNotExist", [], False), ("Exists", ["z1"], False), ("In", [], False),
])  # fmt: skip
def test_match_expressions_operators(operator, values, matches):
    p = pod("p", spec=affinity(required=[{"matchExpressions": [{"key": "zone", "operator": operator, "values": values}]}]))
    assert (verdict(NodeAffinity(), p, info(node("a", labels={"zone": "z1"})))[0] == "Success") is matches


@pytest.mark.parametrize("operator, value, matches", [("Gt", "3", True), ("Gt", "4", False), ("Lt", "5", True), ("Lt", "4", False), ("Gt", "x", False)])
def test_gt_and_lt_compare_integers(operator, value, matches):
    p = pod("p", spec=affinity(required=[{"matchExpressions": [{"key": "cores", "operator": operator, "values": [value]}]}]))
    assert (verdict(NodeAffinity(), p, info(node("a", labels={"cores": "4"})))[0] == "Success") is matches


def test_terms_are_ored_and_match_fields_name_the_node():
    terms = [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["nowhere"]}]}, {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]
    p = pod("p", spec=affinity(required=terms))
    assert verdict(NodeAffinity(), p, info(node("a"))) == NO_MATCH
    assert verdict(NodeAffinity(), p, info(node("b")))[0] == "Success"
    assert verdict(NodeAffinity(), pod("q", spec=affinity(required=[{}])), info(node("b"))) == NO_MATCH


def test_preferred_affinity_scores_weights_normalized_to_a_hundred():
    preferred = [
        {"weight": 20, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}},
        {"weight": 60, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}},
    ]
    p, plugin, state = pod("p", spec=affinity(preferred=preferred)), NodeAffinity(), CycleState()
    nodes = [info(node("a", labels={"zone": "z1"})), info(node("b", labels={"gpu": "1"})), info(node("c", labels={"zone": "z1", "gpu": "1"})), info(node("d"))]
    plugin.pre_score(state, p, nodes)
    scores = {n.name: plugin.score(state, p, n) for n in nodes}
    plugin.normalize_score(state, p, scores)
    assert scores == {"a": 25, "b": 75, "c": 100, "d": 0}


# ---------------------------------------------------------------------------- TaintToleration
def test_untolerated_no_schedule_and_no_execute_taints_reject_with_the_taint_named():
    tainted = info(node("a", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]))
    assert verdict(TaintToleration(), pod("p"), tainted) == ("UnschedulableAndUnresolvable", ("node(s) had untolerated taint {dedicated: gpu}",))
    tolerant = pod("t", spec={"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]})
    assert verdict(TaintToleration(), tolerant, tainted)[0] == "Success"
    wrong_value = pod("w", spec={"tolerations": [{"key": "dedicated", "value": "cpu"}]})
    assert verdict(TaintToleration(), wrong_value, tainted)[0] == "UnschedulableAndUnresolvable"
    soft = info(node("b", taints=[{"key": "spot", "effect": "PreferNoSchedule"}]))
    assert verdict(TaintToleration(), pod("p"), soft)[0] == "Success"


def test_prefer_no_schedule_taints_lower_the_score():
    plugin, p, state = TaintToleration(), pod("p"), CycleState()
    nodes = [info(node("clean")), info(node("one", taints=[{"key": "a", "effect": "PreferNoSchedule"}])),
             info(node("two", taints=[{"key": "a", "effect": "PreferNoSchedule"}, {"key": "b", "effect": "PreferNoSchedule"}]))]  # fmt: skip
    plugin.pre_score(state, p, nodes)
    scores = {n.name: plugin.score(state, p, n) for n in nodes}
    plugin.normalize_score(state, p, scores)
    assert scores == {"clean": 100, "one": 50, "two": 0}


# ---------------------------------------------------------------------------- NodeResourcesFit
def test_requests_count_the_largest_init_container_sidecars_and_overhead():
    spec = {
        "initContainers": [
            {"name": "big-init", "resources": {"requests": {"cpu": "3"}}},
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
            {"name": "late-init", "resources": {"requests": {"cpu": "2"}}},
        ],
        "overhead": {"cpu": "100m"},
    }
    p = pod("p", cpu="1", memory="1Gi", spec=spec)
    # main 1 + sidecar 0.5 = 1.5 cpu; inits: 3, then 0.5 + 2 = 2.5 → max 3; + 0.1 overhead
    assert pods_.requests(p) == {"cpu": 3100, "memory": 2 * 1024**3}


def test_insufficient_resources_are_each_named_and_only_an_empty_node_too_small_is_unresolvable():
    plugin = NodeResourcesFit(NodeResourcesFit.default_args())
    busy = info(node("a", cpu="2", memory="4Gi"), pod("x", cpu="1500m", memory="3Gi", node_name="a"))
    assert verdict(plugin, pod("p", cpu="1", memory="2Gi"), busy) == ("Unschedulable", ("Insufficient cpu", "Insufficient memory"))
    assert verdict(plugin, pod("p", cpu="3"), busy) == ("UnschedulableAndUnresolvable", ("Insufficient cpu",))


def test_too_many_pods_and_extended_resources():
    plugin = NodeResourcesFit(NodeResourcesFit.default_args())
    full = info(node("a", pods=1), pod("x", node_name="a"))
    assert verdict(plugin, pod("p"), full) == ("Unschedulable", ("Too many pods",))
    gpus = info(node("g", extended={"example.com/gpu": "2"}), pod("x", requests={"example.com/gpu": "1"}, node_name="g"))
    assert verdict(plugin, pod("p", requests={"example.com/gpu": "1"}), gpus)[0] == "Success"
    assert verdict(plugin, pod("p", requests={"example.com/gpu": "2"}), gpus) == ("Unschedulable", ("Insufficient example.com/gpu",))
    assert verdict(plugin, pod("p", requests={"example.com/fpga": "1"}), gpus) == ("UnschedulableAndUnresolvable", ("Insufficient example.com/fpga",))


def test_least_allocated_scores_by_kubes_formula():
    plugin = NodeResourcesFit(NodeResourcesFit.default_args())
    # cpu: (4000 - 1000 - 1000) * 100 / 4000 = 50; memory: (8Gi - 2Gi - 4Gi) * 100 / 8Gi = 25 → (50 + 25) / 2 = 37
    n = info(node("a", cpu="4", memory="8Gi"), pod("x", cpu="1", memory="2Gi", node_name="a"))
    assert plugin.score(CycleState(), pod("p", cpu="1", memory="4Gi"), n) == 37
    # no requests: the non-zero defaults, 100m and 200Mi
    empty = info(node("b", cpu="1", memory="1000Mi"))
    assert plugin.score(CycleState(), pod("p"), empty) == ((1000 - 100) * 100 // 1000 + (1000 - 200) * 100 // 1000) // 2


def test_most_allocated_prefers_the_fuller_node_with_weights():
    args = {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]}}
    plugin = NodeResourcesFit(args)
    n = info(node("a", cpu="4", memory="8Gi"), pod("x", cpu="1", memory="2Gi", node_name="a"))
    # cpu 2000/4000 → 50 (×3), memory 4Gi/8Gi → 50 (×1)
    assert plugin.score(CycleState(), pod("p", cpu="1", memory="2Gi"), n) == 50
    profile = config.parse({"apiVersion": config.API_VERSION, "kind": config.KIND, "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": args}]}]}).profiles[0]
    snapshot = Snapshot([node("empty"), node("full")], [pod("x", cpu="3", node_name="full")])
    assert Framework(profile).schedule_one(CycleState(), pod("p", cpu="1"), snapshot).node == "full"


# ---------------------------------------------------------------------------- SchedulingGates
def test_scheduling_gates_keep_a_pod_out_of_the_queue():
    gated = pod("p", spec={"schedulingGates": [{"name": "a"}, {"name": "b"}]})
    status = SchedulingGates().pre_enqueue(gated)
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates: [a b]",))
    assert Framework().pre_enqueue(gated) == "SchedulingGates" and Framework().pre_enqueue(pod("q")) is None


# ---------------------------------------------------------------------------- DefaultPreemption
def test_preemption_evicts_the_fewest_lowest_priority_pods_on_the_cheapest_node():
    nodes = [node("a", cpu="4"), node("b", cpu="4")]
    running = [
        pod("a-low", cpu="2", priority=1, node_name="a", start="2024-01-01T00:00:00Z"),
        pod("a-mid", cpu="2", priority=5, node_name="a", start="2024-01-01T00:00:00Z"),
        pod("b-mid1", cpu="2", priority=5, node_name="b", start="2024-01-01T00:00:00Z"),
        pod("b-mid2", cpu="2", priority=5, node_name="b", start="2024-01-01T00:00:01Z"),
    ]
    result = Framework().schedule_one(CycleState(), pod("p", cpu="2", priority=10), Snapshot(nodes, running))
    assert isinstance(result, FitError)
    assert (result.nominated_node, [pods_.key(v) for v in result.victims]) == ("a", ["default/a-low"])
    assert result.message() == "0/2 nodes are available: 2 Insufficient cpu."


def test_preemption_reprieves_the_most_important_victims_first():
    running = [pod(f"v{i}", cpu="1", priority=i, node_name="a") for i in range(4)]
    result = Framework().schedule_one(CycleState(), pod("p", cpu="2", priority=10), Snapshot([node("a", cpu="4")], running))
    assert sorted(pods_.key(v) for v in result.victims) == ["default/v0", "default/v1"]


def test_preemption_never_evicts_equal_or_higher_priority_pods():
    running = [pod("same", cpu="4", priority=10, node_name="a")]
    result = Framework().schedule_one(CycleState(), pod("p", cpu="1", priority=10), Snapshot([node("a", cpu="4")], running))
    assert result.nominated_node == "" and result.message().endswith("preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def test_preemption_policy_never_is_not_eligible():
    plugin = DefaultPreemption(handle=Framework())
    result = plugin.post_filter(CycleState(), pod("p", spec={"preemptionPolicy": "Never"}), Snapshot(), {})
    assert result.status.reasons == ("not eligible due to preemptionPolicy=Never.",)


# ---------------------------------------------------------------------------- Coscheduling
def gang(name: str, size: int, min_available: int) -> list[dict]:
    return [pod(f"{name}-{i}", labels={"scheduling.x-k8s.io/pod-group": name}, annotations={"scheduling.x-k8s.io/min-available": str(min_available)}) for i in range(size)]


def gang_framework(timeout: float, bound: list) -> Framework:
    async def binder(p, node_name):
        bound.append(p["metadata"]["name"])

    data = {"apiVersion": config.API_VERSION, "kind": config.KIND, "profiles": [{"pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": timeout}}]}]}
    return Framework(config.parse(data).profiles[0], binder=binder)


def test_a_gang_waits_in_permit_until_min_available_members_are_assigned_then_all_bind():
    async def scenario():
        bound: list = []
        fwk, snapshot = gang_framework(5, bound), Snapshot([node("a"), node("b")])
        tasks, statuses = [], []
        for member in gang("g", 3, 3):
            state = CycleState()
            result, status = fwk.scheduling_cycle(state, member, snapshot)
            statuses.append(status.code.value)
            tasks.append(asyncio.create_task(fwk.bind(state, member, result.node, snapshot)))
            await asyncio.sleep(0.01)
            if len(tasks) < 3:
                assert bound == []  # nobody binds before the gang is complete
        outcomes = await asyncio.gather(*tasks)
        return statuses, [o.code.value for o in outcomes], sorted(bound)

    assert asyncio.run(scenario()) == (["Wait", "Wait", "Success"], ["Success"] * 3, ["g-0", "g-1", "g-2"])


def test_an_incomplete_gang_times_out_and_every_member_is_unreserved():
    async def scenario():
        bound: list = []
        fwk, snapshot = gang_framework(0.05, bound), Snapshot([node("a")])
        tasks = []
        for member in gang("g", 2, 3):
            state = CycleState()
            result, _ = fwk.scheduling_cycle(state, member, snapshot)
            tasks.append(asyncio.create_task(fwk.bind(state, member, result.node, snapshot)))
        outcomes = await asyncio.gather(*tasks)
        return {(o.code.value, o.plugin, o.message()) for o in outcomes}, bound, snapshot.pod_node

    messages, bound, counted = asyncio.run(scenario())
    assert bound == [] and counted == {}
    assert ("Unschedulable", "Coscheduling", "rejected due to timeout after waiting 50ms at plugin Coscheduling") in messages
    assert messages <= {("Unschedulable", "Coscheduling", "rejected due to timeout after waiting 50ms at plugin Coscheduling"), ("Unschedulable", "Coscheduling", "rejection in Unreserve")}


def test_pods_without_a_group_do_not_wait():
    fwk = gang_framework(5, [])
    _, status = fwk.scheduling_cycle(CycleState(), pod("solo"), Snapshot([node("a")]))
    assert status.success


def test_picking_a_node_prefers_fewer_victims_even_with_negative_priorities():
    from mockapi.controllers.scheduler.plugins.default_preemption import pick_one_node

    two = [pod("a1", priority=-5), pod("a2", priority=-5)]
    one = [pod("b1", priority=-5)]
    assert pick_one_node({"a": two, "b": one}) == "b"
    assert pick_one_node({"a": [pod("low", priority=1)], "b": [pod("high", priority=2)]}) == "a"
    early, late = pod("e", priority=1, start="2024-01-01T00:00:00Z"), pod("l", priority=1, start="2024-01-02T00:00:00Z")
    assert pick_one_node({"a": [early], "b": [late]}) == "b"
    assert pick_one_node({"b": [late], "z": []}) == "z"
