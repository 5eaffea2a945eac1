"""DefaultPreemption with PodDisruptionBudgets, as kube's: victims whose eviction would break a
budget are reprieved first, candidate nodes with fewer violations win, a budget is best effort,
and a budget no controller keeps is computed as kube's disruption controller would."""

import asyncio

from mockapi.controllers.scheduler import pods as pods_
from mockapi.controllers.scheduler.controller import Scheduler
from mockapi.controllers.scheduler.framework import FitError, Framework
from mockapi.controllers.scheduler.nodeinfo import Snapshot
from mockapi.controllers.scheduler.plugin import CycleState
from mockapi.controllers.scheduler.plugins import disruption
from mockapi.controllers.scheduler.plugins.default_preemption import pick_one_node
from tests.scheduler.builders import node, pod
from tests.scheduler.fake_client import NODES, PODS, FakeClient

READY = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}


def running(name, *, node_name, cpu="1", priority=1, labels=None, owner=None, ready=True):
    made = pod(name, cpu=cpu, priority=priority, node_name=node_name, labels=labels, start="2024-01-01T00:00:00Z")
    if ready:
        made["status"] = {**READY, "startTime": "2024-01-01T00:00:00Z"}
    if owner:
        made["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": f"uid-{owner}", "controller": True}]
    return made


def pdb(name, *, selector, min_available=None, max_unavailable=None, status=None, generation=1, namespace="default"):
    spec = {"selector": selector}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    zero = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": namespace, "generation": generation}, "spec": spec, "status": status or zero}


def preempt(nodes, pods, budgets, preemptor):
    fwk = Framework()
    plugin = fwk.plugins["DefaultPreemption"]
    for budget in budgets:
        plugin.on_pdb("ADDED", budget)
    result = fwk.schedule_one(CycleState(), preemptor, Snapshot(nodes, pods))
    assert isinstance(result, FitError)
    return result.nominated_node, sorted(pods_.key(v) for v in result.victims)


# ------------------------------------------------------------------------------ victims on a node
def test_a_victim_whose_budget_has_no_disruption_left_is_reprieved_first():
    # Two 1-cpu pods of one priority and start; the preemptor needs one cpu. Without budgets the
    # less important (b-db: the later key) is the victim; with db's budget at 0 allowed (as a
    # controller observed it), b-db is reprieved first and a-web goes instead.
    pods = [running("a-web", node_name="a", labels={"app": "web"}), running("b-db", node_name="a", labels={"app": "db"})]
    observed = pdb("db", selector={"matchLabels": {"app": "db"}}, min_available=1, status={"disruptionsAllowed": 0, "observedGeneration": 1})
    assert preempt([node("a", cpu="2")], pods, [], pod("p", cpu="1", priority=10)) == ("a", ["default/b-db"])
    assert preempt([node("a", cpu="2")], pods, [observed], pod("p", cpu="1", priority=10)) == ("a", ["default/a-web"])
    allows_one = pdb("db", selector={"matchLabels": {"app": "db"}}, min_available=1, status={"disruptionsAllowed": 1, "observedGeneration": 1})
    assert preempt([node("a", cpu="2")], pods, [allows_one], pod("p", cpu="1", priority=10)) == ("a", ["default/b-db"])


def test_a_budget_is_best_effort_the_pod_is_evicted_when_nothing_else_makes_room():
    pods = [running("db", node_name="a", cpu="2", labels={"app": "db"})]
    observed = pdb("db", selector={"matchLabels": {"app": "db"}}, min_available=1, status={"disruptionsAllowed": 0, "observedGeneration": 1})
    assert preempt([node("a", cpu="2")], pods, [observed], pod("p", cpu="2", priority=10)) == ("a", ["default/db"])


