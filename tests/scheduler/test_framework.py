"""The framework: extension points in order, kube's FitError message, scoring and selection,
assume / Reserve / Permit, and the asynchronous binding cycle with Unreserve on failure."""

import asyncio

from mockapi.controllers.scheduler import config, status as status_
from mockapi.controllers.scheduler.framework import CycleState, FitError, Framework, ScheduleResult, Snapshot, reason_histogram
from mockapi.controllers.scheduler.plugin import Plugin
from mockapi.controllers.scheduler.plugins import REGISTRY
from tests.scheduler.builders import node, pod


def schedule(fwk: Framework, snapshot: Snapshot, p: dict):
    return fwk.schedule_one(CycleState(), p, snapshot)


def test_the_fit_error_counts_reasons_across_nodes_in_kubes_words():
    nodes = [node("a", cpu="2"), node("b", unschedulable=True), node("c", unschedulable=True)]
    snapshot = Snapshot(nodes, [pod("busy", cpu="1", node_name="a")])
    result = schedule(Framework(), snapshot, pod("p", cpu="2"))
    assert isinstance(result, FitError)
    assert result.message() == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    assert result.diagnosis.unschedulable_plugins == {"NodeResourcesFit", "NodeUnschedulable"}


def test_without_post_filter_the_message_ends_after_the_reasons():
    profile = config.parse({"apiVersion": config.API_VERSION, "kind": config.KIND, "profiles": [{"plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}]}).profiles[0]
    snapshot = Snapshot([node(f"n{i}", unschedulable=True) for i in range(9)])
    assert schedule(Framework(profile), snapshot, pod("p")).message() == "0/9 nodes are available: 9 node(s) were unschedulable."


def test_reasons_sort_as_strings_like_gos_sort_strings():
    statuses = [status_.unschedulable("Insufficient cpu")] * 10 + [status_.unresolvable("node(s) were unschedulable")] * 2
    assert reason_histogram(statuses) == "10 Insufficient cpu, 2 node(s) were unschedulable"


def test_each_node_reports_only_the_first_filter_that_rejects_it():
    snapshot = Snapshot([node("a", cpu="1", unschedulable=True)])
    result = schedule(Framework(), snapshot, pod("p", cpu="2"))
    assert result.diagnosis.statuses["a"].reasons == ("node(s) were unschedulable",)


def test_a_node_rejecting_for_two_resources_counts_both():
    snapshot = Snapshot([node("a", cpu="1", memory="1Gi")])
    result = schedule(Framework(), snapshot, pod("p", cpu="2", memory="2Gi", spec={"preemptionPolicy": "Never"}))
    assert result.message() == "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. not eligible due to preemptionPolicy=Never."


def test_the_least_allocated_node_wins_by_default_and_ties_go_to_the_first_name():
    snapshot = Snapshot([node("b"), node("a"), node("c")], [pod("busy", cpu="3", node_name="c")])
    result = schedule(Framework(), snapshot, pod("p", cpu="1"))
    assert isinstance(result, ScheduleResult)
    assert (result.node, result.feasible) == ("a", 3)
    assert result.scores["a"] == result.scores["b"] > result.scores["c"]


def test_assuming_a_pod_counts_it_on_its_node_at_once():
    fwk, snapshot = Framework(), Snapshot([node("a", cpu="2"), node("b", cpu="2")])
    first = pod("first", cpu="2")
    result = schedule(fwk, snapshot, first)
    assert fwk.assume(CycleState(), first, result.node, snapshot).success
    second = pod("second", cpu="2")
    other = schedule(fwk, snapshot, second).node
    assert other != result.node and fwk.assume(CycleState(), second, other, snapshot).success
    third = schedule(fwk, snapshot, pod("third", cpu="2", spec={"preemptionPolicy": "Never"}))
    assert isinstance(third, FitError)


def test_a_pod_nominated_by_preemption_tries_its_nominated_node_first():
    snapshot = Snapshot([node("a"), node("b", cpu="64")])
    nominated = pod("p", cpu="1")
    nominated["status"]["nominatedNodeName"] = "a"
    assert schedule(Framework(), snapshot, nominated).node == "a"


class Recorder(Plugin):
    """Records every extension point it is called at; fails where told."""

    NAME = "Recorder"

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.calls = []
        self.fail = set(self.args.get("fail", ()))

    def _status(self, point):
        self.calls.append(point)
        return status_.error(f"{point} failed") if point in self.fail else status_.SUCCESS

    def pre_filter(self, state, pod, snapshot):
        return self._status("preFilter")

    def filter(self, state, pod, node_info):
        return self._status("filter")

    def pre_score(self, state, pod, node_infos):
        return self._status("preScore")

    def score(self, state, pod, node_info):
        self.calls.append("score")
        return 0

    def reserve(self, state, pod, node_name):
        return self._status("reserve")

    def unreserve(self, state, pod, node_name):
        self.calls.append("unreserve")

    def permit(self, state, pod, node_name):
        return self._status("permit"), 0

    async def pre_bind(self, state, pod, node_name):
        return self._status("preBind")

    async def post_bind(self, state, pod, node_name):
        self.calls.append("postBind")


def recording(fail=(), binder=None):
    registry = {**REGISTRY, "Recorder": Recorder}
    data = {"apiVersion": config.API_VERSION, "kind": config.KIND, "profiles": [{"pluginConfig": []}]}
    profile = config.parse(data).profiles[0]
    for point in ("preFilter", "filter", "preScore", "score", "reserve", "permit", "preBind", "postBind"):
        profile.plugins[point].append("Recorder")
    profile.args["Recorder"] = {"fail": fail}
    fwk = Framework(profile, registry=registry, binder=binder)
    return fwk, fwk.plugins["Recorder"]


def test_extension_points_run_in_kubes_order_and_binding_calls_the_binder():
    bound = []

    async def binder(p, node_name):
        bound.append((p["metadata"]["name"], node_name))

    fwk, recorder = recording(binder=binder)
    snapshot = Snapshot([node("a"), node("b")])
    p = pod("p")
    state = CycleState()
    result, status = fwk.scheduling_cycle(state, p, snapshot)
    assert status.success
    assert asyncio.run(fwk.bind(state, p, result.node, snapshot)).success
    assert recorder.calls == ["preFilter", "filter", "filter", "preScore", "score", "score", "reserve", "permit", "preBind", "postBind"]
    assert bound == [("p", "a")] and snapshot.pod_node == {"default/p": "a"}


def test_a_failing_bind_unreserves_and_forgets_the_assumed_pod():
    async def binder(p, node_name):
        raise RuntimeError("pods \"p\" is forbidden")

    fwk, recorder = recording(binder=binder)
    snapshot = Snapshot([node("a")])
    p, state = pod("p"), CycleState()
    result, _ = fwk.scheduling_cycle(state, p, snapshot)
    status = asyncio.run(fwk.bind(state, p, result.node, snapshot))
    assert (status.code, status.plugin, status.message()) == (status_.Code.ERROR, "DefaultBinder", 'pods "p" is forbidden')
    assert recorder.calls[-1] == "unreserve" and snapshot.pod_node == {}


def test_a_failing_pre_bind_unreserves_without_binding():
    bound = []

    async def binder(p, node_name):
        bound.append(p)

    fwk, recorder = recording(fail={"preBind"}, binder=binder)
    snapshot = Snapshot([node("a")])
    p, state = pod("p"), CycleState()
    result, _ = fwk.scheduling_cycle(state, p, snapshot)
    status = asyncio.run(fwk.bind(state, p, result.node, snapshot))
    assert (status.plugin, bound, recorder.calls[-2:]) == ("Recorder", [], ["preBind", "unreserve"])


def test_a_failing_reserve_unreserves_and_forgets_at_once():
    fwk, recorder = recording(fail={"reserve"})
    snapshot = Snapshot([node("a")])
    result, status = fwk.scheduling_cycle(CycleState(), pod("p"), snapshot)
    assert status.code is status_.Code.ERROR and recorder.calls[-1] == "unreserve" and snapshot.pod_node == {}


def test_an_error_in_pre_filter_is_an_error_not_a_verdict():
    fwk, _ = recording(fail={"preFilter"})
    result, status = fwk.scheduling_cycle(CycleState(), pod("p"), Snapshot([node("a")]))
    assert isinstance(result, FitError) and status.code is status_.Code.ERROR and status.plugin == "Recorder"


def test_no_node_at_all_is_kubes_no_nodes_available_error():
    result = schedule(Framework(), Snapshot(), pod("p"))
    assert result.message() == "no nodes available to schedule pods"
    assert result.status is not None and not result.status.success  # an error: backoff, no preemption


def test_room_made_by_preemption_is_kept_for_the_nominated_pod():
    snapshot = Snapshot([node("a", cpu="2")])
    snapshot.nominate(pod("high", cpu="2", priority=10), "a")
    fwk = Framework()
    low = schedule(fwk, snapshot, pod("low", cpu="1", priority=1, spec={"preemptionPolicy": "Never"}))
    assert isinstance(low, FitError) and low.message().startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert schedule(fwk, snapshot, pod("higher", cpu="1", priority=20)).node == "a"
    high = pod("high", cpu="2", priority=10)
    assert schedule(fwk, snapshot, high).node == "a"
    assert fwk.assume(CycleState(), high, "a", snapshot).success and snapshot.nominated == {}


def test_a_plugin_error_reads_as_the_error_itself():
    fwk, _ = recording(fail={"filter"})
    result = schedule(fwk, Snapshot([node("a")]), pod("p"))
    assert (result.status.plugin, result.message()) == ("Recorder", "filter failed")
