"""Extenders' ``preemptVerb`` against real HTTP servers, as kube-scheduler's ``callExtenders`` and
``ProcessPreemption`` use it: after DefaultPreemption found its candidates and before it picks one,
each preempting extender interested in the pod narrows the candidates and may change their
victims; an empty answer means no preemption, an error fails preemption unless ignorable."""

import asyncio

import pytest

from mockapi.controllers.scheduler import pods as pods_
from mockapi.controllers.scheduler.framework import CycleState, FitError, Snapshot
from tests.scheduler.builders import node, pod
from tests.scheduler.extender_server import ExtenderServer
from tests.scheduler.fake_client import NODES, PODS
from tests.scheduler.test_controller import condition, run, until
from tests.scheduler.test_extenders import framework, schedule, two_schedulers

INSUFFICIENT = "0/2 nodes are available: 2 Insufficient cpu."
NO_CANDIDATE = "no candidate node for preemption"  # kube's Preempt when SelectCandidate finds none


def cluster() -> Snapshot:
    """Two full 2-cpu nodes: ``a`` runs two 1-cpu pods of priority 1, ``b`` one 2-cpu pod of
    priority 5. A 2-cpu pod of priority 10 preempts both of a's pods by default (lower highest
    victim priority)."""
    pods = [pod("a1", cpu="1", priority=1, node_name="a"), pod("a2", cpu="1", priority=1, node_name="a"), pod("b1", cpu="2", priority=5, node_name="b")]
    return Snapshot([node("a", cpu="2"), node("b", cpu="2")], pods)


def preemptor():
    return pod("p", cpu="2", priority=10)


def meta(**nodes: list[str]):
    """A reply: node → the UIDs of its victims (the builders' ``uid-<name>``)."""
    return {"NodeNameToMetaVictims": {name: {"Pods": [{"UID": f"uid-{p}"} for p in victims], "NumPDBViolations": 0} for name, victims in nodes.items()}}


def preempting(url: str, **extender) -> dict:
    return {"urlPrefix": url, "preemptVerb": "preempt", **extender}


def victims(result: FitError) -> list[str]:
    return sorted(pods_.key(v) for v in result.victims)


def test_without_a_preempting_extender_preemption_is_the_plugins_alone():
    result, _ = schedule(framework(), cluster(), preemptor())
    assert (result.nominated_node, victims(result)) == ("a", ["default/a1", "default/a2"])


def test_the_extender_gets_the_candidates_with_their_victims_as_whole_pods():
    with ExtenderServer({"preempt": lambda body: meta(a=["a1", "a2"], b=["b1"])}) as ext:
        result, attempt = schedule(framework(preempting(ext.url)), cluster(), preemptor())
    (verb, body), = ext.requests
    assert verb == "preempt" and body["Pod"]["metadata"]["name"] == "p" and body["NodeNameToMetaVictims"] is None
    sent = {name: ([p["metadata"]["name"] for p in v["Pods"]], v["NumPDBViolations"]) for name, v in body["NodeNameToVictims"].items()}
    assert sent == {"a": (["a1", "a2"], 0), "b": (["b1"], 0)}
    assert (result.nominated_node, victims(result)) == ("a", ["default/a1", "default/a2"])
    (call,) = attempt.as_dict()["extenderCalls"]
    assert (call["verb"], call["url"], call["outcome"]) == ("preempt", f"{ext.url}/preempt", "success")


def test_node_cache_capable_extenders_get_victims_as_uids():
    with ExtenderServer({"preempt": lambda body: {"nodenametometavictims": body["NodeNameToMetaVictims"]}}) as ext:
        result, _ = schedule(framework(preempting(ext.url, nodeCacheCapable=True)), cluster(), preemptor())
    (_, body), = ext.requests
    assert body["NodeNameToVictims"] is None
    assert body["NodeNameToMetaVictims"] == {"a": {"Pods": [{"UID": "uid-a1"}, {"UID": "uid-a2"}], "NumPDBViolations": 0}, "b": {"Pods": [{"UID": "uid-b1"}], "NumPDBViolations": 0}}
    assert (result.nominated_node, victims(result)) == ("a", ["default/a1", "default/a2"])


def test_a_node_the_extender_leaves_out_is_no_candidate_and_the_pod_is_nominated_elsewhere():
    with ExtenderServer({"preempt": lambda body: meta(b=["b1"])}) as ext:
        result, _ = schedule(framework(preempting(ext.url)), cluster(), preemptor())
    assert (result.nominated_node, victims(result)) == ("b", ["default/b1"])
    assert result.message() == INSUFFICIENT and result.status is None