def test_the_node_with_fewer_pdb_violations_wins_before_priorities():
    # On a the victim has priority 1 but a budget with nothing left; on b priority 5 and no budget.
    pods = [running("a-db", node_name="a", cpu="2", priority=1, labels={"app": "db"}), running("b-web", node_name="b", cpu="2", priority=5, labels={"app": "web"})]
    observed = pdb("db", selector={"matchLabels": {"app": "db"}}, min_available=1, status={"disruptionsAllowed": 0, "observedGeneration": 1})
    assert preempt([node("a", cpu="2"), node("b", cpu="2")], pods, [], pod("p", cpu="2", priority=10)) == ("a", ["default/a-db"])
    assert preempt([node("a", cpu="2"), node("b", cpu="2")], pods, [observed], pod("p", cpu="2", priority=10)) == ("b", ["default/b-web"])


def test_pick_one_node_orders_pdb_violations_first():
    assert pick_one_node({"a": [pod("x", priority=1)], "b": [pod("y", priority=9)]}, {"a": 1, "b": 0}) == "b"
    assert pick_one_node({"a": [pod("x", priority=1)], "b": [pod("y", priority=9)]}, {"a": 0, "b": 0}) == "a"


# ------------------------------------------------------------------------- matching and budgets
def test_filter_pods_with_pdb_violation_uses_up_each_budget_in_order():
    db = [running(f"db{i}", node_name="a", labels={"app": "db"}) for i in range(3)]
    budget = disruption.Budget("default", {"matchLabels": {"app": "db"}}, allowed=1)
    violating, fine = disruption.split_by_violation(db, [budget])
    assert ([p["metadata"]["name"] for p in fine], [p["metadata"]["name"] for p in violating]) == (["db0"], ["db1", "db2"])
    listed = disruption.Budget("default", {"matchLabels": {"app": "db"}}, allowed=0, disrupted=frozenset({"db1"}))
    violating, fine = disruption.split_by_violation(db, [listed])
    assert [p["metadata"]["name"] for p in fine] == ["db1"]  # in disruptedPods: already counted by the API server
    other_namespace = disruption.Budget("team", {"matchLabels": {"app": "db"}}, allowed=0)
    assert disruption.split_by_violation(db, [other_namespace]) == ([], db)


def test_a_missing_or_empty_selector_matches_nothing_as_in_kube_scheduler():
    pods = [running("db", node_name="a", labels={"app": "db"})]
    assert disruption.budgets([pdb("all", selector={}, min_available=5), pdb("none", selector=None, min_available=5)], pods) == []


def test_match_expressions():
    selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "cache"]}, {"key": "canary", "operator": "DoesNotExist"}]}
    assert disruption.matches(selector, {"app": "db"}) and not disruption.matches(selector, {"app": "db", "canary": "1"})
    assert not disruption.matches({"matchExpressions": [{"key": "app", "operator": "Bogus"}]}, {"app": "db"})


def test_an_unobserved_budget_is_computed_as_the_disruption_controller_would():
    def allowed(spec_kwargs, pods):
        return disruption.budgets([pdb("b", selector={"matchLabels": {"app": "db"}}, **spec_kwargs)], pods)[0].allowed

    three = [running(f"db{i}", node_name="a", labels={"app": "db"}, owner="rs") for i in range(3)]
    assert allowed({"min_available": 1}, three) == 2
    assert allowed({"min_available": 3}, three) == 0
    assert allowed({"min_available": "50%"}, three) == 1  # ⌈1.5⌉ = 2 desired
    assert allowed({"max_unavailable": 1}, three) == 1
    assert allowed({"max_unavailable": "34%"}, three) == 2  # ⌈1.02⌉ = 2 unavailable, 1 desired healthy
    assert allowed({}, three) == 0  # neither bound: expected 0
    not_ready = three[:2] + [running("db2", node_name="a", labels={"app": "db"}, owner="rs", ready=False)]
    assert allowed({"min_available": 1}, not_ready) == 1
    bare = [running(f"db{i}", node_name="a", labels={"app": "db"}) for i in range(3)]
    assert allowed({"max_unavailable": 1}, bare) == 0  # no controller: kube counts no expected pods
    assert allowed({"min_available": 2}, bare) == 1
    deleting = [dict(p, metadata={**p["metadata"], "deletionTimestamp": "2024-01-01T00:00:00Z"}) for p in three]
    assert allowed({"min_available": 1}, deleting) == 0


