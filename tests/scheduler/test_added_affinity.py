"""NodeAffinityArgs.addedAffinity (kube-scheduler's scheduler-enforced node affinity) and NodeAffinity's
PreFilter node-name shortcut: Filter, Score, validation, per-profile remembered verdicts, requeue."""

import pytest

from mockapi.controllers.scheduler import config
from mockapi.controllers.scheduler.framework import FitError, Framework
from mockapi.controllers.scheduler.nodeinfo import Snapshot
from mockapi.controllers.scheduler.plugin import CycleState
from mockapi.controllers.scheduler.status import Code
from tests.scheduler.builders import node, pod
from tests.scheduler.fake_client import NODES, PODS
from tests.scheduler.test_controller import condition, run, until

ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def zone_in(*zones: str) -> dict:
    return {"matchExpressions": [{"key": "zone", "operator": "In", "values": list(zones)}]}


def added(required=None, preferred=None) -> dict:
    affinity = {}
    if required is not None:
        affinity[REQUIRED] = {"nodeSelectorTerms": required}
    if preferred is not None:
        affinity[PREFERRED] = preferred
    return {"name": "NodeAffinity", "args": {"addedAffinity": affinity}}


def configuration(*profiles: tuple[str, dict | None]) -> config.Configuration:
    return config.parse({
        "apiVersion": config.API_VERSION, "kind": config.KIND,
        "profiles": [{"schedulerName": name, "pluginConfig": [args] if args else []} for name, args in profiles],
    })  # fmt: skip


def framework(args: dict | None, name: str = "default-scheduler") -> Framework:
    return Framework(configuration((name, args)).profiles[0])


def zoned(name: str, zone: str, **options) -> dict:
    return node(name, labels={"zone": zone}, **options)


# ---------------------------------------------------------------------------------- Filter
def test_every_pod_of_the_profile_must_match_the_added_required_affinity():
    fwk, snapshot = framework(added(required=[zone_in("z1")])), Snapshot([zoned("a", "z2"), zoned("b", "z1"), node("c")])
    assert fwk.schedule_one(CycleState(), pod("p"), snapshot).node == "b"
    failed = fwk.schedule_one(CycleState(), pod("q"), Snapshot([zoned("a", "z2"), node("c")]))
    assert isinstance(failed, FitError)
    assert failed.message().startswith(f"0/2 nodes are available: 2 {ENFORCED}. preemption:")
    assert {s.code for s in failed.diagnosis.statuses.values()} == {Code.UNSCHEDULABLE_AND_UNRESOLVABLE}
    assert {s.plugin for s in failed.diagnosis.statuses.values()} == {"NodeAffinity"}


def test_the_added_affinity_is_checked_before_the_pods_own_and_both_must_match():
    fwk = framework(added(required=[zone_in("z1")]))
    selective = pod("p", spec={"nodeSelector": {"disk": "ssd"}})
    neither = fwk.schedule_one(CycleState(), selective, Snapshot([zoned("a", "z2")]))
    assert neither.diagnosis.statuses["a"].reasons == (ENFORCED,)  # kube's Filter: the added affinity first
    only_added = fwk.schedule_one(CycleState(), selective, Snapshot([zoned("a", "z1")]))
    assert only_added.diagnosis.statuses["a"].reasons == ("node(s) didn't match Pod's node affinity/selector",)
    both = node("b", labels={"zone": "z1", "disk": "ssd"})
    assert fwk.schedule_one(CycleState(), selective, Snapshot([zoned("a", "z1"), both])).node == "b"


def test_an_empty_added_term_matches_no_node():
    failed = framework(added(required=[{}])).schedule_one(CycleState(), pod("p"), Snapshot([zoned("a", "z1")]))
    assert isinstance(failed, FitError) and failed.diagnosis.statuses["a"].reasons == (ENFORCED,)