def test_the_victims_the_extender_returns_replace_the_nodes_victims():
    # One victim on a (the extender knows a2 needs nothing it counts) beats one of priority 5 on b.
    reply = meta(a=["a1"], b=["b1"])
    reply["NodeNameToMetaVictims"]["b"]["NumPDBViolations"] = 1
    with ExtenderServer({"preempt": lambda body: reply}) as ext:
        result, _ = schedule(framework(preempting(ext.url)), cluster(), preemptor())
    assert (result.nominated_node, victims(result)) == ("a", ["default/a1"])
    # the extender's PDB count is the one the choice weighs: b, with a violation, loses to a even with a's two victims
    reply = meta(a=["a1", "a2"], b=["b1"])
    reply["NodeNameToMetaVictims"]["b"]["NumPDBViolations"] = 1
    reply["NodeNameToMetaVictims"]["a"]["NumPDBViolations"] = 2
    with ExtenderServer({"preempt": lambda body: reply}) as ext:
        result, _ = schedule(framework(preempting(ext.url)), cluster(), preemptor())
    assert result.nominated_node == "b"


def test_an_empty_answer_means_no_preemption_in_kubes_words():
    with ExtenderServer({"preempt": lambda body: {"NodeNameToMetaVictims": {}}}) as ext, ExtenderServer({"preempt": lambda body: meta(a=["a1"])}) as later:
        result, attempt = schedule(framework(preempting(ext.url), preempting(later.url)), cluster(), preemptor())
    assert result.nominated_node == "" and result.victims == []
    assert result.message() == f"{INSUFFICIENT} {NO_CANDIDATE}" == "0/2 nodes are available: 2 Insufficient cpu. no candidate node for preemption"
    assert later.requests == []  # no node left: the other extenders are not asked
    with ExtenderServer({"preempt": lambda body: {}}) as null:
        result, _ = schedule(framework(preempting(null.url)), cluster(), preemptor())
    assert result.message().endswith(NO_CANDIDATE)


def test_extenders_preempt_in_turn_each_on_what_the_previous_answered():
    with ExtenderServer({"preempt": lambda body: meta(a=["a1"], b=["b1"])}) as first, ExtenderServer({"preempt": lambda body: meta(b=["b1"])}) as second:
        result, _ = schedule(framework(preempting(first.url), preempting(second.url, nodeCacheCapable=True)), cluster(), preemptor())
    assert second.requests[0][1]["NodeNameToMetaVictims"] == {"a": {"Pods": [{"UID": "uid-a1"}], "NumPDBViolations": 0}, "b": {"Pods": [{"UID": "uid-b1"}], "NumPDBViolations": 0}}
    assert (result.nominated_node, victims(result)) == ("b", ["default/b1"])


def test_an_extender_error_fails_preemption_with_its_message_and_the_pod_stays_unschedulable():
    observed = []
    with ExtenderServer({"preempt": lambda body: (500, {})}) as ext:
        result, attempt = schedule(framework(preempting(ext.url), observe=lambda *call: observed.append(call[:3])), cluster(), preemptor())
    assert result.status is None and result.nominated_node == ""  # a FitError, not the cycle's error: as kube's PostFilter Error
    assert result.message() == f"{INSUFFICIENT} failed preempt with extender at URL {ext.url}/preempt, code 500"
    assert observed == [(ext.url, "preempt", "error")]
    assert attempt.as_dict()["extenderCalls"][0]["outcome"] == "error"


def test_an_ignorable_extenders_error_is_skipped():
    with ExtenderServer({"preempt": lambda body: (500, {})}) as ext:
        result, attempt = schedule(framework(preempting(ext.url, ignorable=True)), cluster(), preemptor())
    assert (result.nominated_node, victims(result)) == ("a", ["default/a1", "default/a2"])
    (call,) = attempt.as_dict()["extenderCalls"]
    assert (call["verb"], call["outcome"], call["ignored"]) == ("preempt", "error", True)


def test_a_node_kept_without_victims_fails_preemption_unless_the_extender_is_ignorable():
    reply = {"NodeNameToMetaVictims": {"a": {"Pods": [], "NumPDBViolations": 0}, "b": {"Pods": [{"UID": "uid-b1"}]}}}
    with ExtenderServer({"preempt": lambda body: reply}) as ext:
        failed, _ = schedule(framework(preempting(ext.url)), cluster(), preemptor())
        dropped, _ = schedule(framework(preempting(ext.url, ignorable=True)), cluster(), preemptor())
    assert failed.message() == f'{INSUFFICIENT} expected at least one victim pod on node "a"' and failed.nominated_node == ""
    assert (dropped.nominated_node, victims(dropped)) == ("b", ["default/b1"])