def test_an_observed_status_is_read_as_is_and_a_stale_one_is_computed():
    three = [running(f"db{i}", node_name="a", labels={"app": "db"}) for i in range(3)]
    fresh = pdb("b", selector={"matchLabels": {"app": "db"}}, min_available=1, status={"disruptionsAllowed": 7, "observedGeneration": 2}, generation=2)
    stale = pdb("b", selector={"matchLabels": {"app": "db"}}, min_available=1, status={"disruptionsAllowed": 7, "observedGeneration": 1}, generation=2)
    assert disruption.budgets([fresh], three)[0].allowed == 7
    assert disruption.budgets([stale], three)[0].allowed == 2


def test_an_unobserved_budget_protects_as_a_controller_would():
    # db0 and db1 ready under minAvailable 2: none may go (computed), so web is the victim.
    pods = [running("a-db0", node_name="a", labels={"app": "db"}), running("a-db1", node_name="b", labels={"app": "db"}), running("b-web", node_name="a", labels={"app": "web"})]
    unobserved = pdb("db", selector={"matchLabels": {"app": "db"}}, min_available=2)
    assert preempt([node("a", cpu="2"), node("b", cpu="1")], pods, [], pod("p", cpu="1", priority=10)) == ("a", ["default/b-web"])
    pods[2]["metadata"]["name"] = "0-web"  # web now sorts first: without a budget a-db0 would be the victim
    assert preempt([node("a", cpu="2"), node("b", cpu="1")], pods, [], pod("p", cpu="1", priority=10)) == ("a", ["default/a-db0"])
    assert preempt([node("a", cpu="2"), node("b", cpu="1")], pods, [unobserved], pod("p", cpu="1", priority=10)) == ("a", ["default/0-web"])


# ---------------------------------------------------------------------------- the informer
def test_the_scheduler_watches_pdbs_and_preemption_spares_the_protected_pod():
    async def main():
        fake = FakeClient()
        fake.put(NODES, node("a", cpu="2"))
        fake.put(PODS, running("a-web", node_name="a", labels={"app": "web"}))
        fake.put(PODS, running("b-db", node_name="a", labels={"app": "db"}))  # the victim without the budget
        fake.put(disruption.PDBS, pdb("db", selector={"matchLabels": {"app": "db"}}, min_available=1))
        scheduler = Scheduler(fake)
        await asyncio.wait_for(scheduler.start(), 5)
        try:
            plugin = scheduler.frameworks["default-scheduler"].plugins["DefaultPreemption"]
            for _ in range(100):
                if plugin.pdbs:
                    break
                await asyncio.sleep(0.002)
            fake.put(PODS, pod("p", cpu="1", priority=10))
            for _ in range(1000):
                if any(w[0] == "delete" for w in fake.writes):
                    break
                await asyncio.sleep(0.002)
            return [w for w in fake.writes if w[0] == "delete"], sorted(plugin.pdbs)
        finally:
            await scheduler.stop()

    deleted, watched = asyncio.run(main())
    assert watched == [("default", "db")]
    assert deleted == [("delete", "Pod", "default", "a-web")]


def test_the_schedulers_role_may_list_and_watch_pdbs_as_kube_schedulers_does():
    from pathlib import Path

    from mockapi import app, loader
    from mockapi.auth.authz import Attributes
    from mockapi.auth.rbac import RBACAuthorizer
    from mockapi.auth.user import UserInfo

    registry = app.build().registry
    loader.load_paths(registry, [Path(__file__).resolve().parents[2] / "schemas" / "rbac"])
    who = UserInfo("system:serviceaccount:devmgmtproto-system:scheduler", groups=("system:serviceaccounts", "system:authenticated"))
    may = [RBACAuthorizer(registry).authorize(Attributes(who, verb, api_group="policy", resource="poddisruptionbudgets", namespace="")).allowed for verb in ("list", "watch", "update")]
    assert may == [True, True, False]