# ----------------------------------------------------------------------------------- Score
def test_added_preferred_terms_add_to_every_pods_score():
    preferred = [{"weight": 50, "preference": zone_in("z2")}, {"weight": 0, "preference": zone_in("z1")}]
    fwk, snapshot = framework(added(preferred=preferred)), Snapshot([zoned("a", "z1"), zoned("b", "z2")])
    state = CycleState()
    assert fwk.schedule_one(state, pod("p"), snapshot).node == "b"
    assert state.attempt.plugin_scores["NodeAffinity"] == {"a": 0, "b": 100}
    own = {"affinity": {"nodeAffinity": {PREFERRED: [{"weight": 100, "preference": zone_in("z1")}]}}}
    state = CycleState()
    assert fwk.schedule_one(state, pod("q", spec=own), snapshot).node == "a"  # 100 (its own) against 50 (added)
    assert state.attempt.plugin_scores["NodeAffinity"] == {"a": 100, "b": 50}


# ----------------------------------------------------------------------- node-name shortcut
def named(*names: str) -> dict:
    return {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]} for n in names]}


def test_the_node_name_shortcut_keeps_the_named_nodes_and_still_enforces_the_added_affinity():
    fwk, snapshot = framework(added(required=[zone_in("z1")])), Snapshot([zoned("a", "z2"), zoned("b", "z1"), zoned("c", "z1")])
    to_a = pod("p", spec={"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [named("a")]}}}})
    state = CycleState()
    failed = fwk.schedule_one(state, to_a, snapshot)
    assert isinstance(failed, FitError) and state.attempt.restricted == {"a"}
    assert failed.diagnosis.statuses["a"].reasons == (ENFORCED,)
    assert failed.diagnosis.statuses["b"].reasons == ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)
    to_c = pod("q", spec={"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [named("a"), named("c")]}}}})
    assert fwk.schedule_one(CycleState(), to_c, snapshot).node == "c"


def test_terms_naming_no_node_in_common_conflict_in_pre_filter():
    conflicting = pod("p", spec={"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [named("a", "b")]}}}})
    failed = framework(None).schedule_one(CycleState(), conflicting, Snapshot([node("a"), node("b")]))
    assert isinstance(failed, FitError) and failed.message().startswith("0/2 nodes are available: pod affinity terms conflict.")


# ------------------------------------------------------------------- remembered verdicts
def test_two_profiles_with_different_added_affinity_never_share_a_remembered_verdict():
    both = configuration(("one", added(required=[zone_in("z1")], preferred=[{"weight": 10, "preference": zone_in("z1")}])),
                         ("two", added(required=[zone_in("z2")], preferred=[{"weight": 10, "preference": zone_in("z2")}])))  # fmt: skip
    one, two = (Framework(profile) for profile in both.profiles)
    snapshot = Snapshot([zoned("a", "z1"), zoned("b", "z2"), zoned("c", "z1"), zoned("d", "z2")])
    same = pod("p")  # one spec, one snapshot, the same node generations: only the profile differs
    for _ in range(2):  # the second round reads what the first remembered
        assert one.schedule_one(CycleState(), same, snapshot).node in ("a", "c")
        assert two.schedule_one(CycleState(), same, snapshot).node in ("b", "d")
    state = CycleState()
    failed = two.schedule_one(state, same, Snapshot([zoned("a", "z1")]))
    assert isinstance(failed, FitError) and failed.diagnosis.statuses["a"].reasons == (ENFORCED,)


# ---------------------------------------------------------------------------- validation
def refused(args: dict) -> str:
    with pytest.raises(config.ConfigError) as caught:
        configuration(("default-scheduler", {"name": "NodeAffinity", "args": args}))
    return str(caught.value)


def test_invalid_added_affinity_refuses_the_configuration_with_kubes_paths_and_messages():
    required = [
        {"matchExpressions": [{"key": "zone", "operator": "Near"}, {"key": "zone", "operator": "In", "values": []}, {"key": "cores", "operator": "Gt", "values": ["many"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}, {"key": "metadata.name", "operator": "Exists"}]},
    ]  # fmt: skip
    preferred = [{"weight": 5, "preference": {"matchExpressions": [{"key": "a b", "operator": "Exists", "values": ["x"]}]}},
                 {"weight": 0, "preference": {"matchExpressions": [{"key": "ignored", "operator": "Near"}]}}]  # fmt: skip
    text = refused({"addedAffinity": {REQUIRED: {"nodeSelectorTerms": required}, PREFERRED: preferred}})
    base = f"profiles[0].pluginConfig[0].args.addedAffinity.{REQUIRED}.nodeSelectorTerms"
    assert f'{base}[0].matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"' in text
    assert f"{base}[0].matchExpressions[1].values: Invalid value: []string{{}}: for 'in', 'notin' operators, values set can't be empty" in text
    assert f"{base}[0].matchExpressions[2].values[0]: Invalid value: \"many\": for 'Gt', 'Lt' operators, the value must be an integer" in text
    assert f'{base}[1].matchFields[0].values: Invalid value: []string{{"a", "b"}}: must have one element' in text
    assert f'{base}[1].matchFields[1].operator: Unsupported value: "Exists": supported values: "In", "NotIn"' in text
    pref = f"profiles[0].pluginConfig[0].args.addedAffinity.{PREFERRED}[0].matchExpressions[0]"  # no ".preference", as kube's path
    assert f'{pref}.key: Invalid value: "a b": name part must consist of alphanumeric characters' in text
    assert f'{pref}.values: Invalid value: []string{{"x"}}: values set must be empty for exists and does not exist' in text
    assert "ignored" not in text  # a term of weight 0 is not parsed (kube's NewPreferredSchedulingTerms)


def test_unknown_fields_of_node_affinity_args_are_refused():
    text = refused({"addedAffinity": {"requiredDuringSchedulingRequiredDuringExecution": {}}, "extra": 1})
    assert 'args.extra: unknown field "extra"' in text
    assert 'args.addedAffinity.requiredDuringSchedulingRequiredDuringExecution: unknown field "requiredDuringSchedulingRequiredDuringExecution"' in text


def test_valid_added_affinity_is_kept_on_the_profile():
    profile = configuration(("default-scheduler", added(required=[zone_in("z1")], preferred=[{"weight": 3, "preference": zone_in("z2")}]))).profiles[0]
    plugin = Framework(profile).plugins["NodeAffinity"]
    assert plugin.added_required == {"nodeSelectorTerms": [zone_in("z1")]}
    assert plugin.added_preferred == [{"weight": 3, "preference": zone_in("z2")}]


# ---------------------------------------------------------------------- in the scheduler
def test_each_profile_enforces_its_own_affinity_and_a_node_that_comes_to_match_requeues_the_pod():
    both = configuration(("default-scheduler", added(required=[zone_in("z1")])), ("edge", added(required=[zone_in("edge")])))

    async def scenario(fake, scheduler):
        fake.put(NODES, zoned("a", "z1"))
        fake.put(NODES, zoned("b", "z2"))
        fake.put(PODS, pod("core"))
        fake.put(PODS, pod("far", spec={"schedulerName": "edge"}))
        await until(lambda: ("default/core", "a") in fake.bindings and condition(fake, "far") is not None)
        parked = condition(fake, "far")["message"]
        fake.put(NODES, zoned("b", "edge"))  # b's labels change: it matches edge's added affinity now
        await until(lambda: ("default/far", "b") in fake.bindings, timeout=8)
        return parked, sorted(fake.bindings)

    parked, bindings = run(scenario, config=both)
    assert parked.startswith(f"0/2 nodes are available: 2 {ENFORCED}. preemption:")
    assert bindings == [("default/core", "a"), ("default/far", "b")]