def test_a_victim_not_on_that_node_is_an_error_as_kubes_convert_pod_uid_to_pod():
    with ExtenderServer({"preempt": lambda body: meta(a=["b1"])}) as ext, ExtenderServer({"preempt": lambda body: meta(zz=["a1"])}) as nowhere:
        result, _ = schedule(framework(preempting(ext.url)), cluster(), preemptor())
        unknown, _ = schedule(framework(preempting(nowhere.url)), cluster(), preemptor())
    assert result.message() == f"{INSUFFICIENT} extender: {ext.url} claims to preempt pod (UID: &{{uid-b1}}) on node: a, but the pod is not found on that node"
    assert unknown.message() == f'{INSUFFICIENT} nodeinfo not found for node name "zz"'


def test_a_reply_of_the_wrong_type_is_an_error_as_gos_decoder_says():
    with ExtenderServer({"preempt": lambda body: {"NodeNameToMetaVictims": {"a": {"Pods": [{"UID": "uid-a1"}], "NumPDBViolations": "1"}}}}) as ext:
        result, _ = schedule(framework(preempting(ext.url)), cluster(), preemptor())
    assert result.message().endswith("json: cannot unmarshal string into Go struct field MetaVictims.NumPDBViolations of type int64")


def test_only_extenders_with_a_preempt_verb_and_interested_in_the_pod_are_asked():
    with ExtenderServer({"preempt": lambda body: meta(b=["b1"])}) as ext:
        fwk = framework({"urlPrefix": ext.url, "filterVerb": "", "prioritizeVerb": ""}, preempting(ext.url, managedResources=[{"name": "example.com/gpu"}]))
        result, _ = schedule(fwk, cluster(), preemptor())
    assert ext.requests == [] and result.nominated_node == "a"


def test_the_synchronous_entry_refuses_a_pod_a_preempting_extender_must_see():
    with pytest.raises(RuntimeError, match="await the framework's async methods"):
        framework(preempting("http://127.0.0.1:9/")).schedule_one(CycleState(), preemptor(), cluster())


# ------------------------------------------------------------------------------ the controller
def test_the_scheduler_evicts_the_victims_the_extender_chose_and_nominates_its_node():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", cpu="2"))
        fake.put(NODES, node("b", cpu="2"))
        for name, where, cpu, prio in (("a1", "a", "1", 1), ("a2", "a", "1", 1), ("b1", "b", "2", 5)):
            fake.put(PODS, pod(name, cpu=cpu, priority=prio, node_name=where))
        fake.put(PODS, pod("p", cpu="2", priority=10, spec={"schedulerName": "my-scheduler"}))
        await until(lambda: fake.pod("default", "b1") is None)
        await until(lambda: (fake.pod("default", "p").get("status") or {}).get("nominatedNodeName") == "b")
        return condition(fake, "p"), scheduler.last_attempt("default", "p"), [fake.pod("default", n) is not None for n in ("a1", "a2")]

    handlers = {"filter": lambda body: {"NodeNames": None, "Nodes": body["Nodes"]}, "prioritize": lambda body: [], "preempt": lambda body: meta(b=["b1"])}
    with ExtenderServer(handlers) as ext:
        failed, attempt, a_pods_left = run(scenario, config=two_schedulers(ext.url, preemptVerb="preempt"))
    assert failed["reason"] == "Unschedulable" and failed["message"] == INSUFFICIENT
    assert a_pods_left == [True, True]
    assert attempt["nominatedNode"] == "b" and [c["verb"] for c in attempt["extenderCalls"]] == ["preempt"]  # no feasible node: filter is not called


def test_the_scheduler_reports_no_candidate_when_the_extender_keeps_none():
    async def scenario(fake, scheduler):
        fake.put(NODES, node("a", cpu="2"))
        fake.put(PODS, pod("a1", cpu="2", priority=1, node_name="a"))
        fake.put(PODS, pod("p", cpu="2", priority=10, spec={"schedulerName": "my-scheduler"}))
        await until(lambda: condition(fake, "p") is not None)
        await asyncio.sleep(0.05)
        return condition(fake, "p"), fake.events[-1], fake.pod("default", "a1") is not None

    handlers = {"filter": lambda body: {"Nodes": body["Nodes"]}, "prioritize": lambda body: [], "preempt": lambda body: {"NodeNameToMetaVictims": {}}}
    with ExtenderServer(handlers) as ext:
        failed, event, kept = run(scenario, config=two_schedulers(ext.url, preemptVerb="preempt"))
    message = "0/1 nodes are available: 1 Insufficient cpu. no candidate node for preemption"
    assert (failed["reason"], failed["message"]) == ("Unschedulable", message)
    assert (event["reason"], event["message"]) == ("FailedScheduling", message) and kept
