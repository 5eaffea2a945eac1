"""The attempt record without extenders: per-node verdicts in plugin order, the score table, and
the bounded log."""

from mockapi.controllers.scheduler.attempts import Attempt, AttemptLog
from mockapi.controllers.scheduler.framework import CycleState, Framework, Snapshot
from tests.scheduler.builders import node, pod


def attempt_of(fwk: Framework, snapshot: Snapshot, p: dict) -> dict:
    state = CycleState()
    fwk.schedule_one(state, p, snapshot)
    return state.attempt.as_dict()


def test_each_node_shows_the_filters_it_passed_and_the_one_that_rejected_it():
    snapshot = Snapshot([node("a", cpu="1"), node("b", unschedulable=True), node("c")])
    record = attempt_of(Framework(), snapshot, pod("p", cpu="2"))
    rows = {row["node"]: row for row in record["filter"]}
    assert rows["a"]["verdicts"][-1] == {"plugin": "NodeResourcesFit", "code": "UnschedulableAndUnresolvable", "reasons": ["Insufficient cpu"]}
    assert [v["plugin"] for v in rows["a"]["verdicts"]] == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit"]
    assert rows["b"]["verdicts"] == [{"plugin": "NodeUnschedulable", "code": "UnschedulableAndUnresolvable", "reasons": ["node(s) were unschedulable"]}]
    assert rows["c"]["feasible"] and all(v["code"] == "Success" for v in rows["c"]["verdicts"])
    assert (record["nodes"], record["feasibleNodes"], record["preFilter"], record["extenderCalls"]) == (3, 1, None, [])
    assert record["pod"] == {"namespace": "default", "name": "p", "uid": "uid-p"}


def test_the_score_table_shows_each_plugins_normalized_score_and_weight():
    snapshot = Snapshot([node("a"), node("b")], [pod("busy", cpu="2", node_name="b")])
    record = attempt_of(Framework(), snapshot, pod("p", cpu="1"))
    first, second = record["scores"]
    assert (first["node"], second["node"]) == ("a", "b") and first["total"] > second["total"]
    fit = next(part for part in first["scores"] if part["plugin"] == "NodeResourcesFit")
    taints = next(part for part in first["scores"] if part["plugin"] == "TaintToleration")
    assert (taints["weight"], taints["weighted"]) == (3, taints["score"] * 3) and fit["weight"] == 1
    assert sum(part["weighted"] for part in first["scores"]) == first["total"]


def test_the_log_keeps_the_last_attempt_per_pod_and_drops_the_oldest():
    log = AttemptLog(max_pods=2)
    for name in ("a", "b", "a", "c"):
        log.put(Attempt("default", name, f"uid-{name}", "default-scheduler", outcome=name))
    assert log.get("default", "b") is None and len(log) == 2
    assert log.get("default", "a").outcome == "a" and log.get("default", "c") is not None
